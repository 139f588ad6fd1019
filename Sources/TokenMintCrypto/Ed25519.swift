public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The libsodium calls are in Ed25519_sodium.swift, the
// OpenSSL PEM/DER calls in Ed25519_libcrypto.swift.

/// Ed25519 signatures (RFC 8032) through libsodium; PEM and DER through
/// OpenSSL's encoders.
public enum Ed25519 {
    /// A signing key. The 32-byte seed and libsodium's expanded secret key
    /// live in zeroing memory.
    public struct PrivateKey: Sendable {
        let secretKey: SecureBytes  // seed ‖ public key, libsodium's layout
        /// The matching public key.
        public let publicKey: PublicKey

        /// A new random key.
        public init() {
            (secretKey, publicKey) = PrivateKey.sodiumGenerate()
        }

        /// The key for a 32-byte seed (RFC 8032's "private key").
        public init(rawRepresentation seed: some DataProtocol) throws(TokenMintError) {
            (secretKey, publicKey) = try seed.withContiguousBytes(throwing: PrivateKey.sodiumExpand)
        }

        /// The key for a 32-byte seed held in secure memory: the seed is
        /// read in place, never copied into ordinary memory.
        public init(rawRepresentation seed: SecureBytes) throws(TokenMintError) {
            (secretKey, publicKey) = try seed.withUnsafeBytes { (s) throws(TokenMintError) in try PrivateKey.sodiumExpand(s) }
        }

        /// A PKCS#8 PEM key (`-----BEGIN PRIVATE KEY-----`).
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            try self.init(rawRepresentation: try PrivateKey.openSSLDecodeSeed(Array(pem.utf8), format: .pem))
        }

        /// A PKCS#8 DER key.
        public init(derRepresentation der: some DataProtocol) throws(TokenMintError) {
            try self.init(rawRepresentation: try PrivateKey.openSSLDecodeSeed(Array(der), format: .der))
        }

        /// The 32-byte seed.
        public var rawRepresentation: SecureBytes {
            SecureBytes(count: 32) { out in
                secretKey.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<32])) }
            }
        }

        /// PKCS#8 PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem), as: UTF8.self) }
        }

        /// PKCS#8 DER.
        public var derRepresentation: SecureBytes {
            get throws(TokenMintError) { SecureBytes(try openSSLEncoded(.der)) }
        }

        /// The 64-byte signature of `message`.
        public func signature(for message: some DataProtocol) throws(TokenMintError) -> [UInt8] {
            message.withContiguousBytes { signature(for: $0) }
        }

        /// The 64-byte signature of the bytes in `message`.
        public func signature(for message: UnsafeRawBufferPointer) -> [UInt8] {
            sodiumSignature(for: message)
        }
    }

    /// A verification key.
    public struct PublicKey: Sendable, Hashable {
        /// The 32-byte encoded point.
        public let rawRepresentation: [UInt8]

        init(trusted bytes: [UInt8]) { rawRepresentation = bytes }

        /// A 32-byte public key. The point itself is checked when verifying
        /// (libsodium rejects non-canonical and small-order keys).
        public init(rawRepresentation bytes: some DataProtocol) throws(TokenMintError) {
            guard bytes.count == 32 else {
                throw TokenMintError(.crypto.invalidKeySize, "Ed25519 public key must be 32 bytes, got \(bytes.count)")
            }
            rawRepresentation = Array(bytes)
        }

        /// An SPKI PEM key (`-----BEGIN PUBLIC KEY-----`). A PKCS#8 private key
        /// PEM is accepted too and yields its public key.
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            self.init(trusted: try PublicKey.openSSLDecodeRaw(Array(pem.utf8), format: .pem))
        }

        /// An SPKI DER key.
        public init(derRepresentation der: some DataProtocol) throws(TokenMintError) {
            self.init(trusted: try PublicKey.openSSLDecodeRaw(Array(der), format: .der))
        }

        /// SPKI PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem), as: UTF8.self) }
        }

        /// SPKI DER.
        public var derRepresentation: [UInt8] {
            get throws(TokenMintError) { try openSSLEncoded(.der) }
        }

        /// Strict verification: `false` for a signature that is not exactly 64
        /// bytes, has a non-canonical S, a small-order R, or does not verify.
        public func isValidSignature(_ signature: some DataProtocol, for message: some DataProtocol) -> Bool {
            signature.withContiguousBytes { s in message.withContiguousBytes { m in isValidSignature(s, for: m) } }
        }

        /// As above, over raw buffers.
        public func isValidSignature(_ signature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer) -> Bool {
            guard signature.count == 64 else { return false }
            return sodiumIsValidSignature(signature, for: message)
        }
    }
}
