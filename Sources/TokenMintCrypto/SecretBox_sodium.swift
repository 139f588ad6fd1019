import TokenMintCore
internal import CSodium

// The libsodium side of XChaCha20Poly1305 and PasswordKeyDerivation (the
// public API is in XChaCha20Poly1305.swift and PasswordKeyDerivation.swift).

extension XChaCha20Poly1305 {
    /// `crypto_aead_xchacha20poly1305_ietf_encrypt` with a random nonce:
    /// `nonce ‖ ciphertext ‖ tag`. The caller has checked the key length.
    static func sodiumSeal(_ message: UnsafeRawBufferPointer, key: SecureBytes, associatedData ad: [UInt8]) throws(TokenMintError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: message.count + overhead)
        out.withUnsafeMutableBytes { SecureRandom.fill(UnsafeMutableRawBufferPointer(rebasing: $0[0..<24])) }
        var length: UInt64 = 0
        let status = key.withUnsafeBytes { k in
            out.withUnsafeMutableBufferPointer { buffer -> Int32 in
                guard let base = buffer.baseAddress else { return -1 }
                return crypto_aead_xchacha20poly1305_ietf_encrypt(
                    base + 24, &length, message.bytes, UInt64(message.count), ad, UInt64(ad.count), nil, base, k.bytes)
            }
        }
        guard status == 0 else { throw TokenMintError(.crypto.libraryFailure, "XChaCha20-Poly1305 encryption failed") }
        return out
    }

    /// `crypto_aead_xchacha20poly1305_ietf_decrypt` straight into secure
    /// memory. The caller has checked the key length and that `box` holds at
    /// least a nonce and a tag.
    static func sodiumOpen(_ box: [UInt8], key: SecureBytes, associatedData ad: [UInt8]) throws(TokenMintError) -> SecureBytes {
        var length: UInt64 = 0
        let result = try SecureBytes(count: box.count - overhead) { out throws(TokenMintError) in
            let status = key.withUnsafeBytes { k in
                box.withUnsafeBufferPointer { b -> Int32 in
                    guard let base = b.baseAddress else { return -1 }
                    return crypto_aead_xchacha20poly1305_ietf_decrypt(
                        out.bytes, &length, nil, base + 24, UInt64(box.count - 24), ad, UInt64(ad.count), base, k.bytes)
                }
            }
            guard status == 0 else { throw TokenMintError(.crypto.invalidKey, "sealed data does not open with this key (wrong key, or altered)") }
        }
        return result
    }
}

extension PasswordKeyDerivation {
    /// `crypto_pwhash` (Argon2id v1.3) straight into secure memory; the
    /// passphrase is read in place. The caller has checked salt and length.
    static func sodiumArgon2id(passphrase secret: SecureBytes, salt: [UInt8], length: Int, cost: Cost) throws(TokenMintError) -> SecureBytes {
        return try SecureBytes(count: length) { out throws(TokenMintError) in
            let status = secret.withUnsafeBytes { p in
                crypto_pwhash(out.bytes, UInt64(length), UnsafeRawPointer(p.bytes).assumingMemoryBound(to: CChar.self),
                              UInt64(p.count), salt, cost.operations, cost.memory, crypto_pwhash_ALG_ARGON2ID13)
            }
            guard status == 0 else { throw TokenMintError(.crypto.libraryFailure, "Argon2id failed (out of memory?)") }
        }
    }
}
