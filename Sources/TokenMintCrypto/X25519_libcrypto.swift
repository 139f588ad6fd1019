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
        try sskdf.derive(key: secret, digest: "SHA256", salt: nil, info: otherInfo, count: count, name: "SSKDF")
    }
}
