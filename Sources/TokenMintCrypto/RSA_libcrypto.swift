public import TokenMintCore
internal import CLibCrypto

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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

        var openSSLValue: Int32 {
            switch self {
            case .digestLength: -1  // RSA_PSS_SALTLEN_DIGEST
            case .any: -2  // RSA_PSS_SALTLEN_AUTO
            case .maximum: -3  // RSA_PSS_SALTLEN_MAX
            case .bytes(let n): Int32(clamping: n)
            }
        }
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
                throw .invalidKeySize("RSA keys are generated with 2048 to \(RSA.maximumBits) bits (multiple of 8), not \(bits)")
            }
            let context = try PKey.context("RSA")
            defer { EVP_PKEY_CTX_free(context) }
            var generated: OpaquePointer? = nil
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
                EVP_PKEY_generate(context, &generated) == 1, let generated
            else { throw OpenSSL.failure("RSA key generation") }
            try self.init(validated: PKey(taking: generated), check: false)
        }

        /// A PEM key: PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`).
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            let pkey = try PKey.decode(Array(pem.utf8), format: .pem, keyType: "RSA", wantPrivate: true)
            try self.init(validated: pkey, check: true)
        }

        /// A DER key: PKCS#8 or PKCS#1.
        public init(derRepresentation der: some DataProtocol) throws(TokenMintError) {
            let pkey = try PKey.decode(Array(der), format: .der, keyType: "RSA", wantPrivate: true)
            try self.init(validated: pkey, check: true)
        }

        /// A key from its components (n, e, d, p, q; CRT values optional).
        public init(components c: Components) throws(TokenMintError) {
            guard let d = c.d, let p = c.p, let q = c.q else {
                throw .invalidKey("an RSA private key needs n, e, d, p and q")
            }
            try RSA.checkPublic(n: c.n, e: c.e)
            let pkey = try PKey.fromParameters(keyType: "RSA", privatePart: true) { builder throws(TokenMintError) in
                try builder.push("n", bignum: c.n)
                try builder.push("e", bignum: c.e)
                try builder.push("d", secret: d)
                try builder.push("rsa-factor1", secret: p)
                try builder.push("rsa-factor2", secret: q)
                let (dp, dq, qi) = try RSA.crtValues(d: d, p: p, q: q, given: c)
                try builder.push("rsa-exponent1", taking: dp)
                try builder.push("rsa-exponent2", taking: dq)
                try builder.push("rsa-coefficient1", taking: qi)
            }
            try self.init(validated: pkey, check: true)
        }

        init(validated pkey: PKey, check: Bool) throws(TokenMintError) {
            guard pkey.typeName == "RSA" else { throw .invalidKey("not an RSA key (\(pkey.typeName))") }
            guard pkey.hasPrivateKey else { throw .invalidKey("the RSA key has no private part") }
            let publicKey = try PublicKey(pkey: pkey)
            if check { try pkey.check(privatePart: true) }
            self.pkey = pkey
            self.publicKey = publicKey
        }

        /// The components, private ones in zeroing memory.
        public var components: Components {
            func secret(_ name: String) -> SecureBytes? { pkey.bignumParameter(name).map { SecureBytes($0) } }
            var c = publicKey.components
            c.d = secret("d")
            c.p = secret("rsa-factor1")
            c.q = secret("rsa-factor2")
            c.dp = secret("rsa-exponent1")
            c.dq = secret("rsa-exponent2")
            c.qi = secret("rsa-coefficient1")
            return c
        }

        /// PKCS#8 PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { try pkey.encodePEM(structure: "PrivateKeyInfo", privatePart: true) }
        }
        /// PKCS#8 DER.
        public var derRepresentation: SecureBytes {
            get throws(TokenMintError) { SecureBytes(try pkey.encode(format: .der, structure: "PrivateKeyInfo", privatePart: true)) }
        }
        /// PKCS#1 PEM (`-----BEGIN RSA PRIVATE KEY-----`).
        public var pkcs1PEMRepresentation: String {
            get throws(TokenMintError) { try pkey.encodePEM(structure: "type-specific", privatePart: true) }
        }
        /// PKCS#1 DER.
        public var pkcs1DERRepresentation: SecureBytes {
            get throws(TokenMintError) { SecureBytes(try pkey.encode(format: .der, structure: "type-specific", privatePart: true)) }
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
                throw .invalidKeySize("RSA signing needs at least \(RSA.minimumSigningBits) bits; this key has \(keySizeInBits)")
            }
            guard hash.isAllowedForSigning else { throw .unsupported("RSA signing with \(hash.name) is refused") }
            if case .pss(.any, _) = padding { throw .invalidParameter("PSS salt length .any is for verification only") }
            return try pkey.sign(message, hash: hash) { RSA.configure($0, padding: padding, hash: hash) }
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
            let pkey = try PKey.fromParameters(keyType: "RSA", privatePart: false) { builder throws(TokenMintError) in
                try builder.push("n", bignum: n)
                try builder.push("e", bignum: e)
            }
            try self.init(pkey: pkey)
        }

        /// An SPKI or PKCS#1 (`RSA PUBLIC KEY`) PEM key; a private key PEM yields its public key.
        public init(pemRepresentation pem: String) throws(TokenMintError) {
            let pkey = try PKey.decode(Array(pem.utf8), format: .pem, keyType: "RSA", wantPrivate: false)
            try self.init(pkey: pkey)
        }

        /// An SPKI or PKCS#1 DER key.
        public init(derRepresentation der: some DataProtocol) throws(TokenMintError) {
            let pkey = try PKey.decode(Array(der), format: .der, keyType: "RSA", wantPrivate: false)
            try self.init(pkey: pkey)
        }

        init(pkey: PKey) throws(TokenMintError) {
            guard pkey.typeName == "RSA", let n = pkey.bignumParameter("n"), let e = pkey.bignumParameter("e") else {
                throw .invalidKey("not an RSA public key")
            }
            try RSA.checkPublic(n: n, e: e)
            self.pkey = pkey
            self.modulus = n
            self.publicExponent = e
        }

        /// n and e.
        public var components: Components { Components(n: modulus, e: publicExponent) }

        /// SPKI PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { try pkey.encodePEM(structure: "SubjectPublicKeyInfo", privatePart: false) }
        }
        /// SPKI DER.
        public var derRepresentation: [UInt8] {
            get throws(TokenMintError) { try pkey.encode(format: .der, structure: "SubjectPublicKeyInfo", privatePart: false) }
        }
        /// PKCS#1 PEM (`-----BEGIN RSA PUBLIC KEY-----`).
        public var pkcs1PEMRepresentation: String {
            get throws(TokenMintError) { try pkey.encodePEM(structure: "type-specific", privatePart: false) }
        }
        /// PKCS#1 DER.
        public var pkcs1DERRepresentation: [UInt8] {
            get throws(TokenMintError) { try pkey.encode(format: .der, structure: "type-specific", privatePart: false) }
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
            return pkey.verify(signature, message: message, hash: hash) { RSA.configure($0, padding: padding, hash: hash) }
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

    static func configure(_ context: OpaquePointer, padding: Padding, hash: HashFunction) -> Bool {
        switch padding {
        case .pkcs1v15:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .pss(let salt, let mgf1):
            // MGF1 defaults to the signature's hash; naming it again costs a fetch.
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && (mgf1 == nil || mgf1 == hash
                    || EVP_PKEY_CTX_set_rsa_mgf1_md_name(context, (mgf1 ?? hash).openSSLName, nil) == 1)
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(context, salt.openSSLValue) == 1
        }
    }

    static func checkPublic(n: [UInt8], e: [UInt8]) throws(TokenMintError) {
        let n = Array(n.drop(while: { $0 == 0 }))
        let e = Array(e.drop(while: { $0 == 0 }))
        let bits = n.isEmpty ? 0 : n.count * 8 - n[0].leadingZeroBitCount
        guard bits >= RSA.minimumVerificationBits, bits <= RSA.maximumBits else {
            throw .invalidKeySize("RSA modulus must have \(RSA.minimumVerificationBits) to \(RSA.maximumBits) bits, got \(bits)")
        }
        guard n.last.map({ $0 & 1 == 1 }) == true else { throw .invalidKey("RSA modulus is even") }
        guard let lastE = e.last, lastE & 1 == 1, e.count <= 32, !(e.count == 1 && e[0] < 3) else {
            throw .invalidKey("RSA public exponent must be odd, at least 3 and at most 256 bits")
        }
    }

    /// dp, dq and qi as constant-time BIGNUMs the caller owns (and clears):
    /// the given ones, or computed from d, p and q with BIGNUM arithmetic.
    /// The secrets are read in place, never copied into ordinary memory.
    static func crtValues(
        d: SecureBytes, p: SecureBytes, q: SecureBytes, given: Components
    ) throws(TokenMintError) -> (OpaquePointer, OpaquePointer, OpaquePointer) {
        if let dp = given.dp, let dq = given.dq, let qi = given.qi {
            let a = try BigNum.make(secret: dp)
            do throws(TokenMintError) {
                let b = try BigNum.make(secret: dq)
                do throws(TokenMintError) { return (a, b, try BigNum.make(secret: qi)) } catch {
                    BN_clear_free(b)
                    throw error
                }
            } catch {
                BN_clear_free(a)
                throw error
            }
        }
        guard let context = BN_CTX_secure_new() else { throw OpenSSL.failure("BN_CTX_secure_new") }
        defer { BN_CTX_free(context) }
        let dBN = try BigNum.make(secret: d)
        defer { BN_clear_free(dBN) }
        let pBN = try BigNum.make(secret: p)
        defer { BN_clear_free(pBN) }
        let qBN = try BigNum.make(secret: q)
        defer { BN_clear_free(qBN) }
        guard let p1 = BN_secure_new(), let q1 = BN_secure_new() else { throw OpenSSL.failure("BN_secure_new") }
        defer { [p1, q1].forEach { BN_clear_free($0) } }
        guard let dp = BN_secure_new() else { throw OpenSSL.failure("BN_secure_new") }
        guard let dq = BN_secure_new() else {
            BN_clear_free(dp)
            throw OpenSSL.failure("BN_secure_new")
        }
        guard BN_sub(p1, pBN, BN_value_one()) == 1, BN_sub(q1, qBN, BN_value_one()) == 1,
            BN_div(nil, dp, dBN, p1, context) == 1, BN_div(nil, dq, dBN, q1, context) == 1,
            let qi = BN_mod_inverse(nil, qBN, pBN, context)
        else {
            BN_clear_free(dp)
            BN_clear_free(dq)
            throw OpenSSL.error(.crypto.invalidKey, "cannot derive the RSA CRT values (are p and q prime factors?)")
        }
        return (dp, dq, qi)
    }
}
