public import TokenMintCore

extension TokenMintError.Code {
    /// The codes of OATH (HOTP/TOTP) in `TokenMintFIDO` (domain `oath`).
    public static var oath: OATHCodes { OATHCodes() }

    /// The `oath` domain's codes, reached as `.oath.<name>`.
    public struct OATHCodes: Sendable {
        /// An `otpauth://` URI is malformed, too long, or names an unknown
        /// type, algorithm, digit count or period.
        public var invalidURI: TokenMintError.Code { .init(domain: "oath", name: "invalidURI") }
        /// An argument is out of range: digits, period, counter, time, a name or a secret.
        public var invalidParameter: TokenMintError.Code { .init(domain: "oath", name: "invalidParameter") }
        /// No credential of that name.
        public var noSuchCredential: TokenMintError.Code { .init(domain: "oath", name: "noSuchCredential") }
        /// The application keeps its maximum number of credentials already.
        public var storeFull: TokenMintError.Code { .init(domain: "oath", name: "storeFull") }
        /// A credential of the new name exists already (rename).
        public var credentialExists: TokenMintError.Code { .init(domain: "oath", name: "credentialExists") }
        /// A one-time code is wrong (or malformed).
        public var invalidCode: TokenMintError.Code { .init(domain: "oath", name: "invalidCode") }
        /// A one-time code was accepted before, or is not later than the last one accepted.
        public var replayedCode: TokenMintError.Code { .init(domain: "oath", name: "replayedCode") }
        /// The user did not confirm presence (touch) or was not verified.
        public var operationDenied: TokenMintError.Code { .init(domain: "oath", name: "operationDenied") }
        /// The connection has no OATH application.
        public var notSupported: TokenMintError.Code { .init(domain: "oath", name: "notSupported") }
        /// The credential store failed, or holds a damaged record.
        public var storeFailed: TokenMintError.Code { .init(domain: "oath", name: "storeFailed") }
    }
}
