/// The one error every TokenMint module throws.
///
/// Shaped like swift-certificates' `CertificateError`: a stable ``Code`` to
/// compare and switch on, a ``reason`` in words, the place it was raised and,
/// when one failure caused another, the ``underlying`` error. Codes are
/// namespaced by the module that raises them — `.crypto.invalidKey`,
/// `.jose.expired`, `.pay.replayedToken`, `.store.diskFull` — and each module
/// documents its own. Codes are structs, not enum cases, so new ones can be
/// added without breaking callers that switch over them.
///
/// ```swift
/// do {
///     let claims = try verifier.verify(token)
/// } catch where error.code == .jose.expired {
///     // ask for a fresh token
/// }
/// ```
///
/// Two errors are equal when their codes are; reasons and places are for
/// people and logs. Reasons never contain key material, and text an attacker
/// chose is escaped (``SafeText``) before it is stored.
public struct TokenMintError: Error, Hashable, CustomStringConvertible, Sendable {
    /// Everything lives in one reference, as in `CertificateError`: the error
    /// is one word wide, so the typed throws of the hot parse and verify
    /// paths carry almost nothing when nothing fails.
    private final class Backing: Sendable {
        let code: Code
        let reason: String
        let offset: Int?
        let underlying: (any Error)?
        let file: String
        let line: UInt

        init(code: Code, reason: String, offset: Int?, underlying: (any Error)?, file: String, line: UInt) {
            self.code = code
            self.reason = reason
            self.offset = offset
            self.underlying = underlying
            self.file = file
            self.line = line
        }
    }

    private let backing: Backing

    /// The kind of failure.
    public var code: Code { backing.code }
    /// What went wrong, in words.
    public var reason: String { backing.reason }
    /// For parse errors, the zero-based byte offset in the input where the
    /// problem was found; `nil` otherwise.
    public var offset: Int? { backing.offset }
    /// The error that caused this one (a store failure under a payment
    /// error, a libcrypto failure under a JOSE one), when there was one.
    public var underlying: (any Error)? { backing.underlying }
    /// The source file that raised the error.
    public var file: String { backing.file }
    /// The source line that raised the error.
    public var line: UInt { backing.line }

    /// Creates an error. `reason` is escaped (``SafeText``) before it is stored.
    public init(
        _ code: Code, _ reason: String, offset: Int? = nil, underlying: (any Error)? = nil,
        file: String = #fileID, line: UInt = #line
    ) {
        self.backing = Backing(code: code, reason: SafeText.escaped(reason), offset: offset, underlying: underlying, file: file, line: line)
    }

    /// `<domain>.<name>[ (<number>)][ at byte <offset>]: <reason>`.
    public var description: String {
        guard let offset else { return "\(code): \(reason)" }
        return "\(code) at byte \(offset): \(reason)"
    }

    /// Two errors are equal when their codes are.
    public static func == (lhs: TokenMintError, rhs: TokenMintError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A stable identifier of the kind of failure: the domain (the module
    /// that raises it), a name, and for some domains the number the
    /// mirrored protocol or SDK gives the failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The domain, for example `crypto`, `jose`, `pay` or `webauthn`.
        public let domain: String
        /// The code's name within its domain, for example `invalidKey`.
        public let name: String
        /// The number the mirrored protocol or SDK uses for this failure:
        /// a CTAP2 status byte for authenticator failures (positive), an
        /// SDK error number for sign-in failures (negative); `nil` elsewhere.
        public let number: Int?

        /// Declares a code. Modules declare theirs once, as static members
        /// of a namespace named after the domain.
        public init(domain: String, name: String, number: Int? = nil) {
            self.domain = domain
            self.name = name
            self.number = number
        }

        /// `<domain>.<name>`, followed by the number where there is one
        /// (negative numbers in decimal, status bytes in hex).
        public var description: String {
            guard let number else { return "\(domain).\(name)" }
            if number < 0 { return "\(domain).\(name) (\(number))" }
            return "\(domain).\(name) (0x\(String(number, radix: 16, uppercase: true)))"
        }
    }
}

extension TokenMintError {
    /// `error` unchanged when it is already a ``TokenMintError`` of `code`'s
    /// domain; otherwise a new error of `code` that keeps `error` as its
    /// ``underlying`` cause. Modules use it where a lower layer's failure
    /// becomes one of their own (a store failure under a payment).
    public static func wrap(
        _ error: any Error, as code: Code, _ reason: String, file: String = #fileID, line: UInt = #line
    ) -> TokenMintError {
        if let own = error as? TokenMintError, own.code.domain == code.domain { return own }
        return TokenMintError(code, reason, underlying: error, file: file, line: line)
    }
}
