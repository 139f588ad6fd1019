public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls are in KeyAgreement_libcrypto.swift.

/// Elliptic-curve Diffie–Hellman on the NIST curves (OpenSSL's
/// `EVP_PKEY_derive`), with ``ECDSA`` key types: an EC key pair agrees as
/// well as it signs. Used by the CTAP2 PIN/UV auth protocols.
public enum ECDH {
    /// The shared secret of `privateKey` and `publicKey` (both on the same
    /// curve): the x coordinate of the shared point, in zeroing memory. Feed
    /// it to a KDF, never use it as a key directly.
    /// - Throws: `invalidKey` when the curves differ (the peer's point was
    ///   checked to lie on its curve when its key was made).
    public static func sharedSecret(_ privateKey: ECDSA.PrivateKey, _ publicKey: ECDSA.PublicKey) throws(TokenMintError) -> SecureBytes {
        guard privateKey.curve == publicKey.curve else {
            throw TokenMintError(.crypto.invalidKey, "ECDH needs two keys on one curve, got \(privateKey.curve) and \(publicKey.curve)")
        }
        return try derive(privateKey.key.pkey, publicKey.pkey, count: privateKey.curve.scalarByteCount)
    }
}

/// HKDF (RFC 5869), extract then expand, through OpenSSL's `EVP_KDF`.
public enum HKDF {
    /// `outputByteCount` bytes (at most 255 × the hash size) derived from
    /// `inputKeyMaterial` with `salt` and `info`, in zeroing memory.
    public static func deriveKey(
        inputKeyMaterial: SecureBytes, salt: some DataProtocol, info: some DataProtocol, outputByteCount: Int, hash: HashFunction = .sha256
    ) throws(TokenMintError) -> SecureBytes {
        guard outputByteCount > 0, outputByteCount <= 255 * hash.digestSize else {
            throw TokenMintError(.crypto.invalidParameter, "HKDF-\(hash.name) gives 1 to \(255 * hash.digestSize) bytes")
        }
        return try derive(inputKeyMaterial, salt: Array(salt), info: Array(info), count: outputByteCount, hash: hash)
    }
}
