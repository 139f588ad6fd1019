import TokenMintCore
import TokenMintCrypto
import TokenMintStore

/// A payment token that verified.
public struct VerifiedPaymentToken: Sendable {
    /// The token.
    public let token: PaymentToken
    /// The enrolment it was checked against.
    public let enrolment: EnrolmentToken
    /// Whether the device minted it offline (`off.` unsigned part).
    public var isOffline: Bool { token.unsignedPart.hasPrefix("off.") }
}
