import TokenMintCore
import TokenMintCrypto
import TokenMintStore
import Foundation
import Logging

/// An OAuth authorization code (IFTTT ConnectSDK). A distinct type, so a code,
/// a user token and a service key cannot be mixed up.
public struct OAuthCode: Sendable, Hashable, Codable {
    /// The code.
    public let value: String
    /// A code.
    public init(_ value: String) { self.value = value }
}
