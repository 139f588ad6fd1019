internal import CLibCrypto

// The OpenSSL side of HashFunction (the public API is in HashFunction.swift).

extension HashFunction {
    /// The name OpenSSL fetches the digest by ("SHA2-256", ...).
    var openSSLName: String { handle.name }
}

/// A fetched `EVP_MD`, kept for the life of the process (fetching per call
/// costs a provider lookup).
final class MessageDigest: @unchecked Sendable {
    let name: String
    let md: OpaquePointer?

    init(_ name: String) {
        self.name = name
        self.md = EVP_MD_fetch(nil, name, nil)
    }

    /// `EVP_Digest` of `buffer` into `out` (64 bytes, enough for every
    /// digest): the digest length, 0 on failure.
    @inline(__always)
    func digest(_ buffer: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var length: UInt32 = 0
        let ok = EVP_Digest(buffer.baseAddress, buffer.count, out.baseAddress, &length, md, nil)
        return ok == 1 ? Int(length) : 0
    }
}
