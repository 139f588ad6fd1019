import TokenMintCore

/// The error every `TokenMintCrypto` operation throws.
///
/// Shaped like swift-certificates' `CertificateError`: a stable ``Code`` to
/// switch on, a human-readable ``reason`` (with OpenSSL's error text where the
/// failure came from libcrypto), and the place it was raised. New codes can be
/// added without breaking callers, because ``Code`` is a struct, not an enum.
public struct CryptoError: Error, Hashable, CustomStringConvertible, Sendable {
    /// The kind of failure.
    public let code: Code
    /// What went wrong, in words. Never contains key material.
    public let reason: String
    /// The source file that raised the error.
    public let file: String
    /// The source line that raised the error.
    public let line: UInt

    /// Creates an error. Prefer the static factories, which fill in the code.
    public init(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = SafeText.escaped(reason)
        self.file = file
        self.line = line
    }

    /// `CryptoError.<code>: <reason>`.
    public var description: String { "CryptoError.\(code): \(reason)" }

    /// Two errors are equal when their codes and reasons are; the place is ignored.
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool {
        lhs.code == rhs.code && lhs.reason == rhs.reason
    }

    /// Hashes the code and the reason.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(reason)
    }

    /// A stable identifier of the kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case invalidKey
            case invalidKeySize
            case invalidEncoding
            case invalidSignature
            case unsupportedAlgorithm
            case invalidParameter
            case libraryFailure
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Key material is malformed, of the wrong type, or fails validation
        /// (for example a point that is not on the curve).
        public static let invalidKey = Code(.invalidKey)
        /// A key has the wrong length or too few bits (RSA under 2048 for signing,
        /// HMAC keys shorter than the hash).
        public static let invalidKeySize = Code(.invalidKeySize)
        /// PEM, DER, base64url or hex input is malformed.
        public static let invalidEncoding = Code(.invalidEncoding)
        /// A signature is malformed (wrong length, non-canonical DER, r or s out
        /// of range). A well-formed signature that does not verify is not an
        /// error: `isValidSignature` returns `false`.
        public static let invalidSignature = Code(.invalidSignature)
        /// The algorithm, curve or hash is not supported for this operation.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// An argument is out of its allowed range.
        public static let invalidParameter = Code(.invalidParameter)
        /// libsodium or OpenSSL failed unexpectedly.
        public static let libraryFailure = Code(.libraryFailure)

        /// The code's name.
        public var description: String { value.rawValue }
    }
}

extension CryptoError {
    static func invalidKey(_ reason: String, file: String = #fileID, line: UInt = #line) -> CryptoError {
        CryptoError(.invalidKey, reason, file: file, line: line)
    }
    static func invalidKeySize(_ reason: String, file: String = #fileID, line: UInt = #line) -> CryptoError {
        CryptoError(.invalidKeySize, reason, file: file, line: line)
    }
    static func invalidEncoding(_ reason: String, file: String = #fileID, line: UInt = #line) -> CryptoError {
        CryptoError(.invalidEncoding, reason, file: file, line: line)
    }
    static func invalidSignature(_ reason: String, file: String = #fileID, line: UInt = #line) -> CryptoError {
        CryptoError(.invalidSignature, reason, file: file, line: line)
    }
    static func unsupported(_ reason: String, file: String = #fileID, line: UInt = #line) -> CryptoError {
        CryptoError(.unsupportedAlgorithm, reason, file: file, line: line)
    }
    static func invalidParameter(_ reason: String, file: String = #fileID, line: UInt = #line) -> CryptoError {
        CryptoError(.invalidParameter, reason, file: file, line: line)
    }
}
