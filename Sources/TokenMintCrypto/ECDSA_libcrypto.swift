import TokenMintCore
internal import CLibCrypto
internal import CLibCryptoShims

// The OpenSSL side of ECDSA: keys, curve groups and RFC 6979 signing (the
// public API is in ECDSA.swift).

extension ECDSA.Curve {
    /// OpenSSL's name for the curve ("prime256v1", "secp384r1", ...).
    var openSSLName: String { group.name }
}

extension ECDSA {
    /// The named curve of an EC key; with `expected`, a key on another curve
    /// is refused.
    static func curve(of pkey: PKey, expected: Curve?) throws(TokenMintError) -> Curve {
        guard pkey.typeName == "EC", let groupName = pkey.stringParameter(OSSL_PKEY_PARAM_GROUP_NAME) else {
            throw TokenMintError(.crypto.invalidKey, "not an EC key on a named curve")
        }
        guard let curve = Curve(name: groupName) else { throw TokenMintError(.crypto.unsupportedAlgorithm, "EC curve \(groupName) is not supported") }
        if let expected, expected != curve {
            throw TokenMintError(.crypto.invalidKey, "expected a \(expected) key, got \(curve)")
        }
        return curve
    }
}

extension ECDSA.PrivateKey {
    /// A new random key on `curve` from OpenSSL's generator.
    static func openSSLGenerate(curve: ECDSA.Curve) throws(TokenMintError) -> PKey {
        let context = try PKey.context("EC")
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_group_name(context, curve.openSSLName) == 1,
            EVP_PKEY_generate(context, &generated) == 1, let generated
        else { throw OpenSSL.failure("EC key generation on \(curve)") }
        return PKey(taking: generated)
    }

    /// An EC key pair from a scalar the caller has checked to lie in
    /// [1, n−1]: the public point is computed. The scalar is read in place.
    static func openSSLKey(validScalar scalar: UnsafeRawBufferPointer, curve: ECDSA.Curve) throws(TokenMintError) -> PKey {
        let d = try BigNum.make(secret: scalar)
        let point: [UInt8]
        do { point = try curve.group.publicPoint(forPrivate: d) } catch {
            BN_clear_free(d)
            throw error
        }
        return try PKey.fromParameters(keyType: "EC", privatePart: true) { builder throws(TokenMintError) in
            try builder.push("priv", taking: d)
            try builder.push("group", string: curve.openSSLName)
            try builder.push("pub", octets: point)
        }
    }

    /// A PKCS#8 or SEC1 key pair in PEM or DER.
    static func openSSLDecode(_ encoded: [UInt8], format: PKey.Format) throws(TokenMintError) -> PKey {
        try PKey.decode(encoded, format: format, keyType: "EC", wantPrivate: true)
    }

    /// Wraps an OpenSSL key pair; `check` runs OpenSSL's consistency checks.
    init(validated pkey: PKey, curve expected: ECDSA.Curve?, check: Bool) throws(TokenMintError) {
        let curve = try ECDSA.curve(of: pkey, expected: expected)
        guard pkey.hasPrivateKey else { throw TokenMintError(.crypto.invalidKey, "the \(curve) key has no private part") }
        if check { try pkey.check(privatePart: true) }
        self.key = try ECKeyPair(pkey: pkey, curve: curve)
        self.publicKey = try ECDSA.PublicKey(pkey: pkey, curve: curve)
    }

    /// The private scalar d, big-endian, padded to the order's size.
    func openSSLPrivateScalar() throws(TokenMintError) -> SecureBytes {
        guard let d = key.pkey.secretParameter(OSSL_PKEY_PARAM_PRIV_KEY, paddedTo: curve.scalarByteCount) else {
            throw OpenSSL.failure("cannot read the private scalar")
        }
        return d
    }

    /// PKCS#8 (`PrivateKeyInfo`) or, with `sec1`, SEC1 in PEM or DER.
    func openSSLEncoded(_ format: PKey.Format, sec1: Bool) throws(TokenMintError) -> [UInt8] {
        if sec1 {
            return try key.pkey.encode(format: format, structure: "type-specific", privatePart: true)
        }
        return try key.pkey.encode(format: format, structure: "PrivateKeyInfo", privatePart: true)
    }
}

extension ECDSA.PublicKey {
    /// A public key for a SEC1 point on `curve`, checked by OpenSSL.
    static func openSSLKey(point bytes: [UInt8], curve: ECDSA.Curve) throws(TokenMintError) -> PKey {
        let pkey = try PKey.fromParameters(keyType: "EC", privatePart: false) { builder throws(TokenMintError) in
            try builder.push("group", string: curve.openSSLName)
            try builder.push("pub", octets: bytes)
        }
        try pkey.check(privatePart: false)
        return pkey
    }

