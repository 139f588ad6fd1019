public import TokenMintCore
import TokenMintCrypto
import TokenMintStore
import Foundation
import Logging

/// What the monitoring stream reports.
public enum WhitelabelPayUpdate: Sendable {
    /// A fresh payment token to show.
    case token(PaymentToken)
    /// Offline minting stopped at the limit.
    case offlineTokenLimitReached
    /// The enrolment state changed.
    case stateChanged(WhitelabelPayState)
    /// The backend reported a successful payment (push `payment-succeeded.v1`).
    case paymentSucceeded
    /// The backend reported a failed payment (push `payment-failed.v1`).
    case paymentFailed
    /// Minting failed for another reason.
    case failure(TokenMintError)
}
