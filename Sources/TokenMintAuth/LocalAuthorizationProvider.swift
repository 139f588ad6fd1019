import TokenMintCore
import TokenMintStore
import TokenMintCrypto
public import Foundation

/// The default provider: a `LocalTokenIssuer` for the account, and a FIDO2
/// step-up through a host-supplied assertion function (a software or
/// hardware authenticator): a refund asks for a touch, not a password.
public struct LocalAuthorizationProvider: AuthorizationProvider {
    let issuer: LocalTokenIssuer
    /// The account signed in.
    public let account: String
    /// The OAuth client.
    public let clientID: String
    /// Produces (credentialID, clientDataJSON, authenticatorData, signature) for a challenge.
    let assert: @Sendable ([UInt8]) async throws -> (credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8])

    /// A provider.
    public init(issuer: LocalTokenIssuer, account: String, clientID: String,
                assert: @escaping @Sendable ([UInt8]) async throws -> (credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8])) {
        self.issuer = issuer
        self.account = account
        self.clientID = clientID
        self.assert = assert
    }

    /// Issues an account token.
    public func authorizeAccount() async throws -> OAuthToken {
        try await issuer.issue(account: account, clientID: clientID, scopes: ["payments"])
    }

    /// Runs the FIDO2 step-up for `uuid`.
    public func verifyAccount(uuid: UUID) async throws -> OAuthToken {
        let accountID = uuid.uuidString.lowercased()
        let challenge = try await issuer.elevationChallenge(account: accountID)
        let assertion = try await assert(challenge)
        return try await issuer.elevate(account: accountID, clientID: clientID, credentialID: assertion.credentialID,
                                        clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData,
                                        signature: assertion.signature)
    }

    /// Rotates the refresh token.
    public func refresh(_ token: OAuthToken) async throws -> OAuthToken {
        guard let refresh = token.refreshToken else { throw TokenMintError(.auth.refreshTokenInvalid, "elevated tokens are not refreshed") }
        return try await issuer.refresh(refresh)
    }
}
