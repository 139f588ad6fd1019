public import TokenMintCore
import TokenMintCrypto

/// `otpauth://` URIs, Google's Key Uri Format, read and written:
///
/// ```
/// otpauth://totp/Example:alice@example.org?secret=JBSWY3DPEHPK3PXP&issuer=Example&algorithm=SHA256&digits=8&period=60
/// otpauth://hotp/Example:alice@example.org?secret=JBSWY3DPEHPK3PXP&issuer=Example&counter=5
/// ```
///
/// The label is `issuer:account` or the account alone (percent-encoded;
/// spaces after the colon are dropped); an `issuer` parameter must equal the
/// label's issuer when both are given. `secret` (base32, 1 to 128 bytes) is
/// required, and `counter` for HOTP; `algorithm` (SHA1, SHA256, SHA512),
/// `digits` (6 to 8) and `period` (1 s to a day) default to SHA1, 6 and 30.
/// A parameter the format names may appear once; others (`image`, …) are
/// ignored. Anything else is `.oath.invalidURI`, never a trap.
public enum OTPAuthURI {
    /// The longest URI read, in UTF-8 bytes.
    public static let maximumBytes = 4096

    /// Reads a URI.
    /// - Throws: `.oath.invalidURI`, with the reason.
    public static func parse(_ uri: String) throws(TokenMintError) -> OATHCredential {
        let bytes = Array(uri.utf8)
        guard bytes.count <= maximumBytes else { throw invalid("the URI is longer than \(maximumBytes) bytes") }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "#") }) else {
            throw invalid("the URI has a control character or a fragment")
        }
        let scheme = Array("otpauth://".utf8)
        guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ lowercased($0) == $1 }) else {
            throw invalid("not an otpauth:// URI")
        }
        let rest = bytes[scheme.count...]
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { throw invalid("the URI has no label") }
        let type = String(decoding: rest[rest.startIndex..<slash].map(lowercased), as: UTF8.self)
        guard type == "totp" || type == "hotp" else { throw invalid("the type is neither totp nor hotp") }
        let path = rest[(slash + 1)...]
        let question = path.firstIndex(of: UInt8(ascii: "?"))
        let (labelIssuer, account) = try label(path[path.startIndex..<(question ?? path.endIndex)])
        let parameters = try query(question.map { path[($0 + 1)...] } ?? [])

        guard let secretText = parameters["secret"] else { throw invalid("the URI has no secret") }
        let secret: SecureBytes
        do throws(TokenMintError) { secret = try Base32.decode(secretText) } catch { throw invalid(error.reason) }
        guard (1...OATH.maximumSecretBytes).contains(secret.count) else {
            throw invalid("the secret is \(secret.count) bytes; 1 to \(OATH.maximumSecretBytes) are accepted")
        }
        var issuer = labelIssuer
        if let named = parameters["issuer"], !named.isEmpty {
            if let labelIssuer, labelIssuer != named { throw invalid("the label's issuer and the issuer parameter differ") }
            issuer = named
        }
        var algorithm = OATH.Algorithm.sha1
        if let name = parameters["algorithm"] {
            guard let known = OATH.Algorithm(name: name) else { throw invalid("the algorithm is not SHA1, SHA256 or SHA512") }
            algorithm = known
        }
        var digits = 6
        if let text = parameters["digits"] {
            guard let value = decimal(text), OATH.digitRange.contains(Int(clamping: value)) else { throw invalid("digits must be 6, 7 or 8") }
            digits = Int(clamping: value)
        }
        let kind: OATHCredential.Kind
        if type == "hotp" {
            guard let text = parameters["counter"] else { throw invalid("a hotp URI has no counter") }
            guard let counter = decimal(text), counter <= OATHCredential.maximumCounter else {
                throw invalid("the counter is not a number from 0 to \(OATHCredential.maximumCounter)")
            }
            kind = .hotp(counter: counter)
        } else {
            var period = OATH.defaultPeriod
            if let text = parameters["period"] {
                guard let value = decimal(text), OATH.periodRange.contains(Int(clamping: value)) else {
                    throw invalid("the period is not a number of seconds from 1 to \(OATH.periodRange.upperBound)")
                }
                period = Int(clamping: value)
            }
            kind = .totp(period: period)
        }
        do throws(TokenMintError) {
            return try OATHCredential(issuer: issuer, account: account, secret: secret, kind: kind, algorithm: algorithm, digits: digits)
        } catch {
            throw invalid(error.reason)
        }
    }

    /// The URI of `credential`, with every parameter written out
    /// (`secret`, `issuer` when there is one, `algorithm`, `digits`, and
    /// `counter` or `period`). It holds the secret: handle it as one.
    public static func encode(_ credential: OATHCredential) -> String {
        var label = PercentEncoding.encode(credential.account)
        var query = "secret=" + Base32.encode(credential.secret)
        if let issuer = credential.issuer {
            label = PercentEncoding.encode(issuer) + ":" + label
            query += "&issuer=" + PercentEncoding.encode(issuer)
        }
        query += "&algorithm=\(credential.algorithm.rawValue)&digits=\(credential.digits)"
        switch credential.kind {
        case .hotp(let counter): return "otpauth://hotp/\(label)?\(query)&counter=\(counter)"
        case .totp(let period): return "otpauth://totp/\(label)?\(query)&period=\(period)"
        }
    }

    // MARK: Parts

    /// The parameters the format names, each at most once.
    static let known: Set<String> = ["secret", "issuer", "algorithm", "digits", "period", "counter"]

    static func invalid(_ reason: String) -> TokenMintError {
        TokenMintError(.oath.invalidURI, reason)
    }

    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 0x20 : byte
    }

    /// The label's issuer (before the first colon, when not empty) and
    /// account (after it, leading spaces dropped), percent-decoded.
    static func label(_ bytes: ArraySlice<UInt8>) throws(TokenMintError) -> (issuer: String?, account: String) {
        let text = try decode(bytes, plusIsSpace: false)
        guard let colon = text.firstIndex(of: ":") else { return (nil, text) }
        let issuer = String(text[..<colon])
        let account = String(text[text.index(after: colon)...].drop(while: { $0 == " " }))
        return (issuer.isEmpty ? nil : issuer, account)
    }

    /// The query's parameters the format names, percent-decoded (`+` is a
    /// space); a repeated one is refused, an empty one (but `issuer`) too.
    static func query(_ bytes: ArraySlice<UInt8>) throws(TokenMintError) -> [String: String] {
        var parameters: [String: String] = [:]
        for part in bytes.split(separator: UInt8(ascii: "&")) {
            let equals = part.firstIndex(of: UInt8(ascii: "="))
            let key = try decode(part[part.startIndex..<(equals ?? part.endIndex)], plusIsSpace: true).lowercased()
            guard known.contains(key) else { continue }
            guard parameters[key] == nil else { throw invalid("the parameter \(key) appears twice") }
            var value = ""
            if let equals { value = try decode(part[(equals + 1)...], plusIsSpace: true) }
            guard !value.isEmpty || key == "issuer" else { throw invalid("the parameter \(key) is empty") }
            parameters[key] = value
        }
        return parameters
    }

    /// Percent-decodes `bytes` (every `%` followed by two hex digits) into
    /// strict UTF-8.
    static func decode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) throws(TokenMintError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard bytes.endIndex - index >= 3, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) else {
                    throw invalid("a % is not followed by two hex digits")
                }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte == UInt8(ascii: "+") && plusIsSpace ? 0x20 : byte)
                index += 1
            }
        }
        guard StrictUTF8.firstInvalid(output) == nil else { throw invalid("a percent-encoded part is not UTF-8") }
        return String(decoding: output, as: UTF8.self)
    }

    static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A decimal number of 1 to 19 ASCII digits (no sign, no space).
    static func decimal(_ text: String) -> UInt64? {
        guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return UInt64(text)
    }
}
