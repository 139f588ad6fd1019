public import TokenMintCore
public import TokenMintCBOR

/// The authenticator extension outputs of an authenticator data's
/// extensions map (CTAP 2.1 §12), typed and checked.
///
/// A known extension whose output has the wrong type, is out of range, or
/// cannot appear in the ceremony (an hmac-secret output in a registration, a
/// credBlob of more than 64 bytes) is an `invalidExtension` error. Outputs of
/// extensions this type does not know are accepted and named in
/// ``otherExtensions``; their values stay in `AuthenticatorData.extensions`.
public struct AuthenticatorExtensionOutputs: Sendable, Hashable {
    /// Which ceremony the authenticator data came from.
    public enum Ceremony: Sendable {
        /// makeCredential / `navigator.credentials.create`.
        case registration
        /// getAssertion / `navigator.credentials.get`.
        case assertion
    }

    /// credProtect (registration): the level the credential was made with.
    public var credProtect: CredentialProtection?
    /// hmac-secret (registration): whether the credential has a secret for the PRF.
    public var hmacSecret: Bool?
    /// hmac-secret (assertion): the outputs, encrypted to the client; opaque to the RP.
    public var hmacSecretOutput: [UInt8]?
    /// hmac-secret-mc (registration, CTAP 2.2 §12.7): the outputs at
    /// creation, encrypted to the client; opaque to the RP.
    public var hmacSecretMCOutput: [UInt8]?
    /// credBlob (registration): whether the blob was stored.
    public var credBlobStored: Bool?
    /// credBlob (assertion): the blob stored with the credential (empty when none).
    public var credBlob: [UInt8]?
    /// minPinLength (registration): the authenticator's minimum PIN length.
    public var minPinLength: Int?
    /// The names of other extensions present, sorted.
    public var otherExtensions: [String] = []

    /// No outputs.
    public init() {}

    /// The outputs in `extensions` (nil: the ED flag was clear).
    public init(_ extensions: CBOR?, ceremony: Ceremony) throws(TokenMintError) {
        guard let extensions else { return }
        guard let entries = extensions.mapValue else { throw Self.invalid("the extensions are a CBOR map") }
        for entry in entries {
            guard let name = entry.key.textValue else { throw Self.invalid("extension identifiers are text") }
            let value = entry.value
            switch (name, ceremony) {
            case ("credProtect", .registration):
                guard let level = value.intValue.flatMap({ CredentialProtection(rawValue: Int($0)) }) else {
                    throw Self.invalid("credProtect is 1, 2 or 3")
                }
                credProtect = level
            case ("hmac-secret", .registration):
                hmacSecret = try Self.bool(value, name)
            case ("hmac-secret", .assertion):
                // 32 or 64 bytes of output, after a 16-byte IV under PIN/UV auth protocol 2.
                guard let bytes = value.bytesValue, [32, 48, 64, 80].contains(bytes.count) else {
                    throw Self.invalid("an hmac-secret output is 32 or 64 encrypted bytes (after a 16-byte IV under protocol 2)")
                }
                hmacSecretOutput = bytes
            case ("hmac-secret-mc", .registration):
                guard let bytes = value.bytesValue, [32, 48, 64, 80].contains(bytes.count) else {
                    throw Self.invalid("an hmac-secret-mc output is 32 or 64 encrypted bytes (after a 16-byte IV under protocol 2)")
                }
                hmacSecretMCOutput = bytes
            case ("hmac-secret-mc", .assertion):
                throw Self.invalid("hmac-secret-mc is a registration output")
            case ("credBlob", .registration):
                credBlobStored = try Self.bool(value, name)
            case ("credBlob", .assertion):
                guard let bytes = value.bytesValue else { throw Self.invalid("credBlob is a byte string in an assertion") }
                guard bytes.count <= 64 else { throw Self.invalid("a credBlob is at most 64 bytes") }
                credBlob = bytes
            case ("minPinLength", .registration):
                guard let length = value.intValue, (4...63).contains(length) else { throw Self.invalid("minPinLength is 4 to 63") }
                minPinLength = Int(length)
            case ("credProtect", .assertion), ("minPinLength", .assertion):
                throw Self.invalid("\(name) is a registration output")
            default:
                otherExtensions.append(name)
            }
        }
        otherExtensions.sort()
    }

    /// The CBOR map of these outputs (known ones only), nil when there are none.
    public var cbor: CBOR? {
        var entries: [CBORMapEntry] = []
        if let credProtect { entries.append(.init(key: .text("credProtect"), value: .int(Int64(credProtect.rawValue)))) }
        if let hmacSecret { entries.append(.init(key: .text("hmac-secret"), value: .bool(hmacSecret))) }
        if let hmacSecretOutput { entries.append(.init(key: .text("hmac-secret"), value: .bytes(hmacSecretOutput))) }
        if let hmacSecretMCOutput { entries.append(.init(key: .text("hmac-secret-mc"), value: .bytes(hmacSecretMCOutput))) }
        if let credBlobStored { entries.append(.init(key: .text("credBlob"), value: .bool(credBlobStored))) }
        if let credBlob { entries.append(.init(key: .text("credBlob"), value: .bytes(credBlob))) }
        if let minPinLength { entries.append(.init(key: .text("minPinLength"), value: .int(Int64(minPinLength)))) }
        return entries.isEmpty ? nil : .map(entries)
    }

    private static func bool(_ value: CBOR, _ name: String) throws(TokenMintError) -> Bool {
        guard let flag = value.boolValue else { throw invalid("\(name) is a Boolean at registration") }
        return flag
    }

    private static func invalid(_ why: String) -> TokenMintError { TokenMintError(.webAuthn.invalidExtension, why) }
}
