import TokenMintCore
import Foundation

/// A stand-in backend that lives on the device: it accepts enrolments and
/// issues unsigned parts `on.<meansId>.<random>` with the local time. Used by
/// the CLI, the demo and the tests; a real deployment supplies its own.
public struct LocalBackend: WhitelabelPayBackend {
    /// The time the stand-in reports.
    public let clock: WhitelabelPayClock
    /// The unsigned part it hands out, when the host was given one by the
    /// real issuer (e.g. `PaymentTokenVerifier.issueOnlinePart`); otherwise
    /// it invents one, which a strict verifier refuses.
    public let unsignedPart: String?

    /// A stand-in backend.
    public init(clock: WhitelabelPayClock, unsignedPart: String? = nil) {
        self.clock = clock
        self.unsignedPart = unsignedPart
    }

    /// Accepts any enrolment.
    public func enrol(_ token: EnrolmentToken, device: WhitelabelPayDevice) async throws -> Int64 { clock.now() }

    /// ``unsignedPart``, or `on.<meansId>.<16 random base64url characters>`.
    public func issueUnsignedToken(paymentMeansID: String, device: WhitelabelPayDevice) async throws -> (unsigned: String, serverTime: Int64) {
        (unsignedPart ?? "on.\(paymentMeansID).\(B64.random(12))", clock.now())
    }

    /// Accepts any deactivation.
    public func deactivate(paymentMeansID: String, device: WhitelabelPayDevice) async throws {}
}
