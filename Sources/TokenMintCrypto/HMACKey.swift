public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls (KeyedMAC) are in HMAC_libcrypto.swift.

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
    /// - Throws: `.crypto.invalidKeySize` when the key is shorter than the
    ///   hash output, `unsupportedAlgorithm` for SHA-1.
    public init(_ key: some DataProtocol, hash: HashFunction) throws(TokenMintError) {
        guard hash.isAllowedForSigning else { throw TokenMintError(.crypto.unsupportedAlgorithm, "HMAC keys for \(hash.name) are offered for verification only") }
        guard key.count >= hash.digestSize else {
            throw TokenMintError(.crypto.invalidKeySize,
                "HMAC-\(hash.name) key must be at least \(hash.digestSize) bytes, got \(key.count)")
        }
        try self.init(allowingShortKey: key, hash: hash)
    }

    /// Wraps key bytes without the minimum-length rule (and with SHA-1
    /// allowed). For interoperability with existing keys and known-answer
    /// tests only; an empty key is still refused.
    public init(allowingShortKey key: some DataProtocol, hash: HashFunction) throws(TokenMintError) {
        guard !key.isEmpty, key.count <= 1 << 16 else { throw TokenMintError(.crypto.invalidKeySize, "HMAC key must be 1 to 65536 bytes") }
        try self.init(checked: SecureBytes(key), hash: hash)
    }

    /// Wraps a key already in zeroing memory, read in place (no copy is
    /// made); the same length rule as ``init(_:hash:)``.
    public init(secret: SecureBytes, hash: HashFunction) throws(TokenMintError) {
        guard hash.isAllowedForSigning, secret.count >= hash.digestSize, secret.count <= 1 << 16 else {
            throw TokenMintError(.crypto.invalidKeySize, "HMAC-\(hash.name) key must be \(hash.digestSize) to 65536 bytes")
        }
        try self.init(checked: secret, hash: hash)
    }

    private init(checked secret: SecureBytes, hash: HashFunction) throws(TokenMintError) {
        self.bytes = secret
        self.hash = hash
        self.keyed = try KeyedMAC(key: secret, hash: hash)
    }

    /// A new random key as long as the hash output.
    public init(generatingFor hash: HashFunction) throws(TokenMintError) {
        try self.init(checked: SecureBytes(randomCount: hash.digestSize), hash: hash)
    }

    /// Never shows the key.
    public var description: String { "HMACKey(\(hash.name), \(bytes.count) bytes)" }
}
