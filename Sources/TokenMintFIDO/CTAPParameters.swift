import TokenMintCore
import TokenMintCBOR

/// A CTAP2 request's parameters: a canonical CBOR map with unsigned keys
/// (empty when the request has none), read with CTAP's status codes.
struct CTAPParameters {
    let map: CBOR

    init(_ bytes: ArraySlice<UInt8>) throws(TokenMintError) {
        guard !bytes.isEmpty else {
            map = .map([])
            return
        }
        var limits = CBORDecoder.Limits()
        limits.maximumDepth = 8
        let item: CBOR
        do { item = try CBORDecoder.decode(Array(bytes), requireCanonical: true, limits: limits) } catch {
            throw TokenMintError(.fido.ctap(.invalidCBOR), "the request is not canonical CBOR: \(error.reason)", underlying: error)
        }
        guard let entries = item.mapValue, entries.allSatisfy({ if case .unsigned = $0.key { true } else { false } }) else {
            throw .ctap(.cborUnexpectedType, "the parameters are a map with unsigned keys")
        }
        map = item
    }

    func value(_ key: UInt64) -> CBOR? { map[.unsigned(key)] }

    func bytes(_ key: UInt64) throws(TokenMintError) -> [UInt8] {
        guard let value = value(key) else { throw .ctap(.missingParameter, "parameter \(key) is missing") }
        guard let bytes = value.bytesValue else { throw .ctap(.cborUnexpectedType, "parameter \(key) is a byte string") }
        return bytes
    }

    func text(_ key: UInt64) throws(TokenMintError) -> String {
        guard let value = value(key) else { throw .ctap(.missingParameter, "parameter \(key) is missing") }
        guard let text = value.textValue else { throw .ctap(.cborUnexpectedType, "parameter \(key) is a text string") }
        return text
    }

    func map(_ key: UInt64) throws(TokenMintError) -> CBOR {
        guard let value = try optionalMap(key) else { throw .ctap(.missingParameter, "parameter \(key) is missing") }
        return value
    }

    func optionalMap(_ key: UInt64) throws(TokenMintError) -> CBOR? {
        guard let value = value(key) else { return nil }
        guard value.mapValue != nil else { throw .ctap(.cborUnexpectedType, "parameter \(key) is a map") }
        return value
    }

    func array(_ key: UInt64) throws(TokenMintError) -> [CBOR] {
        guard let value = try optionalArray(key) else { throw .ctap(.missingParameter, "parameter \(key) is missing") }
        return value
    }

    func optionalArray(_ key: UInt64) throws(TokenMintError) -> [CBOR]? {
        guard let value = value(key) else { return nil }
        guard let array = value.arrayValue else { throw .ctap(.cborUnexpectedType, "parameter \(key) is an array") }
        return array
    }

    /// The options map at `key` (rk, up, uv), Booleans only.
    func options(_ key: UInt64) throws(TokenMintError) -> [String: Bool] {
        guard let map = try optionalMap(key), let entries = map.mapValue else { return [:] }
        var options: [String: Bool] = [:]
        for entry in entries {
            guard let name = entry.key.textValue, let flag = entry.value.boolValue else {
                throw .ctap(.cborUnexpectedType, "options are text keys with Boolean values")
            }
            options[name] = flag
        }
        return options
    }

    /// The optional byte string at `key`.
    func optionalBytes(_ key: UInt64) throws(TokenMintError) -> [UInt8]? {
        guard let value = value(key) else { return nil }
        guard let bytes = value.bytesValue else { throw .ctap(.cborUnexpectedType, "parameter \(key) is a byte string") }
        return bytes
    }

    static func text(_ map: CBOR, _ name: String) throws(TokenMintError) -> String? {
        guard let value = map[.text(name)] else { return nil }
        guard let text = value.textValue else { throw .ctap(.cborUnexpectedType, "\(name) is a text string") }
        return text
    }

    static func bytes(_ map: CBOR, _ name: String) throws(TokenMintError) -> [UInt8]? {
        guard let value = map[.text(name)] else { return nil }
        guard let bytes = value.bytesValue else { throw .ctap(.cborUnexpectedType, "\(name) is a byte string") }
        return bytes
    }

    static func flag(_ map: CBOR, _ name: String) throws(TokenMintError) -> Bool {
        guard let value = map[.text(name)] else { return false }
        guard let flag = value.boolValue else { throw .ctap(.cborUnexpectedType, "\(name) is a Boolean") }
        return flag
    }

    /// The credential IDs of a list of PublicKeyCredentialDescriptors (type public-key only).
    static func descriptorIDs(_ list: [CBOR]) throws(TokenMintError) -> [[UInt8]] {
        guard list.count <= 64 else { throw .ctap(.limitExceeded, "at most 64 credential descriptors") }
        var ids: [[UInt8]] = []
        for item in list {
            guard item.mapValue != nil, let type = try text(item, "type"), let id = try bytes(item, "id") else {
                throw .ctap(.missingParameter, "a credential descriptor needs id and type")
            }
            if type == "public-key" { ids.append(id) }
        }
        return ids
    }

    /// A response map with unsigned keys.
    static func map(_ entries: [(UInt64, CBOR)]) -> CBOR {
        .map(entries.map { CBORMapEntry(key: .unsigned($0.0), value: $0.1) })
    }
}
