public import TokenMintCore
internal import CSodium
internal import CLibCrypto

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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
            // A 32-byte seed from the CSPRNG cannot be rejected.
            let seed = SecureBytes(randomCount: 32)
            var publicBytes = [UInt8](repeating: 0, count: 32)
            secretKey = SecureBytes(count: 64) { sk in
                seed.withUnsafeBytes { s in
                    _ = crypto_sign_seed_keypair(&publicBytes, sk.bytes, s.bytes)
                }
            }
            publicKey = PublicKey(trusted: publicBytes)
        }

        /// The key for a 32-byte seed (RFC 8032's "private key").
        public init(rawRepresentation seed: some DataProtocol) throws(TokenMintError) {
            (secretKey, publicKey) = try seed.withContiguousBytes(throwing: PrivateKey.expand)
        }

        /// The key for a 32-byte seed held in secure memory: the seed is
        /// read in place, never copied into ordinary memory.
        public init(rawRepresentation seed: SecureBytes) throws(TokenMintError) {
            (secretKey, publicKey) = try seed.withUnsafeBytes { (s) throws(TokenMintError) in try PrivateKey.expand(s) }
        }

        /// libsodium's secret key (seed ‖ public key) and the public key for a seed.
        static func expand(_ seed: UnsafeRawBufferPointer) throws(TokenMintError) -> (SecureBytes, PublicKey) {
            try Sodium.ensure()
            guard seed.count == 32 else {
                throw .invalidKeySize("Ed25519 private key must be 32 bytes, got \(seed.count)")
            }
            var publicBytes = [UInt8](repeating: 0, count: 32)
            let secretKey = try SecureBytes(count: 64) { sk throws(TokenMintError) in
                guard crypto_sign_seed_keypair(&publicBytes, sk.bytes, seed.bytes) == 0 else {
                    throw TokenMintError(.crypto.libraryFailure, "crypto_sign_seed_keypair failed")
                }
            }
            return (secretKey, PublicKey(trusted: publicBytes))
        }

        /// A PKCS#8 PEM key (`-----BEGIN PRIVATE KEY-----`).
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            try self.init(encoded: Array(pem.utf8), format: .pem)
        }

        /// A PKCS#8 DER key.
        public init(derRepresentation der: some DataProtocol) throws(TokenMintError) {
            try self.init(encoded: Array(der), format: .der)
        }

        private init(encoded: [UInt8], format: PKey.Format) throws(TokenMintError) {
            let key = try PKey.decode(encoded, format: format, keyType: "ED25519", wantPrivate: true)
            var length = 32
            let seed = try SecureBytes(count: 32) { out throws(TokenMintError) in
                guard EVP_PKEY_get_raw_private_key(key.pointer, out.baseAddress, &length) == 1, length == 32 else {
                    throw OpenSSL.error(.crypto.invalidKey, "not an Ed25519 private key")
                }
            }
            try self.init(rawRepresentation: seed)
        }

        /// The 32-byte seed.
        public var rawRepresentation: SecureBytes {
            SecureBytes(count: 32) { out in
                secretKey.withUnsafeBytes { out.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<32])) }
            }
        }

        /// PKCS#8 PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try encoded(.pem), as: UTF8.self) }
        }

        /// PKCS#8 DER.
        public var derRepresentation: SecureBytes {
            get throws(TokenMintError) { SecureBytes(try encoded(.der)) }
        }

        private func encoded(_ format: PKey.Format) throws(TokenMintError) -> [UInt8] {
            let key: OpaquePointer? = secretKey.withUnsafeBytes { sk in
                EVP_PKEY_new_raw_private_key_ex(nil, "ED25519", nil, sk.bytes, 32)
            }
            guard let key else { throw OpenSSL.failure("EVP_PKEY_new_raw_private_key_ex") }
            return try PKey(taking: key).encode(format: format, structure: "PrivateKeyInfo", privatePart: true)
        }

        /// The 64-byte signature of `message`.
        public func signature(for message: some DataProtocol) throws(TokenMintError) -> [UInt8] {
            message.withContiguousBytes { signature(for: $0) }
        }

        /// The 64-byte signature of the bytes in `message`.
        public func signature(for message: UnsafeRawBufferPointer) -> [UInt8] {
            secretKey.withUnsafeBytes { sk in
                [UInt8](unsafeUninitializedCapacity: 64) { out, initialized in
                    _ = crypto_sign_detached(
                        UnsafeMutableRawBufferPointer(out).bytes, nil, message.bytes, UInt64(message.count), sk.bytes)
                    initialized = 64
                }
            }
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
                throw .invalidKeySize("Ed25519 public key must be 32 bytes, got \(bytes.count)")
            }
            rawRepresentation = Array(bytes)
        }

        /// An SPKI PEM key (`-----BEGIN PUBLIC KEY-----`). A PKCS#8 private key
        /// PEM is accepted too and yields its public key.
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            try self.init(encoded: Array(pem.utf8), format: .pem)
        }

        /// An SPKI DER key.
        public init(derRepresentation der: some DataProtocol) throws(TokenMintError) {
            try self.init(encoded: Array(der), format: .der)
        }

        private init(encoded: [UInt8], format: PKey.Format) throws(TokenMintError) {
            let key = try PKey.decode(encoded, format: format, keyType: "ED25519", wantPrivate: false)
            var raw = [UInt8](repeating: 0, count: 32)
            var length = 32
            guard EVP_PKEY_get_raw_public_key(key.pointer, &raw, &length) == 1, length == 32 else {
                throw OpenSSL.error(.crypto.invalidKey, "not an Ed25519 public key")
            }
            rawRepresentation = raw
        }

        /// SPKI PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try encoded(.pem), as: UTF8.self) }
        }

        /// SPKI DER.
        public var derRepresentation: [UInt8] {
            get throws(TokenMintError) { try encoded(.der) }
        }

        private func encoded(_ format: PKey.Format) throws(TokenMintError) -> [UInt8] {
            guard let key = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, rawRepresentation, 32) else {
                throw OpenSSL.failure("EVP_PKEY_new_raw_public_key_ex")
            }
            return try PKey(taking: key).encode(format: format, structure: "SubjectPublicKeyInfo", privatePart: false)
        }

        /// Strict verification: `false` for a signature that is not exactly 64
        /// bytes, has a non-canonical S, a small-order R, or does not verify.
        public func isValidSignature(_ signature: some DataProtocol, for message: some DataProtocol) -> Bool {
            signature.withContiguousBytes { s in message.withContiguousBytes { m in isValidSignature(s, for: m) } }
        }

        /// As above, over raw buffers.
        public func isValidSignature(_ signature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer) -> Bool {
            guard signature.count == 64, Sodium.ready else { return false }
            return crypto_sign_verify_detached(
                signature.bytes, message.bytes, UInt64(message.count),
                rawRepresentation) == 0
        }
    }
}
