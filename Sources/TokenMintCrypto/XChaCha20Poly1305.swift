public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The libsodium calls are in SecretBox_sodium.swift.

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
        guard key.count == keyByteCount else { throw TokenMintError(.crypto.invalidKeySize, "XChaCha20-Poly1305 keys are 32 bytes") }
        let ad = Array(associatedData)
        return try plaintext.withContiguousBytes(throwing: { (message) throws(TokenMintError) in try sodiumSeal(message, key: key, associatedData: ad) })
    }

    /// Seals a secret, read in place from its zeroing memory (no copy of it
    /// is made on the way to libsodium).
    public static func seal(_ plaintext: SecureBytes, key: SecureBytes, associatedData: some DataProtocol) throws(TokenMintError) -> [UInt8] {
        try Sodium.ensure()
        guard key.count == keyByteCount else { throw TokenMintError(.crypto.invalidKeySize, "XChaCha20-Poly1305 keys are 32 bytes") }
        let ad = Array(associatedData)
        return try plaintext.withUnsafeBytes { (message) throws(TokenMintError) in try sodiumSeal(message, key: key, associatedData: ad) }
    }

    /// The plaintext of `sealed`, or an error when it was not sealed with this
    /// key and associated data (or was altered).
    public static func open(_ sealed: some DataProtocol, key: SecureBytes, associatedData: some DataProtocol) throws(TokenMintError) -> SecureBytes {
        try Sodium.ensure()
        guard key.count == keyByteCount else { throw TokenMintError(.crypto.invalidKeySize, "XChaCha20-Poly1305 keys are 32 bytes") }
        let box = Array(sealed)
        let ad = Array(associatedData)
        guard box.count >= overhead else { throw TokenMintError(.crypto.invalidEncoding, "sealed data shorter than nonce and tag") }
        return try sodiumOpen(box, key: key, associatedData: ad)
    }
}
