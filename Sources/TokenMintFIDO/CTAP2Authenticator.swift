import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR
public import TokenMintWebAuthn

/// A `SoftwareAuthenticator` (TokenMintWebAuthn) answering CTAP2 commands (CTAP 2.1 §6):
/// each request is a command byte and a canonical CBOR map with integer
/// keys, each response a status byte and, on success, a CBOR map.
///
/// Served here: authenticatorGetInfo, MakeCredential, GetAssertion,
/// GetNextAssertion, Reset and Selection, with the credProtect, credBlob,
/// largeBlobKey and minPinLength extensions. The user is present and
/// verified when the authenticator's callbacks say so (built-in user
/// verification: getInfo's `uv` option). ClientPIN, CredentialManagement
/// and hmac-secret over CTAP are not served yet: getInfo does not list them
/// and their commands answer CTAP1_ERR_INVALID_COMMAND.
public struct CTAP2Authenticator: Sendable {
    /// The authenticator the commands reach.
    public let authenticator: SoftwareAuthenticator
    /// The largest request taken, in bytes (getInfo's maxMsgSize).
    public static let maximumMessageSize = 7609
    /// The extensions served over CTAP.
    public static let extensions = ["credBlob", "credProtect", "largeBlobKey", "minPinLength"]

    /// Commands to `authenticator`.
    public init(_ authenticator: SoftwareAuthenticator) { self.authenticator = authenticator }

    /// The response to `request` (command byte ‖ CBOR): status ‖ CBOR.
    /// Never throws: every failure is a status byte.
    public func respond(to request: [UInt8]) async -> [UInt8] {
        guard let first = request.first else { return [CTAP2Status.invalidLength.rawValue] }
        guard request.count <= Self.maximumMessageSize else { return [CTAP2Status.requestTooLarge.rawValue] }
        guard let command = CTAP2Command(rawValue: first) else { return [CTAP2Status.invalidCommand.rawValue] }
        // CTAP 2.1 §6.3: any other command ends a getNextAssertion sequence.
        if command != .getNextAssertion { await authenticator.discardPendingAssertions() }
        do {
            let parameters = try CTAPParameters(request.dropFirst())
            let answer: CBOR?
            switch command {
            case .getInfo: answer = await info()
            case .makeCredential: answer = try await makeCredential(parameters)
            case .getAssertion: answer = try await getAssertion(parameters)
            case .getNextAssertion: answer = try await assertion(try await authenticator.getNextAssertion(), first: false)
            case .reset:
                // §6.6: only with the user's presence.
                try await authenticator.confirmUserPresence(for: "reset")
                try await authenticator.reset()
                answer = nil
            case .selection:
                try await authenticator.confirmUserPresence(for: "selection")
                answer = nil
            case .clientPIN, .credentialManagement: return [CTAP2Status.invalidCommand.rawValue]
            }
            return [CTAP2Status.ok.rawValue] + (answer.map { CBOREncoder.encode($0) } ?? [])
        } catch {
            return [CTAP2Status(error).rawValue]
        }
    }

    /// authenticatorGetInfo's map.
    func info() async -> CBOR {
        let info = await authenticator.getInfo()
        let options = info.options.map { CBORMapEntry(key: .text($0.key), value: .bool($0.value)) }  // the encoder orders them
        return CTAPParameters.map([
            (0x01, .array(info.versions.map { .text($0) })),
            (0x02, .array(Self.extensions.map { .text($0) })),
            (0x03, .bytes(info.aaguid)),
            (0x04, .map(options)),
            (0x05, .unsigned(UInt64(Self.maximumMessageSize))),
            (0x07, .unsigned(8)),
            (0x08, .unsigned(128)),
            (0x09, .array([.text("usb")])),
            (0x0A, .array(info.algorithms.map { .map([CBORMapEntry(key: .text("alg"), value: .int($0.rawValue)),
                                                       CBORMapEntry(key: .text("type"), value: .text("public-key"))]) })),
            (0x0D, .unsigned(UInt64(authenticator.minimumPINLength))),
            (0x0F, .unsigned(UInt64(info.maxCredBlobLength))),
        ])
    }

