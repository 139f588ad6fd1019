import TokenMintCore
import TokenMintCrypto
import TokenMintStore
import Foundation
import Logging

/// What a client app provides (IFTTT's credential provider). Client types are
/// `Codable` so that they can be shipped; ``ServiceKey`` is not, so no client
/// type can hold one.
public protocol CredentialProvider: Codable, Sendable {
    /// The OAuth code.
    var oauthCode: OAuthCode { get }
    /// The user token, once exchanged.
    var userToken: UserToken? { get }
    /// An invite code, if any.
    var inviteCode: InviteCode? { get }
}
