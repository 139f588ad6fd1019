import TokenMintCore
import TokenMintCrypto

/// The error `TokenMintPay` throws: the WhitelabelPay SDK's cases plus
/// configuration, token-format and store errors, each with a stable code.
public struct WhitelabelPayError: Error, Hashable, CustomStringConvertible, Sendable {
    /// The kind of failure.
    public let code: Code
    /// What went wrong. Never contains a key, a signature or the master key.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = SafeText.escaped(reason)
    }

    /// `WhitelabelPayError.<code>: <reason>`.
    public var description: String { "WhitelabelPayError.\(code): \(reason)" }

    /// A stable identifier; `rawValue` is the SDK's name for the case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The case name.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        /// The case name.
        public var description: String { rawValue }

        /// The device has not been enrolled (or enrolment is not complete).
        public static let deviceNotEnrolled = Code("deviceNotEnrolled")
        /// The offline token limit is reached; reconnect to reset it.
        public static let offlineTokenLimitReached = Code("offlineTokenLimitReached")
        /// Enrolment failed.
        public static let enrollmentError = Code("enrollmentError")
        /// No payment token could be produced.
        public static let failureToRetrievePaymentToken = Code("failureToRetrievePaymentToken")
        /// Payment means could not be read or none is active.
        public static let failureToRetrievePaymentMeans = Code("failureToRetrievePaymentMeans")
        /// The backend no longer knows this enrolment; the SDK resets.
        public static let invalidEnrolmentInstance = Code("invalidEnrolmentInstance")
        /// The configuration is invalid (tenant or reference not a UUID, …) or
        /// changes the environment without a reset.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A token string is not of the WhitelabelPay format.
        public static let malformedToken = Code("malformedToken")
        /// The signature does not verify with the enrolled device key.
        public static let invalidSignature = Code("invalidSignature")
        /// The token is older than its lifetime (plus skew) or from the future.
        public static let expiredToken = Code("expiredToken")
        /// The token was accepted before.
        public static let replayedToken = Code("replayedToken")
        /// A push payload is malformed or of an unknown type.
        public static let invalidPush = Code("invalidPush")
        /// The durable store failed; nothing was half-written.
        public static let storeFailure = Code("storeFailure")
        /// An online token whose unsigned part the verifier's store never
        /// issued to the device.
        public static let notIssued = Code("notIssued")
        /// The device's stored state or configuration failed its
        /// authentication: edited, corrupted or partly deleted outside the SDK.
        public static let tampered = Code("tampered")
    }
}
