import TokenMintCore
import TokenMintCrypto

/// The error every `TokenMintJOSE` operation throws: a stable ``Code``, a
/// reason in words (never key material, never the token itself), and the
/// place it was raised.
public struct JOSEError: Error, Hashable, CustomStringConvertible, Sendable {
    /// The kind of failure.
    public let code: Code
    /// What went wrong.
    public let reason: String
    /// The source file that raised the error.
    public let file: String
    /// The source line that raised the error.
    public let line: UInt

    /// Creates an error.
    public init(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = SafeText.escaped(reason)
        self.file = file
        self.line = line
    }

    /// `JOSEError.<code>: <reason>`.
    public var description: String { "JOSEError.\(code): \(reason)" }

    /// Equal when code and reason are.
    public static func == (lhs: JOSEError, rhs: JOSEError) -> Bool { lhs.code == rhs.code && lhs.reason == rhs.reason }
    /// Hashes code and reason.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(reason)
    }

    /// A stable identifier of the kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// The token is not of the expected shape (segments, sizes, serialization).
        public static let malformed = Code("malformed")
        /// A base64url segment is not canonical (padding, stray characters, unused bits).
        public static let invalidBase64URL = Code("invalidBase64URL")
        /// A header, claims set or key is not strict JSON (including duplicate member names).
        public static let invalidJSON = Code("invalidJSON")
        /// The token, a header or a key is larger than the configured limit.
        public static let tooLarge = Code("tooLarge")
        /// The protected header breaks a rule (missing `alg`, bad `crit`, `b64` misuse, …).
        public static let invalidHeader = Code("invalidHeader")
        /// `crit` names an extension this verifier does not understand.
        public static let unsupportedCritical = Code("unsupportedCritical")
        /// The algorithm is unknown, or `none` outside the unsecured API.
        public static let unsupportedAlgorithm = Code("unsupportedAlgorithm")
        /// The key does not admit the header's algorithm (type, curve, `alg`, `use`, `key_ops`).
        public static let algorithmNotAllowed = Code("algorithmNotAllowed")
        /// No key in the set has the token's `kid`.
        public static let unknownKeyID = Code("unknownKeyID")
        /// The key set cannot pick one key without guessing (no `kid`, several candidates;
        /// duplicate `kid`s; secret and public keys mixed).
        public static let ambiguousKey = Code("ambiguousKey")
        /// A JWK is malformed or fails validation.
        public static let invalidKey = Code("invalidKey")
        /// The signature does not verify (or is malformed for its algorithm).
        public static let invalidSignature = Code("invalidSignature")
        /// A registered claim has the wrong JSON type.
        public static let invalidClaim = Code("invalidClaim")
        /// A required claim is missing.
        public static let missingClaim = Code("missingClaim")
        /// `exp` is in the past (beyond the leeway).
        public static let expired = Code("expired")
        /// `nbf` is in the future (beyond the leeway).
        public static let notYetValid = Code("notYetValid")
        /// `iat` is in the future (beyond the leeway).
        public static let issuedInFuture = Code("issuedInFuture")
        /// `iss` is not the expected issuer.
        public static let invalidIssuer = Code("invalidIssuer")
        /// `aud` does not contain the expected audience.
        public static let invalidAudience = Code("invalidAudience")
        /// `azp` is not the expected authorized party.
        public static let invalidAuthorizedParty = Code("invalidAuthorizedParty")
        /// `typ` is not the expected type.
        public static let invalidType = Code("invalidType")
        /// A signing operation failed in the crypto core.
        public static let signingFailed = Code("signingFailed")
        /// The verifier's own settings are out of range (a leeway outside
        /// 0…600 s, a negative maximum age).
        public static let invalidConfiguration = Code("invalidConfiguration")
    }
}

extension JOSEError {
    static func malformed(_ reason: String, file: String = #fileID, line: UInt = #line) -> JOSEError {
        JOSEError(.malformed, reason, file: file, line: line)
    }
    static func header(_ reason: String, file: String = #fileID, line: UInt = #line) -> JOSEError {
        JOSEError(.invalidHeader, reason, file: file, line: line)
    }
    static func key(_ reason: String, file: String = #fileID, line: UInt = #line) -> JOSEError {
        JOSEError(.invalidKey, reason, file: file, line: line)
    }
    static func claim(_ reason: String, file: String = #fileID, line: UInt = #line) -> JOSEError {
        JOSEError(.invalidClaim, reason, file: file, line: line)
    }
}
