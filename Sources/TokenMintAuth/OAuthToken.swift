import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
import TokenMintStore
import TokenMintWebAuthn
import Foundation
import Logging

/// An OAuth token as the SDK stores it.
public struct OAuthToken: Sendable, Hashable, Codable {
    /// The JWT access token (RFC 9068).
    public let accessToken: String
    /// The refresh token (account tokens only; elevated tokens have none).
    public let refreshToken: String?
    /// When the access token expires, seconds since the epoch.
    public let expiresAt: Int64
    /// Whether this is an elevated (step-up) token.
    public let elevated: Bool
    /// The account the token is for.
    public let account: String

    /// A token as an authorization server answered it (an OAuth client
    /// provider builds one from the token endpoint's answer).
    public init(accessToken: String, refreshToken: String?, expiresAt: Int64, elevated: Bool, account: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.elevated = elevated
        self.account = account
    }
}
