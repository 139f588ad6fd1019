import TokenMintCore
import TokenMintStore
import TokenMintCrypto
import Foundation

/// The observable authorization state.
public enum AuthState: Sendable, Hashable {
    /// No account.
    case signedOut
    /// An account is signed in.
    case authorized(account: String)
    /// An elevated token is valid until the given time (seconds since the epoch).
    case elevated(account: String, until: Int64)
}
