public import TokenMintCore
import TokenMintCrypto

/// An optional cache of verified JWTs for resource servers that see the same
/// access token many times: keyed by the SHA-256 of the whole token,
/// bounded, each entry dropped when its token's `exp` passes. Only tokens
/// that verified are stored (a failure is never cached), and only tokens
/// with an `exp`. A hit still runs the claim checks (time, issuer, audience)
/// against the verifier's clock; only the signature check is skipped.
///
/// Off by default: give one to ``JWTVerifier/cache`` or
/// ``JWTKeyRing/init(signingKey:type:validation:policy:cache:)``. When a key
/// is revoked, call ``removeAll()`` (a key ring does so when it retires a key).
public final class VerifiedTokenCache: Sendable {
    struct Entry {
        var verified: VerifiedJWT
        var expiresAt: Int64
    }

    /// The most tokens kept.
    public let capacity: Int
    private let lock = Lock()
    nonisolated(unsafe) private var entries: [[UInt8]: Entry] = [:]
    nonisolated(unsafe) private var order: [[UInt8]] = []  // insertion order, for eviction
    nonisolated(unsafe) private var head = 0
    /// Bumped by ``removeAll()``: a verification that began before cannot insert after.
    nonisolated(unsafe) private var generation: UInt64 = 0

    /// A cache of at most `capacity` tokens (1 to 1,000,000).
    public init(capacity: Int = 10_000) throws(TokenMintError) {
        guard (1...1_000_000).contains(capacity) else {
            throw TokenMintError(.jose.invalidConfiguration, "a verified-token cache holds 1 to 1,000,000 tokens")
        }
        self.capacity = capacity
    }

    /// How many tokens are cached now.
    public var count: Int { lock.withLock { entries.count } }

    /// Forgets every token (for instance after a key was revoked).
    public func removeAll() {
        lock.withLock {
            entries.removeAll()
            order.removeAll()
            head = 0
            generation &+= 1
        }
    }

    static func digest(_ token: String) -> [UInt8] { HashFunction.sha256.hash(Array(token.utf8)) }

    /// The cached verification of the token with `digest`, unless it expired
    /// (`now` past its `exp` by more than the largest leeway, 600 s).
    func lookup(_ digest: [UInt8], now: Int64) -> (VerifiedJWT?, generation: UInt64) {
        lock.withLock {
            guard let entry = entries[digest] else { return (nil, generation) }
            guard entry.expiresAt >= TimeArithmetic.subtracting(now, 600) else {
                entries[digest] = nil
                return (nil, generation)
            }
            return (entry.verified, generation)
        }
    }

    /// Keeps `verified` until `expiresAt`, unless the cache was emptied since
    /// `generation` (when the verification began); when full, drops expired
    /// tokens, then the oldest.
    func insert(_ digest: [UInt8], _ verified: VerifiedJWT, expiresAt: Int64, now: Int64, generation observed: UInt64) {
        lock.withLock {
            if entries[digest] != nil || observed != generation { return }
            if entries.count >= capacity {
                let horizon = TimeArithmetic.subtracting(now, 600)
                entries = entries.filter { $0.value.expiresAt >= horizon }
            }
            while entries.count >= capacity, head < order.count {
                entries[order[head]] = nil
                head += 1
            }
            if head > capacity {  // compact the eviction queue now and then
                order.removeFirst(head)
                head = 0
            }
            if order.count > 2 * capacity {  // entries that expired or were dropped leave stale digests behind
                order = Array(entries.keys)
                head = 0
            }
            entries[digest] = Entry(verified: verified, expiresAt: expiresAt)
            order.append(digest)
        }
    }
}
