import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of Ed448 (the public API is in Ed448.swift).

extension Ed448.PublicKey {
    /// An `EVP_PKEY` for 57 raw bytes; OpenSSL checks the encoding.
    static func openSSLKey(raw: [UInt8]) throws(TokenMintError) -> PKey {
        guard let key = EVP_PKEY_new_raw_public_key_ex(nil, "ED448", nil, raw, raw.count) else {
            throw OpenSSL.error(.crypto.invalidKey, "not an Ed448 public key")
        }
        return PKey(taking: key)
    }

    /// Pure Ed448 (`EVP_DigestVerify` with no digest and an empty context).
    @inline(__always)
    func openSSLIsValidSignature(_ signature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer) -> Bool {
        pkey.verify(signature, message: message, hash: nil)
    }
}

extension Ed448.PrivateKey {
    /// An `EVP_PKEY` for a 57-byte secret, read in place.
    static func openSSLKey(secret: SecureBytes) throws(TokenMintError) -> PKey {
        let key = secret.withUnsafeBytes { raw in EVP_PKEY_new_raw_private_key_ex(nil, "ED448", nil, raw.bytes, raw.count) }
        guard let key else { throw OpenSSL.error(.crypto.invalidKey, "not an Ed448 private key") }
        return PKey(taking: key)
    }

    /// The public key's 57 bytes.
    static func openSSLPublicBytes(_ key: PKey) throws(TokenMintError) -> [UInt8] {
        var length = 57
        var out = [UInt8](repeating: 0, count: 57)
        guard EVP_PKEY_get_raw_public_key(key.pointer, &out, &length) == 1, length == 57 else { throw OpenSSL.failure("Ed448 public key") }
        return out
    }

    /// The 57-byte secret, straight into zeroing memory.
    static func openSSLSecret(_ key: PKey) throws(TokenMintError) -> SecureBytes {
        try SecureBytes(count: 57) { (out) throws(TokenMintError) in
            var length = out.count
            guard EVP_PKEY_get_raw_private_key(key.pointer, out.bytes, &length) == 1, length == 57 else { throw OpenSSL.failure("Ed448 private key") }
        }
    }
}
