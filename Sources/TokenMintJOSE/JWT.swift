public import TokenMintCore
public import TokenMintCrypto

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
    /// `TokenMintError.invalidConfiguration` when a token is verified; it is never
    /// clamped silently.
    public var leeway: Int64 = 0
    /// The largest ``leeway`` a verifier accepts: ten minutes.
    public static let maximumLeeway: Int64 = 600
    /// Claims that must be present.
    public var requiredClaims: Set<String> = ["exp"]
    /// Refuse tokens issued more than this many seconds ago (needs `iat`);
    /// 0 or more, else `TokenMintError.invalidConfiguration`.
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
        if let audiences = claims.audience {
            guard let audience else {
                throw TokenMintError(.jose.invalidAudience, "the token names audiences but this verifier has none configured")
            }
            guard audiences.contains(audience) else {
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

/// A JWT whose signature and claims have been verified.
public struct VerifiedJWT: Sendable {
    /// The header.
    public let header: JWSHeader
    /// The claims.
    public let claims: JWTClaims
    /// The payload bytes (the claims set as received).
    public let payload: [UInt8]
    /// The key that verified it.
    public let key: JWK
}

/// Mints JWTs with one key: the protected header is encoded once, each token
/// costs one claims encoding, one signature and two base64url passes.
public struct JWTSigner: Sendable {
    /// The JWS signer underneath.
    public let signer: JWSSigner
    /// `typ` ("JWT" by default; "at+jwt" for RFC 9068 access tokens).
    public let type: String?
    private let prefix: [UInt8]  // base64url(header) "."

    /// A signer for `key` (algorithm as in ``JWSSigner/init(key:algorithm:)``).
    public init(key: JWK, algorithm: JWSAlgorithm? = nil, type: String? = "JWT", keyID: String? = nil, ecdsaNonce: ECDSA.Nonce = .random) throws(TokenMintError) {
        var signer = try JWSSigner(key: key, algorithm: algorithm)
        signer.ecdsaNonce = ecdsaNonce
        self.signer = signer
        self.type = type
        var prefix: [UInt8] = []
        Base64URL.encode(try signer.headerJSON(JWSHeaderFields(keyID: keyID, type: type)), into: &prefix)
        prefix.append(UInt8(ascii: "."))
        self.prefix = prefix
    }

    /// The compact JWT for `claims`.
    public func sign(_ claims: JWTClaims) throws(TokenMintError) -> String {
        var writer = JSONWriter(capacity: 256)
        claims.write(to: &writer)
        return try sign(claimsJSON: writer.bytes)
    }

    /// The compact JWT for a claims set already encoded as JSON (it must be a
    /// JSON object; it is checked strictly first).
    public func sign(claimsJSON json: [UInt8], validate: Bool = false) throws(TokenMintError) -> String {
        if validate {
            do {
                guard try JSONParser.parse(json).objectValue != nil else { throw TokenMintError.claim("the claims set must be a JSON object") }
            } catch {
                throw TokenMintError.wrap(error, as: .jose.invalidJSON, "claims: \(error)")
            }
        }
        var token = prefix
        token.reserveCapacity(prefix.count + json.count * 4 / 3 + 140)
        Base64URL.encode(json, into: &token)
        let signature = try token.withBytes { input throws(TokenMintError) in
            try signer.key.signature(over: input, algorithm: signer.algorithm, nonce: signer.ecdsaNonce)
        }
        token.append(UInt8(ascii: "."))
        Base64URL.encode(signature, into: &token)
        return String(decoding: token, as: UTF8.self)
    }
}

/// Verifies JWTs: the JWS signature under the key set's rules, then the claims.
public struct JWTVerifier: Sendable {
    /// The JWS verifier (unencoded payloads are refused for JWTs).
    public let verifier: JWSVerifier
    /// The claim checks.
    public var validation: JWTValidation

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
        let jws = try verifier.verify(compact: token)
        let value: JSONValue
        do { value = try JSONParser.parse(jws.payload, limits: verifier.policy.claimsLimits) } catch {
            throw TokenMintError(.jose.invalidJSON, "claims: \(error)")
        }
        guard let object = value.objectValue else { throw TokenMintError.claim("the JWT payload is not a JSON object") }
        let claims = try JWTClaims(object: object)
        try validation.check(claims, header: jws.header)
        return VerifiedJWT(header: jws.header, claims: claims, payload: jws.payload, key: jws.key)
    }
}

/// Reading a JWT **without verifying it**, for inspection and debugging only:
/// nothing returned here may be trusted.
public enum UnverifiedJWT {
    /// The header and claims of `token`, decoded but not verified.
    public static func decode(_ token: String) throws(TokenMintError) -> (header: JSONObject, claims: JSONObject) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("a compact JWT has three segments") }
        func object(_ segment: Substring, _ what: String) throws(TokenMintError) -> JSONObject {
            let bytes = try B64.decode(segment, what)
            do {
                guard let object = try JSONParser.parse(bytes).objectValue else { throw TokenMintError.malformed("\(what) is not a JSON object") }
                return object
            } catch {
                throw TokenMintError.wrap(error, as: .jose.invalidJSON, "\(what): \(error)")
            }
        }
        return (try object(parts[0], "header"), try object(parts[1], "claims"))
    }
}
