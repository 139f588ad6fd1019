#if Server
import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
import TokenMintPay
import Hummingbird
import HTTPTypes
import Foundation

/// Checks the short JWT a WhitelabelPay device signs with its enrolment key
/// for each request: EdDSA with the key of the enrolment token, `sub` the
/// device's subject ID, `aud` the server, `azp` the configured authorized
/// party, `iat` and `exp` at most 60 s apart, and a `jti` used once — kept
/// in the verifier's replay ledger, so every instance on one PostgreSQL or
/// SQLite store refuses a replay.
struct DeviceAuthenticator: Sendable {
    let audience: String
    let authorizedParty: String?
    let ledger: any VerifierStore
    let clock: @Sendable () -> Int64

    /// The longest a device JWT lives.
    static let maximumLifetime: Int64 = 60
    /// Clock skew allowed between device and server.
    static let leeway: Int64 = 30

    /// The bearer token of the request.
    static func bearer(_ request: Request) throws(TokenMintError) -> String {
        guard let header = request.headers[.authorization] else {
            throw TokenMintError(.server.unauthorized, "no Authorization header")
        }
        guard header.utf8.count <= 4096, header.lowercased().hasPrefix("bearer "), header.utf8.count > 7 else {
            throw TokenMintError(.server.unauthorized, "the Authorization header is not a bearer token")
        }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// The subject a device JWT names, before it is verified (to find the key).
    static func claimedSubject(_ token: String) throws(TokenMintError) -> String {
        guard let subject = (try? UnverifiedJWT.decode(token))?.claims["sub"]?.stringValue, (1...64).contains(subject.utf8.count) else {
            throw TokenMintError(.server.unauthorized, "the device token names no subject")
        }
        return subject
    }

    /// Verifies the request's device JWT against `enrolment`.
    func authenticate(_ token: String, enrolment: EnrolmentToken) async throws(TokenMintError) {
        var validation = JWTValidation()
        validation.audience = audience
        validation.authorizedParty = authorizedParty
        validation.requiredClaims = ["exp", "iat", "jti", "sub", "aud"]
        validation.leeway = Self.leeway
        validation.maximumAge = Self.maximumLifetime
        validation.clock = clock
        let verified: VerifiedJWT
        do {
            verified = try JWTVerifier(key: JWK(enrolment.publicKey), validation: validation).verify(token)
        } catch {
            throw TokenMintError(.server.unauthorized, "the device token does not verify: \(error.code.name)", underlying: error)
        }
        let claims = verified.claims
        guard claims.subject == enrolment.subjectID else { throw TokenMintError(.server.unauthorized, "the device token is for another subject") }
        guard let issuedAt = claims.issuedAt, let expiration = claims.expiration, expiration > issuedAt,
            expiration - issuedAt <= Self.maximumLifetime
        else { throw TokenMintError(.server.unauthorized, "a device token lives at most \(Self.maximumLifetime) s") }
        guard let jti = claims.jwtID, (8...128).contains(jti.utf8.count) else {
            throw TokenMintError(.server.unauthorized, "a device token's jti is 8 to 128 bytes")
        }
        let identifier = HashFunction.sha256.hash(Array("tokenmint.wlp.device-jwt.v1\u{0}\(enrolment.subjectID)\u{0}\(jti)".utf8))
        let first: Bool
        do { first = try await ledger.recordOnce(identifier, expiresAt: TimeArithmetic.adding(expiration, Self.leeway)) } catch {
            throw TokenMintError(.server.internalFailure, "the replay ledger failed", underlying: error)
        }
        guard first else { throw TokenMintError(.server.unauthorized, "this device token was used before") }
    }
}
#endif
