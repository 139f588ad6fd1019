public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls are in RSA_libcrypto.swift.

/// RSA signatures (RFC 8017): PKCS#1 v1.5 and PSS, through OpenSSL 3.
public enum RSA {
    /// The smallest modulus TokenMint signs with (RFC 7518 §3.3, NIST SP 800-131A).
    public static let minimumSigningBits = 2048
    /// The smallest modulus TokenMint verifies with: legacy 1024-bit keys still verify.
    public static let minimumVerificationBits = 1024
    /// The largest modulus accepted anywhere (bounds the work a key can cause).
    public static let maximumBits = 16384

    /// The signature scheme.
    public enum Padding: Sendable, Hashable {
        /// RSASSA-PKCS1-v1_5.
        case pkcs1v15
        /// RSASSA-PSS with MGF1 (by default over the signature's hash).
        case pss(saltLength: PSSSaltLength = .digestLength, mgf1Hash: HashFunction? = nil)

        /// PSS with salt length = hash length and MGF1 over the same hash (JOSE PS256/384/512).
        public static let pss = Padding.pss()
    }

    /// The PSS salt length.
    public enum PSSSaltLength: Sendable, Hashable {
        /// As long as the hash output (JOSE's rule).
        case digestLength
        /// The largest the key allows.
        case maximum
        /// Exactly this many bytes.
        case bytes(Int)
        /// Verification only: whatever the signature carries.
        case any
    }

    /// The components of an RSA key, big-endian unsigned.
    public struct Components: Sendable {
        /// Modulus.
        public var n: [UInt8]
        /// Public exponent.
        public var e: [UInt8]
        /// Private exponent (nil for a public key).
        public var d: SecureBytes?
        /// First prime factor.
        public var p: SecureBytes?
        /// Second prime factor.
        public var q: SecureBytes?
        /// d mod (p−1).
        public var dp: SecureBytes?
        /// d mod (q−1).
        public var dq: SecureBytes?
        /// q⁻¹ mod p.
        public var qi: SecureBytes?

        /// Collects components; the CRT values are optional on input (they are computed from p and q).
        public init(
            n: [UInt8], e: [UInt8], d: SecureBytes? = nil, p: SecureBytes? = nil, q: SecureBytes? = nil,
            dp: SecureBytes? = nil, dq: SecureBytes? = nil, qi: SecureBytes? = nil
        ) {
            self.n = n
            self.e = e
            self.d = d
            self.p = p
            self.q = q
            self.dp = dp
            self.dq = dq
            self.qi = qi
        }
    }

    /// A signing key.
    public struct PrivateKey: Sendable {
        let pkey: PKey
        /// The matching public key.
        public let publicKey: PublicKey
        /// The modulus size in bits.
        public var keySizeInBits: Int { publicKey.keySizeInBits }

        /// A new key with e = 65537.
        /// - Parameter bits: 2048 to 16384, a multiple of 8 (3072 or more is advised past 2030).
        public init(bits: Int = 2048) throws(TokenMintError) {
            guard bits >= RSA.minimumSigningBits, bits <= RSA.maximumBits, bits % 8 == 0 else {
                throw TokenMintError(.crypto.invalidKeySize, "RSA keys are generated with 2048 to \(RSA.maximumBits) bits (multiple of 8), not \(bits)")
            }
            let pkey = try PrivateKey.openSSLGenerate(bits: bits)
            try self.init(validated: pkey, check: false)
        }

        /// A PEM key: PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`).
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            try self.init(validated: try PrivateKey.openSSLDecode(Array(pem.utf8), format: .pem), check: true)
        }

        /// A DER key: PKCS#8 or PKCS#1.
        public init(derRepresentation der: some DataProtocol) throws(TokenMintError) {
            try self.init(validated: try PrivateKey.openSSLDecode(Array(der), format: .der), check: true)
        }

        /// A key from its components (n, e, d, p, q; CRT values optional).
        public init(components c: Components) throws(TokenMintError) {
            guard let d = c.d, let p = c.p, let q = c.q else {
                throw TokenMintError(.crypto.invalidKey, "an RSA private key needs n, e, d, p and q")
            }
            try RSA.checkPublic(n: c.n, e: c.e)
            let pkey = try PrivateKey.openSSLKey(components: c, d: d, p: p, q: q)
            try self.init(validated: pkey, check: true)
        }

