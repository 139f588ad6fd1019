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
}
