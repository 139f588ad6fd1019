import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of ECDH and HKDF (the public API is in KeyAgreement.swift).

extension ECDH {
    /// `EVP_PKEY_derive` of `own` with `peer` (already checked).
    static func derive(_ own: PKey, _ peer: PKey, count: Int) throws(TokenMintError) -> SecureBytes {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, own.pointer, nil) else { throw OpenSSL.failure("EVP_PKEY_CTX_new_from_pkey") }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 0
        guard EVP_PKEY_derive_init(context) == 1 else { throw OpenSSL.failure("EVP_PKEY_derive_init") }
        // The peer key was checked when it was made (ECDSA.PublicKey checks its
        // point; any 32 bytes are an X25519 key), so OpenSSL need not check again.
        guard EVP_PKEY_derive_set_peer_ex(context, peer.pointer, 0) == 1 else { throw OpenSSL.error(.crypto.invalidKey, "the ECDH peer key is invalid") }
        guard EVP_PKEY_derive(context, nil, &length) == 1, length == count else { throw OpenSSL.failure("EVP_PKEY_derive length") }
        return try SecureBytes(count: count) { (out) throws(TokenMintError) in
            var written = out.count
            guard EVP_PKEY_derive(context, out.bytes, &written) == 1, written == count else { throw OpenSSL.failure("EVP_PKEY_derive") }
        }
    }
}

extension HKDF {
    static let fetched = FetchedKDF("HKDF")

    /// `EVP_KDF_derive` with OpenSSL's HKDF (extract and expand).
    static func derive(_ ikm: SecureBytes, salt: [UInt8], info: [UInt8], count: Int, hash: HashFunction) throws(TokenMintError) -> SecureBytes {
        guard let kdf = HKDF.fetched.pointer else { throw OpenSSL.failure("EVP_KDF_fetch HKDF") }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw OpenSSL.failure("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }
        // OSSL_PARAM keeps pointers: every buffer lives until EVP_KDF_derive returns.
        var names = (Array("digest".utf8CString), Array("key".utf8CString), Array("salt".utf8CString), Array("info".utf8CString))
        var digest = Array(hash.openSSLName.utf8CString)
        // An empty salt or info still needs a valid pointer; its length stays 0.
        let (saltCount, infoCount) = (salt.count, info.count)
        var salt = salt.isEmpty ? [0] : salt
        var info = info.isEmpty ? [0] : info
        return try SecureBytes(count: count) { (out) throws(TokenMintError) in
            let ok = ikm.withUnsafeBytes { key in
                names.0.withUnsafeMutableBufferPointer { n0 in
                    names.1.withUnsafeMutableBufferPointer { n1 in
                        names.2.withUnsafeMutableBufferPointer { n2 in
                            names.3.withUnsafeMutableBufferPointer { n3 in
                                digest.withUnsafeMutableBufferPointer { d in
                                    salt.withUnsafeMutableBytes { s in
                                        info.withUnsafeMutableBytes { i in
                                            var params = [
                                                OSSL_PARAM_construct_utf8_string(n0.baseAddress, d.baseAddress, 0),
                                                OSSL_PARAM_construct_octet_string(n1.baseAddress, UnsafeMutableRawPointer(mutating: key.baseAddress), key.count),
                                                OSSL_PARAM_construct_octet_string(n2.baseAddress, s.baseAddress, saltCount),
                                                OSSL_PARAM_construct_octet_string(n3.baseAddress, i.baseAddress, infoCount),
                                                OSSL_PARAM_construct_end(),
                                            ]
                                            return EVP_KDF_derive(context, out.bytes, out.count, &params)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            guard ok == 1 else { throw OpenSSL.failure("EVP_KDF_derive HKDF-\(hash.name)") }
        }
    }
}
