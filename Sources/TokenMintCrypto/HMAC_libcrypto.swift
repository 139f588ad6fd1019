internal import CLibCrypto

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A secret key for HMAC, bound to its hash function.
///
/// RFC 2104 §3 and RFC 7518 §3.2: a key shorter than the hash output weakens
/// the MAC, so ``init(_:hash:)`` refuses one, in every build configuration.
/// Interoperability with systems that already use short keys (and known-answer
/// tests) goes through the separately named ``init(allowingShortKey:hash:)``.
public struct HMACKey: Sendable, Equatable, CustomStringConvertible {
    /// The key bytes, in zeroing memory.
    public let bytes: SecureBytes
    /// The hash function the key is used with.
    public let hash: HashFunction

    /// Wraps existing key bytes.
    /// - Throws: `CryptoError.invalidKeySize` when the key is shorter than the
    ///   hash output, `unsupportedAlgorithm` for SHA-1.
    public init(_ key: some DataProtocol, hash: HashFunction) throws(CryptoError) {
        guard key.count >= hash.digestSize else {
            throw .invalidKeySize(
                "HMAC-\(hash.name) key must be at least \(hash.digestSize) bytes, got \(key.count)")
        }
        try self.init(allowingShortKey: key, hash: hash)
    }

    /// Wraps key bytes without the minimum-length rule. For interoperability
    /// and known-answer tests only; an empty key is still refused.
    public init(allowingShortKey key: some DataProtocol, hash: HashFunction) throws(CryptoError) {
        guard hash.isAllowedForSigning else { throw .unsupported("HMAC with \(hash.name) is not offered") }
        guard !key.isEmpty, key.count <= 1 << 16 else { throw .invalidKeySize("HMAC key must be 1 to 65536 bytes") }
        self.bytes = SecureBytes(key)
        self.hash = hash
    }

    /// A new random key as long as the hash output.
    public init(generatingFor hash: HashFunction) {
        self.bytes = SecureBytes(randomCount: hash.digestSize)
        self.hash = hash
    }

    /// Never shows the key.
    public var description: String { "HMACKey(\(hash.name), \(bytes.count) bytes)" }
}

/// HMAC (RFC 2104) through OpenSSL.
public enum HMAC {
    /// The full-length tag of `message` under `key`.
    public static func authenticationCode(for message: some DataProtocol, using key: HMACKey) -> [UInt8] {
        message.withContiguousBytes { authenticationCode(for: $0, using: key) }
    }

    /// The full-length tag of the bytes in `message`.
    public static func authenticationCode(for message: UnsafeRawBufferPointer, using key: HMACKey) -> [UInt8] {
        key.bytes.withUnsafeBytes { secret in
            [UInt8](unsafeUninitializedCapacity: 64) { out, initialized in
                var length: UInt32 = 0
                let result = CLibCrypto.HMAC(
                    key.hash.handle.md, secret.baseAddress, Int32(secret.count),
                    message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
                    out.baseAddress, &length)
                initialized = result == nil ? 0 : Int(length)
            }
        }
    }

    /// Checks `tag` in constant time. A tag shorter than the hash output is
    /// compared against the leading bytes of the full tag only when
    /// `minimumLength` admits it (default: the full length).
    public static func isValidAuthenticationCode(
        _ tag: some DataProtocol, for message: some DataProtocol, using key: HMACKey, minimumLength: Int? = nil
    ) -> Bool {
        let expected = authenticationCode(for: message, using: key)
        let floor = minimumLength ?? expected.count
        guard tag.count >= max(floor, 1), tag.count <= expected.count else { return false }
        return ConstantTime.equals(Array(tag), expected.prefix(tag.count))
    }
}
