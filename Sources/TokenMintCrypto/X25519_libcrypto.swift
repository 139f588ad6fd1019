import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of X25519 and ConcatKDF (the public API is in X25519.swift).

extension X25519.PublicKey {
    static func openSSLKey(raw: [UInt8]) throws(TokenMintError) -> PKey {
        guard let key = EVP_PKEY_new_raw_public_key_ex(nil, "X25519", nil, raw, raw.count) else {
            throw OpenSSL.error(.crypto.invalidKey, "not an X25519 public key")
        }
        return PKey(taking: key)
    }
}

extension X25519.PrivateKey {
    static func openSSLKey(secret: SecureBytes) throws(TokenMintError) -> PKey {
        let key = secret.withUnsafeBytes { raw in EVP_PKEY_new_raw_private_key_ex(nil, "X25519", nil, raw.bytes, raw.count) }
        guard let key else { throw OpenSSL.error(.crypto.invalidKey, "not an X25519 private key") }
        return PKey(taking: key)
    }

    static func openSSLPublicBytes(_ key: PKey) throws(TokenMintError) -> [UInt8] {
        var length = 32
        var out = [UInt8](repeating: 0, count: 32)
        guard EVP_PKEY_get_raw_public_key(key.pointer, &out, &length) == 1, length == 32 else { throw OpenSSL.failure("X25519 public key") }
        return out
    }

    static func openSSLSecret(_ key: PKey) throws(TokenMintError) -> SecureBytes {
        try SecureBytes(count: 32) { (out) throws(TokenMintError) in
            var length = out.count
            guard EVP_PKEY_get_raw_private_key(key.pointer, out.bytes, &length) == 1, length == 32 else { throw OpenSSL.failure("X25519 private key") }
        }
    }
}

extension ConcatKDF {
    static let sskdf = FetchedKDF("SSKDF")

    /// `EVP_KDF_derive` with OpenSSL's SSKDF over SHA-256.
    static func derive(_ secret: SecureBytes, otherInfo: [UInt8], count: Int) throws(TokenMintError) -> SecureBytes {
        guard let kdf = ConcatKDF.sskdf.pointer else { throw OpenSSL.failure("EVP_KDF_fetch SSKDF") }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw OpenSSL.failure("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }
        // OSSL_PARAM keeps pointers: every buffer lives until EVP_KDF_derive returns.
        var names = (Array("digest".utf8CString), Array("key".utf8CString), Array("info".utf8CString))
        var digest = Array("SHA256".utf8CString)
        let infoCount = otherInfo.count
        var info = otherInfo.isEmpty ? [0] : otherInfo
        return try SecureBytes(count: count) { (out) throws(TokenMintError) in
            let ok = secret.withUnsafeBytes { key in
                names.0.withUnsafeMutableBufferPointer { n0 in
                    names.1.withUnsafeMutableBufferPointer { n1 in
                        names.2.withUnsafeMutableBufferPointer { n2 in
                            digest.withUnsafeMutableBufferPointer { d in
                                info.withUnsafeMutableBytes { i in
                                    var params = [
                                        OSSL_PARAM_construct_utf8_string(n0.baseAddress, d.baseAddress, 0),
                                        OSSL_PARAM_construct_octet_string(n1.baseAddress, UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
                                        OSSL_PARAM_construct_octet_string(n2.baseAddress, i.baseAddress, infoCount),
                                        OSSL_PARAM_construct_end(),
                                    ]
                                    return EVP_KDF_derive(context, out.bytes, out.count, &params)
                                }
                            }
                        }
                    }
                }
            }
            guard ok == 1 else { throw OpenSSL.failure("EVP_KDF_derive SSKDF") }
        }
    }
}
