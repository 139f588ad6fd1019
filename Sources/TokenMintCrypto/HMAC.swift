public import TokenMintCore
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls (KeyedMAC) are in HMAC_libcrypto.swift.

/// HMAC (RFC 2104) through OpenSSL.
public enum HMAC {
    /// The full-length tag of `message` under `key`.
    public static func authenticationCode(for message: some DataProtocol, using key: HMACKey) -> [UInt8] {
        message.withContiguousBytes { authenticationCode(for: $0, using: key) }
    }

    /// The full-length tag of the bytes in `message`.
    public static func authenticationCode(for message: UnsafeRawBufferPointer, using key: HMACKey) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: key.hash.digestSize) { out, initialized in
            initialized = key.keyed.tag(message, into: UnsafeMutableRawBufferPointer(out))
        }
    }

    /// The full-length tag of `message` written into `out` (room for the
    /// hash's output); returns its length.
    package static func authenticationCode(for message: UnsafeRawBufferPointer, using key: HMACKey, into out: UnsafeMutableRawBufferPointer) -> Int {
        key.keyed.tag(message, into: out)
    }

    /// The full-length tag of `message` written straight into zeroing
    /// memory, for a tag that is itself a secret (a derived key, a PRF output).
    public static func secretAuthenticationCode(for message: some DataProtocol, using key: HMACKey) throws(TokenMintError) -> SecureBytes {
        let input = Array(message)
        return try SecureBytes(count: key.hash.digestSize) { (out) throws(TokenMintError) in
            let written = input.withUnsafeBytes { key.keyed.tag($0, into: out) }
            guard written == key.hash.digestSize else { throw TokenMintError(.crypto.libraryFailure, "HMAC-\(key.hash.name) failed") }
        }
    }

    /// Checks `tag` in constant time. A tag shorter than the hash output is
    /// compared against the leading bytes of the full tag only when
    /// `minimumLength` admits it (default: the full length).
    public static func isValidAuthenticationCode(
        _ tag: some DataProtocol, for message: some DataProtocol, using key: HMACKey, minimumLength: Int? = nil
    ) -> Bool {
        tag.withContiguousBytes { t in
            message.withContiguousBytes { m in isValidAuthenticationCode(t, for: m, using: key, minimumLength: minimumLength) }
        }
    }

    /// As above, over raw buffers.
    public static func isValidAuthenticationCode(
        _ tag: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer, using key: HMACKey, minimumLength: Int? = nil
    ) -> Bool {
        let size = key.hash.digestSize
        let floor = minimumLength ?? size
        guard tag.count >= max(floor, 1), tag.count <= size else { return false }
        return withUnsafeTemporaryAllocation(byteCount: 64, alignment: 16) { expected in
            let length = key.keyed.tag(message, into: expected)
            guard length == size else { return false }
            return ConstantTime.equals(tag, UnsafeRawBufferPointer(rebasing: expected[0..<tag.count]))
        }
    }
}
