import TokenMintCore
import TokenMintCrypto
import TokenMintStore
import Foundation
import Logging

/// The device's enrolment state.
public enum WhitelabelPayState: String, Sendable, Hashable, CaseIterable {
    /// Not enrolled.
    case inactive
    /// Enrolment token created, not yet accepted by the backend.
    case onboarding
    /// Accepted by the backend; waiting for the `enrolment-succeeded.v1` push.
    case activating
    /// Enrolled: payment tokens can be minted.
    case active
}