    func makeCredential(_ p: CTAPParameters) async throws(TokenMintError) -> CBOR {
        let clientDataHash = try p.bytes(0x01)
        let rp = try p.map(0x02)
        let user = try p.map(0x03)
        guard let rpID = try CTAPParameters.text(rp, "id") else { throw .ctap(.missingParameter, "rp.id is missing") }
        guard let userID = try CTAPParameters.bytes(user, "id") else { throw .ctap(.missingParameter, "user.id is missing") }
        var algorithms: [COSEAlgorithm] = []
        for item in try p.array(0x04) {
            guard item.mapValue != nil, let type = try CTAPParameters.text(item, "type"), let alg = item[.text("alg")] else {
                throw .ctap(.missingParameter, "a pubKeyCredParams entry needs alg and type")
            }
            guard let value = alg.intValue else { throw .ctap(.cborUnexpectedType, "alg is an integer") }
            if type == "public-key", let algorithm = COSEAlgorithm(rawValue: value) { algorithms.append(algorithm) }
        }
        let exclude = try CTAPParameters.descriptorIDs(try p.optionalArray(0x05) ?? [])
        let options = try p.options(0x07)
        if options["up"] == false { throw .ctap(.invalidOption, "makeCredential always tests user presence") }
        try CTAPParameters.refusePINAuth(p)
        var extensions = SoftwareAuthenticator.MakeCredentialExtensions()
        if let map = try p.optionalMap(0x06) {
            if let level = map[.text("credProtect")] {
                guard let value = level.intValue else { throw .ctap(.cborUnexpectedType, "credProtect is an integer") }
                guard let protection = CredentialProtection(rawValue: Int(value)) else { throw .ctap(.invalidOption, "credProtect is 1, 2 or 3") }
                extensions.credProtect = protection
            }
            if let blob = map[.text("credBlob")] {
                guard let bytes = blob.bytesValue else { throw .ctap(.cborUnexpectedType, "credBlob is a byte string") }
                extensions.credBlob = bytes
            }
            extensions.minPinLength = try CTAPParameters.flag(map, "minPinLength")
            extensions.largeBlobKey = try CTAPParameters.flag(map, "largeBlobKey")
            if map[.text("largeBlobKey")] != nil, !extensions.largeBlobKey { throw .ctap(.invalidOption, "largeBlobKey is true when present") }
        }
        let made = try await authenticator.makeCredential(
            clientDataHash: clientDataHash, rp: (rpID, try CTAPParameters.text(rp, "name")),
            user: (userID, try CTAPParameters.text(user, "name") ?? "", try CTAPParameters.text(user, "displayName")),
            pubKeyCredParams: algorithms, excludeList: exclude,
            options: .init(residentKey: options["rk"] ?? false, userVerification: options["uv"] ?? false, extensions: extensions),
            attestation: .packed)
        var entries: [(UInt64, CBOR)] = [(0x01, .text(made.format)), (0x02, .bytes(made.authenticatorData.bytes)), (0x03, made.attestationStatement)]
        if let key = made.largeBlobKey { entries.append((0x05, .bytes(key.withUnsafeBytes { Array($0) }))) }
        return CTAPParameters.map(entries)
    }

    func getAssertion(_ p: CTAPParameters) async throws(TokenMintError) -> CBOR {
        let rpID = try p.text(0x01)
        let clientDataHash = try p.bytes(0x02)
        let allow = try CTAPParameters.descriptorIDs(try p.optionalArray(0x03) ?? [])
        let options = try p.options(0x05)
        if options["rk"] != nil { throw .ctap(.unsupportedOption, "rk is not a getAssertion option") }
        try CTAPParameters.refusePINAuth(p)
        var extensions = SoftwareAuthenticator.GetAssertionExtensions()
        if let map = try p.optionalMap(0x04) {
            extensions.credBlob = try CTAPParameters.flag(map, "credBlob")
            extensions.largeBlobKey = try CTAPParameters.flag(map, "largeBlobKey")
        }
        let response = try await authenticator.getAssertion(
            clientDataHash: clientDataHash, rpID: rpID, allowList: allow,
            options: .init(userPresence: options["up"] ?? true, userVerification: options["uv"] ?? false, extensions: extensions))
        return try await assertion(response, first: true, discoverable: allow.isEmpty)
    }

    /// The getAssertion / getNextAssertion response map.
    func assertion(_ response: SoftwareAuthenticator.GetAssertionResponse, first: Bool, discoverable: Bool = false) async throws(TokenMintError) -> CBOR {
        var entries: [(UInt64, CBOR)] = [
            (0x01, .map([CBORMapEntry(key: .text("id"), value: .bytes(response.credentialID)),
                         CBORMapEntry(key: .text("type"), value: .text("public-key"))])),
            (0x02, .bytes(response.authenticatorData.bytes)),
            (0x03, .bytes(response.signature)),
        ]
        if let handle = response.userHandle { entries.append((0x04, .map([CBORMapEntry(key: .text("id"), value: .bytes(handle))]))) }
        if first, discoverable, response.numberOfCredentials > 1 { entries.append((0x05, .unsigned(UInt64(response.numberOfCredentials)))) }
        if let key = response.largeBlobKey { entries.append((0x07, .bytes(key.withUnsafeBytes { Array($0) }))) }
        return CTAPParameters.map(entries)
    }
}

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

    /// pinUvAuthParam (MakeCredential 0x08, GetAssertion 0x06) needs a PIN
    /// this authenticator does not have yet.
    static func refusePINAuth(_ p: CTAPParameters) throws(TokenMintError) {
        if p.value(0x08) != nil || p.value(0x06)?.bytesValue != nil { throw .ctap(.pinNotSet, "no PIN is set on this authenticator") }
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
