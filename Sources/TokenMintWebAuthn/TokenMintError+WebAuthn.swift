public import TokenMintCore
import TokenMintCrypto

extension TokenMintError.Code {
    /// The codes `TokenMintWebAuthn` raises (domain `webauthn`).
    public static var webAuthn: WebAuthnCodes { WebAuthnCodes() }

    /// The `webauthn` domain's codes, reached as `.webAuthn.<name>`.
    public struct WebAuthnCodes: Sendable {
        /// CTAP1_ERR_INVALID_PARAMETER (0x02).
        public var invalidParameter: TokenMintError.Code { .init(domain: "webauthn", name: "invalidParameter", number: 0x02) }
        /// CTAP2_ERR_CREDENTIAL_EXCLUDED (0x19).
        public var credentialExcluded: TokenMintError.Code { .init(domain: "webauthn", name: "credentialExcluded", number: 0x19) }
        /// CTAP2_ERR_INVALID_CREDENTIAL (0x22).
        public var invalidCredential: TokenMintError.Code { .init(domain: "webauthn", name: "invalidCredential", number: 0x22) }
        /// CTAP2_ERR_UNSUPPORTED_ALGORITHM (0x26).
        public var unsupportedAlgorithm: TokenMintError.Code { .init(domain: "webauthn", name: "unsupportedAlgorithm", number: 0x26) }
        /// CTAP2_ERR_OPERATION_DENIED (0x27).
        public var operationDenied: TokenMintError.Code { .init(domain: "webauthn", name: "operationDenied", number: 0x27) }
        /// CTAP2_ERR_KEY_STORE_FULL (0x28): a new resident credential would go beyond
        /// `SoftwareAuthenticator.maximumResidentCredentials`.
        public var keyStoreFull: TokenMintError.Code { .init(domain: "webauthn", name: "keyStoreFull", number: 0x28) }
        /// CTAP2_ERR_UNSUPPORTED_OPTION (0x2B).
        public var unsupportedOption: TokenMintError.Code { .init(domain: "webauthn", name: "unsupportedOption", number: 0x2B) }
        /// CTAP2_ERR_INVALID_OPTION (0x2C): an option or extension input that
        /// cannot go with the others (largeBlobKey without a resident key).
        public var invalidOption: TokenMintError.Code { .init(domain: "webauthn", name: "invalidOption", number: 0x2C) }
        /// CTAP2_ERR_NO_CREDENTIALS (0x2E).
        public var noCredentials: TokenMintError.Code { .init(domain: "webauthn", name: "noCredentials", number: 0x2E) }
        /// CTAP2_ERR_NOT_ALLOWED (0x30): getNextAssertion without a pending getAssertion.
        public var notAllowed: TokenMintError.Code { .init(domain: "webauthn", name: "notAllowed", number: 0x30) }
        /// CTAP2_ERR_UV_BLOCKED (0x3C): built-in user verification failed
        /// `SoftwareAuthenticator.maximumUserVerificationRetries` times in a
        /// row; a correct PIN or a reset unblocks it.
        public var userVerificationBlocked: TokenMintError.Code { .init(domain: "webauthn", name: "userVerificationBlocked", number: 0x3C) }
        /// CTAP1_ERR_OTHER (0x7F): the store or the crypto core failed.
        public var other: TokenMintError.Code { .init(domain: "webauthn", name: "other", number: 0x7F) }
        /// clientDataJSON is malformed or of the wrong type.
        public var invalidClientData: TokenMintError.Code { .init(domain: "webauthn", name: "invalidClientData") }
        /// The challenge is not the expected one (or too short, or used).
        public var challengeMismatch: TokenMintError.Code { .init(domain: "webauthn", name: "challengeMismatch") }
        /// The origin (or cross-origin/top-origin) is not allowed.
        public var originMismatch: TokenMintError.Code { .init(domain: "webauthn", name: "originMismatch") }
        /// The rpIdHash is not SHA-256 of the RP ID.
        public var rpIDMismatch: TokenMintError.Code { .init(domain: "webauthn", name: "rpIDMismatch") }
        /// authenticatorData is malformed, has trailing bytes, RFU bits, or wrong AT/ED flags.
        public var invalidAuthenticatorData: TokenMintError.Code { .init(domain: "webauthn", name: "invalidAuthenticatorData") }
        /// User presence (or required verification) is missing.
        public var userNotPresent: TokenMintError.Code { .init(domain: "webauthn", name: "userNotPresent") }
        /// BE=0 with BS=1, or BE changed for a credential.
        public var invalidBackupFlags: TokenMintError.Code { .init(domain: "webauthn", name: "invalidBackupFlags") }
        /// The attestation object or statement is malformed or does not verify.
        public var invalidAttestation: TokenMintError.Code { .init(domain: "webauthn", name: "invalidAttestation") }
        /// A metadata (MDS3) BLOB is malformed, does not verify, or is older than the one kept.
        public var invalidMetadata: TokenMintError.Code { .init(domain: "webauthn", name: "invalidMetadata") }
        /// The authenticator's metadata refuses it (a revocation or compromise
        /// in its newest status report, or no entry when one is required).
        public var authenticatorRefused: TokenMintError.Code { .init(domain: "webauthn", name: "authenticatorRefused") }
        /// A COSE key is malformed, non-canonical, or of a refused algorithm.
        public var invalidPublicKey: TokenMintError.Code { .init(domain: "webauthn", name: "invalidPublicKey") }
        /// The signature does not verify.
        public var invalidSignature: TokenMintError.Code { .init(domain: "webauthn", name: "invalidSignature") }
        /// The signature counter did not increase: a possible cloned authenticator.
        public var signCountRollback: TokenMintError.Code { .init(domain: "webauthn", name: "signCountRollback") }
        /// An extension's input or output is malformed: a known extension of
        /// the wrong type or out of range, or an output the ceremony cannot carry.
        public var invalidExtension: TokenMintError.Code { .init(domain: "webauthn", name: "invalidExtension") }
        /// The credential is not registered.
        public var unknownCredential: TokenMintError.Code { .init(domain: "webauthn", name: "unknownCredential") }
    }
}

extension TokenMintError.Code {
    /// The CTAP2 status byte, for authenticator failures (`webauthn` codes
    /// with a number); `nil` for relying-party rejections and other domains.
    public var ctapStatus: UInt8? {
        guard domain == "webauthn", let number, let status = UInt8(exactly: number) else { return nil }
        return status
    }
}

extension TokenMintError {
    /// The CTAP2 status byte, for authenticator failures; see `TokenMintError.Code.ctapStatus`.
    public var ctapStatus: UInt8? { code.ctapStatus }
}
