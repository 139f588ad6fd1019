public import TokenMintCore

extension TokenMintError.Code {
    /// The codes `TokenMintFIDO` raises (domain `fido`).
    public static var fido: FIDOCodes { FIDOCodes() }

    /// The `fido` domain's codes, reached as `.fido.<name>`.
    public struct FIDOCodes: Sendable {
        /// A CTAP2 request was refused with `status` (named after it, its
        /// number the status byte): by this authenticator, or by a key.
        public func ctap(_ status: CTAP2Status) -> TokenMintError.Code {
            .init(domain: "fido", name: "\(status)", number: Int(status.rawValue))
        }
        /// A key's response is malformed.
        public var invalidResponse: TokenMintError.Code { .init(domain: "fido", name: "invalidResponse") }
        /// A CTAPHID packet or message is malformed, or the device answered ERROR.
        public var transportError: TokenMintError.Code { .init(domain: "fido", name: "transportError") }
        /// The connection is closed, or a newer session replaced this one.
        public var sessionClosed: TokenMintError.Code { .init(domain: "fido", name: "sessionClosed") }
    }
}

extension TokenMintError {
    /// A CTAP failure with `status` as its number.
    static func ctap(_ status: CTAP2Status, _ reason: String) -> TokenMintError {
        TokenMintError(.fido.ctap(status), reason)
    }
}
