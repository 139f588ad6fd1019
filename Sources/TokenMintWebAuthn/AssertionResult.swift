import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR

/// The outcome of an assertion.
public struct AssertionResult: Sendable, Hashable {
    /// The new signature counter to store.
    public let signCount: UInt32
    /// Whether UV was set.
    public let userVerified: Bool
    /// BS at this assertion.
    public let backupState: Bool
    /// True when the counter did not increase and the policy only warns.
    public let possibleClone: Bool
    /// The signed extension outputs (hmac-secret encrypted to the client, credBlob).
    public let extensionOutputs: AuthenticatorExtensionOutputs
}
