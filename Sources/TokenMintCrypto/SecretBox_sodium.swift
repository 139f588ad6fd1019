public import TokenMintCore
internal import CSodium

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// XChaCha20-Poly1305 (libsodium's `crypto_aead_xchacha20poly1305_ietf`):
/// authenticated encryption for secrets at rest. The 24-byte nonce is random
/// per message and stored in front of the ciphertext.
public enum XChaCha20Poly1305 {
    /// Key length in bytes.
    public static let keyByteCount = 32
    /// Bytes added to a plaintext: nonce (24) and tag (16).
    public static let overhead = 40

    /// `nonce ‖ ciphertext ‖ tag` of `plaintext`, bound to `associatedData`.
    public static func seal(_ plaintext: some DataProtocol, key: SecureBytes, associatedData: some DataProtocol) throws(TokenMintError) -> [UInt8] {
        try Sodium.ensure()
        guard key.count == keyByteCount else { throw .invalidKeySize("XChaCha20-Poly1305 keys are 32 bytes") }
        let message = Array(plaintext)
        let ad = Array(associatedData)
        var out = [UInt8](repeating: 0, count: message.count + overhead)
        out.withUnsafeMutableBytes { SecureRandom.fill(UnsafeMutableRawBufferPointer(rebasing: $0[0..<24])) }
        var length: UInt64 = 0
        let status = key.withUnsafeBytes { k in
            out.withUnsafeMutableBufferPointer { buffer -> Int32 in
                guard let base = buffer.baseAddress else { return -1 }
                return crypto_aead_xchacha20poly1305_ietf_encrypt(
                    base + 24, &length, message, UInt64(message.count), ad, UInt64(ad.count), nil, base, k.bytes)
            }
        }
        guard status == 0 else { throw TokenMintError(.crypto.libraryFailure, "XChaCha20-Poly1305 encryption failed") }
        return out
    }

    /// The plaintext of `sealed`, or an error when it was not sealed with this
    /// key and associated data (or was altered).
    public static func open(_ sealed: some DataProtocol, key: SecureBytes, associatedData: some DataProtocol) throws(TokenMintError) -> SecureBytes {
        try Sodium.ensure()
        guard key.count == keyByteCount else { throw .invalidKeySize("XChaCha20-Poly1305 keys are 32 bytes") }
        let box = Array(sealed)
        let ad = Array(associatedData)
        guard box.count >= overhead else { throw .invalidEncoding("sealed data shorter than nonce and tag") }
        var length: UInt64 = 0
        let result = try SecureBytes(count: box.count - overhead) { out throws(TokenMintError) in
            let status = key.withUnsafeBytes { k in
                box.withUnsafeBufferPointer { b -> Int32 in
                    guard let base = b.baseAddress else { return -1 }
                    return crypto_aead_xchacha20poly1305_ietf_decrypt(
                        out.bytes, &length, nil, base + 24, UInt64(box.count - 24), ad, UInt64(ad.count), base, k.bytes)
                }
            }
            guard status == 0 else { throw TokenMintError(.crypto.invalidKey, "sealed data does not open with this key (wrong key, or altered)") }
        }
        return result
    }
}

/// Argon2id key derivation (libsodium `crypto_pwhash`).
public enum PasswordKeyDerivation {
    /// The salt length in bytes.
    public static let saltByteCount = 16

    /// Work factors.
    public struct Cost: Sendable, Hashable {
        /// Passes over memory.
        public var operations: UInt64
        /// Memory in bytes.
        public var memory: Int
        /// libsodium's interactive limits (2 passes, 64 MiB): the default.
        public static let interactive = Cost(operations: 2, memory: 64 << 20)
        /// libsodium's moderate limits (3 passes, 256 MiB).
        public static let moderate = Cost(operations: 3, memory: 256 << 20)
        /// Minimum limits, for tests only.
        public static let minimum = Cost(operations: 1, memory: 8192)
        /// Work factors.
        public init(operations: UInt64, memory: Int) {
            self.operations = operations
            self.memory = memory
        }
    }

    /// A `length`-byte key from `passphrase` and `salt` with Argon2id.
    public static func deriveKey(
        passphrase: some DataProtocol, salt: some DataProtocol, length: Int = 32, cost: Cost = .interactive
    ) throws(TokenMintError) -> SecureBytes {
        try Sodium.ensure()
        let salt = Array(salt)
        guard salt.count == saltByteCount else { throw .invalidParameter("Argon2id salt must be \(saltByteCount) bytes") }
        guard (16...64).contains(length) else { throw .invalidParameter("derived keys are 16 to 64 bytes") }
        let secret = SecureBytes(passphrase)
        return try SecureBytes(count: length) { out throws(TokenMintError) in
            let status = secret.withUnsafeBytes { p in
                crypto_pwhash(out.bytes, UInt64(length), UnsafeRawPointer(p.bytes).assumingMemoryBound(to: CChar.self),
                              UInt64(p.count), salt, cost.operations, cost.memory, crypto_pwhash_ALG_ARGON2ID13)
            }
            guard status == 0 else { throw TokenMintError(.crypto.libraryFailure, "Argon2id failed (out of memory?)") }
        }
    }
}
