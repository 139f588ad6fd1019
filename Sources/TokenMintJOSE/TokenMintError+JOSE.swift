public import TokenMintCore
import TokenMintCrypto

extension TokenMintError.Code {
    /// The codes `TokenMintJOSE` raises (domain `jose`).
    public static var jose: JOSECodes { JOSECodes() }

    /// The `jose` domain's codes, reached as `.jose.<name>`.
    public struct JOSECodes: Sendable {
        /// The token is not of the expected shape (segments, sizes, serialization).
        public var malformed: TokenMintError.Code { .init(domain: "jose", name: "malformed") }
        /// A base64url segment is not canonical (padding, stray characters, unused bits).
        public var invalidBase64URL: TokenMintError.Code { .init(domain: "jose", name: "invalidBase64URL") }
        /// A header, claims set or key is not strict JSON (including duplicate member names).
        public var invalidJSON: TokenMintError.Code { .init(domain: "jose", name: "invalidJSON") }
        /// The token, a header or a key is larger than the configured limit.
        public var tooLarge: TokenMintError.Code { .init(domain: "jose", name: "tooLarge") }
        /// The protected header breaks a rule (missing `alg`, bad `crit`, `b64` misuse, …).
        public var invalidHeader: TokenMintError.Code { .init(domain: "jose", name: "invalidHeader") }
        /// `crit` names an extension this verifier does not understand.
        public var unsupportedCritical: TokenMintError.Code { .init(domain: "jose", name: "unsupportedCritical") }
        /// The algorithm is unknown, or `none` outside the unsecured API.
        public var unsupportedAlgorithm: TokenMintError.Code { .init(domain: "jose", name: "unsupportedAlgorithm") }
        /// The key does not admit the header's algorithm (type, curve, `alg`, `use`, `key_ops`).
        public var algorithmNotAllowed: TokenMintError.Code { .init(domain: "jose", name: "algorithmNotAllowed") }
        /// No key in the set has the token's `kid`.
        public var unknownKeyID: TokenMintError.Code { .init(domain: "jose", name: "unknownKeyID") }
        /// A remote key set could not be had: never fetched, refused, malformed or too large.
        public var keySetUnavailable: TokenMintError.Code { .init(domain: "jose", name: "keySetUnavailable") }
        /// The key set cannot pick one key without guessing (no `kid`, several candidates;
        /// duplicate `kid`s; secret and public keys mixed).
        public var ambiguousKey: TokenMintError.Code { .init(domain: "jose", name: "ambiguousKey") }
        /// A JWK is malformed or fails validation.
        public var invalidKey: TokenMintError.Code { .init(domain: "jose", name: "invalidKey") }
        /// The signature does not verify (or is malformed for its algorithm).
        public var invalidSignature: TokenMintError.Code { .init(domain: "jose", name: "invalidSignature") }
        /// The `x5c` chain is malformed, reaches none of the configured roots,
        /// holds a certificate outside its validity period, or its leaf may not sign.
        public var untrustedCertificate: TokenMintError.Code { .init(domain: "jose", name: "untrustedCertificate") }
        /// A registered claim has the wrong JSON type.
        public var invalidClaim: TokenMintError.Code { .init(domain: "jose", name: "invalidClaim") }
        /// A required claim is missing.
        public var missingClaim: TokenMintError.Code { .init(domain: "jose", name: "missingClaim") }
        /// `exp` is in the past (beyond the leeway).
        public var expired: TokenMintError.Code { .init(domain: "jose", name: "expired") }
        /// `nbf` is in the future (beyond the leeway).
        public var notYetValid: TokenMintError.Code { .init(domain: "jose", name: "notYetValid") }
        /// `iat` is in the future (beyond the leeway).
        public var issuedInFuture: TokenMintError.Code { .init(domain: "jose", name: "issuedInFuture") }
        /// `iss` is not the expected issuer.
        public var invalidIssuer: TokenMintError.Code { .init(domain: "jose", name: "invalidIssuer") }
        /// `aud` does not contain the expected audience.
        public var invalidAudience: TokenMintError.Code { .init(domain: "jose", name: "invalidAudience") }
        /// `azp` is not the expected authorized party.
        public var invalidAuthorizedParty: TokenMintError.Code { .init(domain: "jose", name: "invalidAuthorizedParty") }
        /// `typ` is not the expected type.
        public var invalidType: TokenMintError.Code { .init(domain: "jose", name: "invalidType") }
        /// A DPoP proof lacks the server's current nonce: answer `use_dpop_nonce` with a fresh one (RFC 9449 §8).
        public var useDPoPNonce: TokenMintError.Code { .init(domain: "jose", name: "useDPoPNonce") }
        /// A single-use token (a DPoP proof's jti) was presented again.
        public var replayed: TokenMintError.Code { .init(domain: "jose", name: "replayed") }
        /// A JWE does not decrypt: the content key does not unwrap or the tag
        /// does not verify (which one is not said, RFC 7516 §11.5).
        public var decryptionFailed: TokenMintError.Code { .init(domain: "jose", name: "decryptionFailed") }
        /// A signing operation failed in the crypto core.
        public var signingFailed: TokenMintError.Code { .init(domain: "jose", name: "signingFailed") }
        /// The verifier's own settings are out of range (a leeway outside
        /// 0…600 s, a negative maximum age).
        public var invalidConfiguration: TokenMintError.Code { .init(domain: "jose", name: "invalidConfiguration") }
    }
}

extension TokenMintError {
    static func malformed(_ reason: String, file: String = #fileID, line: UInt = #line) -> TokenMintError {
        TokenMintError(.jose.malformed, reason, file: file, line: line)
    }
    static func header(_ reason: String, file: String = #fileID, line: UInt = #line) -> TokenMintError {
        TokenMintError(.jose.invalidHeader, reason, file: file, line: line)
    }
    static func key(_ reason: String, file: String = #fileID, line: UInt = #line) -> TokenMintError {
        TokenMintError(.jose.invalidKey, reason, file: file, line: line)
    }
    static func claim(_ reason: String, file: String = #fileID, line: UInt = #line) -> TokenMintError {
        TokenMintError(.jose.invalidClaim, reason, file: file, line: line)
    }
}
