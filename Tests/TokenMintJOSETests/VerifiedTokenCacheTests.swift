import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintJOSE

/// The optional verified-token cache: hits skip only the signature, failures
/// are never kept, entries end with the token, and a revoked key empties it.
@Suite("Verified-token cache")
struct VerifiedTokenCacheTests {
    final class Clock: @unchecked Sendable {
        var now: Int64 = 1_763_776_800
    }

    static func claims(_ now: Int64, lifetime: Int64 = 300) -> JWTClaims {
        JWTClaims(issuer: "https://issuer.example", subject: "device-1", audience: ["api"], expiration: now + lifetime, issuedAt: now)
    }

    static func verifier(_ key: JWK, clock: Clock, cache: VerifiedTokenCache) throws -> JWTVerifier {
        var validation = JWTValidation()
        validation.issuer = "https://issuer.example"
        validation.audience = "api"
        validation.clock = { clock.now }
        var verifier = try JWTVerifier(key: try #require(key.publicKey), validation: validation)
        verifier.cache = cache
        return verifier
    }

    @Test("a repeated token is served from the cache; a failure is never cached; claims are checked on every hit")
    func hitsAndFailures() throws {
        let clock = Clock()
        let key = try JWK.generate(for: .ES256)
        let cache = try VerifiedTokenCache(capacity: 4)
        let verifier = try Self.verifier(key, clock: clock, cache: cache)
        let token = try JWTSigner(key: key).sign(Self.claims(clock.now))
        let first = try verifier.verify(token)
        #expect(cache.count == 1)
        #expect(try verifier.verify(token).payload == first.payload && cache.count == 1)
        // A forged token (one signature bit changed) fails every time and is never kept.
        var parts = token.split(separator: ".").map(String.init)
        var signature = try Base64URL.decode(parts[2])
        signature[5] ^= 1
        parts[2] = Base64URL.encode(signature)
        for _ in 0..<2 { expectJOSE(.jose.invalidSignature) { _ = try verifier.verify(parts.joined(separator: ".")) } }
        #expect(cache.count == 1)
        // Claims are checked on a hit too: another audience refuses the cached token.
        var strict = verifier
        strict.validation.audience = "other"
        expectJOSE(.jose.invalidAudience) { _ = try strict.verify(token) }
        // Once the token expires, the cached entry does not save it.
        clock.now += 301
        expectJOSE(.jose.expired) { _ = try verifier.verify(token) }
        // A token without exp is verified but not kept.
        var noExp = Self.claims(clock.now)
        noExp.expiration = nil
        var lax = verifier
        lax.validation.requiredClaims = []
        let before = cache.count
        _ = try lax.verify(try JWTSigner(key: key).sign(noExp))
        #expect(cache.count == before)
    }

    @Test("bounded: the oldest entries go first")
    func bounded() throws {
        let clock = Clock()
        let key = try JWK.generate(for: .EdDSA)
        let cache = try VerifiedTokenCache(capacity: 3)
        let verifier = try Self.verifier(key, clock: clock, cache: cache)
        for i in 0..<10 {
            var claims = Self.claims(clock.now)
            claims.jwtID = "t\(i)"
            _ = try verifier.verify(try JWTSigner(key: key).sign(claims))
            #expect(cache.count <= 3)
        }
        #expect(cache.count == 3)
        expectJOSE(.jose.invalidConfiguration) { _ = try VerifiedTokenCache(capacity: 0) }
    }

    @Test("retiring a key in a key ring empties the cache, and its tokens fail again")
    func revokedKey() throws {
        let cache = try VerifiedTokenCache()
        var validation = JWTValidation()
        validation.audience = "api"
        let ring = try JWTKeyRing(signingKey: try JWK.generate(for: .ES256, keyID: "old"), validation: validation, cache: cache)
        let now = Int64(Date().timeIntervalSince1970)
        let token = try ring.sign(Self.claims(now))
        _ = try ring.verify(token)
        _ = try ring.verify(token)
        #expect(cache.count == 1)
        try ring.rotate(to: try JWK.generate(for: .ES256, keyID: "new"))
        _ = try ring.verify(token)  // the old key still verifies after a rotation
        #expect(try ring.retire(keyID: "old"))
        #expect(cache.count == 0)
        #expect(throws: TokenMintError.self) { _ = try ring.verify(token) }
        #expect(cache.count == 0)
    }
}
