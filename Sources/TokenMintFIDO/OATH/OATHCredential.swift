public import TokenMintCore
public import TokenMintCrypto

/// An OATH credential as it is put into an ``OATHApplication`` or carried
/// by an `otpauth://` URI: its name (`issuer:account`, or the account
/// alone), HOTP with its counter or TOTP with its period, the algorithm,
/// the digit count, the secret and whether a code needs the user's touch or
/// verification. The initializer checks every field, so a credential that
/// exists is valid.
///
/// The secret stays in `SecureBytes`; ``description`` never shows it.
public struct OATHCredential: Sendable, CustomStringConvertible {
    /// HOTP or TOTP.
    public enum Kind: Sendable, Hashable {
        /// HOTP (RFC 4226): `counter` is the moving factor of the next code.
        case hotp(counter: UInt64)
        /// TOTP (RFC 6238): codes change every `period` seconds.
        case totp(period: Int)
    }

    /// What an application lists of a credential: everything but the secret.
    /// For HOTP, the counter is the one the next code will use.
    public struct Info: Sendable, Hashable, CustomStringConvertible {
        /// The issuer, when there is one.
        public let issuer: String?
        /// The account name.
        public let account: String
        /// HOTP with its counter, or TOTP with its period.
        public let kind: Kind
        /// The HMAC.
        public let algorithm: OATH.Algorithm
        /// The digit count, 6 to 8.
        public let digits: Int
        /// Whether each code needs the user's touch.
        public let requiresTouch: Bool
        /// Whether each code needs user verification.
        public let requiresVerification: Bool

        /// `issuer:account`, or the account alone.
        public var name: String { OATHCredential.name(issuer: issuer, account: account) }

        /// The name, kind, algorithm and digits (no secret is held here).
        public var description: String {
            var flags = ""
            if requiresTouch { flags += ", touch" }
            if requiresVerification { flags += ", verification" }
            return "\(SafeText.escaped(name)) (\(OATHCredential.describe(kind)), \(algorithm), \(digits) digits\(flags))"
        }
    }

    /// The longest name (`issuer:account`), in UTF-8 bytes: a YubiKey's limit.
    public static let maximumNameBytes = 64
    /// The largest HOTP counter a credential may start at (the store keeps
    /// counters as `Int64`).
    public static let maximumCounter = UInt64(Int64.max)

    /// The issuer, when there is one; it never contains a colon.
    public let issuer: String?
    /// The account name.
    public let account: String
    /// HOTP with its counter, or TOTP with its period.
    public let kind: Kind
    /// The HMAC.
    public let algorithm: OATH.Algorithm
    /// The digit count, 6 to 8.
    public let digits: Int
    /// The shared secret, 1 to 128 bytes.
    public let secret: SecureBytes
    /// Whether each code needs the user's touch (confirmed presence); a
    /// YubiKey lists such a credential in calculateAll without a code.
    public var requiresTouch: Bool
    /// Whether each code needs user verification.
    public var requiresVerification: Bool

    /// A credential, checked: a name of 1 to 64 bytes with no control
    /// characters, an issuer without a colon (an account with one only
    /// after an issuer, so the name splits back at its first colon), 6 to
    /// 8 digits, a period of 1 s to a day, a counter up to `Int64.max`, a
    /// secret of 1 to 128 bytes.
    /// - Throws: `.oath.invalidParameter`.
    public init(
        issuer: String?, account: String, secret: SecureBytes, kind: Kind = .totp(period: OATH.defaultPeriod),
        algorithm: OATH.Algorithm = .sha1, digits: Int = 6, requiresTouch: Bool = false, requiresVerification: Bool = false
    ) throws(TokenMintError) {
        try OATHCredential.check(issuer: issuer, account: account)
        try OATHCredential.check(kind: kind, digits: digits)
        guard (1...OATH.maximumSecretBytes).contains(secret.count) else {
            throw TokenMintError(.oath.invalidParameter, "an OATH secret is 1 to \(OATH.maximumSecretBytes) bytes, not \(secret.count)")
        }
        self.issuer = issuer
        self.account = account
        self.kind = kind
        self.algorithm = algorithm
        self.digits = digits
        self.secret = secret
        self.requiresTouch = requiresTouch
        self.requiresVerification = requiresVerification
    }

    /// `issuer:account`, or the account alone.
    public var name: String { OATHCredential.name(issuer: issuer, account: account) }

    /// Everything but the secret.
    public var info: Info {
        Info(issuer: issuer, account: account, kind: kind, algorithm: algorithm, digits: digits, requiresTouch: requiresTouch,
             requiresVerification: requiresVerification)
    }

    /// The name, kind, algorithm and digits; never the secret.
    public var description: String { "OATHCredential(\(info.description))" }

    /// The credential's code at `time` (Unix seconds) for TOTP, or at the
    /// credential's counter for HOTP (`time` unused).
    public func code(at time: Int64) throws(TokenMintError) -> String {
        switch kind {
        case .hotp(let counter): return try OATH.hotp(secret: secret, counter: counter, algorithm: algorithm, digits: digits)
        case .totp(let period): return try OATH.totp(secret: secret, time: time, period: period, algorithm: algorithm, digits: digits)
        }
    }

    // MARK: Rules

    static func name(issuer: String?, account: String) -> String {
        guard let issuer else { return account }
        return issuer + ":" + account
    }

    static func describe(_ kind: Kind) -> String {
        switch kind {
        case .hotp(let counter): "HOTP, counter \(counter)"
        case .totp(let period): "TOTP, \(period) s"
        }
    }

    /// The name rules (see the initializer).
    static func check(issuer: String?, account: String) throws(TokenMintError) {
        guard !account.isEmpty else { throw TokenMintError(.oath.invalidParameter, "the account name is empty") }
        if let issuer {
            guard !issuer.isEmpty else { throw TokenMintError(.oath.invalidParameter, "the issuer is empty (give none instead)") }
            guard !issuer.contains(":") else { throw TokenMintError(.oath.invalidParameter, "an issuer contains no colon") }
        } else if account.contains(":") {
            throw TokenMintError(.oath.invalidParameter, "an account name without an issuer contains no colon")
        }
        let full = OATHCredential.name(issuer: issuer, account: account)
        guard full.utf8.count <= maximumNameBytes else {
            throw TokenMintError(.oath.invalidParameter, "a credential name is at most \(maximumNameBytes) bytes, not \(full.utf8.count)")
        }
        // Control characters, line separators and bidirectional overrides
        // would let a name disguise itself in a list; a backslash is fine.
        guard SafeText.escaped(full, backslashes: false) == full else {
            throw TokenMintError(.oath.invalidParameter, "a credential name contains a control or formatting character")
        }
    }

    /// The digit, period and counter rules.
    static func check(kind: Kind, digits: Int) throws(TokenMintError) {
        guard OATH.digitRange.contains(digits) else { throw TokenMintError(.oath.invalidParameter, "codes have 6 to 8 digits, not \(digits)") }
        switch kind {
        case .hotp(let counter):
            guard counter <= maximumCounter else { throw TokenMintError(.oath.invalidParameter, "a HOTP counter is at most \(maximumCounter)") }
        case .totp(let period):
            guard OATH.periodRange.contains(period) else {
                throw TokenMintError(.oath.invalidParameter, "a TOTP period is 1 to \(OATH.periodRange.upperBound) seconds, not \(period)")
            }
        }
    }
}
