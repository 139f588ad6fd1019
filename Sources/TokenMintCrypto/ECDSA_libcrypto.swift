import TokenMintCore
internal import CLibCrypto

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

    /// RFC 6979 §3.2: k from an HMAC_DRBG keyed with the private scalar and
    /// the message hash; then ECDSA with that k (§2.4). The HMAC is OpenSSL's
    /// (SHA-NI where the CPU has it, 0.36 µs a step against libsodium's 0.84);
    /// the arithmetic is OpenSSL's BIGNUM and EC_POINT calls.
    func deterministicSignature(digest: [UInt8], hash: HashFunction) throws(TokenMintError) -> ECDSA.Signature {
        guard let group = EC_KEY_get0_group(ecKey), let order = EC_GROUP_get0_order(group),
            let d = EC_KEY_get0_private_key(ecKey)
        else { throw OpenSSL.failure("EC key has no group or private scalar") }
        guard let bnContext = BN_CTX_secure_new() else { throw OpenSSL.failure("BN_CTX_secure_new") }
        defer { BN_CTX_free(bnContext) }

        let qlen = Int(BN_num_bits(order))
        let rlen = (qlen + 7) / 8
        let hlen = hash.digestSize
        // The DRBG's HMAC, rekeyed at every step on one context (RekeyedMAC).
        let mac = try RekeyedMAC(hash)

        // x = int2octets(d); h = bits2octets(H(m)).
        var x = [UInt8](repeating: 0, count: rlen)
        defer { OPENSSL_cleanse(&x, x.count) }
        guard BN_bn2binpad(d, &x, Int32(rlen)) == Int32(rlen) else { throw OpenSSL.failure("BN_bn2binpad") }
        var h = try bits2octets(digest, order: order, qlen: qlen, rlen: rlen, context: bnContext)
        var v = [UInt8](repeating: 0x01, count: hlen)
        var k = [UInt8](repeating: 0x00, count: hlen)
        // Every buffer that holds x or a DRBG value is made once, written in
        // place and wiped at the end: no secret is left in a freed array.
        var scratch = [UInt8](repeating: 0, count: hlen)
        var input = [UInt8]()
        input.reserveCapacity(hlen + 1 + 2 * rlen)
        var t = [UInt8]()
        t.reserveCapacity(rlen + hlen)
        defer {
            OPENSSL_cleanse(&h, h.count)
            OPENSSL_cleanse(&v, v.count)
            OPENSSL_cleanse(&k, k.count)
            OPENSSL_cleanse(&scratch, scratch.count)
            // The whole reserved capacity, not only the current count: a
            // shorter last step leaves x‖h in the spare bytes.
            ECKeyPair.wipeCapacity(&input)
            ECKeyPair.wipeCapacity(&t)
        }
        /// k = HMAC_k(V || separator [|| x || h]), then V = HMAC_k(V).
        func step(_ separator: UInt8, withSeed: Bool) throws(TokenMintError) {
            input.removeAll(keepingCapacity: true)
            input += v
            input.append(separator)
            if withSeed {
                input += x
                input += h
            }
            try mac.mac(key: k, input, into: &scratch)
            swap(&k, &scratch)
            try mac.mac(key: k, v, into: &scratch)
            swap(&v, &scratch)
        }
        try step(0x00, withSeed: true)
        try step(0x01, withSeed: true)

        guard let kBN = BN_secure_new(), let point = EC_POINT_new(group), let px = BN_new(), let r = BN_new() else {
            throw OpenSSL.failure("BIGNUM allocation")
        }
        defer {
            BN_clear_free(kBN)
            EC_POINT_free(point)
            BN_free(px)
            BN_free(r)
        }
        BN_set_flags(kBN, BN_FLG_CONSTTIME)

        for _ in 0..<64 {  // A retry has probability ~2^-128 per round on the supported curves.
            t.removeAll(keepingCapacity: true)
            while t.count * 8 < qlen {
                try mac.mac(key: k, v, into: &scratch)
                swap(&v, &scratch)
                t += v
            }
            try bits2int(t, qlen: qlen, into: kBN)
            if BN_is_zero(kBN) == 0, BN_cmp(kBN, order) < 0,
                let signature = try sign(digest: digest, k: kBN, group: group, order: order, point: point,
                                         px: px, r: r, context: bnContext)
            {
                return signature
            }
            try step(0x00, withSeed: false)
        }
        throw TokenMintError(.crypto.libraryFailure, "RFC 6979: no usable nonce found")
    }

    /// One ECDSA signature with nonce k, or nil when r or s came out zero
    /// (the caller then draws the next k, as RFC 6979 §3.2 step h.3 says).
    private func sign(
        digest: [UInt8], k: OpaquePointer, group: OpaquePointer, order: OpaquePointer, point: OpaquePointer,
        px: OpaquePointer, r: OpaquePointer, context: OpaquePointer
    ) throws(TokenMintError) -> ECDSA.Signature? {
        guard EC_POINT_mul(group, point, k, nil, nil, context) == 1,
            EC_POINT_get_affine_coordinates(group, point, px, nil, context) == 1,
            BN_nnmod(r, px, order, context) == 1
        else { throw OpenSSL.failure("computing k·G") }
        if BN_is_zero(r) == 1 { return nil }
        guard let kInverse = BN_mod_inverse(nil, k, order, context) else { throw OpenSSL.failure("BN_mod_inverse") }
        defer { BN_clear_free(kInverse) }
        guard let sig = ECDSA_do_sign_ex(digest, Int32(digest.count), kInverse, r, ecKey) else {
            OpenSSL.clearErrors()  // s = 0: OpenSSL asks for new set-up values
            return nil
        }
        defer { ECDSA_SIG_free(sig) }
        guard let sigR = ECDSA_SIG_get0_r(sig), let sigS = ECDSA_SIG_get0_s(sig),
            let rBytes = BigNum.bytes(sigR, paddedTo: curve.scalarByteCount),
            let sBytes = BigNum.bytes(sigS, paddedTo: curve.scalarByteCount)
        else { throw OpenSSL.failure("ECDSA_SIG_get0") }
        return try ECDSA.Signature(curve: curve, r: rBytes, s: sBytes)
    }

    /// Zeroes every byte `buffer` has reserved, in place (it is filled to its
    /// capacity with zeros, which writes over the spare bytes, then emptied).
    static func wipeCapacity(_ buffer: inout [UInt8]) {
        buffer.append(contentsOf: repeatElement(0, count: buffer.capacity - buffer.count))
        OPENSSL_cleanse(&buffer, buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// bits2int (RFC 6979 §2.3.2): the leftmost qlen bits of `bytes`.
    private func bits2int(_ bytes: [UInt8], qlen: Int, into bn: OpaquePointer) throws(TokenMintError) {
        guard BN_bin2bn(bytes, Int32(bytes.count), bn) != nil else { throw OpenSSL.failure("BN_bin2bn") }
        let excess = bytes.count * 8 - qlen
        if excess > 0, BN_rshift(bn, bn, Int32(excess)) != 1 { throw OpenSSL.failure("BN_rshift") }
    }

    /// bits2octets (RFC 6979 §2.3.4): int2octets(bits2int(h) mod q).
    private func bits2octets(
        _ digest: [UInt8], order: OpaquePointer, qlen: Int, rlen: Int, context: OpaquePointer
    ) throws(TokenMintError) -> [UInt8] {
        guard let z = BN_new() else { throw OpenSSL.failure("BN_new") }
        defer { BN_clear_free(z) }
        try bits2int(digest, qlen: qlen, into: z)
        if BN_cmp(z, order) >= 0, BN_sub(z, z, order) != 1 { throw OpenSSL.failure("BN_sub") }
        var out = [UInt8](repeating: 0, count: rlen)
        guard BN_bn2binpad(z, &out, Int32(rlen)) == Int32(rlen) else { throw OpenSSL.failure("BN_bn2binpad") }
        return out
    }
}
