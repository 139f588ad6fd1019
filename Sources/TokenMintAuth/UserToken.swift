import TokenMintCore
import TokenMintCrypto
import TokenMintStore
import Foundation
import Logging

/// A user token: scoped to one user, opaque.
public struct UserToken: Sendable, Hashable, Codable {
    /// The token.
    public let value: String
    /// A token.
    public init(_ value: String) { self.value = value }
}
