public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls are in HashFunction_libcrypto.swift.

/// A hash function from OpenSSL's default provider.
///
/// The SHA-2 family is what TokenMint signs with; SHA-3, the truncated SHA-512
/// variants and SHA-1 are here so that signatures made by others can be
/// verified (SHA-1 is verify-only: no TokenMint signer accepts it).
public struct HashFunction: Hashable, Sendable, CustomStringConvertible {
    /// The standard name, such as "SHA-256".
    public let name: String
    /// The digest length in bytes.
    public let digestSize: Int
    let handle: MessageDigest

    private init(_ name: String, _ openSSLName: String, _ digestSize: Int) {
        self.name = name
        self.digestSize = digestSize
        self.handle = MessageDigest(openSSLName)
    }

    /// SHA-256 (FIPS 180-4).
    public static let sha256 = HashFunction("SHA-256", "SHA2-256", 32)
    /// SHA-384 (FIPS 180-4).
    public static let sha384 = HashFunction("SHA-384", "SHA2-384", 48)
    /// SHA-512 (FIPS 180-4).
    public static let sha512 = HashFunction("SHA-512", "SHA2-512", 64)
    /// SHA-224 (FIPS 180-4).
    public static let sha224 = HashFunction("SHA-224", "SHA2-224", 28)
    /// SHA-512/224 (FIPS 180-4).
    public static let sha512_224 = HashFunction("SHA-512/224", "SHA2-512/224", 28)
    /// SHA-512/256 (FIPS 180-4).
    public static let sha512_256 = HashFunction("SHA-512/256", "SHA2-512/256", 32)
    /// SHA3-224 (FIPS 202).
    public static let sha3_224 = HashFunction("SHA3-224", "SHA3-224", 28)
    /// SHA3-256 (FIPS 202).
    public static let sha3_256 = HashFunction("SHA3-256", "SHA3-256", 32)
    /// SHA3-384 (FIPS 202).
    public static let sha3_384 = HashFunction("SHA3-384", "SHA3-384", 48)
    /// SHA3-512 (FIPS 202).
    public static let sha3_512 = HashFunction("SHA3-512", "SHA3-512", 64)
    /// SHA-1: verification of legacy signatures only.
    public static let sha1 = HashFunction("SHA-1", "SHA1", 20)

    /// Every hash function above.
    public static let all: [HashFunction] = [
        .sha256, .sha384, .sha512, .sha224, .sha512_224, .sha512_256,
        .sha3_224, .sha3_256, .sha3_384, .sha3_512, .sha1,
    ]

    /// Looks a hash up by its standard name ("SHA-256", "SHA3-512", ...); case,
    /// dashes and underscores are ignored ("sha256", "SHA_512").
    public init?(name: String) {
        func normal(_ s: String) -> String { s.lowercased().filter { $0 != "-" && $0 != "_" } }
        guard let found = HashFunction.all.first(where: { normal($0.name) == normal(name) }) else {
            return nil
        }
        self = found
    }

    /// Whether TokenMint signs with this hash (SHA-1 is refused).
    public var isAllowedForSigning: Bool { self != .sha1 }

    /// The digest of `data`.
    public func hash(_ data: some DataProtocol) -> [UInt8] {
        data.withContiguousBytes { hash($0) }
    }

    /// The digest of the bytes in `buffer`.
    public func hash(_ buffer: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 64) { out, initialized in
            initialized = handle.digest(buffer, into: out)
        }
    }

    /// The digest of a secret, into zeroing memory (a key derived by
    /// hashing never passes through ordinary memory).
    /// - Throws: `libraryFailure` if OpenSSL fails (never a zero-filled digest).
    public func secretHash(_ secret: SecureBytes) throws(TokenMintError) -> SecureBytes {
        try secret.withUnsafeBytes { (input) throws(TokenMintError) in
            try SecureBytes(count: digestSize) { (out: UnsafeMutableRawBufferPointer) throws(TokenMintError) in
                guard handle.digest(input, into: out.bindMemory(to: UInt8.self)) == digestSize else {
                    throw TokenMintError(.crypto.libraryFailure, "\(name) failed")
                }
            }
        }
    }

    /// The standard name.
    public var description: String { name }

    /// Compares by name.
    public static func == (lhs: HashFunction, rhs: HashFunction) -> Bool { lhs.name == rhs.name }
    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
