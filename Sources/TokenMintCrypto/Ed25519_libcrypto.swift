import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of Ed25519: PKCS#8 and SPKI in PEM and DER through
// OpenSSL's decoders and encoders (the public API is in Ed25519.swift).

extension Ed25519.PrivateKey {
    /// The 32-byte seed of a PKCS#8 key, read into secure memory.
    static func openSSLDecodeSeed(_ encoded: [UInt8], format: PKey.Format) throws(TokenMintError) -> SecureBytes {
        let key = try PKey.decode(encoded, format: format, keyType: "ED25519", wantPrivate: true)
        var length = 32
        let seed = try SecureBytes(count: 32) { out throws(TokenMintError) in
            guard EVP_PKEY_get_raw_private_key(key.pointer, out.baseAddress, &length) == 1, length == 32 else {
                throw OpenSSL.error(.crypto.invalidKey, "not an Ed25519 private key")
            }
        }
        return seed
    }

    /// The key as PKCS#8 (`PrivateKeyInfo`) PEM or DER.
    func openSSLEncoded(_ format: PKey.Format) throws(TokenMintError) -> [UInt8] {
        let key: OpaquePointer? = secretKey.withUnsafeBytes { sk in
            EVP_PKEY_new_raw_private_key_ex(nil, "ED25519", nil, sk.bytes, 32)
        }
        guard let key else { throw OpenSSL.failure("EVP_PKEY_new_raw_private_key_ex") }
        return try PKey(taking: key).encode(format: format, structure: "PrivateKeyInfo", privatePart: true)
    }
}

extension Ed25519.PublicKey {
    /// The 32-byte point of an SPKI key (or of a PKCS#8 key's public half).
    static func openSSLDecodeRaw(_ encoded: [UInt8], format: PKey.Format) throws(TokenMintError) -> [UInt8] {
        let key = try PKey.decode(encoded, format: format, keyType: "ED25519", wantPrivate: false)
        var raw = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(key.pointer, &raw, &length) == 1, length == 32 else {
            throw OpenSSL.error(.crypto.invalidKey, "not an Ed25519 public key")
        }
        return raw
    }

    /// The key as SPKI (`SubjectPublicKeyInfo`) PEM or DER.
    func openSSLEncoded(_ format: PKey.Format) throws(TokenMintError) -> [UInt8] {
        guard let key = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, rawRepresentation, 32) else {
            throw OpenSSL.failure("EVP_PKEY_new_raw_public_key_ex")
        }
        return try PKey(taking: key).encode(format: format, structure: "SubjectPublicKeyInfo", privatePart: false)
    }
}
