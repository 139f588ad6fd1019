public import TokenMintCore
import TokenMintCrypto

/// An SD-JWT whose issuer signature, disclosures and (when present) key
/// binding verified.
public struct VerifiedSDJWT: Sendable {
    /// The issuer-signed JWT's header.
    public let header: JWSHeader
    /// The claims with every presented disclosure in place and `_sd`,
    /// `_sd_alg` and undisclosed array placeholders removed.
    public let claims: JSONObject
    /// The disclosures presented.
    public let disclosures: [SDJWTDisclosure]
    /// The holder's key from `cnf.jwk`, if the issuer bound one.
    public let holderKey: JWK?
    /// Whether a key binding JWT was checked.
    public let isKeyBound: Bool
}

/// Verifies SD-JWTs and their presentations (RFC 9901 §7): the issuer's
/// signature and claims, each disclosure's digest (each used once, none
/// left over, no claim overwritten), and the key binding JWT (signed by the
/// `cnf.jwk` key, `typ` kb+jwt, fresh `iat`, expected `aud` and `nonce`,
/// `sd_hash` over exactly what was presented).
public struct SDJWTVerifier: Sendable {
    /// Checks the issuer-signed JWT.
    public let issuer: JWTVerifier
    /// How old a key binding JWT may be, in seconds (default 300).
    public var keyBindingMaximumAge: Int64 = 300
    /// The largest presentation read.
    public var maximumBytes = SDJWT.defaultMaximumBytes

    /// A verifier for the issuer's keys. `validation` checks the issuer's
    /// claims (by default none is required; `exp` and `nbf` are checked when present).
    public init(issuerKeys: JWKSet, validation: JWTValidation? = nil, policy: JWSPolicy = JWSPolicy()) {
        var checks = validation ?? JWTValidation()
        if validation == nil { checks.requiredClaims = [] }
        issuer = JWTVerifier(keys: issuerKeys, validation: checks, policy: policy)
    }

    /// Verifies `text`.
    /// - Parameters:
    ///   - text: the SD-JWT or presentation, compact.
    ///   - audience: the `aud` the key binding JWT must carry; giving it requires a key binding JWT.
    ///   - nonce: the `nonce` the key binding JWT must carry; giving it requires a key binding JWT.
    ///   - requireKeyBinding: refuse a presentation without one.
    ///   - vct: when given, the header's `typ` must be
    ///     ``SDJWT/verifiableCredentialType`` and the `vct` claim must equal it.
    /// - Throws: `.jose.invalidSignature` for either signature, `.jose.invalidClaim`
    ///   for a disclosure that does not fit, `.jose.invalidAudience`, `.jose.replayed`
    ///   (a wrong nonce), `.jose.expired` / `.jose.issuedInFuture` for the KB-JWT's `iat`.
    public func verify(
        _ text: String, audience: String? = nil, nonce: String? = nil, requireKeyBinding: Bool = false, verifiableCredentialType vct: String? = nil
    ) throws(TokenMintError) -> VerifiedSDJWT {
        let sdjwt = try SDJWT(parsing: text, maximumBytes: maximumBytes)
        let verified = try issuer.verify(sdjwt.issuerSignedJWT)
        if let vct {
            guard verified.header.type == SDJWT.verifiableCredentialType else {
                throw TokenMintError(.jose.invalidType, "an SD-JWT VC has typ \(SDJWT.verifiableCredentialType)")
            }
            guard verified.claims.additional["vct"]?.stringValue == vct else { throw TokenMintError.claim("vct is not \(SafeText.escaped(vct))") }
        }
        let payload: JSONObject
        do throws(TokenMintError) {
            guard let object = try JSONParser.parse(verified.payload, limits: issuer.verifier.policy.claimsLimits).objectValue else {
                throw TokenMintError.claim("the payload is not an object")
            }
            payload = object
        } catch {
            throw TokenMintError.wrap(error, as: .jose.invalidJSON, "SD-JWT payload: \(error.reason)")
        }
        let processed = try SDJWTProcessor.process(payload, disclosures: sdjwt.disclosures)
        var holderKey: JWK? = nil
        if let jwk = payload["cnf"]?.objectValue?["jwk"]?.objectValue {
            let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
            guard !jwk.contains(where: { privateMembers.contains($0.name) }) else { throw TokenMintError.claim("cnf.jwk must be a public key") }
            let key = try JWK(object: jwk)
            guard key.keyType != .oct, !key.isPrivate else { throw TokenMintError.claim("cnf.jwk must be a public key") }
            holderKey = key
        }
        let needsBinding = requireKeyBinding || audience != nil || nonce != nil
        guard let kb = sdjwt.keyBindingJWT else {
            if needsBinding { throw TokenMintError(.jose.missingClaim, "the presentation has no key binding JWT") }
            return VerifiedSDJWT(header: verified.header, claims: processed.claims, disclosures: sdjwt.disclosures, holderKey: holderKey, isKeyBound: false)
        }
        guard let holderKey else { throw TokenMintError.claim("a key binding JWT needs cnf.jwk in the issuer's claims") }
        // RFC 9901 §7.3: a key binding JWT is only worth its aud and nonce; without them it could be replayed.
        guard let audience, let nonce else {
            throw TokenMintError(.jose.invalidConfiguration, "checking a key binding JWT takes the verifier's audience and nonce")
        }
        try checkKeyBinding(kb, key: holderKey, prefix: sdjwt.presentationPrefix, audience: audience, nonce: nonce)
        return VerifiedSDJWT(header: verified.header, claims: processed.claims, disclosures: sdjwt.disclosures, holderKey: holderKey, isKeyBound: true)
    }

    private func checkKeyBinding(_ kb: String, key: JWK, prefix: String, audience: String, nonce: String) throws(TokenMintError) {
        var validation = JWTValidation()
        validation.requiredClaims = ["iat", "aud", "nonce", "sd_hash"]
        validation.type = SDJWT.keyBindingType
        validation.audience = audience
        validation.leeway = issuer.validation.leeway
        validation.maximumAge = keyBindingMaximumAge
        validation.clock = issuer.validation.clock
        let verified = try JWTVerifier(key: key, validation: validation).verify(kb)
        if verified.claims.additional["nonce"]?.stringValue != nonce {
            throw TokenMintError(.jose.replayed, "the key binding JWT's nonce is not the one this verifier gave")
        }
        guard verified.claims.additional["sd_hash"]?.stringValue == SDJWTDisclosure.digest(prefix) else {
            throw TokenMintError.claim("sd_hash does not cover this presentation")
        }
    }
}
