public import TokenMintCore

extension TokenMintError.Code {
    /// The codes `TokenMintAztec` raises (domain `aztec`).
    public static var aztec: AztecCodes { AztecCodes() }

    /// The `aztec` domain's codes, reached as `.aztec.<name>`.
    public struct AztecCodes: Sendable {
        /// The payload is empty.
        public var emptyPayload: TokenMintError.Code { .init(domain: "aztec", name: "emptyPayload") }
        /// The payload does not fit the largest symbol, or the requested size, at the requested ECC.
        public var tooLong: TokenMintError.Code { .init(domain: "aztec", name: "tooLong") }
        /// An option is out of range or options contradict each other.
        public var invalidOption: TokenMintError.Code { .init(domain: "aztec", name: "invalidOption") }
        /// zint refused the data or failed.
        public var encoderFailure: TokenMintError.Code { .init(domain: "aztec", name: "encoderFailure") }
        /// A rendering option is out of range (scale, quiet zone, image size).
        public var invalidRendering: TokenMintError.Code { .init(domain: "aztec", name: "invalidRendering") }
    }
}
