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
        self = try PaymentToken.parse(text, messagePrefix: []).token
    }

    /// Parses a token strictly, in one pass over its UTF-8, and returns with
    /// it `messagePrefix` followed by the signed message, read from the text
    /// itself: the counter is canonical, so those bytes are exactly
    /// ``signedMessage``.
    static func parse(_ text: String, messagePrefix: [UInt8]) throws(TokenMintError) -> (token: PaymentToken, message: [UInt8]) {
        var text = text
        return try text.withUTF8 { utf8 in PaymentToken.parse(UnsafeRawBufferPointer(utf8), messagePrefix: messagePrefix) }.get()
    }

    private static func parse(
        _ utf8: UnsafeRawBufferPointer, messagePrefix: [UInt8]
    ) -> Result<(token: PaymentToken, message: [UInt8]), TokenMintError> {
        guard utf8.count <= 512 else { return .failure(TokenMintError(.pay.malformedToken, "payment token longer than 512 bytes")) }
        // The three separators, and no fourth.
        let slashes = Separators(of: UInt8(ascii: "/"), in: utf8)
        guard slashes.count == 3, slashes.positions.0 == 2, utf8[0] == UInt8(ascii: "0"), utf8[1] == UInt8(ascii: "2") else {
            return .failure(TokenMintError(.pay.malformedToken, "a payment token is 02/<unsigned>/<epochSeconds>/<signature>"))
        }
        let unsigned = slashes.segment(1, of: utf8)
        guard !unsigned.isEmpty, unsigned.count <= 256, unsigned.allSatisfy(WhitelabelPayFormat.isTokenCharacter) else {
            return .failure(TokenMintError(.pay.malformedToken, "the unsigned part is empty, too long or has characters outside [A-Za-z0-9._~-]"))
        }
        let digits = slashes.segment(2, of: utf8)
        // At most 12 digits: the sum cannot overflow.
        guard (1...12).contains(digits.count), digits.allSatisfy({ (48...57).contains($0) }),
            digits.count == 1 || digits[0] != UInt8(ascii: "0")
        else { return .failure(TokenMintError(.pay.malformedToken, "the time is not a decimal number of seconds")) }
        let epoch = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) }
        // 64 bytes are 86 characters, or 88 ending "==" when padded.
        var encoded = slashes.segment(3, of: utf8)
        if encoded.count == 88, encoded[86] == UInt8(ascii: "="), encoded[87] == UInt8(ascii: "=") {
            encoded = UnsafeRawBufferPointer(rebasing: encoded[..<86])
        }
        var decoded = false
        let signature = [UInt8](unsafeUninitializedCapacity: 64) { out, initialized in
            guard encoded.count == 86, Base64URL.decodePublic(encoded, into: UnsafeMutableRawBufferPointer(out)) == 64 else { return }
            decoded = true
            initialized = 64
        }
        guard decoded else { return .failure(TokenMintError(.pay.malformedToken, "the signature is not 64 bytes of base64url")) }
        var message = messagePrefix
        message.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[(slashes.positions.0 + 1)..<slashes.positions.2]))
        let token = PaymentToken(unsignedPart: String(decoding: unsigned, as: UTF8.self), epochSeconds: epoch, signature: signature)
        return .success((token, message))
    }
}
