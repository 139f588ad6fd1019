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
}
