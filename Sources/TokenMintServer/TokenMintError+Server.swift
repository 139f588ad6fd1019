public import TokenMintCore

extension TokenMintError.Code {
    /// The codes `TokenMintServer` raises (domain `server`): what is wrong
    /// with an HTTP request before any token is looked at. Each maps to one
    /// status code of its answer.
    public static var server: ServerCodes { ServerCodes() }

    /// The `server` domain's codes, reached as `.server.<name>`.
    public struct ServerCodes: Sendable {
        /// The body is not the JSON (or form) the route takes, or a field is
        /// missing or out of range (400).
        public var badRequest: TokenMintError.Code { .init(domain: "server", name: "badRequest") }
        /// No credentials, or credentials that do not verify (401).
        public var unauthorized: TokenMintError.Code { .init(domain: "server", name: "unauthorized") }
        /// Credentials that verify but may not do this (403).
        public var forbidden: TokenMintError.Code { .init(domain: "server", name: "forbidden") }
        /// No such route or resource (404).
        public var notFound: TokenMintError.Code { .init(domain: "server", name: "notFound") }
        /// The route exists but not for this method (405).
        public var methodNotAllowed: TokenMintError.Code { .init(domain: "server", name: "methodNotAllowed") }
        /// The request conflicts with what the server holds (409).
        public var conflict: TokenMintError.Code { .init(domain: "server", name: "conflict") }
        /// The body is larger than the server takes (413).
        public var payloadTooLarge: TokenMintError.Code { .init(domain: "server", name: "payloadTooLarge") }
        /// The body is not of a content type the route takes (415).
        public var unsupportedMediaType: TokenMintError.Code { .init(domain: "server", name: "unsupportedMediaType") }
        /// Too many requests of a costly kind at once (password checks) (429).
        public var tooManyRequests: TokenMintError.Code { .init(domain: "server", name: "tooManyRequests") }
        /// The server cannot take more of something now (event streams) (503).
        public var unavailable: TokenMintError.Code { .init(domain: "server", name: "unavailable") }
        /// The server cannot start: a bad option, an unreadable TLS file, a
        /// store that does not open.
        public var invalidConfiguration: TokenMintError.Code { .init(domain: "server", name: "invalidConfiguration") }
        /// The server failed (500): its store failed; nothing was half-written.
        public var internalFailure: TokenMintError.Code { .init(domain: "server", name: "internalFailure") }
    }
}
