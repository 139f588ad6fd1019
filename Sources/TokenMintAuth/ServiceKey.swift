public import TokenMintCore
import TokenMintCrypto
import TokenMintStore
import Foundation
import Logging

/// The secret service key. Not `Codable`, not printable, compared in constant
/// time: it lives on the server only.
public struct ServiceKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let bytes: SecureBytes
    /// Wraps the key (at least 32 bytes).
    public init(_ key: some Collection<UInt8>) throws(TokenMintError) {
        guard key.count >= 32, key.count <= 256 else { throw TokenMintError(.auth.serviceKeyInvalid, "service keys are 32 to 256 bytes") }
        bytes = SecureBytes(key)
    }
    /// Never shows the key.
    public var description: String { "ServiceKey(redacted)" }
    /// Never shows the key.
    public var debugDescription: String { description }
}
