import TokenMintCore
internal import CLibCrypto
internal import CSodium

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
        guard let group, !order.isEmpty else { throw .unsupported("curve \(name) is not available in this OpenSSL") }
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
    /// the message hash; then ECDSA with that k (§2.4). The HMAC is OpenSSL's;
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

        // x = int2octets(d); h = bits2octets(H(m)).
        var x = [UInt8](repeating: 0, count: rlen)
        guard BN_bn2binpad(d, &x, Int32(rlen)) == Int32(rlen) else { throw OpenSSL.failure("BN_bn2binpad") }
        var h = try bits2octets(digest, order: order, qlen: qlen, rlen: rlen, context: bnContext)
        var v = [UInt8](repeating: 0x01, count: hlen)
        var k = [UInt8](repeating: 0x00, count: hlen)
        defer {
            OPENSSL_cleanse(&x, x.count)
            OPENSSL_cleanse(&h, h.count)
            OPENSSL_cleanse(&v, v.count)
            OPENSSL_cleanse(&k, k.count)
        }
        k = try mac(hash, key: k, v + [0x00] + x + h)
        v = try mac(hash, key: k, v)
        k = try mac(hash, key: k, v + [0x01] + x + h)
        v = try mac(hash, key: k, v)

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
            var t: [UInt8] = []
            while t.count * 8 < qlen {
                v = try mac(hash, key: k, v)
                t += v
            }
            defer { OPENSSL_cleanse(&t, t.count) }
            try bits2int(t, qlen: qlen, into: kBN)
            if BN_is_zero(kBN) == 0, BN_cmp(kBN, order) < 0,
                let signature = try sign(digest: digest, k: kBN, group: group, order: order, point: point,
                                         px: px, r: r, context: bnContext)
            {
                return signature
            }
            k = try mac(hash, key: k, v + [0x00])
            v = try mac(hash, key: k, v)
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

    /// HMAC for the DRBG. The key changes at every step, so a keyed template
    /// does not help; libsodium's HMAC-SHA-256/512 skip OpenSSL's per-call
    /// algorithm fetch, and OpenSSL's HMAC() serves the other hashes.
    private func mac(_ hash: HashFunction, key: [UInt8], _ data: [UInt8]) throws(TokenMintError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length = 0
        if hash == .sha256 {
            var state = crypto_auth_hmacsha256_state()
            crypto_auth_hmacsha256_init(&state, key, key.count)
            crypto_auth_hmacsha256_update(&state, data, UInt64(data.count))
            crypto_auth_hmacsha256_final(&state, &out)
            sodium_memzero(&state, MemoryLayout.size(ofValue: state))
            length = 32
        } else if hash == .sha512 {
            var state = crypto_auth_hmacsha512_state()
            crypto_auth_hmacsha512_init(&state, key, key.count)
            crypto_auth_hmacsha512_update(&state, data, UInt64(data.count))
            crypto_auth_hmacsha512_final(&state, &out)
            sodium_memzero(&state, MemoryLayout.size(ofValue: state))
            length = 64
        } else {
            var macLength: UInt32 = 0
            guard CLibCrypto.HMAC(hash.handle.md, key, Int32(key.count), data, data.count, &out, &macLength) != nil else {
                throw OpenSSL.failure("HMAC")
            }
            length = Int(macLength)
        }
        var input = data
        sodium_memzero(&input, input.count)
        return Array(out.prefix(length))
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

/// The two DER structures TokenMint writes itself: the ECDSA signature
/// SEQUENCE. Parsing is strict DER (X.690 §10).
enum DER {
    static func encodeSignature(r: [UInt8], s: [UInt8]) -> [UInt8] {
        let body = integer(r) + integer(s)
        return [0x30] + length(body.count) + body
    }

    private static func integer(_ value: [UInt8]) -> [UInt8] {
        var bytes = Array(value.drop(while: { $0 == 0 }))
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return [0x02] + length(bytes.count) + bytes
    }

    private static func length(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        if n <= 0xff { return [0x81, UInt8(n)] }
        return [0x82, UInt8(n >> 8), UInt8(n & 0xff)]
    }

    /// Parses `SEQUENCE { INTEGER r, INTEGER s }` and returns r and s padded
    /// to `scalarByteCount`.
    static func decodeSignature(_ der: [UInt8], scalarByteCount: Int) throws(TokenMintError) -> ([UInt8], [UInt8]) {
        var index = 0
        func fail(_ why: String) -> TokenMintError { .invalidSignature("DER signature: \(why)") }
        func readLength() throws(TokenMintError) -> Int {
            guard index < der.count else { throw fail("truncated length") }
            let first = der[index]
            index += 1
            if first < 0x80 { return Int(first) }
            let count = Int(first & 0x7f)
            guard count >= 1, count <= 2, index + count <= der.count else { throw fail("bad length") }
            var value = 0
            for _ in 0..<count {
                value = value << 8 | Int(der[index])
                index += 1
            }
            guard value >= 0x80, count == 1 || value > 0xff else { throw fail("non-minimal length") }
            return value
        }
        func readInteger() throws(TokenMintError) -> [UInt8] {
            guard index < der.count, der[index] == 0x02 else { throw fail("expected INTEGER") }
            index += 1
            let n = try readLength()
            guard n >= 1, index + n <= der.count else { throw fail("truncated INTEGER") }
            let bytes = Array(der[index..<index + n])
            index += n
            guard bytes[0] & 0x80 == 0 else { throw fail("negative INTEGER") }
            if n > 1, bytes[0] == 0, bytes[1] & 0x80 == 0 { throw fail("non-minimal INTEGER") }
            let magnitude = Array(bytes.drop(while: { $0 == 0 }))
            guard magnitude.count <= scalarByteCount else { throw fail("INTEGER larger than the group order") }
            return [UInt8](repeating: 0, count: scalarByteCount - magnitude.count) + magnitude
        }
        guard der.count >= 8, der.count <= 2 * scalarByteCount + 16, der[0] == 0x30 else {
            throw fail("expected a SEQUENCE of plausible size")
        }
        index = 1
        let bodyLength = try readLength()
        guard index + bodyLength == der.count else { throw fail("length does not match the data (trailing or missing bytes)") }
        let r = try readInteger()
        let s = try readInteger()
        guard index == der.count else { throw fail("extra data inside the SEQUENCE") }
        return (r, s)
    }
}
