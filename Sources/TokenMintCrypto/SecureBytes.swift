import TokenMintCore

// The public API. The locked, wiped storage (libsodium) is in
// SecureBytes_sodium.swift.

/// A fixed-size buffer for secrets: wiped with `sodium_memzero` when the last
/// copy goes away, compared in constant time, never printed.
///
/// `SecureBytes` has value semantics; its storage is immutable after creation,
/// so it is `Sendable` and safe to share between threads.
public struct SecureBytes: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    let storage: Storage
    /// The number of bytes.
    public let count: Int

    /// Copies `bytes` into secure storage.
    public init(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        self.init(count: array.count) { buffer in
            buffer.copyBytes(from: array)
        }
    }

    /// `count` bytes from libsodium's CSPRNG.
    public init(randomCount count: Int) {
        self.init(count: count) { buffer in
            SecureRandom.fill(buffer)
        }
    }

    /// Creates `count` bytes and lets `initializer` write them.
    init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws(TokenMintError) -> Void) throws(TokenMintError) {
        storage = Storage(count: count)
        self.count = count
        try initializer(UnsafeMutableRawBufferPointer(rebasing: storage.pointer[0..<count]))
    }

    init(count: Int, initializer: (UnsafeMutableRawBufferPointer) -> Void) {
        storage = Storage(count: count)
        self.count = count
        initializer(UnsafeMutableRawBufferPointer(rebasing: storage.pointer[0..<count]))
    }

    /// Creates `count` bytes that `initializer` writes in place, so a secret
    /// read from a file or a device goes straight into secure memory. The
    /// bytes are zero until written; do not let the pointer escape.
    public init<E: Error>(count: Int, initializingWith initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        storage = Storage(count: count)
        self.count = count
        let buffer = UnsafeMutableRawBufferPointer(rebasing: storage.pointer[0..<count])
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        try initializer(buffer)
    }

    /// Calls `body` with the secret bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage.pointer[0..<count]))
    }

    /// Copies the secret out. The copy is ordinary memory: prefer `withUnsafeBytes`.
    public var unsafeCopy: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Constant-time comparison (the lengths are not secret).
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in ConstantTime.equals(l, r) } }
    }

    /// Never shows the contents.
    public var description: String { "SecureBytes(\(count) bytes)" }
    /// Never shows the contents.
    public var debugDescription: String { description }
}
