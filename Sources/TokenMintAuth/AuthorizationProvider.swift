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
    /// A step-up for `uuid` by a provider that proves the sign-in to a
    /// server with the account's current token (`accountToken`, nil when
    /// none is stored). ``TokenManager/elevate(account:)`` calls this one;
    /// the default ignores the token and calls ``verifyAccount(uuid:)``.
    func verifyAccount(uuid: UUID, accountToken: OAuthToken?) async throws -> OAuthToken
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

    /// Calls ``verifyAccount(uuid:)``: a provider without a server needs no token.
    public func verifyAccount(uuid: UUID, accountToken: OAuthToken?) async throws -> OAuthToken {
        try await verifyAccount(uuid: uuid)
    }
}

/// What a step-up asks of an authenticator, as a server's step-up options
/// name it: the challenge to sign, the RP ID, and the account's credentials.
public struct StepUpRequest: Sendable, Hashable {
    /// The challenge (single use, minutes).
    public let challenge: [UInt8]
    /// The relying party ID the assertion is for.
    public let relyingPartyID: String
    /// The account's credential IDs (`allowCredentials`).
    public let credentialIDs: [[UInt8]]

    /// A request.
    public init(challenge: [UInt8], relyingPartyID: String, credentialIDs: [[UInt8]]) {
        self.challenge = challenge
        self.relyingPartyID = relyingPartyID
        self.credentialIDs = credentialIDs
    }
}

/// An authenticator's answer to a ``StepUpRequest``: a WebAuthn assertion.
public struct StepUpAssertion: Sendable, Hashable {
    /// The credential that signed.
    public let credentialID: [UInt8]
    /// The client data signed over (its challenge is the request's).
    public let clientDataJSON: [UInt8]
    /// The authenticator data.
    public let authenticatorData: [UInt8]
    /// The signature over the authenticator data and the client data's hash.
    public let signature: [UInt8]

    /// An assertion.
    public init(credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8]) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
    }
}
