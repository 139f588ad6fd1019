import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of RSA (the public API is in RSA.swift).

extension RSA.PSSSaltLength {
    /// OpenSSL's `RSA_PSS_SALTLEN_*` value.
    var openSSLValue: Int32 {
        switch self {
        case .digestLength: -1  // RSA_PSS_SALTLEN_DIGEST
        case .any: -2  // RSA_PSS_SALTLEN_AUTO
        case .maximum: -3  // RSA_PSS_SALTLEN_MAX
        case .bytes(let n): Int32(clamping: n)
        }
    }
}

extension RSA.PrivateKey {
    /// A new key with e = 65537 (the caller has checked `bits`).
    static func openSSLGenerate(bits: Int) throws(TokenMintError) -> PKey {
        let context = try PKey.context("RSA")
        defer { EVP_PKEY_CTX_free(context) }
        var generated: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
            EVP_PKEY_generate(context, &generated) == 1, let generated
        else { throw OpenSSL.failure("RSA key generation") }
        return PKey(taking: generated)
    }

    /// A PKCS#8 or PKCS#1 key pair in PEM or DER.
    static func openSSLDecode(_ encoded: [UInt8], format: PKey.Format) throws(TokenMintError) -> PKey {
        try PKey.decode(encoded, format: format, keyType: "RSA", wantPrivate: true)
    }

    /// A key pair from its components; `d`, `p` and `q` are read in place.
    static func openSSLKey(
        components c: RSA.Components, d: SecureBytes, p: SecureBytes, q: SecureBytes
    ) throws(TokenMintError) -> PKey {
        try PKey.fromParameters(keyType: "RSA", privatePart: true) { builder throws(TokenMintError) in
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
    }

    /// Wraps an OpenSSL key pair; `check` runs OpenSSL's consistency checks.
    init(validated pkey: PKey, check: Bool) throws(TokenMintError) {
        guard pkey.typeName == "RSA" else { throw TokenMintError(.crypto.invalidKey, "not an RSA key (\(pkey.typeName))") }
        guard pkey.hasPrivateKey else { throw TokenMintError(.crypto.invalidKey, "the RSA key has no private part") }
        let publicKey = try RSA.PublicKey(pkey: pkey)
        if check { try pkey.check(privatePart: true) }
        self.pkey = pkey
        self.publicKey = publicKey
    }

    /// The components, private ones in zeroing memory.
    func openSSLComponents() -> RSA.Components {
        func secret(_ name: String) -> SecureBytes? { pkey.secretParameter(name) }
        var c = publicKey.components
        c.d = secret("d")
        c.p = secret("rsa-factor1")
        c.q = secret("rsa-factor2")
        c.dp = secret("rsa-exponent1")
        c.dq = secret("rsa-exponent2")
        c.qi = secret("rsa-coefficient1")
        return c
    }

    /// PKCS#8 (`PrivateKeyInfo`) or, with `pkcs1`, PKCS#1 in PEM or DER.
    func openSSLEncoded(_ format: PKey.Format, pkcs1: Bool) throws(TokenMintError) -> [UInt8] {
        if pkcs1 {
            return try pkey.encode(format: format, structure: "type-specific", privatePart: true)
        }
        return try pkey.encode(format: format, structure: "PrivateKeyInfo", privatePart: true)
    }

    /// `EVP_DigestSign` with the padding set up (the caller has checked key
    /// size, hash and salt length).
    @inline(__always)
    func openSSLSignature(
        for message: UnsafeRawBufferPointer, hash: HashFunction, padding: RSA.Padding
    ) throws(TokenMintError) -> [UInt8] {
        try pkey.sign(message, hash: hash, reuse: .rsa(padding)) { RSA.configure($0, padding: padding, hash: hash) }
    }
}

extension RSA.PublicKey {
    /// A public key from n and e (already checked).
    static func openSSLKey(n: [UInt8], e: [UInt8]) throws(TokenMintError) -> PKey {
        try PKey.fromParameters(keyType: "RSA", privatePart: false) { builder throws(TokenMintError) in
            try builder.push("n", bignum: n)
            try builder.push("e", bignum: e)
        }
    }

    /// An SPKI or PKCS#1 key in PEM or DER (a private key yields its public half).
    static func openSSLDecode(_ encoded: [UInt8], format: PKey.Format) throws(TokenMintError) -> PKey {
        try PKey.decode(encoded, format: format, keyType: "RSA", wantPrivate: false)
    }

