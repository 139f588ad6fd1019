public import TokenMintCore
import TokenMintCrypto

extension TokenMintError.Code {
    /// The codes `TokenMintPay` raises (domain `pay`).
    public static var pay: PayCodes { PayCodes() }

    /// The `pay` domain's codes, reached as `.pay.<name>`.
    public struct PayCodes: Sendable {
        /// The device has not been enrolled (or enrolment is not complete).
        public var deviceNotEnrolled: TokenMintError.Code { .init(domain: "pay", name: "deviceNotEnrolled") }
        /// The offline token limit is reached; reconnect to reset it.
        public var offlineTokenLimitReached: TokenMintError.Code { .init(domain: "pay", name: "offlineTokenLimitReached") }
        /// Enrolment failed.
        public var enrollmentError: TokenMintError.Code { .init(domain: "pay", name: "enrollmentError") }
        /// No payment token could be produced.
        public var failureToRetrievePaymentToken: TokenMintError.Code { .init(domain: "pay", name: "failureToRetrievePaymentToken") }
        /// Payment means could not be read or none is active.
        public var failureToRetrievePaymentMeans: TokenMintError.Code { .init(domain: "pay", name: "failureToRetrievePaymentMeans") }
        /// The backend no longer knows this enrolment; the SDK resets.
        public var invalidEnrolmentInstance: TokenMintError.Code { .init(domain: "pay", name: "invalidEnrolmentInstance") }
        /// The configuration is invalid (tenant or reference not a UUID, …) or
        /// changes the environment without a reset.
        public var invalidConfiguration: TokenMintError.Code { .init(domain: "pay", name: "invalidConfiguration") }
        /// A token string is not of the WhitelabelPay format.
        public var malformedToken: TokenMintError.Code { .init(domain: "pay", name: "malformedToken") }
        /// The signature does not verify with the enrolled device key.
        public var invalidSignature: TokenMintError.Code { .init(domain: "pay", name: "invalidSignature") }
        /// The token is older than its lifetime (plus skew) or from the future.
        public var expiredToken: TokenMintError.Code { .init(domain: "pay", name: "expiredToken") }
        /// The token was accepted before.
        public var replayedToken: TokenMintError.Code { .init(domain: "pay", name: "replayedToken") }
        /// A push payload is malformed or of an unknown type.
        public var invalidPush: TokenMintError.Code { .init(domain: "pay", name: "invalidPush") }
        /// The durable store failed; nothing was half-written.
        public var storeFailure: TokenMintError.Code { .init(domain: "pay", name: "storeFailure") }
        /// An online token whose unsigned part the verifier's store never
        /// issued to the device.
        public var notIssued: TokenMintError.Code { .init(domain: "pay", name: "notIssued") }
        /// The backend could not be reached (no connection, a timeout, a 5xx):
        /// the SDK mints offline within its quota instead.
        public var backendUnreachable: TokenMintError.Code { .init(domain: "pay", name: "backendUnreachable") }
        /// The backend answered and refused the request (its error name and
        /// message are in the reason).
        public var backendRefused: TokenMintError.Code { .init(domain: "pay", name: "backendRefused") }
        /// The device's stored state or configuration failed its
        /// authentication: edited, corrupted or partly deleted outside the SDK.
        public var tampered: TokenMintError.Code { .init(domain: "pay", name: "tampered") }
    }
}
