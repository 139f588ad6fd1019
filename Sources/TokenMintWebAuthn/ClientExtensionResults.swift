public import TokenMintCore

/// A credential's `clientExtensionResults` (WebAuthn L3 §5.1 and §10), typed
/// and checked: what the client reports, unsigned, beside the authenticator's
/// signed outputs.
///
/// A known extension of the wrong shape is an `invalidExtension` error. A
/// PRF's outputs (`prf.results`) or a large blob's bytes (`largeBlob.blob`)
/// belong to the client: a relying party that never asked for them to be
/// sent refuses them with ``refusingClientSecrets()``. Unknown extensions are
/// accepted and named in ``otherExtensions``.
public struct ClientExtensionResults: Sendable, Hashable {
    /// credProps.rk: whether the credential is discoverable (registration).
    public var residentKey: Bool?
    /// prf.enabled: whether the credential has a PRF (registration).
    public var prfEnabled: Bool?
    /// Whether `prf.results` is present (outputs the client should have kept).
    public var prfResultsPresent = false
    /// largeBlob.supported (registration).
    public var largeBlobSupported: Bool?
    /// largeBlob.written (assertion with a write).
    public var largeBlobWritten: Bool?
    /// Whether `largeBlob.blob` is present (a blob the client read).
    public var largeBlobPresent = false
    /// The names of other extensions present, sorted.
    public var otherExtensions: [String] = []

    /// No results.
    public init() {}

    /// The results in `value` (a JSON object; nil or null: none).
    public init(_ value: JSONValue?) throws(TokenMintError) {
        guard let value, !value.isNull else { return }
        guard let object = value.objectValue, object.count <= 32 else { throw Self.invalid("clientExtensionResults is an object of at most 32 members") }
        for member in object.members {
            let (name, result) = (member.name, member.value)
            switch name {
            case "credProps":
                let members = try Self.object(result, name)
                residentKey = try Self.bool(members["rk"], "credProps.rk")
            case "prf":
                let members = try Self.object(result, name)
                prfEnabled = try Self.bool(members["enabled"], "prf.enabled")
                if let results = members["results"] {
                    guard results.objectValue != nil else { throw Self.invalid("prf.results is an object") }
                    prfResultsPresent = true
                }
            case "largeBlob":
                let members = try Self.object(result, name)
                largeBlobSupported = try Self.bool(members["supported"], "largeBlob.supported")
                largeBlobWritten = try Self.bool(members["written"], "largeBlob.written")
                if let blob = members["blob"] {
                    guard blob.stringValue != nil else { throw Self.invalid("largeBlob.blob is base64url text") }
                    largeBlobPresent = true
                }
            default:
                otherExtensions.append(name)
            }
        }
        otherExtensions.sort()
    }

    /// Throws `invalidExtension` when the results carry PRF outputs or a
    /// large blob's bytes: secrets of the client that should not have left it.
    public func refusingClientSecrets() throws(TokenMintError) -> Self {
        guard !prfResultsPresent, !largeBlobPresent else {
            throw Self.invalid("the client sent its PRF outputs or large blob to the relying party")
        }
        return self
    }

    private static func object(_ value: JSONValue, _ name: String) throws(TokenMintError) -> JSONObject {
        guard let object = value.objectValue, object.count <= 8 else { throw invalid("\(name) is an object") }
        return object
    }

    private static func bool(_ value: JSONValue?, _ name: String) throws(TokenMintError) -> Bool? {
        guard let value else { return nil }
        guard let flag = value.boolValue else { throw invalid("\(name) is a Boolean") }
        return flag
    }

    private static func invalid(_ why: String) -> TokenMintError { TokenMintError(.webAuthn.invalidExtension, why) }
}
