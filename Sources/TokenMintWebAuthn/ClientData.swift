public import TokenMintCore
import TokenMintCrypto

/// The client data a browser signs over (W3C WebAuthn Level 3 §5.8.1).
public struct CollectedClientData: Sendable, Hashable {
    /// "webauthn.create" or "webauthn.get".
    public var type: String
    /// The challenge bytes (serialized as base64url).
    public var challenge: [UInt8]
    /// The caller's origin, e.g. "https://example.org".
    public var origin: String
    /// Whether the call came from a cross-origin iframe.
    public var crossOrigin: Bool
    /// The top-level origin, for cross-origin calls.
    public var topOrigin: String?
    /// Further members, in order, each value already JSON text (for example `"\"some text\""`).
    public var extra: [(name: String, jsonValue: String)] = []

    /// Client data.
    public init(type: String, challenge: [UInt8], origin: String, crossOrigin: Bool = false, topOrigin: String? = nil) {
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
    }

    /// The §5.8.1.1 limited verification serialization: `type`, `challenge`,
    /// `origin`, `crossOrigin`, then `topOrigin` when present, then the rest.
    public var json: [UInt8] {
        var out = "{\"type\":" + CollectedClientData.ccdString(type)
        out += ",\"challenge\":" + CollectedClientData.ccdString(Base64URL.encode(challenge))
        out += ",\"origin\":" + CollectedClientData.ccdString(origin)
        out += ",\"crossOrigin\":" + (crossOrigin ? "true" : "false")
        if let topOrigin { out += ",\"topOrigin\":" + CollectedClientData.ccdString(topOrigin) }
        for (name, value) in extra { out += "," + CollectedClientData.ccdString(name) + ":" + value }
        return Array((out + "}").utf8)
    }

    /// CCDToString (§5.8.1.1): `"` and `\` escaped, every other code point below
    /// U+0020 as `\u` + four lowercase hex digits, the rest as UTF-8.
    static func ccdString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20...: out.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out + "\""
    }

    /// Equal when the serializations are.
    public static func == (lhs: CollectedClientData, rhs: CollectedClientData) -> Bool { lhs.json == rhs.json }
    /// Hashes the serialization.
    public func hash(into hasher: inout Hasher) { hasher.combine(json) }

    /// Parses received client data strictly (duplicate members refused). The
    /// verifier hashes the received bytes, never a re-serialization.
    public init(parsing bytes: [UInt8]) throws(TokenMintError) {
        guard bytes.count <= 16 * 1024 else { throw TokenMintError(.webAuthn.invalidClientData, "clientDataJSON larger than 16 KiB") }
        var limits = JSONParser.Limits()
        limits.maximumBytes = 16 * 1024
        limits.maximumDepth = 4
        guard let value = try? JSONParser.parse(bytes, limits: limits), let object = value.objectValue else {
            throw TokenMintError(.webAuthn.invalidClientData, "clientDataJSON is not a strict JSON object")
        }
        guard let type = object["type"]?.stringValue, let challenge = object["challenge"]?.stringValue,
            let origin = object["origin"]?.stringValue
        else { throw TokenMintError(.webAuthn.invalidClientData, "clientDataJSON lacks type, challenge or origin") }
        guard let challengeBytes = try? Base64URL.decode(challenge, padding: .none) else {
            throw TokenMintError(.webAuthn.invalidClientData, "the challenge is not canonical base64url")
        }
        var crossOrigin = false
        if let value = object["crossOrigin"] {
            guard let flag = value.boolValue else { throw TokenMintError(.webAuthn.invalidClientData, "crossOrigin must be a boolean") }
            crossOrigin = flag
        }
        var topOrigin: String? = nil
        if let value = object["topOrigin"] {
            guard let text = value.stringValue else { throw TokenMintError(.webAuthn.invalidClientData, "topOrigin must be a string") }
            topOrigin = text
        }
        // Token binding left WebAuthn in Level 3 and no relying party here can
        // check a binding ID: a client that claims one is in use ("present")
        // is refused rather than silently unbound; "supported" says nothing
        // and is kept as an unknown member.
        if let value = object["tokenBinding"] {
            guard let status = value.objectValue?["status"]?.stringValue else {
                throw TokenMintError(.webAuthn.invalidClientData, "tokenBinding must be an object with a status")
            }
            guard status != "present" else {
                throw TokenMintError(.webAuthn.invalidClientData, "token binding is in use (status present); this relying party cannot verify it")
            }
        }
        self.init(type: type, challenge: challengeBytes, origin: origin, crossOrigin: crossOrigin, topOrigin: topOrigin)
        for member in object where !["type", "challenge", "origin", "crossOrigin", "topOrigin"].contains(member.name) {
            extra.append((member.name, String(decoding: JSONWriter.encode(member.value), as: UTF8.self)))
        }
    }
}
