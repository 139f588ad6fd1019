import TokenMintCore
public import TokenMintCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A JWS whose signature has been verified.
public struct VerifiedJWS: Sendable {
    /// The header (protected, and unprotected for JSON serialization).
    public let header: JWSHeader
    /// The payload bytes.
    public let payload: [UInt8]
    /// The key that verified the signature.
    public let key: JWK
    /// The token's `x5c` chain, leaf first, when a verifier with
    /// certificate roots took the key from it; empty otherwise.
    public var certificates: [X509Certificate] = []
}

/// The protected headers of tokens that verified, with the key each selected.
/// Bounded; guarded by a lock, so one verifier serves many threads.
final class HeaderCache: @unchecked Sendable {
    private struct Entry {
        var segment: [UInt8]
        var header: JWSHeader
        var key: JWK
    }

    private static let capacity = 16
    private var entries: [Entry] = []
    private var next = 0
    private let lock = Lock()

    func lookup(_ segment: UnsafeRawBufferPointer) -> (JWSHeader, JWK)? {
        lock.withLock {
            for entry in entries where entry.segment.count == segment.count {
                if entry.segment.withUnsafeBytes({ stored in
                    guard let a = stored.baseAddress, let b = segment.baseAddress else { return stored.isEmpty && segment.isEmpty }
                    return memcmp(a, b, segment.count) == 0
                }) {
                    return (entry.header, entry.key)
                }
            }
            return nil
        }
    }

    func insert(_ segment: UnsafeRawBufferPointer, header: JWSHeader, key: JWK) {
        let entry = Entry(segment: Array(segment), header: header, key: key)
        lock.withLock {
            if entries.count < HeaderCache.capacity {
                entries.append(entry)
            } else {
                entries[next] = entry
                next = (next + 1) % HeaderCache.capacity
            }
        }
    }
}
