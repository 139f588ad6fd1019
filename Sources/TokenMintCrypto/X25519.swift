public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls are in X25519_libcrypto.swift.

/// X25519 key agreement (RFC 7748) through OpenSSL: JOSE's ECDH-ES on the
/// `X25519` curve (RFC 8037).
public enum X25519 {
    /// An X25519 private key: its 32-byte secret stays in zeroing memory and in OpenSSL's key.
    public struct PrivateKey: Sendable {
        let pkey: PKey
        /// The matching public key.
        public let publicKey: PublicKey

        /// A new random key.
        public init() throws(TokenMintError) {
            try self.init(rawRepresentation: SecureBytes(randomCount: 32))
        }

        /// The key for a 32-byte secret (clamped by X25519 itself).
        public init(rawRepresentation secret: SecureBytes) throws(TokenMintError) {
            guard secret.count == 32 else { throw TokenMintError(.crypto.invalidKeySize, "an X25519 private key is 32 bytes, got \(secret.count)") }
            pkey = try PrivateKey.openSSLKey(secret: secret)
            publicKey = try PublicKey(rawRepresentation: try PrivateKey.openSSLPublicBytes(pkey))
        }

        /// The 32-byte secret, in zeroing memory.
        public var rawRepresentation: SecureBytes {
            get throws(TokenMintError) { try PrivateKey.openSSLSecret(pkey) }
        }

        /// The shared secret with `publicKey`, in zeroing memory.
        /// - Throws: `invalidKey` when the peer's key is of small order (the
        ///   shared secret would be all zeros, RFC 7748 §6.1).
        public func sharedSecret(with publicKey: PublicKey) throws(TokenMintError) -> SecureBytes {
            do throws(TokenMintError) { return try ECDH.derive(pkey, publicKey.pkey, count: 32) } catch {
                // OpenSSL refuses an all-zero result: the peer's key is of small order.
                throw TokenMintError(.crypto.invalidKey, "X25519: the peer's key gives no shared secret (small order)", underlying: error)
            }
        }
    }

    /// A 32-byte X25519 public key.
    public struct PublicKey: Sendable, Hashable {
        let pkey: PKey
        /// The 32-byte u coordinate.
        public let rawRepresentation: [UInt8]

        /// A 32-byte public key.
        public init(rawRepresentation bytes: some DataProtocol) throws(TokenMintError) {
            let raw = Array(bytes)
            guard raw.count == 32 else { throw TokenMintError(.crypto.invalidKeySize, "an X25519 public key is 32 bytes, got \(raw.count)") }
            pkey = try PublicKey.openSSLKey(raw: raw)
            rawRepresentation = raw
        }

        /// Compares the encoded keys.
        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.rawRepresentation == rhs.rawRepresentation }
        /// Hashes the encoded key.
        public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }
    }
}

/// The single-step key derivation of NIST SP 800-56A §5.8.1 (JOSE's Concat
/// KDF, RFC 7518 §4.6.2) over SHA-256, through OpenSSL's `SSKDF`.
public enum ConcatKDF {
    /// `outputByteCount` bytes (1 to 1024) from `sharedSecret` and `otherInfo`, in zeroing memory.
    public static func deriveKey(sharedSecret: SecureBytes, otherInfo: some DataProtocol, outputByteCount: Int) throws(TokenMintError) -> SecureBytes {
        guard outputByteCount > 0, outputByteCount <= 1024 else {
            throw TokenMintError(.crypto.invalidParameter, "Concat KDF gives 1 to 1024 bytes here")
        }
        return try derive(sharedSecret, otherInfo: Array(otherInfo), count: outputByteCount)
    }
}
