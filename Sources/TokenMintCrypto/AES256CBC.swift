public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls are in AES256CBC_libcrypto.swift.

/// AES-256 in CBC mode without padding (OpenSSL's `EVP_aes_256_cbc`), as the
/// CTAP2 PIN/UV auth protocols and the hmac-secret extension use it.
///
/// CBC gives confidentiality only: use it where a protocol pairs it with a
/// MAC, never on its own for data an attacker can alter. Lengths are whole
/// blocks; nothing is padded.
public enum AES256CBC {
    /// Key length in bytes.
    public static let keyByteCount = 32
    /// Block (and IV) length in bytes.
    public static let blockByteCount = 16
    /// The largest plaintext or ciphertext accepted (1 MiB).
    public static let maximumByteCount = 1 << 20

    /// The ciphertext of `plaintext` (a whole number of blocks) under `key` and `iv`.
    public static func encrypt(_ plaintext: SecureBytes, key: SecureBytes, iv: some DataProtocol) throws(TokenMintError) -> [UInt8] {
        let iv = try check(key: key, iv: iv, count: plaintext.count)
        var out = [UInt8](repeating: 0, count: plaintext.count)
        let failure = plaintext.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { output in
                Result { () throws(TokenMintError) in try cipher(input, into: output, key: key, iv: iv, encrypt: true) }
            }
        }
        try failure.get()
        return out
    }

    /// The plaintext of `ciphertext` (a whole number of blocks) under `key`
    /// and `iv`, in zeroing memory.
    public static func decrypt(_ ciphertext: some DataProtocol, key: SecureBytes, iv: some DataProtocol) throws(TokenMintError) -> SecureBytes {
        let input = Array(ciphertext)
        let iv = try check(key: key, iv: iv, count: input.count)
        return try SecureBytes(count: input.count) { (output) throws(TokenMintError) in
            try input.withUnsafeBytes { bytes in
                Result { () throws(TokenMintError) in try cipher(bytes, into: output, key: key, iv: iv, encrypt: false) }
            }.get()
        }
    }

    private static func check(key: SecureBytes, iv: some DataProtocol, count: Int) throws(TokenMintError) -> [UInt8] {
        guard key.count == keyByteCount else { throw TokenMintError(.crypto.invalidKeySize, "AES-256 keys are 32 bytes") }
        let iv = Array(iv)
        guard iv.count == blockByteCount else { throw TokenMintError(.crypto.invalidEncoding, "an AES-CBC IV is 16 bytes") }
        guard count % blockByteCount == 0, count <= maximumByteCount else {
            throw TokenMintError(.crypto.invalidEncoding, "AES-CBC without padding takes whole 16-byte blocks, at most 1 MiB")
        }
        return iv
    }
}
