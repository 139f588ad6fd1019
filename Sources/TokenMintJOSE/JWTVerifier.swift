public import TokenMintCore
import TokenMintCrypto


/// Verifies JWTs: the JWS signature under the key set's rules, then the claims.
public struct JWTVerifier: Sendable {
    /// The JWS verifier (unencoded payloads are refused for JWTs).
    public let verifier: JWSVerifier
    /// The claim checks.
    public var validation: JWTValidation
    /// A cache of tokens that verified (off by default): a repeated token
    /// skips the signature check, never the claim checks.
    public var cache: VerifiedTokenCache?

    /// A verifier over a key set.
    public init(keys: JWKSet, validation: JWTValidation = JWTValidation(), policy: JWSPolicy = JWSPolicy()) {
        var policy = policy
        policy.allowsUnencodedPayload = false
        self.verifier = JWSVerifier(keys: keys, policy: policy)
        self.validation = validation
    }

    /// A verifier with one key.
    public init(key: JWK, validation: JWTValidation = JWTValidation(), policy: JWSPolicy = JWSPolicy()) throws(TokenMintError) {
        self.init(keys: try JWKSet(key), validation: validation, policy: policy)
    }

    /// Verifies the token and its claims.
    public func verify(_ token: String) throws(TokenMintError) -> VerifiedJWT {
        guard let cache else { return try verifyUncached(token) }
        let digest = VerifiedTokenCache.digest(token)
        let now = validation.clock()
        let (hit, generation) = cache.lookup(digest, now: now)
        // A hit counts only while its key is still in this verifier's set (a retired key's tokens never come back).
        if let hit, verifier.keys.keys.contains(where: { $0.keyID == hit.key.keyID && $0.thumbprint() == hit.key.thumbprint() }) {
            try validation.check(hit.claims, header: hit.header)
            return hit
        }
        let verified = try verifyUncached(token)
        if let expiration = verified.claims.expiration {
            cache.insert(digest, verified, expiresAt: expiration, now: now, generation: generation)
        }
        return verified
    }

    private func verifyUncached(_ token: String) throws(TokenMintError) -> VerifiedJWT {
        let jws = try verifier.verify(compact: token)
        let limits = verifier.policy.claimsLimits
        let claims = try jws.payload.withBytes { bytes throws(TokenMintError) in try JWTClaims(json: bytes, limits: limits) }
        try validation.check(claims, header: jws.header)
        return VerifiedJWT(header: jws.header, claims: claims, payload: jws.payload, key: jws.key)
    }
}
