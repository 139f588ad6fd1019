extension TokenMintError.Code {
    /// The codes the strict JSON reader raises (domain `json`).
    public static var json: JSON { JSON() }

    /// The `json` domain's codes.
    public struct JSON: Sendable {
        /// The input is not strict RFC 8259 JSON: a syntax error, a duplicate
        /// member name, invalid UTF-8 or an unpaired surrogate escape.
        public var malformed: TokenMintError.Code { .init(domain: "json", name: "malformed") }
        /// The input is larger, deeper or longer than the parser's limits.
        public var tooLarge: TokenMintError.Code { .init(domain: "json", name: "tooLarge") }
    }
}
