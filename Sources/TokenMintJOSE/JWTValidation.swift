import TokenMintCore
import TokenMintCrypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a JWT's claims are checked after its signature verifies.
public struct JWTValidation: Sendable {
    /// The expected `iss`; when set, a token without it or with another is refused.
    public var issuer: String?
    /// This verifier's audience. A token naming audiences is refused unless this is one
    /// of them (RFC 7519 §4.1.3), including when no audience is configured.
    public var audience: String?
    /// The expected `azp`.
    public var authorizedParty: String?
    /// The expected `typ` header ("JWT", "at+jwt"); compared without case and
    /// without an "application/" prefix (RFC 7515 §4.1.9).
    public var type: String?
    /// Clock skew allowed on `exp`, `nbf` and `iat`, in seconds: 0…600
    /// (``maximumLeeway``). A value outside that range is refused with
    /// `.jose.invalidConfiguration` when a token is verified; it is never
    /// clamped silently.
    public var leeway: Int64 = 0
    /// The largest ``leeway`` a verifier accepts: ten minutes.
    public static let maximumLeeway: Int64 = 600
    /// Claims that must be present.
    public var requiredClaims: Set<String> = ["exp"]
    /// Refuse tokens issued more than this many seconds ago (needs `iat`);
    /// 0 or more, else `.jose.invalidConfiguration`.
    public var maximumAge: Int64?
    /// The current time in seconds since the epoch (injectable for tests).
    public var clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    /// The defaults: `exp` required, no leeway.
    public init() {}

    /// RFC 9068 §4: `typ` at+jwt; iss, exp, aud, sub, client_id, iat and jti required.
    public static func accessToken(issuer: String, audience: String) -> JWTValidation {
        var validation = JWTValidation()
        validation.issuer = issuer
        validation.audience = audience
        validation.type = "at+jwt"
        validation.requiredClaims = ["iss", "exp", "aud", "sub", "client_id", "iat", "jti"]
        return validation
    }

    func check(_ claims: JWTClaims, header: JWSHeader) throws(TokenMintError) {
        for name in requiredClaims where !claims.contains(name) {
            throw TokenMintError(.jose.missingClaim, "required claim \"\(name)\" is missing")
        }
        if let type {
            func normal(_ s: String) -> String {
                let lower = s.lowercased()
                return lower.hasPrefix("application/") ? String(lower.dropFirst(12)) : lower
            }
            guard let actual = header.type, normal(actual) == normal(type) else {
                throw TokenMintError(.jose.invalidType, "typ is \(header.type.map { "\"\($0)\"" } ?? "absent"), expected \"\(type)\"")
            }
        }
        guard (0...JWTValidation.maximumLeeway).contains(leeway) else {
            throw TokenMintError(.jose.invalidConfiguration, "leeway must be 0 to \(JWTValidation.maximumLeeway) s, not \(leeway)")
        }
        if let maximumAge, maximumAge < 0 { throw TokenMintError(.jose.invalidConfiguration, "maximumAge must not be negative") }
        // Token times are the sender's: every sum saturates instead of wrapping.
        let now = clock()
        let latest = TimeArithmetic.adding(now, leeway)
        if let exp = claims.expiration, now >= TimeArithmetic.adding(exp, leeway) {
            throw TokenMintError(.jose.expired, "the token expired at \(exp) (now \(now), leeway \(leeway) s)")
        }
        if let nbf = claims.notBefore, latest < nbf {
            throw TokenMintError(.jose.notYetValid, "the token is valid from \(nbf) (now \(now), leeway \(leeway) s)")
        }
        if let iat = claims.issuedAt {
            if iat > latest {
                throw TokenMintError(.jose.issuedInFuture, "the token was issued at \(iat), in the future (now \(now))")
            }
            if let maximumAge, TimeArithmetic.subtracting(now, iat) > TimeArithmetic.adding(maximumAge, leeway) {
                throw TokenMintError(.jose.expired, "the token was issued \(TimeArithmetic.subtracting(now, iat)) s ago; the limit is \(maximumAge) s")
            }
        }
        if let issuer, claims.issuer != issuer {
            throw TokenMintError(.jose.invalidIssuer, "iss is \(claims.issuer.map { "\"\($0)\"" } ?? "absent"), expected \"\(issuer)\"")
        }
        if claims.contains("aud") {
            guard let audience else {
                throw TokenMintError(.jose.invalidAudience, "the token names audiences but this verifier has none configured")
            }
            guard claims.audienceIncludes(audience) else {
                throw TokenMintError(.jose.invalidAudience, "aud does not contain \"\(audience)\"")
            }
        } else if let audience {
            throw TokenMintError(.jose.invalidAudience, "the token has no aud; this verifier expects \"\(audience)\"")
        }
        if let authorizedParty, claims.authorizedParty != authorizedParty {
            throw TokenMintError(.jose.invalidAuthorizedParty, "azp is \(claims.authorizedParty.map { "\"\($0)\"" } ?? "absent"), expected \"\(authorizedParty)\"")
        }
    }
}
