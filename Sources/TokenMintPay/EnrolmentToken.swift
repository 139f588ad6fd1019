public import TokenMintCore
public import TokenMintCrypto

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

extension EnrolmentToken {
    /// The device's subject ID at a WhitelabelPay backend: a UUID-shaped name
    /// derived from the tenant and the device key (the first 16 bytes of
    /// SHA-256 over both), so the device and the server agree on it without a
    /// round trip, and a reset device (a new key) is a new subject.
    public var subjectID: String {
        let digest = HashFunction.sha256.hash(Array("tokenmint.wlp.subject.v1\u{0}\(tenant)\u{0}".utf8) + Array(publicKey.rawRepresentation))
        let hex = Hex.encode(Array(digest.prefix(16)))
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}