        /// The components, private ones in zeroing memory.
        public var components: Components { openSSLComponents() }

        /// PKCS#8 PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem, pkcs1: false), as: UTF8.self) }
        }
        /// PKCS#8 DER.
        public var derRepresentation: SecureBytes {
            get throws(TokenMintError) { SecureBytes(try openSSLEncoded(.der, pkcs1: false)) }
        }
        /// PKCS#1 PEM (`-----BEGIN RSA PRIVATE KEY-----`).
        public var pkcs1PEMRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem, pkcs1: true), as: UTF8.self) }
        }
        /// PKCS#1 DER.
        public var pkcs1DERRepresentation: SecureBytes {
            get throws(TokenMintError) { SecureBytes(try openSSLEncoded(.der, pkcs1: true)) }
        }

        /// Signs `message`.
        /// - Throws: `invalidKeySize` for a key under 2048 bits, `unsupportedAlgorithm` for SHA-1.
        public func signature(for message: some DataProtocol, hash: HashFunction = .sha256, padding: Padding) throws(TokenMintError) -> [UInt8] {
            try message.withContiguousBytes(throwing: { bytes throws(TokenMintError) in
                try signature(for: bytes, hash: hash, padding: padding)
            })
        }

        /// Signs the bytes in `message`.
        public func signature(for message: UnsafeRawBufferPointer, hash: HashFunction = .sha256, padding: Padding) throws(TokenMintError) -> [UInt8] {
            guard keySizeInBits >= RSA.minimumSigningBits else {
                throw TokenMintError(.crypto.invalidKeySize, "RSA signing needs at least \(RSA.minimumSigningBits) bits; this key has \(keySizeInBits)")
            }
            guard hash.isAllowedForSigning else { throw TokenMintError(.crypto.unsupportedAlgorithm, "RSA signing with \(hash.name) is refused") }
            if case .pss(.any, _) = padding { throw TokenMintError(.crypto.invalidParameter, "PSS salt length .any is for verification only") }
            return try openSSLSignature(for: message, hash: hash, padding: padding)
        }
    }

    /// A verification key.
    public struct PublicKey: Sendable, Hashable {
        let pkey: PKey
        /// The modulus n, big-endian, without leading zeros.
        public let modulus: [UInt8]
        /// The public exponent e, big-endian.
        public let publicExponent: [UInt8]
        /// The modulus size in bits.
        public var keySizeInBits: Int { pkey.bits }

        /// The key (n, e).
        public init(modulus n: some DataProtocol, publicExponent e: some DataProtocol) throws(TokenMintError) {
            let n = Array(n.drop(while: { $0 == 0 }))
            let e = Array(e.drop(while: { $0 == 0 }))
            try RSA.checkPublic(n: n, e: e)
            let pkey = try PublicKey.openSSLKey(n: n, e: e)
            try self.init(pkey: pkey)
        }

        /// An SPKI or PKCS#1 (`RSA PUBLIC KEY`) PEM key; a private key PEM yields its public key.
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            try self.init(pkey: try PublicKey.openSSLDecode(Array(pem.utf8), format: .pem))
        }

        /// An SPKI or PKCS#1 DER key.
        public init(derRepresentation der: some DataProtocol) throws(TokenMintError) {
            try self.init(pkey: try PublicKey.openSSLDecode(Array(der), format: .der))
        }

        /// n and e.
        public var components: Components { Components(n: modulus, e: publicExponent) }

        /// SPKI PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem, pkcs1: false), as: UTF8.self) }
        }
        /// SPKI DER.
        public var derRepresentation: [UInt8] {
            get throws(TokenMintError) { try openSSLEncoded(.der, pkcs1: false) }
        }
        /// PKCS#1 PEM (`-----BEGIN RSA PUBLIC KEY-----`).
        public var pkcs1PEMRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem, pkcs1: true), as: UTF8.self) }
        }
        /// PKCS#1 DER.
        public var pkcs1DERRepresentation: [UInt8] {
            get throws(TokenMintError) { try openSSLEncoded(.der, pkcs1: true) }
        }

        /// Verifies `signature` over `message`. The signature must be exactly
        /// the modulus length; anything malformed is `false`.
        public func isValidSignature(
            _ signature: some DataProtocol, for message: some DataProtocol, hash: HashFunction = .sha256, padding: Padding
        ) -> Bool {
            signature.withContiguousBytes { s in
                message.withContiguousBytes { m in isValidSignature(s, for: m, hash: hash, padding: padding) }
            }
        }

        /// As above, over raw buffers.
        public func isValidSignature(
            _ signature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer, hash: HashFunction = .sha256,
            padding: Padding
        ) -> Bool {
            guard signature.count == (keySizeInBits + 7) / 8 else { return false }
            return openSSLIsValidSignature(signature, for: message, hash: hash, padding: padding)
        }

        /// Compares n and e.
        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.modulus == rhs.modulus && lhs.publicExponent == rhs.publicExponent
        }
        /// Hashes n and e.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(modulus)
            hasher.combine(publicExponent)
        }
    }

    /// The checks every RSA public key passes: a modulus of 1024 to 16384
    /// bits that is odd, and an odd public exponent of 3 to 256 bits.
    static func checkPublic(n: [UInt8], e: [UInt8]) throws(TokenMintError) {
        let n = Array(n.drop(while: { $0 == 0 }))
        let e = Array(e.drop(while: { $0 == 0 }))
        let bits = n.isEmpty ? 0 : n.count * 8 - n[0].leadingZeroBitCount
        guard bits >= RSA.minimumVerificationBits, bits <= RSA.maximumBits else {
            throw TokenMintError(.crypto.invalidKeySize, "RSA modulus must have \(RSA.minimumVerificationBits) to \(RSA.maximumBits) bits, got \(bits)")
        }
        guard n.last.map({ $0 & 1 == 1 }) == true else { throw TokenMintError(.crypto.invalidKey, "RSA modulus is even") }
        guard let lastE = e.last, lastE & 1 == 1, e.count <= 32, !(e.count == 1 && e[0] < 3) else {
            throw TokenMintError(.crypto.invalidKey, "RSA public exponent must be odd, at least 3 and at most 256 bits")
        }
    }
}

