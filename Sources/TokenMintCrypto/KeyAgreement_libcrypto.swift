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
        try fetched.derive(key: ikm, digest: hash.openSSLName, salt: salt, info: info, count: count, name: "HKDF-\(hash.name)")
    }
}
