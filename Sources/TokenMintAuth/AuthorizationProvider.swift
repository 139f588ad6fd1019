import TokenMintCore
import TokenMintStore
import TokenMintCrypto
public import Foundation

/// The iZettle SDK 3.0 provider shape.
public protocol AuthorizationProvider: Sendable {
    /// Signs an account in; the token is stored and kept refreshed.
    func authorizeAccount() async throws -> OAuthToken
    /// A step-up for `uuid`: an elevated token, stored, never refreshed.
    func verifyAccount(uuid: UUID) async throws -> OAuthToken
    /// Rotates an account token's refresh token.
    func refresh(_ token: OAuthToken) async throws -> OAuthToken
    /// Revokes an account token's refresh token, and with it its family, at
    /// the server that issued it (RFC 7009). ``TokenManager/logout()``
    /// calls it before it wipes the stored tokens. The default does
    /// nothing: a provider without a server has nothing to revoke.
    func revoke(_ token: OAuthToken) async throws
}

extension AuthorizationProvider {
    /// Does nothing: there is no server to tell.
    public func revoke(_ token: OAuthToken) async throws {}
}
