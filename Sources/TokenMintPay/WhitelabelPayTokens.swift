public import TokenMintCore
public import TokenMintCrypto

/// Strict forms of the WhitelabelPay token strings.
public enum WhitelabelPayFormat {
    /// Whether `text` is a UUID string (8-4-4-4-12 hexadecimal digits).
    public static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let hex = (48...57).contains(byte) || (97...102).contains(byte) || (65...70).contains(byte)
                guard hex else { return false }
            }
        }
        return true
    }

    /// Characters allowed in an unsigned payment-token part: URL-safe, no '/'.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
    }
}

/// An enrolment token: `01/<tenant>/<base64url(Ed25519 public key)>/<referenceId>`.
public struct EnrolmentToken: Sendable, Hashable, CustomStringConvertible {
    /// The tenant: a UUID (or, when allowed, a legacy 3-character code).
    public let tenant: String
    /// The device's Ed25519 public key.
    public let publicKey: Ed25519.PublicKey
    /// The reference (device installation) UUID.
    public let referenceID: String

    /// Builds a token.
    public init(tenant: String, publicKey: Ed25519.PublicKey, referenceID: String) {
        self.tenant = tenant
        self.publicKey = publicKey
        self.referenceID = referenceID
    }

    /// The token string; the key in URL-safe base64 **with** `=` padding, as the SDKs emit it.
    public var description: String {
        "01/\(tenant)/\(Base64URL.encode(publicKey.rawRepresentation, padding: .padded))/\(referenceID)"
    }

    /// Parses a token strictly (the key may be padded or not).
    public init(parsing text: String, allowLegacyTenant: Bool = false) throws(TokenMintError) {
        guard text.utf8.count <= 256 else { throw TokenMintError(.pay.malformedToken, "enrolment token longer than 256 bytes") }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == "01" else {
            throw TokenMintError(.pay.malformedToken, "an enrolment token is 01/<tenant>/<key>/<reference>")
        }
        let legacy = allowLegacyTenant && parts[1].utf8.count == 3 && parts[1].utf8.allSatisfy(WhitelabelPayFormat.isTokenCharacter)
        guard WhitelabelPayFormat.isUUID(parts[1]) || legacy else { throw TokenMintError(.pay.malformedToken, "the tenant is not a UUID") }
        guard WhitelabelPayFormat.isUUID(parts[3]) else { throw TokenMintError(.pay.malformedToken, "the reference is not a UUID") }
        guard let key = try? Base64URL.decode(parts[2], padding: .either), let publicKey = try? Ed25519.PublicKey(rawRepresentation: key) else {
            throw TokenMintError(.pay.malformedToken, "the key is not 32 bytes of base64url")
        }
        self.init(tenant: parts[1], publicKey: publicKey, referenceID: parts[3])
    }
}

/// A payment token: `02/<unsigned>/<epochSeconds>/<base64url(Ed25519 signature)>`,
/// signed over the UTF-8 of `"<unsigned>/<epochSeconds>"`.
public struct PaymentToken: Sendable, Hashable, CustomStringConvertible {
    /// The unsigned part (server-issued online, composed on the device offline).
    public let unsignedPart: String
    /// Seconds since the epoch at minting (server-corrected clock).
    public let epochSeconds: Int64
    /// The 64-byte Ed25519 signature.
    public let signature: [UInt8]

    /// The signed message: UTF-8 of `"<unsigned>/<epochSeconds>"`.
    public var signedMessage: [UInt8] { PaymentToken.signedMessage(unsignedPart: unsignedPart, epochSeconds: epochSeconds) }

    /// The message a token over `unsignedPart` at `epochSeconds` signs (the one place it is built).
    static func signedMessage(unsignedPart: String, epochSeconds: Int64) -> [UInt8] {
        Array("\(unsignedPart)/\(epochSeconds)".utf8)
    }

    /// Signs `unsignedPart` at `epochSeconds` with the device key.
    static func sign(_ unsignedPart: String, at epochSeconds: Int64, with key: Ed25519.PrivateKey) -> PaymentToken {
        let message = signedMessage(unsignedPart: unsignedPart, epochSeconds: epochSeconds)
        return PaymentToken(unsignedPart: unsignedPart, epochSeconds: epochSeconds, signature: message.withUnsafeBytes { key.signature(for: $0) })
    }

    /// The token string, signature padded with `=` (what the shipping SDK emits).
    public var description: String {
        "02/\(unsignedPart)/\(epochSeconds)/\(Base64URL.encode(signature, padding: .padded))"
    }

    init(unsignedPart: String, epochSeconds: Int64, signature: [UInt8]) {
        self.unsignedPart = unsignedPart
        self.epochSeconds = epochSeconds
        self.signature = signature
    }

    /// Parses a token strictly; the signature may be padded or not.
    public init(parsing text: String) throws(TokenMintError) {
        guard text.utf8.count <= 512 else { throw TokenMintError(.pay.malformedToken, "payment token longer than 512 bytes") }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == "02" else {
            throw TokenMintError(.pay.malformedToken, "a payment token is 02/<unsigned>/<epochSeconds>/<signature>")
        }
        guard !parts[1].isEmpty, parts[1].utf8.count <= 256, parts[1].utf8.allSatisfy(WhitelabelPayFormat.isTokenCharacter) else {
            throw TokenMintError(.pay.malformedToken, "the unsigned part is empty, too long or has characters outside [A-Za-z0-9._~-]")
        }
        let digits = parts[2].utf8
        guard (1...12).contains(digits.count), digits.allSatisfy({ (48...57).contains($0) }),
            digits.count == 1 || digits.first != UInt8(ascii: "0"), let epoch = Int64(parts[2])
        else { throw TokenMintError(.pay.malformedToken, "the time is not a decimal number of seconds") }
        guard let signature = try? Base64URL.decode(parts[3], padding: .either), signature.count == 64 else {
            throw TokenMintError(.pay.malformedToken, "the signature is not 64 bytes of base64url")
        }
        self.init(unsignedPart: parts[1], epochSeconds: epoch, signature: signature)
    }
}
