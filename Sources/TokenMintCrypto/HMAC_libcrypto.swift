public import TokenMintCore
internal import CLibCrypto

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A secret key for HMAC, bound to its hash function.
///
/// RFC 2104 §3 and RFC 7518 §3.2: a key shorter than the hash output weakens
/// the MAC, so ``init(_:hash:)`` refuses one, in every build configuration.
/// Interoperability with systems that already use short keys (and known-answer
/// tests) goes through the separately named ``init(allowingShortKey:hash:)``.
public struct HMACKey: Sendable, Equatable, CustomStringConvertible {
    /// The key bytes, in zeroing memory.
    public let bytes: SecureBytes
    /// The hash function the key is used with.
    public let hash: HashFunction
    /// OpenSSL's MAC context with the key already set: each tag duplicates it
    /// instead of fetching the algorithm and hashing the key again.
    let keyed: KeyedMAC

    /// Compares key bytes (in constant time) and hash.
    public static func == (lhs: HMACKey, rhs: HMACKey) -> Bool { lhs.hash == rhs.hash && lhs.bytes == rhs.bytes }

    /// Wraps existing key bytes.
    /// - Throws: `TokenMintError.invalidKeySize` when the key is shorter than the
    ///   hash output, `unsupportedAlgorithm` for SHA-1.
    public init(_ key: some DataProtocol, hash: HashFunction) throws(TokenMintError) {
        guard hash.isAllowedForSigning else { throw .unsupported("HMAC keys for \(hash.name) are offered for verification only") }
        guard key.count >= hash.digestSize else {
            throw .invalidKeySize(
                "HMAC-\(hash.name) key must be at least \(hash.digestSize) bytes, got \(key.count)")
        }
        try self.init(allowingShortKey: key, hash: hash)
    }

    /// Wraps key bytes without the minimum-length rule (and with SHA-1
    /// allowed). For interoperability with existing keys and known-answer
    /// tests only; an empty key is still refused.
    public init(allowingShortKey key: some DataProtocol, hash: HashFunction) throws(TokenMintError) {
        guard !key.isEmpty, key.count <= 1 << 16 else { throw .invalidKeySize("HMAC key must be 1 to 65536 bytes") }
        try self.init(secret: SecureBytes(key), hash: hash)
    }

    private init(secret: SecureBytes, hash: HashFunction) throws(TokenMintError) {
        self.bytes = secret
        self.hash = hash
        self.keyed = try KeyedMAC(key: secret, hash: hash)
    }

    /// A new random key as long as the hash output.
    public init(generatingFor hash: HashFunction) throws(TokenMintError) {
        try self.init(secret: SecureBytes(randomCount: hash.digestSize), hash: hash)
    }

    /// Never shows the key.
    public var description: String { "HMACKey(\(hash.name), \(bytes.count) bytes)" }
}

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

/// An `EVP_MAC_CTX` for HMAC with its key set, used only as a template:
/// every tag works on a duplicate, so one key serves many threads at once.
final class KeyedMAC: @unchecked Sendable {
    private let template: OpaquePointer

    init(key: SecureBytes, hash: HashFunction) throws(TokenMintError) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw OpenSSL.failure("EVP_MAC_fetch HMAC") }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { throw OpenSSL.failure("EVP_MAC_CTX_new") }
        template = context
        // OSSL_PARAM keeps both pointers, so both strings live in buffers
        // that outlast EVP_MAC_init (a literal passed directly would be a
        // temporary that is gone by then).
        var parameter = Array("digest".utf8CString)
        var digest = Array(hash.openSSLName.utf8CString)
        let ok = parameter.withUnsafeMutableBufferPointer { label in
            digest.withUnsafeMutableBufferPointer { name in
                var params = [
                    OSSL_PARAM_construct_utf8_string(label.baseAddress, name.baseAddress, 0),
                    OSSL_PARAM_construct_end(),
                ]
                return key.withUnsafeBytes { k in
                    EVP_MAC_init(context, k.bytes, k.count, &params)
                }
            }
        }
        guard ok == 1 else { throw OpenSSL.failure("EVP_MAC_init HMAC-\(hash.name)") }
    }

    deinit { EVP_MAC_CTX_free(template) }  // cleanses the key schedule

    /// Writes the tag into `out` (at least 64 bytes) and returns its length, 0 on failure.
    func tag(_ message: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int {
        guard let context = EVP_MAC_CTX_dup(template) else { return 0 }
        defer { EVP_MAC_CTX_free(context) }
        var length = 0
        guard EVP_MAC_update(context, message.bytes, message.count) == 1,
            EVP_MAC_final(context, out.bytes, &length, out.count) == 1
        else {
            OpenSSL.clearErrors()
            return 0
        }
        return length
    }
}
