public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls are in Ed448_libcrypto.swift.

/// Ed448 (RFC 8032) through OpenSSL: signing keys (JOSE's `Ed448`) and
/// verification (WebAuthn's Ed448 credentials, test suites).
public enum Ed448 {
    /// An Ed448 signing key: its 57-byte secret stays in zeroing memory and
    /// in OpenSSL's key.
    public struct PrivateKey: Sendable {
        let pkey: PKey
        /// The matching public key.
        public let publicKey: PublicKey

        /// A new random key.
        public init() throws(TokenMintError) {
            try self.init(rawRepresentation: SecureBytes(randomCount: 57))
        }

        /// The key for a 57-byte secret (RFC 8032 §5.2.5).
        public init(rawRepresentation secret: SecureBytes) throws(TokenMintError) {
            guard secret.count == 57 else { throw TokenMintError(.crypto.invalidKeySize, "an Ed448 private key is 57 bytes, got \(secret.count)") }
            pkey = try PrivateKey.openSSLKey(secret: secret)
            publicKey = try PublicKey(rawRepresentation: try PrivateKey.openSSLPublicBytes(pkey))
        }

        /// The 57-byte secret, in zeroing memory.
        public var rawRepresentation: SecureBytes {
            get throws(TokenMintError) { try PrivateKey.openSSLSecret(pkey) }
        }

        /// A PKCS#8 PEM key (`PRIVATE KEY`, OID 1.3.101.113).
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            try self.init(rawRepresentation: try PrivateKey.openSSLSecret(try PKey.decode(Array(pem.utf8), format: .pem, keyType: "ED448", wantPrivate: true)))
        }

        /// PKCS#8 PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try pkey.encode(format: .pem, structure: "PrivateKeyInfo", privatePart: true), as: UTF8.self) }
        }

        /// The 114-byte pure Ed448 signature of `message` (empty context).
        public func signature(for message: some DataProtocol) throws(TokenMintError) -> [UInt8] {
            try message.withContiguousBytes(throwing: { (bytes) throws(TokenMintError) in try pkey.sign(bytes, hash: nil) })
        }
    }

    /// A 57-byte Ed448 verification key.
    public struct PublicKey: Sendable, Hashable {
        let pkey: PKey
        /// The 57-byte encoded point.
        public let rawRepresentation: [UInt8]

        /// A 57-byte public key; OpenSSL checks the encoding.
        public init(rawRepresentation bytes: some DataProtocol) throws(TokenMintError) {
            let raw = Array(bytes)
            guard raw.count == 57 else { throw TokenMintError(.crypto.invalidKeySize, "Ed448 public key must be 57 bytes, got \(raw.count)") }
            pkey = try PublicKey.openSSLKey(raw: raw)
            rawRepresentation = raw
        }

        /// An SPKI PEM key (`PUBLIC KEY`); a private key yields its public half.
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            let decoded = try PKey.decode(Array(pem.utf8), format: .pem, keyType: "ED448", wantPrivate: false)
            try self.init(rawRepresentation: try Ed448.PrivateKey.openSSLPublicBytes(decoded))
        }

        /// SPKI PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try pkey.encode(format: .pem, structure: "SubjectPublicKeyInfo", privatePart: false), as: UTF8.self) }
        }

        /// Pure Ed448 with an empty context: `false` unless the 114-byte signature verifies.
        public func isValidSignature(_ signature: some DataProtocol, for message: some DataProtocol) -> Bool {
            guard signature.count == 114 else { return false }
            return signature.withContiguousBytes { s in
                message.withContiguousBytes { m in openSSLIsValidSignature(s, for: m) }
            }
        }

        /// Compares the encoded points.
        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.rawRepresentation == rhs.rawRepresentation }
        /// Hashes the encoded point.
        public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }
    }
}
