public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls are in Ed448_libcrypto.swift.

/// Ed448 (RFC 8032), verification only, through OpenSSL: for checking
/// signatures made elsewhere (WebAuthn's Ed448 credentials, test suites).
public enum Ed448 {
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