    /// An SPKI key in PEM or DER (a private key yields its public half),
    /// checked by OpenSSL.
    static func openSSLDecode(_ encoded: [UInt8], format: PKey.Format) throws(TokenMintError) -> PKey {
        let pkey = try PKey.decode(encoded, format: format, keyType: "EC", wantPrivate: false)
        try pkey.check(privatePart: false)
        return pkey
    }

    /// Wraps an OpenSSL key, reading its point as uncompressed 04‖x‖y.
    init(pkey: PKey, curve: ECDSA.Curve) throws(TokenMintError) {
        guard let point = try? curve.group.uncompressed(pkey.octetParameter(OSSL_PKEY_PARAM_PUB_KEY) ?? []) else {
            throw OpenSSL.error(.crypto.invalidKey, "cannot read the \(curve) public point")
        }
        self.pkey = pkey
        self.curve = curve
        self.x963Representation = point
    }

    /// SPKI (`SubjectPublicKeyInfo`) in PEM or DER.
    func openSSLEncoded(_ format: PKey.Format) throws(TokenMintError) -> [UInt8] {
        try pkey.encode(format: format, structure: "SubjectPublicKeyInfo", privatePart: false)
    }
}

/// One curve's `EC_GROUP`, fetched once and shared (read-only) by all threads.
final class CurveGroup: @unchecked Sendable {
    let name: String
    let group: OpaquePointer?
    /// The group order n, big-endian, padded to its byte length.
    let order: [UInt8]

    init(_ name: String) {
        self.name = name
        let nid = OBJ_sn2nid(name)
        group = EC_GROUP_new_by_curve_name(nid)
        if let group, let n = EC_GROUP_get0_order(group) {
            order = BigNum.bytes(n)
        } else {
            order = []
        }
    }

    deinit { EC_GROUP_free(group) }

    private func requireGroup() throws(TokenMintError) -> OpaquePointer {
        guard let group, !order.isEmpty else { throw TokenMintError(.crypto.unsupportedAlgorithm, "curve \(name) is not available in this OpenSSL") }
        return group
    }

    /// The uncompressed point d·G, for a private scalar BIGNUM the caller owns.
    func publicPoint(forPrivate d: OpaquePointer) throws(TokenMintError) -> [UInt8] {
        let group = try requireGroup()
        guard let point = EC_POINT_new(group) else { throw OpenSSL.failure("EC_POINT_new") }
        defer { EC_POINT_free(point) }
        guard EC_POINT_mul(group, point, d, nil, nil, nil) == 1 else { throw OpenSSL.failure("EC_POINT_mul") }
        return try encode(point, group: group)
    }

    /// Re-encodes any valid SEC1 point as uncompressed 04‖x‖y.
    func uncompressed(_ encoded: [UInt8]) throws(TokenMintError) -> [UInt8] {
        let group = try requireGroup()
        guard let point = EC_POINT_new(group) else { throw OpenSSL.failure("EC_POINT_new") }
        defer { EC_POINT_free(point) }
        guard EC_POINT_oct2point(group, point, encoded, encoded.count, nil) == 1,
            EC_POINT_is_at_infinity(group, point) == 0
        else { throw OpenSSL.error(.crypto.invalidKey, "point is not on \(name)") }
        return try encode(point, group: group)
    }

    private func encode(_ point: OpaquePointer, group: OpaquePointer) throws(TokenMintError) -> [UInt8] {
        let length = EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, nil, 0, nil)
        guard length > 0 else { throw OpenSSL.failure("EC_POINT_point2oct") }
        var out = [UInt8](repeating: 0, count: length)
        guard EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &out, length, nil) == length else {
            throw OpenSSL.failure("EC_POINT_point2oct")
        }
        return out
    }
}

/// A private EC key: the provider key for ordinary signing and the legacy
/// `EC_KEY` view that `ECDSA_do_sign_ex` needs for caller-chosen nonces.
final class ECKeyPair: @unchecked Sendable {
    let pkey: PKey
    let curve: ECDSA.Curve
    private let ecKey: OpaquePointer

    init(pkey: PKey, curve: ECDSA.Curve) throws(TokenMintError) {
        guard let ecKey = EVP_PKEY_get1_EC_KEY(pkey.pointer) else { throw OpenSSL.failure("EVP_PKEY_get1_EC_KEY") }
        self.pkey = pkey
        self.curve = curve
        self.ecKey = ecKey
    }

    deinit { EC_KEY_free(ecKey) }

    /// Whether P-256 RFC 6979 signing takes its set-up from OpenSSL (see
    /// `deterministicSignature`): false once libcrypto drew a nonce in a way
    /// the shim does not serve, after which the shim makes k·G and k⁻¹ itself.
    static var curveSetupLive: Bool { tokenmint_ecdsa_rfc6979_curve_setup_live() == 1 }

