import TokenMintCore
import Foundation

/// The environments a device can be enrolled in; switching needs a reset.
public enum WhitelabelPayEnvironment: String, Sendable, Hashable, CaseIterable {
    /// Development backend.
    case development
    /// Integration backend.
    case integration
    /// Production backend.
    case production
}
