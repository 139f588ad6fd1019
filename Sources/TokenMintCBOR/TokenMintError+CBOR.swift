public import TokenMintCore

extension TokenMintError.Code {
    /// The codes `TokenMintCBOR` raises (domain `cbor`).
    public static var cbor: CBORCodes { CBORCodes() }

    /// The `cbor` domain's codes, reached as `.cbor.<name>`.
    public struct CBORCodes: Sendable {
        /// The input ends inside an item, or a length or count claims more
        /// than the input holds.
        public var truncated: TokenMintError.Code { .init(domain: "cbor", name: "truncated") }
        /// Bytes follow the item and trailing bytes were not allowed.
        public var trailingBytes: TokenMintError.Code { .init(domain: "cbor", name: "trailingBytes") }
        /// The item is well-formed but not in the CTAP2 canonical form: a
        /// non-shortest integer, length or tag, or map keys out of order.
        public var nonCanonical: TokenMintError.Code { .init(domain: "cbor", name: "nonCanonical") }
        /// A feature outside the supported subset: floating-point numbers,
        /// indefinite lengths (and the "break" byte), or the reserved
        /// additional information values 28–30.
        public var unsupported: TokenMintError.Code { .init(domain: "cbor", name: "unsupported") }
        /// Arrays, maps and tags are nested deeper than `maximumDepth`.
        public var tooDeep: TokenMintError.Code { .init(domain: "cbor", name: "tooDeep") }
        /// The input is longer than `maximumBytes`, or holds more than
        /// `maximumItems` items.
        public var tooLarge: TokenMintError.Code { .init(domain: "cbor", name: "tooLarge") }
        /// A text string is not well-formed UTF-8.
        public var invalidUTF8: TokenMintError.Code { .init(domain: "cbor", name: "invalidUTF8") }
        /// A map has two keys with the same canonical encoding.
        public var duplicateKey: TokenMintError.Code { .init(domain: "cbor", name: "duplicateKey") }
        /// A simple value other than `false`, `true`, `null` and `undefined`
        /// (20–23), including the ill-formed two-byte forms of values below 32.
        public var invalidSimple: TokenMintError.Code { .init(domain: "cbor", name: "invalidSimple") }
    }
}
