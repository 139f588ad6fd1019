public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls are in AES_libcrypto.swift.

/// AES with 128-, 192- or 256-bit keys (OpenSSL's EVP ciphers) in the
/// modes JOSE uses: GCM, key wrap (RFC 3394) and the CBC + HMAC-SHA-2
/// composite of RFC 7518 §5.2.
public enum AES {
    /// The largest plaintext or ciphertext accepted (64 MiB).
    public static let maximumByteCount = 1 << 26

    /// Checks that `key` is 16, 24 or 32 bytes.
    static func checkKey(_ key: SecureBytes, _ mode: String) throws(TokenMintError) {
        guard key.count == 16 || key.count == 24 || key.count == 32 else {
            throw TokenMintError(.crypto.invalidKeySize, "\(mode) keys are 16, 24 or 32 bytes, not \(key.count)")
        }
    }

    static func checkLength(_ count: Int) throws(TokenMintError) {
        guard count <= maximumByteCount else { throw TokenMintError(.crypto.invalidParameter, "AES input larger than 64 MiB") }
    }

    /// AES-GCM (NIST SP 800-38D) with 96-bit nonces and 128-bit tags.
    public enum GCM {
        /// Nonce (IV) length in bytes.
        public static let nonceByteCount = 12
        /// Tag length in bytes.
        public static let tagByteCount = 16

        /// Encrypts `plaintext` and authenticates it with `additionalData`.
        /// The nonce must never repeat under one key: draw it from ``SecureRandom``.
        public static func seal(
            _ plaintext: some DataProtocol, key: SecureBytes, nonce: some DataProtocol, authenticating additionalData: some DataProtocol
        ) throws(TokenMintError) -> (ciphertext: [UInt8], tag: [UInt8]) {
            try checkKey(key, "AES-GCM")
            let (input, iv, aad) = (Array(plaintext), Array(nonce), Array(additionalData))
            try checkLength(input.count)
            try checkLength(aad.count)
            guard iv.count == nonceByteCount else { throw TokenMintError(.crypto.invalidParameter, "AES-GCM nonces are 12 bytes") }
            var out = [UInt8](repeating: 0, count: input.count)
            var tag = [UInt8](repeating: 0, count: tagByteCount)
            let result = input.withUnsafeBytes { i in
                out.withUnsafeMutableBytes { o in
                    tag.withUnsafeMutableBytes { t in
                        Result { () throws(TokenMintError) in try gcm(i, into: o, key: key, iv: iv, aad: aad, tag: t, encrypt: true) }
                    }
                }
            }
            try result.get()
            return (out, tag)
        }

        /// Checks `tag` and decrypts; the plaintext comes back in zeroing memory.
        /// - Throws: `.crypto.decryptionFailed` when the tag does not verify
        ///   (nothing of the plaintext is returned).
        public static func open(
            _ ciphertext: some DataProtocol, key: SecureBytes, nonce: some DataProtocol, tag: some DataProtocol,
            authenticating additionalData: some DataProtocol
        ) throws(TokenMintError) -> SecureBytes {
            try checkKey(key, "AES-GCM")
            let (input, iv, aad) = (Array(ciphertext), Array(nonce), Array(additionalData))
            var tag = Array(tag)
            try checkLength(input.count)
            try checkLength(aad.count)
            guard iv.count == nonceByteCount, tag.count == tagByteCount else {
                throw TokenMintError(.crypto.decryptionFailed, "AES-GCM takes a 12-byte nonce and a 16-byte tag")
            }
            return try SecureBytes(count: input.count) { (out) throws(TokenMintError) in
                try input.withUnsafeBytes { i in
                    tag.withUnsafeMutableBytes { t in
                        Result { () throws(TokenMintError) in try gcm(i, into: out, key: key, iv: iv, aad: aad, tag: t, encrypt: false) }
                    }
                }.get()
            }
        }
    }

    /// AES key wrap (RFC 3394) with the default IV.
    public enum KeyWrap {
        /// Wraps `key` (at least 16 bytes, a multiple of 8) under `kek`.
        public static func wrap(_ key: SecureBytes, using kek: SecureBytes) throws(TokenMintError) -> [UInt8] {
            try checkKey(kek, "AES key wrap")
            guard key.count >= 16, key.count % 8 == 0, key.count <= 4096 else {
                throw TokenMintError(.crypto.invalidParameter, "AES key wrap takes 16 to 4096 bytes in steps of 8")
            }
            var out = [UInt8](repeating: 0, count: key.count + 8)
            let result = key.withUnsafeBytes { k in
                out.withUnsafeMutableBytes { o in
                    Result { () throws(TokenMintError) in try keyWrap(k, into: o, kek: kek, wrap: true) }
                }
            }
            try result.get()
            return out
        }