// MARK: - Key transport (RSAES-OAEP)

extension RSA.PublicKey {
    /// Encrypts a short secret (a content key) with RSAES-OAEP (RFC 8017
    /// §7.1), MGF1 over the same hash: SHA-1 for JOSE's RSA-OAEP, SHA-256
    /// for RSA-OAEP-256.
    /// - Throws: `invalidKeySize` for a modulus under 2048 bits,
    ///   `invalidParameter` when the secret is too long for the key.
    public func encrypt(_ secret: SecureBytes, oaepHash hash: HashFunction) throws(TokenMintError) -> [UInt8] {
        guard keySizeInBits >= RSA.minimumSigningBits else {
            throw TokenMintError(.crypto.invalidKeySize, "RSA-OAEP needs at least \(RSA.minimumSigningBits) bits; this key has \(keySizeInBits)")
        }
        guard secret.count <= keySizeInBits / 8 - 2 * hash.digestSize - 2 else {
            throw TokenMintError(.crypto.invalidParameter, "\(secret.count) bytes are too long for RSA-OAEP-\(hash.name) with this key")
        }
        return try openSSLEncrypt(secret, hash: hash)
    }
}

extension RSA.PrivateKey {
    /// Decrypts an RSAES-OAEP ciphertext; the secret comes back in zeroing memory.
    /// - Throws: `.crypto.decryptionFailed` for any ciphertext that does not
    ///   decrypt, without saying why.
    public func decrypt(_ ciphertext: some DataProtocol, oaepHash hash: HashFunction) throws(TokenMintError) -> SecureBytes {
        let input = Array(ciphertext)
        guard keySizeInBits >= RSA.minimumSigningBits, input.count == (keySizeInBits + 7) / 8 else {
            throw TokenMintError(.crypto.decryptionFailed, "RSA-OAEP: the ciphertext does not decrypt")
        }
        return try openSSLDecrypt(input, hash: hash)
    }
}