    /// How an RFC 6979 signature is made; the defaults are the library's,
    /// the others let tests run the paths a libcrypto may force.
    struct DeterministicOptions {
        /// P-256 takes k·G and k⁻¹ from OpenSSL's own ECDSA set-up handed
        /// this k; off, the shim makes them (as it does for other curves).
        var curveSetup = true
        /// Every DRBG step keys its HMAC afresh, as libcrypto 3.0.0–3.0.2
        /// needs (on later ones, steps that keep their key restart it).
        var rekeyEveryStep = false
    }

    /// RFC 6979 §3.2: k from an HMAC_DRBG keyed with the private scalar and
    /// the message hash; then ECDSA with that k (§2.4). One C call
    /// (`CLibCryptoShims`) runs the DRBG's HMACs, k·G, k⁻¹ and the signature,
    /// each by libcrypto, with the DRBG's state on its stack and cleansed.
    func deterministicSignature(digest: [UInt8], hash: HashFunction, options: DeterministicOptions = .init()) throws(TokenMintError) -> ECDSA.Signature {
        try deterministicSignatureTrace(digest: digest, hash: hash, options: options).signature
    }

    /// The C call behind every RFC 6979 signature: r, s, and whether OpenSSL's
    /// set-up made k·G and k⁻¹.
    private static func deterministicSign(
        _ key: OpaquePointer, size: Int, digest: [UInt8], hash: HashFunction, options: DeterministicOptions
    ) throws(TokenMintError) -> (r: [UInt8], s: [UInt8], tookCurveSetup: Bool) {
        let template = try HMACTemplate.forHash(hash)
        var r = [UInt8](repeating: 0, count: size)
        var s = [UInt8](repeating: 0, count: size)
        let flags = (options.curveSetup ? Int32(TOKENMINT_RFC6979_CURVE_SETUP) : 0)
            | (options.rekeyEveryStep ? Int32(TOKENMINT_RFC6979_REKEY) : 0)
        let (status, took) = withExtendedLifetime(template) {
            let status = tokenmint_ecdsa_sign_rfc6979(key, template.context, hash.digestSize, digest, digest.count, &r, &s, size, flags)
            // Read on the thread that signed: the C call is synchronous.
            return (status, tokenmint_ecdsa_rfc6979_took_curve_setup() == 1)
        }
        switch status {
        case 1: return (r, s, took)
        case -1: throw TokenMintError(.crypto.libraryFailure, "RFC 6979: no usable nonce found")
        default: throw OpenSSL.failure("RFC 6979 signing")
        }
    }

    /// The signature, and whether OpenSSL's set-up made k·G and k⁻¹ (which
    /// tests check).
    func deterministicSignatureTrace(digest: [UInt8], hash: HashFunction, options: DeterministicOptions) throws(TokenMintError) -> (signature: ECDSA.Signature, tookCurveSetup: Bool) {
        let (r, s, took) = try Self.deterministicSign(ecKey, size: curve.scalarByteCount, digest: digest, hash: hash, options: options)
        return (try ECDSA.Signature(curve: curve, r: r, s: s), took)
    }

    /// Whether this libcrypto knows the curve `name` (an OpenSSL short name).
    static func knowsCurve(named name: String) -> Bool {
        ERR_set_mark()
        defer { ERR_pop_to_mark() }
        let nid = OBJ_sn2nid(name)
        guard nid != NID_undef, let group = EC_GROUP_new_by_curve_name(nid) else { return false }
        EC_GROUP_free(group)
        return true
    }

    /// RFC 6979 signing (r‖s) with the private scalar `privateKey` on any
    /// curve OpenSSL knows by short name. For tests: the §3.2 h.3 retry
    /// (a candidate k ≥ q) needs a curve whose order is far below 2^qlen,
    /// such as RFC 6979 A.1.2's K-163; the NIST prime curves almost never
    /// take it.
    static func deterministicSignature(
        curveNamed name: String, privateKey: [UInt8], digest: [UInt8], hash: HashFunction, options: DeterministicOptions = .init()
    ) throws(TokenMintError) -> [UInt8] {
        guard knowsCurve(named: name), let key = EC_KEY_new_by_curve_name(OBJ_sn2nid(name)), let group = EC_KEY_get0_group(key) else {
            throw TokenMintError(.crypto.unsupportedAlgorithm, "no curve \(name) in this libcrypto")
        }
        defer { EC_KEY_free(key) }
        guard let scalar = BN_bin2bn(privateKey, Int32(privateKey.count), nil) else { throw OpenSSL.failure("BN_bin2bn") }
        defer { BN_clear_free(scalar) }
        guard EC_KEY_set_private_key(key, scalar) == 1 else { throw OpenSSL.error(.crypto.invalidKey, "private scalar on \(name)") }
        let size = (Int(BN_num_bits(EC_GROUP_get0_order(group))) + 7) / 8
        let (r, s, _) = try deterministicSign(key, size: size, digest: digest, hash: hash, options: options)
        return r + s
    }
}
