import TokenMintCore
import TokenMintCrypto
import TokenMintStore
import Foundation
import Logging

/// An invite code.
public struct InviteCode: Sendable, Hashable, Codable {
    /// The code.
    public let value: String
    /// A code.
    public init(_ value: String) { self.value = value }
}
