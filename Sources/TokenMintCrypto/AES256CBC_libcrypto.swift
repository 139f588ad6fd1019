import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of AES256CBC (the public API is in AES256CBC.swift).

extension AES256CBC {
    /// One `EVP_CipherInit_ex` / `EVP_CipherUpdate` / `EVP_CipherFinal_ex`
    /// pass with padding off; the caller checked the key, IV and lengths.
    static func cipher(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, key: SecureBytes, iv: [UInt8], encrypt: Bool
    ) throws(TokenMintError) {
        guard let context = EVP_CIPHER_CTX_new() else { throw OpenSSL.failure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }  // cleanses the key schedule
        let initialized = key.withUnsafeBytes { k in
            EVP_CipherInit_ex(context, EVP_aes_256_cbc(), nil, k.bytes, iv, encrypt ? 1 : 0)
        }
        guard initialized == 1, EVP_CIPHER_CTX_set_padding(context, 0) == 1 else { throw OpenSSL.failure("EVP_CipherInit_ex AES-256-CBC") }
        guard input.count > 0 else { return }
        var written: Int32 = 0
        var final: Int32 = 0
        guard EVP_CipherUpdate(context, output.bytes, &written, input.bytes, Int32(input.count)) == 1,
            EVP_CipherFinal_ex(context, output.bytes + Int(written), &final) == 1, Int(written + final) == input.count
        else { throw OpenSSL.failure("EVP_CipherUpdate AES-256-CBC") }
    }
}
