public import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE

/// The device as a backend sees it: its enrolment token and subject ID, and
/// the short JWT it signs for each request with its enrolment key (the key
/// itself never leaves the SDK).
public struct WhitelabelPayDevice: Sendable {
    /// The device's enrolment token.
    public let enrolmentToken: EnrolmentToken
    let key: Ed25519.PrivateKey
    let authorizedParty: String?
    let clock: WhitelabelPayClock

    init(enrolmentToken: EnrolmentToken, key: Ed25519.PrivateKey, authorizedParty: String?, clock: WhitelabelPayClock) {
        self.enrolmentToken = enrolmentToken
        self.key = key
        self.authorizedParty = authorizedParty
        self.clock = clock
    }

    /// The device's subject ID at the backend.
    public var subjectID: String { enrolmentToken.subjectID }

    /// A JWT for one request to `audience`: EdDSA with the enrolment key,
    /// `sub` the subject ID, `azp` the configuration's authorized party,
    /// `iat` now, `exp` `lifetime` seconds later (at most 60), a random `jti`.
    public func requestToken(audience: String, lifetime: Int64 = 60) throws(TokenMintError) -> String {
        let now = clock.now()
        let claims = JWTClaims(subject: subjectID, audience: [audience], expiration: TimeArithmetic.adding(now, min(max(lifetime, 1), 60)),
                               issuedAt: now, jwtID: Base64URL.encode(SecureRandom.bytes(count: 16)), authorizedParty: authorizedParty)
        return try JWTSigner(key: JWK(key)).sign(claims)
    }
}
