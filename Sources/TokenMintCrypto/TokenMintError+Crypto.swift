public import TokenMintCore

extension TokenMintError.Code {
    /// The codes `TokenMintCrypto` raises (domain `crypto`).
    public static var crypto: CryptoCodes { CryptoCodes() }

    /// The `crypto` domain's codes, reached as `.crypto.<name>`.
    public struct CryptoCodes: Sendable {
        /// Key material is malformed, of the wrong type, or fails validation
        /// (for example a point that is not on the curve).
        public var invalidKey: TokenMintError.Code { .init(domain: "crypto", name: "invalidKey") }
        /// A key has the wrong length or too few bits (RSA under 2048 for signing,
        /// HMAC keys shorter than the hash).
        public var invalidKeySize: TokenMintError.Code { .init(domain: "crypto", name: "invalidKeySize") }
        /// PEM, DER, base64url or hex input is malformed.
        public var invalidEncoding: TokenMintError.Code { .init(domain: "crypto", name: "invalidEncoding") }
        /// A signature is malformed (wrong length, non-canonical DER, r or s out
        /// of range). A well-formed signature that does not verify is not an
        /// error: `isValidSignature` returns `false`.
        public var invalidSignature: TokenMintError.Code { .init(domain: "crypto", name: "invalidSignature") }
        /// The algorithm, curve or hash is not supported for this operation.
        public var unsupportedAlgorithm: TokenMintError.Code { .init(domain: "crypto", name: "unsupportedAlgorithm") }
        /// An argument is out of its allowed range.
        public var invalidParameter: TokenMintError.Code { .init(domain: "crypto", name: "invalidParameter") }
        /// Authenticated decryption failed: the tag, the wrapped key's check
        /// or the padding is wrong (which one is not said).
        public var decryptionFailed: TokenMintError.Code { .init(domain: "crypto", name: "decryptionFailed") }
        /// libsodium or OpenSSL failed unexpectedly.
        public var libraryFailure: TokenMintError.Code { .init(domain: "crypto", name: "libraryFailure") }
    }
}
