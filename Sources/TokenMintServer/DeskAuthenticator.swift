#if Server
import TokenMintCore
import TokenMintAuth
import TokenMintJOSE
import Hummingbird

/// Checks a cash desk's access token (Bearer, or DPoP when bound): one of this server's
/// issuer from the client-credentials grant (`sub` = `client_id`) with the
/// `wlp.desk` scope.
struct DeskAuthenticator: Sendable {
    let tokens: AccessTokenAuthenticator

    /// The scope a desk's token carries.
    static let scope = "wlp.desk"

    /// The desk's client ID.
    func authenticate(_ request: Request) async throws(TokenMintError) -> String {
        let verified = try await tokens.verify(request)
        guard let client = verified.claims.clientID, verified.claims.subject == client else {
            throw TokenMintError(.server.forbidden, "a desk authenticates with a client-credentials token")
        }
        guard verified.claims.scopes.contains(Self.scope) else { throw TokenMintError(.server.forbidden, "the token lacks the \(Self.scope) scope") }
        return client
    }
}
#endif
