#if Server
import TokenMintCore
import TokenMintAuth
import TokenMintJOSE
import Hummingbird

/// Checks a cash desk's bearer token: an access token of this server's
/// issuer from the client-credentials grant (`sub` = `client_id`) with the
/// `wlp.desk` scope.
struct DeskAuthenticator: Sendable {
    let issuer: LocalTokenIssuer

    /// The scope a desk's token carries.
    static let scope = "wlp.desk"

    /// The desk's client ID.
    func authenticate(_ request: Request) async throws(TokenMintError) -> String {
        let token = try DeviceAuthenticator.bearer(request)
        let verified: VerifiedJWT
        do { verified = try await issuer.verify(token) } catch {
            throw TokenMintError(.server.unauthorized, "the access token does not verify: \(error.reason)", underlying: error)
        }
        guard let client = verified.claims.clientID, verified.claims.subject == client else {
            throw TokenMintError(.server.forbidden, "a desk authenticates with a client-credentials token")
        }
        guard verified.claims.scopes.contains(Self.scope) else { throw TokenMintError(.server.forbidden, "the token lacks the \(Self.scope) scope") }
        return client
    }
}
#endif
