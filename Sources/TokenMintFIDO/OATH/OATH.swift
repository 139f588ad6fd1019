public import TokenMintCore
public import TokenMintCrypto
import Foundation

/// One-time codes: HOTP (RFC 4226) and TOTP (RFC 6238) with HMAC-SHA-1,
/// SHA-256 or SHA-512 and 6 to 8 digits.
///
/// ```swift
/// let code = try OATH.totp(secret: secret, time: 1_111_111_109, algorithm: .sha256, digits: 8)
/// ```
public enum OATH {
    /// The HMAC an OATH credential is computed with, named as `otpauth://`
    /// URIs name it.
    public enum Algorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// HMAC-SHA-1, the default of RFC 4226 and of the Key Uri Format.
        case sha1 = "SHA1"
        /// HMAC-SHA-256.
        case sha256 = "SHA256"
        /// HMAC-SHA-512.
        case sha512 = "SHA512"

        /// The hash function.
        public var hash: HashFunction {
            switch self {
            case .sha1: .sha1
            case .sha256: .sha256
            case .sha512: .sha512
            }
        }

        /// The URI name: `SHA1`, `SHA256` or `SHA512`.
        public var description: String { rawValue }

        /// Looks an algorithm up by its URI name, in either case.
        public init?(name: String) {
            self.init(rawValue: name.uppercased())
        }
    }

    /// The digit counts a code may have.
    public static let digitRange = 6...8
    /// The TOTP periods accepted, in seconds (one second to one day).
    public static let periodRange = 1...86_400
    /// The default TOTP period (RFC 6238 and the Key Uri Format): 30 seconds.
    public static let defaultPeriod = 30
    /// The longest secret accepted, in bytes.
    public static let maximumSecretBytes = 128

    /// The HOTP value of `secret` at `counter` (RFC 4226 §5.3): HMAC of the
    /// counter as 8 big-endian bytes, dynamic truncation, the last `digits`
    /// decimal digits (zero-padded).
    public static func hotp(secret: SecureBytes, counter: UInt64, algorithm: Algorithm = .sha1, digits: Int = 6) throws(TokenMintError) -> String {
        guard digitRange.contains(digits) else { throw TokenMintError(.oath.invalidParameter, "codes have 6 to 8 digits, not \(digits)") }
        guard (1...maximumSecretBytes).contains(secret.count) else {
            throw TokenMintError(.oath.invalidParameter, "an OATH secret is 1 to \(maximumSecretBytes) bytes")
        }
        let hash = algorithm.hash
        let key = try secret.withUnsafeBytes { (bytes) throws(TokenMintError) -> HMACKey in
            try HMACKey(allowingShortKey: bytes, hash: hash)
        }
        let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * $0)) }
        let tag = try HMAC.secretAuthenticationCode(for: message, using: key)
        let binary = tag.withUnsafeBytes { (mac) -> UInt32? in
            // RFC 4226 §5.3: the offset is the low 4 bits of the last byte;
            // offset + 3 is at most 18, inside every tag here (20 bytes or more).
            guard mac.count >= 20, let last = mac.last else { return nil }
            let offset = Int(last & 0x0F)
            var value = UInt32(mac[offset] & 0x7F) << 24
            value |= UInt32(mac[offset + 1]) << 16
            value |= UInt32(mac[offset + 2]) << 8
            value |= UInt32(mac[offset + 3])
            return value
        }
        guard let binary else { throw TokenMintError(.oath.invalidParameter, "HMAC-\(hash.name) gave a short tag") }
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let text = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// The TOTP value of `secret` at `time` (Unix seconds; RFC 6238 §4):
    /// the HOTP value at the time step ``timeStep(time:period:)``.
    public static func totp(
        secret: SecureBytes, time: Int64, period: Int = defaultPeriod, algorithm: Algorithm = .sha1, digits: Int = 6
    ) throws(TokenMintError) -> String {
        try hotp(secret: secret, counter: try timeStep(time: time, period: period), algorithm: algorithm, digits: digits)
    }

    /// RFC 6238's T: `floor(time / period)` (T0 = 0), for a time at or
    /// after the epoch and a period of ``periodRange``.
    public static func timeStep(time: Int64, period: Int) throws(TokenMintError) -> UInt64 {
        guard periodRange.contains(period) else {
            throw TokenMintError(.oath.invalidParameter, "a TOTP period is \(periodRange.lowerBound) to \(periodRange.upperBound) seconds, not \(period)")
        }
        guard time >= 0 else { throw TokenMintError(.oath.invalidParameter, "TOTP times start at the Unix epoch") }
        let (step, overflow) = time.dividedReportingOverflow(by: Int64(period))
        guard !overflow, step >= 0 else { throw TokenMintError(.oath.invalidParameter, "the time step is out of range") }
        return UInt64(step)
    }

    /// The window of the time step a TOTP code is valid in, in Unix
    /// seconds: `[step × period, (step + 1) × period)`, clamped at the end
    /// of the `Int64` range.
    static func validity(step: UInt64, period: Int) -> (from: Int64, until: Int64) {
        let start = Int64(clamping: step).multipliedReportingOverflow(by: Int64(period))
        let from = start.overflow ? Int64.max : start.partialValue
        return (from, TimeArithmetic.adding(from, Int64(period)))
    }

    /// The current Unix time in seconds.
    static func now() -> Int64 {
        Int64(Date().timeIntervalSince1970.rounded(.down))
    }
}

/// A one-time code an OATH application calculated.
public struct OATHCode: Sendable, Hashable, CustomStringConvertible {
    /// The code: 6 to 8 decimal digits.
    public let value: String
    /// For a TOTP code, the first second (Unix time) it is valid in; `nil` for HOTP.
    public let validFrom: Int64?
    /// For a TOTP code, the first second it is no longer valid in; `nil` for HOTP.
    public let validUntil: Int64?

    /// A code; TOTP codes carry their validity window.
    public init(value: String, validFrom: Int64? = nil, validUntil: Int64? = nil) {
        self.value = value
        self.validFrom = validFrom
        self.validUntil = validUntil
    }

    /// The code itself.
    public var description: String { value }
}
