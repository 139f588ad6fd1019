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
