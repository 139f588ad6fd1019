import TokenMintCore
import TokenMintCrypto

/// The error `TokenMintWebAuthn` throws. Authenticator failures carry their
/// CTAP2 status code (``ctapStatus``); relying-party rejections carry a code
/// naming the rule that failed.
public struct WebAuthnError: Error, Hashable, CustomStringConvertible, Sendable {
    /// The kind of failure.
    public let code: Code
    /// What went wrong.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = SafeText.escaped(reason)
    }

    /// `WebAuthnError.<code>: <reason>`.
    public var description: String {
        if let status = code.ctapStatus { return "WebAuthnError.\(code) (CTAP2 0x\(String(status, radix: 16, uppercase: true))): \(reason)" }
        return "WebAuthnError.\(code): \(reason)"
    }

    /// The CTAP2 status code, for authenticator errors.
    public var ctapStatus: UInt8? { code.ctapStatus }

    /// A stable identifier of the kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The name.
        public let name: String
        /// The CTAP2 status, for authenticator errors.
        public let ctapStatus: UInt8?
        private init(_ name: String, _ status: UInt8? = nil) {
            self.name = name
            self.ctapStatus = status
        }
        /// The name.
        public var description: String { name }

        // Authenticator (CTAP2 status codes).
        /// CTAP1_ERR_INVALID_PARAMETER (0x02).
        public static let invalidParameter = Code("invalidParameter", 0x02)
        /// CTAP2_ERR_CREDENTIAL_EXCLUDED (0x19).
        public static let credentialExcluded = Code("credentialExcluded", 0x19)
        /// CTAP2_ERR_INVALID_CREDENTIAL (0x22).
        public static let invalidCredential = Code("invalidCredential", 0x22)
        /// CTAP2_ERR_UNSUPPORTED_ALGORITHM (0x26).
        public static let unsupportedAlgorithm = Code("unsupportedAlgorithm", 0x26)
        /// CTAP2_ERR_OPERATION_DENIED (0x27).
        public static let operationDenied = Code("operationDenied", 0x27)
        /// CTAP2_ERR_KEY_STORE_FULL (0x28).
        public static let keyStoreFull = Code("keyStoreFull", 0x28)
        /// CTAP2_ERR_UNSUPPORTED_OPTION (0x2B).
        public static let unsupportedOption = Code("unsupportedOption", 0x2B)
        /// CTAP2_ERR_NO_CREDENTIALS (0x2E).
        public static let noCredentials = Code("noCredentials", 0x2E)
        /// CTAP2_ERR_NOT_ALLOWED (0x30): getNextAssertion without a pending getAssertion.
        public static let notAllowed = Code("notAllowed", 0x30)
        /// CTAP1_ERR_OTHER (0x7F): the store or the crypto core failed.
        public static let other = Code("other", 0x7F)

        // Relying party.
        /// clientDataJSON is malformed or of the wrong type.
        public static let invalidClientData = Code("invalidClientData")
        /// The challenge is not the expected one (or too short, or used).
        public static let challengeMismatch = Code("challengeMismatch")
        /// The origin (or cross-origin/top-origin) is not allowed.
        public static let originMismatch = Code("originMismatch")
        /// The rpIdHash is not SHA-256 of the RP ID.
        public static let rpIDMismatch = Code("rpIDMismatch")
        /// authenticatorData is malformed, has trailing bytes, RFU bits, or wrong AT/ED flags.
        public static let invalidAuthenticatorData = Code("invalidAuthenticatorData")
        /// User presence (or required verification) is missing.
        public static let userNotPresent = Code("userNotPresent")
        /// BE=0 with BS=1, or BE changed for a credential.
        public static let invalidBackupFlags = Code("invalidBackupFlags")
        /// The attestation object or statement is malformed or does not verify.
        public static let invalidAttestation = Code("invalidAttestation")
        /// A COSE key is malformed, non-canonical, or of a refused algorithm.
        public static let invalidPublicKey = Code("invalidPublicKey")
        /// The signature does not verify.
        public static let invalidSignature = Code("invalidSignature")
        /// The signature counter did not increase: a possible cloned authenticator.
        public static let signCountRollback = Code("signCountRollback")
        /// The credential is not registered.
        public static let unknownCredential = Code("unknownCredential")
    }
}
