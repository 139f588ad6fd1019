import TokenMintCore
import Foundation

/// A source of time in seconds since the epoch (injectable for tests).
public struct WhitelabelPayClock: Sendable {
    /// The current time.
    public let now: @Sendable () -> Int64
    /// A clock.
    public init(now: @escaping @Sendable () -> Int64) { self.now = now }

    /// The system clock.
    public static let system = WhitelabelPayClock { Int64(Date().timeIntervalSince1970) }
}
