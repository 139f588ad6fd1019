import TokenMintCore
import Foundation

/// The backend the SDK talks to; the host implements it (HTTP, a test double, …).
public protocol WhitelabelPayBackend: Sendable {
    /// Registers the enrolment token; returns the server time.
    func enrol(_ token: EnrolmentToken) async throws -> Int64
    /// Issues the unsigned part of a payment token for a payment means; returns it with the server time.
    func issueUnsignedToken(paymentMeansID: String) async throws -> (unsigned: String, serverTime: Int64)
    /// Deactivates a payment means.
    func deactivate(paymentMeansID: String) async throws
}