    /// Wraps an OpenSSL key, reading n and e from it.
    init(pkey: PKey) throws(TokenMintError) {
        guard pkey.typeName == "RSA", let n = pkey.bignumParameter("n"), let e = pkey.bignumParameter("e") else {
            throw TokenMintError(.crypto.invalidKey, "not an RSA public key")
        }
        try RSA.checkPublic(n: n, e: e)
        self.pkey = pkey
        self.modulus = n
        self.publicExponent = e
    }

    /// SPKI (`SubjectPublicKeyInfo`) or, with `pkcs1`, PKCS#1 in PEM or DER.
    func openSSLEncoded(_ format: PKey.Format, pkcs1: Bool) throws(TokenMintError) -> [UInt8] {
        if pkcs1 {
            return try pkey.encode(format: format, structure: "type-specific", privatePart: false)
        }
        return try pkey.encode(format: format, structure: "SubjectPublicKeyInfo", privatePart: false)
    }

    /// `EVP_DigestVerify` with the padding set up: every failure is `false`.
    @inline(__always)
    func openSSLIsValidSignature(
        _ signature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer, hash: HashFunction, padding: RSA.Padding
    ) -> Bool {
        pkey.verify(signature, message: message, hash: hash, reuse: .rsa(padding)) { RSA.configure($0, padding: padding, hash: hash) }
    }
}

extension RSA {
    /// Sets the padding (and for PSS the MGF1 hash and salt length) on a
    /// signing or verifying `EVP_PKEY_CTX`.
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

extension RSA {
    /// An encryption or decryption `EVP_PKEY_CTX` with OAEP and MGF1 over
    /// `hash`, kept by the key for its next use (``PKey/withKeyContext(_:setUp:_:)``).
    static func withOAEPContext<R>(
        _ pkey: PKey, hash: HashFunction, encrypt: Bool, _ body: (OpaquePointer) throws(TokenMintError) -> R
    ) throws(TokenMintError) -> R {
        let kind = PKey.ContextKind(verifies: false, hash: hash, setup: .oaep(encrypts: encrypt))
        return try pkey.withKeyContext(kind, setUp: { context in
            guard (encrypt ? EVP_PKEY_encrypt_init(context) : EVP_PKEY_decrypt_init(context)) == 1,
                EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1,
                let md = hash.handle.md,  // fetched once; naming the digest here would fetch it on every call
                EVP_PKEY_CTX_set_rsa_oaep_md(context, md) == 1,
                EVP_PKEY_CTX_set_rsa_mgf1_md(context, md) == 1
            else { return false }
            return true
        }, body)
    }
}

extension RSA.PublicKey {
    func openSSLEncrypt(_ secret: SecureBytes, hash: HashFunction) throws(TokenMintError) -> [UInt8] {
        try RSA.withOAEPContext(pkey, hash: hash, encrypt: true) { (context) throws(TokenMintError) in
            var out = [UInt8](repeating: 0, count: pkey.maximumSignatureSize)
            var length = out.count
            let ok = secret.withUnsafeBytes { s in EVP_PKEY_encrypt(context, &out, &length, s.bytes, s.count) }
            guard ok == 1, length == out.count else { throw OpenSSL.failure("RSA-OAEP encryption") }
            return out
        }
    }
}

extension RSA.PrivateKey {
    func openSSLDecrypt(_ ciphertext: [UInt8], hash: HashFunction) throws(TokenMintError) -> SecureBytes {
        try RSA.withOAEPContext(pkey, hash: hash, encrypt: false) { (context) throws(TokenMintError) in
            var count = 0
            let whole = try SecureBytes(count: ciphertext.count) { (out) throws(TokenMintError) in
                var length = out.count
                guard EVP_PKEY_decrypt(context, out.bytes, &length, ciphertext, ciphertext.count) == 1 else {
                    OpenSSL.clearErrors()
                    throw TokenMintError(.crypto.decryptionFailed, "RSA-OAEP: the ciphertext does not decrypt")
                }
                count = length
            }
            return try whole.withUnsafeBytes { (w) throws(TokenMintError) in
                try SecureBytes(count: count) { (o) throws(TokenMintError) in o.copyMemory(from: UnsafeRawBufferPointer(rebasing: w[..<count])) }
            }
        }
    }
}