        /// Unwraps `wrapped` under `kek`, checking its integrity; the key
        /// comes back in zeroing memory.
        /// - Throws: `.crypto.decryptionFailed` when the check fails.
        public static func unwrap(_ wrapped: some DataProtocol, using kek: SecureBytes) throws(TokenMintError) -> SecureBytes {
            try checkKey(kek, "AES key wrap")
            let input = Array(wrapped)
            guard input.count >= 24, input.count % 8 == 0, input.count <= 4104 else {
                throw TokenMintError(.crypto.decryptionFailed, "an AES-wrapped key is 24 to 4104 bytes in steps of 8")
            }
            return try SecureBytes(count: input.count - 8) { (out) throws(TokenMintError) in
                try input.withUnsafeBytes { i in
                    Result { () throws(TokenMintError) in try keyWrap(i, into: out, kek: kek, wrap: false) }
                }.get()
            }
        }
    }

    /// AES-CBC with PKCS#7 padding, authenticated with HMAC-SHA-2 truncated
    /// to half its length: RFC 7518 §5.2's AEAD (A128CBC-HS256,
    /// A192CBC-HS384, A256CBC-HS512). The key is the MAC key followed by the
    /// encryption key, 32, 48 or 64 bytes.
    public enum CBCHMAC {
        /// IV length in bytes.
        public static let ivByteCount = 16

        /// The hash for a composite key of `count` bytes.
        static func hash(forKeyCount count: Int) throws(TokenMintError) -> HashFunction {
            switch count {
            case 32: .sha256
            case 48: .sha384
            case 64: .sha512
            default: throw TokenMintError(.crypto.invalidKeySize, "AES-CBC-HMAC-SHA2 keys are 32, 48 or 64 bytes, not \(count)")
            }
        }

        /// Encrypts and authenticates (RFC 7518 §5.2.2.1).
        public static func seal(
            _ plaintext: some DataProtocol, key: SecureBytes, iv: some DataProtocol, authenticating additionalData: some DataProtocol
        ) throws(TokenMintError) -> (ciphertext: [UInt8], tag: [UInt8]) {
            let hash = try hash(forKeyCount: key.count)
            let (input, iv, aad) = (Array(plaintext), Array(iv), Array(additionalData))
            try checkLength(input.count)
            try checkLength(aad.count)
            guard iv.count == ivByteCount else { throw TokenMintError(.crypto.invalidParameter, "AES-CBC IVs are 16 bytes") }
            let half = key.count / 2
            let ciphertext = try key.withUnsafeBytes { (k) throws(TokenMintError) in
                try cbc(input, key: UnsafeRawBufferPointer(rebasing: k[half...]), iv: iv)
            }
            let macKey = try key.withUnsafeBytes { (k) throws(TokenMintError) in
                try HMACKey(allowingShortKey: UnsafeRawBufferPointer(rebasing: k[..<half]), hash: hash)
            }
            let tag = Array(HMAC.authenticationCode(for: macInput(aad, iv, ciphertext), using: macKey).prefix(half))
            return (ciphertext, tag)
        }

        /// Checks the tag in constant time, then decrypts (RFC 7518 §5.2.2.2);
        /// the plaintext comes back in zeroing memory.
        /// - Throws: `.crypto.decryptionFailed` for a wrong tag or bad padding,
        ///   without saying which.
        public static func open(
            _ ciphertext: some DataProtocol, key: SecureBytes, iv: some DataProtocol, tag: some DataProtocol,
            authenticating additionalData: some DataProtocol
        ) throws(TokenMintError) -> SecureBytes {
            let hash = try hash(forKeyCount: key.count)
            let (input, iv, aad, tag) = (Array(ciphertext), Array(iv), Array(additionalData), Array(tag))
            try checkLength(input.count)
            try checkLength(aad.count)
            let half = key.count / 2
            let failed = TokenMintError(.crypto.decryptionFailed, "AES-CBC-HMAC-SHA2: the authentication tag does not verify")
            guard iv.count == ivByteCount, tag.count == half, !input.isEmpty, input.count % 16 == 0 else { throw failed }
            let valid = try key.withUnsafeBytes { (k) throws(TokenMintError) in
                let macKey = try HMACKey(allowingShortKey: UnsafeRawBufferPointer(rebasing: k[..<half]), hash: hash)
                return HMAC.isValidAuthenticationCode(tag, for: macInput(aad, iv, input), using: macKey, minimumLength: half)
            }
            guard valid else { throw failed }
            return try key.withUnsafeBytes { (k) throws(TokenMintError) in
                do throws(TokenMintError) {
                    return try cbcDecrypt(input, key: UnsafeRawBufferPointer(rebasing: k[half...]), iv: iv)
                } catch {
                    throw failed
                }
            }
        }

        /// A ‖ IV ‖ E ‖ AL, AL being the length of A in bits as 64-bit big-endian.
        private static func macInput(_ aad: [UInt8], _ iv: [UInt8], _ ciphertext: [UInt8]) -> [UInt8] {
            var m = aad
            m.reserveCapacity(aad.count + iv.count + ciphertext.count + 8)
            m += iv
            m += ciphertext
            let bits = UInt64(aad.count) &* 8
            for shift in stride(from: 56, through: 0, by: -8) { m.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
            return m
        }
    }
}
