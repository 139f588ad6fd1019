import TokenMintCore
internal import CLibCrypto

// The OpenSSL side of AES (the public API is in AES.swift).

extension AES {
    /// The EVP cipher for a mode and key length (16, 24 or 32 bytes, checked by the caller).
    static func evpCipher(_ mode: Mode, keyCount: Int) -> OpaquePointer? {
        switch (mode, keyCount) {
        case (.gcm, 16): EVP_aes_128_gcm()
        case (.gcm, 24): EVP_aes_192_gcm()
        case (.gcm, 32): EVP_aes_256_gcm()
        case (.wrap, 16): EVP_aes_128_wrap()
        case (.wrap, 24): EVP_aes_192_wrap()
        case (.wrap, 32): EVP_aes_256_wrap()
        case (.cbc, 16): EVP_aes_128_cbc()
        case (.cbc, 24): EVP_aes_192_cbc()
        case (.cbc, 32): EVP_aes_256_cbc()
        default: nil
        }
    }

    enum Mode { case gcm, wrap, cbc }

    /// A cipher context set up for `mode` under `key` and `iv`; freed (and
    /// its key schedule cleansed) when `body` returns.
    static func withContext<R>(
        _ mode: Mode, key: UnsafeRawBufferPointer, iv: [UInt8]?, encrypt: Bool, padding: Bool = false,
        _ body: (OpaquePointer) throws(TokenMintError) -> R
    ) throws(TokenMintError) -> R {
        guard let cipher = evpCipher(mode, keyCount: key.count) else { throw TokenMintError(.crypto.invalidKeySize, "no AES cipher for a \(key.count)-byte key") }
        guard let context = EVP_CIPHER_CTX_new() else { throw OpenSSL.failure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        if mode == .wrap { EVP_CIPHER_CTX_set_flags(context, Int32(EVP_CIPHER_CTX_FLAG_WRAP_ALLOW)) }
        let initialized = iv.map { EVP_CipherInit_ex(context, cipher, nil, key.bytes, $0, encrypt ? 1 : 0) }
            ?? EVP_CipherInit_ex(context, cipher, nil, key.bytes, nil, encrypt ? 1 : 0)
        guard initialized == 1, EVP_CIPHER_CTX_set_padding(context, padding ? 1 : 0) == 1 else { throw OpenSSL.failure("EVP_CipherInit_ex AES") }
        return try body(context)
    }

    /// `EVP_CipherUpdate` over `input` into `output`; returns the bytes written.
    static func update(_ context: OpaquePointer, _ input: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>?) -> Int? {
        guard input.count > 0 else { return 0 }
        var written: Int32 = 0
        guard EVP_CipherUpdate(context, output, &written, input.bytes, Int32(input.count)) == 1 else { return nil }
        return Int(written)
    }

    static func gcm(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, key: SecureBytes, iv: [UInt8], aad: [UInt8],
        tag: UnsafeMutableRawBufferPointer, encrypt: Bool
    ) throws(TokenMintError) {
        try key.withUnsafeBytes { (k) throws(TokenMintError) in
            try withContext(.gcm, key: k, iv: iv, encrypt: encrypt) { (context) throws(TokenMintError) in
                let aadDone = aad.withUnsafeBytes { a in update(context, a, into: nil) }
                guard aadDone != nil, let body = update(context, input, into: output.bytes), body == input.count else {
                    throw OpenSSL.failure("EVP_CipherUpdate AES-GCM")
                }
                if !encrypt {
                    guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), tag.baseAddress) == 1 else {
                        throw OpenSSL.failure("AES-GCM set tag")
                    }
                }
                var final: Int32 = 0
                guard EVP_CipherFinal_ex(context, output.bytes + body, &final) == 1 else {
                    OpenSSL.clearErrors()
                    output.initializeMemory(as: UInt8.self, repeating: 0)
                    throw TokenMintError(.crypto.decryptionFailed, "AES-GCM: the authentication tag does not verify")
                }
                if encrypt {
                    guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tag.count), tag.baseAddress) == 1 else {
                        throw OpenSSL.failure("AES-GCM get tag")
                    }
                }
            }
        }
    }

    static func keyWrap(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, kek: SecureBytes, wrap: Bool
    ) throws(TokenMintError) {
        try kek.withUnsafeBytes { (k) throws(TokenMintError) in
            try withContext(.wrap, key: k, iv: nil, encrypt: wrap) { (context) throws(TokenMintError) in
                var final: Int32 = 0
                guard let body = update(context, input, into: output.bytes), body == output.count,
                    EVP_CipherFinal_ex(context, output.bytes + body, &final) == 1, final == 0
                else {
                    OpenSSL.clearErrors()
                    output.initializeMemory(as: UInt8.self, repeating: 0)
                    if wrap { throw OpenSSL.failure("AES key wrap") }
                    throw TokenMintError(.crypto.decryptionFailed, "AES key unwrap: the integrity check fails")
                }
            }
        }
    }
}

extension AES.CBCHMAC {
    /// AES-CBC encryption with PKCS#7 padding.
    static func cbc(_ input: [UInt8], key: UnsafeRawBufferPointer, iv: [UInt8]) throws(TokenMintError) -> [UInt8] {
        try AES.withContext(.cbc, key: key, iv: iv, encrypt: true, padding: true) { (context) throws(TokenMintError) in
            var out = [UInt8](repeating: 0, count: input.count + 16)
            let count = out.withUnsafeMutableBytes { o -> Int? in
                guard let body = input.withUnsafeBytes({ AES.update(context, $0, into: o.bytes) }) else { return nil }
                var final: Int32 = 0
                guard EVP_CipherFinal_ex(context, o.bytes + body, &final) == 1 else { return nil }
                return body + Int(final)
            }
            guard let count else { throw OpenSSL.failure("AES-CBC encryption") }
            out.removeLast(out.count - count)
            return out
        }
    }

    /// AES-CBC decryption, PKCS#7 padding removed; every failure is one error.
    static func cbcDecrypt(_ input: [UInt8], key: UnsafeRawBufferPointer, iv: [UInt8]) throws(TokenMintError) -> SecureBytes {
        try AES.withContext(.cbc, key: key, iv: iv, encrypt: false, padding: true) { (context) throws(TokenMintError) in
            var count = 0
            let whole = try SecureBytes(count: input.count) { (o) throws(TokenMintError) in
                guard let body = input.withUnsafeBytes({ AES.update(context, $0, into: o.bytes) }) else { throw OpenSSL.failure("AES-CBC") }
                var final: Int32 = 0
                guard EVP_CipherFinal_ex(context, o.bytes + body, &final) == 1 else {
                    OpenSSL.clearErrors()
                    throw TokenMintError(.crypto.decryptionFailed, "AES-CBC padding")
                }
                count = body + Int(final)
            }
            return try whole.withUnsafeBytes { (w) throws(TokenMintError) in
                try SecureBytes(count: count) { (o) throws(TokenMintError) in
                    o.copyMemory(from: UnsafeRawBufferPointer(rebasing: w[..<count]))
                }
            }
        }
    }
}
