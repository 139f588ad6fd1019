public import TokenMintCore

extension TokenMintError.Code {
    /// The codes `TokenMintVectors` raises (domain `vectors`).
    public static var vectors: VectorCodes { VectorCodes() }

    /// The `vectors` domain's codes, reached as `.vectors.<name>`.
    public struct VectorCodes: Sendable {
        /// A vector file could not be run at all: unreadable, too large, of an
        /// unknown schema or malformed. (A test case that fails is not an
        /// error: the report counts it.)
        public var invalidFile: TokenMintError.Code { .init(domain: "vectors", name: "invalidFile") }
    }
}
