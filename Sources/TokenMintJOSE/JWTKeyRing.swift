public import TokenMintCore
import TokenMintCrypto

/// A JWT signer and verifier whose keys rotate while it is in use.
///
/// One key signs; it and the keys it replaced verify, each found by the
/// token's `kid`, until they are retired. Rotation, retirement, signing and
/// verifying may run at once from any number of tasks: each call works on
/// the key set as it was when the call began (a snapshot taken under a lock;
/// the cryptography runs outside it), so a token signed before a rotation
/// still verifies after it, and a retired key verifies nothing that starts
/// after `retire` returns.
public final class JWTKeyRing: Sendable {
    struct State {
        var signer: JWTSigner
        var verifier: JWTVerifier
        var keys: [JWK]
    }

    private let lock = Lock()
    nonisolated(unsafe) private var state: State
    private let type: String?
    private let validation: JWTValidation
    private let policy: JWSPolicy
    /// The verified-token cache, if one was given: emptied when a key is retired.
    public let cache: VerifiedTokenCache?

    /// A ring that signs with `signingKey` (its `kid` is set to its RFC 7638
    /// thumbprint when it has none).
    /// With `cache`, tokens that verified are kept until their `exp` and a
    /// repeated one skips the signature check; retiring a key empties it.
    public init(
        signingKey: JWK, type: String? = "JWT", validation: JWTValidation = JWTValidation(), policy: JWSPolicy = JWSPolicy(),
        cache: VerifiedTokenCache? = nil
    ) throws(TokenMintError) {
        self.type = type
        self.validation = validation
        self.policy = policy
        self.cache = cache
        state = try JWTKeyRing.state(signingKey: JWTKeyRing.identified(signingKey), verifying: [], type: type, validation: validation,
                                     policy: policy, cache: cache)
    }

    static func identified(_ key: JWK) -> JWK {
        var key = key
        if key.keyID == nil { key.keyID = key.thumbprint() }
        return key
    }

    static func state(
        signingKey: JWK, verifying older: [JWK], type: String?, validation: JWTValidation, policy: JWSPolicy, cache: VerifiedTokenCache?
    ) throws(TokenMintError) -> State {
        guard signingKey.isPrivate || signingKey.keyType == .oct else { throw TokenMintError.key("the signing key must be a private or secret key") }
        guard let keyID = signingKey.keyID, !older.contains(where: { $0.keyID == keyID }) else {
            throw TokenMintError(.jose.ambiguousKey, "the key ring already holds a key with kid \(signingKey.keyID ?? "")")
        }
        let keys = [signingKey] + older
        var verifier = JWTVerifier(keys: try JWKSet(keys: keys), validation: validation, policy: policy)
        verifier.cache = cache
        return State(signer: try JWTSigner(key: signingKey, type: type), verifier: verifier, keys: keys)
    }

    /// The key that signs now.
    public var signingKey: JWK { lock.withLock { state.signer.signer.key } }

    /// The keys that verify now (public halves), signing key first: publish
    /// these as the JWKS.
    public var verificationKeys: JWKSet { lock.withLock { state.verifier.verifier.keys } }

    /// Makes `key` the signing key; the previous signing key keeps verifying
    /// until it is retired.
    /// - Throws: `ambiguousKey` when a key with the same `kid` is in the ring.
    public func rotate(to key: JWK) throws(TokenMintError) {
        let key = JWTKeyRing.identified(key)
        try lock.withLock { () throws(TokenMintError) in
            state = try JWTKeyRing.state(signingKey: key, verifying: state.keys, type: type, validation: validation, policy: policy, cache: cache)
        }
    }

    /// Stops `keyID` from verifying. The signing key cannot be retired.
    /// - Returns: Whether a key was removed.
    @discardableResult
    public func retire(keyID: String) throws(TokenMintError) -> Bool {
        try lock.withLock { () throws(TokenMintError) -> Bool in
            guard state.signer.signer.key.keyID != keyID else { throw TokenMintError.key("the signing key cannot be retired; rotate first") }
            let older = state.keys.dropFirst().filter { $0.keyID != keyID }
            guard older.count != state.keys.count - 1 else { return false }
            state = try JWTKeyRing.state(signingKey: state.keys[0], verifying: Array(older), type: type, validation: validation, policy: policy,
                                         cache: cache)
            // Tokens the retired key verified must not come back from the cache.
            cache?.removeAll()
            return true
        }
    }

    /// Signs `claims` with the current signing key.
    public func sign(_ claims: JWTClaims) throws(TokenMintError) -> String {
        let signer = lock.withLock { state.signer }
        return try signer.sign(claims)
    }

    /// Verifies `token` with the keys of the ring and checks its claims.
    public func verify(_ token: String) throws(TokenMintError) -> VerifiedJWT {
        let verifier = lock.withLock { state.verifier }
        return try verifier.verify(token)
    }
}
