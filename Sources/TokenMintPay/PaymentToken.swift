public import TokenMintCore
import TokenMintCrypto

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
