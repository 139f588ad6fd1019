import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR
public import TokenMintWebAuthn

/// A `SoftwareAuthenticator` (TokenMintWebAuthn) answering CTAP2 commands (CTAP 2.1 §6):
/// each request is a command byte and a canonical CBOR map with integer
/// keys, each response a status byte and, on success, a CBOR map.
///
/// Served: authenticatorGetInfo, MakeCredential, GetAssertion,
/// GetNextAssertion, ClientPIN (PIN/UV auth protocols 1 and 2),
/// CredentialManagement, Reset and Selection, with the credProtect,
/// credBlob, hmac-secret, hmac-secret-mc, largeBlobKey and minPinLength extensions.
///
/// The user is present and verified when the authenticator's callbacks say
/// so (built-in user verification, getInfo's `uv`). With a PIN set,
/// non-discoverable credentials need no user verification
/// (`makeCredUvNotRqd`); discoverable ones need a PIN/UV auth token or
/// built-in verification; with ``alwaysUV`` every makeCredential and
/// getAssertion does.
public struct CTAP2Authenticator: Sendable {
    /// The authenticator the commands reach.
    public let authenticator: SoftwareAuthenticator
    /// Whether every makeCredential and getAssertion needs user verification (getInfo's `alwaysUv`).
    public let alwaysUV: Bool
    /// The PIN, the PIN/UV auth token and credential management's cursors.
    let state: ClientPINState
    /// The largest request taken, in bytes (getInfo's maxMsgSize).
    public static let maximumMessageSize = 7609
    /// The extensions served over CTAP.
    public static let extensions = ["credBlob", "credProtect", "hmac-secret", "hmac-secret-mc", "largeBlobKey", "minPinLength"]

    /// Commands to `authenticator`; the PIN is kept in its store.
    public init(_ authenticator: SoftwareAuthenticator, alwaysUV: Bool = false) {
        self.authenticator = authenticator
        self.alwaysUV = alwaysUV
        state = ClientPINState(store: authenticator.store, minimumLength: authenticator.minimumPINLength)
    }

    /// The response to `request` (command byte ‖ CBOR): status ‖ CBOR.
    /// Never throws: every failure is a status byte.
    public func respond(to request: [UInt8]) async -> [UInt8] {
        guard let first = request.first else { return [CTAP2Status.invalidLength.rawValue] }
        guard request.count <= Self.maximumMessageSize else { return [CTAP2Status.requestTooLarge.rawValue] }
        guard let command = CTAP2Command(rawValue: first) else { return [CTAP2Status.invalidCommand.rawValue] }
        // CTAP 2.1 §6.3, §6.8: any other command ends a getNextAssertion sequence or an enumeration.
        if command != .getNextAssertion { await authenticator.discardPendingAssertions() }
        if command != .credentialManagement || !Self.continuesEnumeration(request) { await state.discardCursors() }
        do {
            let parameters = try CTAPParameters(request.dropFirst())
            let answer: CBOR?
            switch command {
            case .getInfo: answer = try await info()
            case .makeCredential: answer = try await makeCredential(parameters)
            case .getAssertion: answer = try await getAssertion(parameters)
            case .getNextAssertion: answer = try await assertion(try await authenticator.getNextAssertion(), first: false)
            case .clientPIN: answer = try await clientPIN(parameters)
            case .credentialManagement: answer = try await credentialManagement(parameters)
            case .reset:
                // §6.6: only with the user's presence.
                try await authenticator.confirmUserPresence(for: "reset")
                try await authenticator.reset()
                await state.reset()
                answer = nil
            case .selection:
                try await authenticator.confirmUserPresence(for: "selection")
                answer = nil
            }
            return [CTAP2Status.ok.rawValue] + (answer.map { CBOREncoder.encode($0) } ?? [])
        } catch {
            return [CTAP2Status(error).rawValue]
        }
    }

    /// Whether a credential management request is getNextRP or getNextCredential.
    private static func continuesEnumeration(_ request: [UInt8]) -> Bool {
        // {1: 3} or {1: 5}: the only two shapes that continue an enumeration.
        request.count == 4 && request[1] == 0xA1 && request[2] == 0x01 && (request[3] == 0x03 || request[3] == 0x05)
    }

    /// authenticatorGetInfo's map.
    func info() async throws(TokenMintError) -> CBOR {
        let info = await authenticator.getInfo()
        var flags = info.options
        flags["clientPin"] = try await state.isPINSet()
        flags["pinUvAuthToken"] = true
        flags["credMgmt"] = true
        flags["makeCredUvNotRqd"] = !alwaysUV
        if alwaysUV { flags["alwaysUv"] = true }
        let options = flags.map { CBORMapEntry(key: .text($0.key), value: .bool($0.value)) }  // the encoder orders them
        return CTAPParameters.map([
            (0x01, .array(info.versions.map { .text($0) })),
            (0x02, .array(Self.extensions.map { .text($0) })),
            (0x03, .bytes(info.aaguid)),
            (0x04, .map(options)),
            (0x05, .unsigned(UInt64(Self.maximumMessageSize))),
            (0x06, .array([.unsigned(2), .unsigned(1)])),
            (0x07, .unsigned(8)),
            (0x08, .unsigned(128)),
            (0x09, .array([.text("usb")])),
            (0x0A, .array(info.algorithms.map { .map([CBORMapEntry(key: .text("alg"), value: .int($0.rawValue)),
                                                       CBORMapEntry(key: .text("type"), value: .text("public-key"))]) })),
            (0x0C, .bool(false)),
            (0x0D, .unsigned(UInt64(authenticator.minimumPINLength))),
            (0x0F, .unsigned(UInt64(info.maxCredBlobLength))),
        ])
    }

    /// How a makeCredential or getAssertion is verified: by a PIN/UV auth
    /// token (checked here), by built-in UV, or not at all; throws what
    /// CTAP 2.1 §6.1.2 and §6.2.2 name when verification is missing.
    /// `alwaysApplies`: alwaysUv covers this request (not a getAssertion
    /// with up=false); `residentKey`: a discoverable makeCredential, which an
    /// authenticator protected by a PIN or built-in UV makes only verified.
    private func verification(
        _ p: CTAPParameters, paramKey: UInt64, protocolKey: UInt64, clientDataHash: [UInt8], rpID: String, permission: PINUVAuthPermissions,
        uvAsked: Bool, residentKey: Bool, alwaysApplies: Bool
    ) async throws(TokenMintError) -> (byToken: Bool, builtIn: Bool) {
        if let param = try p.optionalBytes(paramKey) {
            if param.isEmpty {
                // "Touch to select" (§6.1.2 step 1): presence, then whether a PIN exists.
                try await authenticator.confirmUserPresence(for: "selection")
                throw try await state.isPINSet() ? .ctap(.pinInvalid, "a PIN is set") : .ctap(.pinNotSet, "no PIN is set")
            }
            let version = try PINUVAuthProtocol.named(p.value(protocolKey))
            let verified = try await state.useToken(version, param: param, message: clientDataHash, permission: permission, rpID: rpID, bind: true)
            return (verified, false)
        }
        let builtIn = authenticator.supportsUserVerification
        if uvAsked {
            guard builtIn else { throw .ctap(.invalidOption, "this authenticator has no built-in user verification") }
            return (false, true)
        }
        if alwaysUV && alwaysApplies {
            // §6.1.2 step 5, §6.2.2 step 5: built-in UV is used as if asked; otherwise a token is needed.
            if builtIn { return (false, true) }
            throw .ctap(.pinUvAuthTokenRequired, "alwaysUv: send a PIN/UV auth token")
        }
        if residentKey {
            // §6.1.2 step 7 (makeCredUvNotRqd): discoverable credentials need verification once the key is protected.
            if try await state.isPINSet() { throw .ctap(.pinUvAuthTokenRequired, "a discoverable credential needs a PIN/UV auth token") }
            if builtIn { throw .ctap(.operationDenied, "a discoverable credential needs user verification: ask for uv") }
        }
        return (false, false)
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
        let residentKey = options["rk"] ?? false
        let uvAsked = (options["uv"] ?? false) && p.value(0x08) == nil  // a token replaces the uv option
        let verification = try await verification(p, paramKey: 0x08, protocolKey: 0x09, clientDataHash: clientDataHash, rpID: rpID,
                                                  permission: .makeCredential, uvAsked: uvAsked, residentKey: residentKey, alwaysApplies: true)
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
            extensions.hmacSecret = try CTAPParameters.flag(map, "hmac-secret")
            if let input = map[.text("hmac-secret-mc")] {
                let (salts, sealer) = try await hmacSecretSalts(input)
                extensions.hmacSecretMC = salts
                extensions.hmacSecretSealer = sealer
            }
            extensions.minPinLength = try CTAPParameters.flag(map, "minPinLength")
            extensions.largeBlobKey = try CTAPParameters.flag(map, "largeBlobKey")
            if map[.text("largeBlobKey")] != nil, !extensions.largeBlobKey { throw .ctap(.invalidOption, "largeBlobKey is true when present") }
        }
        var makeOptions = SoftwareAuthenticator.MakeCredentialOptions(residentKey: residentKey, userVerification: verification.builtIn,
                                                                      extensions: extensions)
        makeOptions.userVerifiedByPlatform = verification.byToken
        let made = try await authenticator.makeCredential(
            clientDataHash: clientDataHash, rp: (rpID, try CTAPParameters.text(rp, "name")),
            user: (userID, try CTAPParameters.text(user, "name") ?? "", try CTAPParameters.text(user, "displayName")),
            pubKeyCredParams: algorithms, excludeList: exclude, options: makeOptions, attestation: .packed)
        await state.consumeToken()  // §6.1.2 step 17: whatever verified this request
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
        let userPresence = options["up"] ?? true
        let uvAsked = (options["uv"] ?? false) && p.value(0x06) == nil
        let verification = try await verification(p, paramKey: 0x06, protocolKey: 0x07, clientDataHash: clientDataHash, rpID: rpID,
                                                  permission: .getAssertion, uvAsked: uvAsked, residentKey: false, alwaysApplies: userPresence)
        var extensions = SoftwareAuthenticator.GetAssertionExtensions()
        if let map = try p.optionalMap(0x04) {
            extensions.credBlob = try CTAPParameters.flag(map, "credBlob")
            extensions.largeBlobKey = try CTAPParameters.flag(map, "largeBlobKey")
            if let input = map[.text("hmac-secret")] {
                let (salts, sealer) = try await hmacSecretSalts(input)
                extensions.hmacSecret = salts
                extensions.hmacSecretSealer = sealer
            }
        }
        var getOptions = SoftwareAuthenticator.GetAssertionOptions(userPresence: userPresence, userVerification: verification.builtIn,
                                                                   extensions: extensions)
        getOptions.userVerifiedByPlatform = verification.byToken
        let response = try await authenticator.getAssertion(clientDataHash: clientDataHash, rpID: rpID, allowList: allow, options: getOptions)
        if userPresence { await state.consumeToken() }  // §6.2.2 step 9
        return try await assertion(response, first: true, discoverable: allow.isEmpty)
    }

    /// hmac-secret's getAssertion input (CTAP 2.1 §12.5), and hmac-secret-mc's
    /// makeCredential input (CTAP 2.2 §12.7): keyAgreement (1), saltEnc (2),
    /// saltAuth (3), pinUvAuthProtocol (4, default 1). The salts, and how the
    /// outputs go back: encrypted under the same shared secret.
    private func hmacSecretSalts(_ input: CBOR) async throws(TokenMintError)
        -> ((salt1: [UInt8], salt2: [UInt8]?), @Sendable (SecureBytes) throws(TokenMintError) -> [UInt8])
    {
        guard input.mapValue != nil else { throw .ctap(.cborUnexpectedType, "hmac-secret's input is a map") }
        guard let peer = input[.unsigned(1)] else { throw .ctap(.missingParameter, "hmac-secret needs keyAgreement") }
        guard let saltEnc = input[.unsigned(2)]?.bytesValue, let saltAuth = input[.unsigned(3)]?.bytesValue else {
            throw .ctap(.missingParameter, "hmac-secret needs saltEnc and saltAuth")
        }
        let version = input[.unsigned(4)] == nil ? PINUVAuthProtocol.one : try PINUVAuthProtocol.named(input[.unsigned(4)])
        let shared = try await state.sharedSecret(version, peer)
        guard try version.verify(shared, saltEnc, saltAuth) else { throw .ctap(.pinAuthInvalid, "saltAuth does not authenticate saltEnc") }
        let salts = try version.decrypt(shared, saltEnc)
        guard salts.count == 32 || salts.count == 64 else { throw .ctap(.invalidLength, "hmac-secret takes one or two 32-byte salts") }
        let bytes = salts.withUnsafeBytes { Array($0) }  // salts are inputs, not keys
        return ((Array(bytes[0..<32]), bytes.count == 64 ? Array(bytes[32...]) : nil),
                { (output) throws(TokenMintError) in try version.encrypt(shared, output) })
    }

    /// The getAssertion / getNextAssertion response map.
    func assertion(_ response: SoftwareAuthenticator.GetAssertionResponse, first: Bool, discoverable: Bool = false) async throws(TokenMintError) -> CBOR {
        var entries: [(UInt64, CBOR)] = [
            (0x01, .map([CBORMapEntry(key: .text("id"), value: .bytes(response.credentialID)),
                         CBORMapEntry(key: .text("type"), value: .text("public-key"))])),
            (0x02, .bytes(response.authenticatorData.bytes)),
            (0x03, .bytes(response.signature)),
        ]
        if let handle = response.userHandle {
            var user = [CBORMapEntry(key: .text("id"), value: .bytes(handle))]
            if let named = response.user {
                if !named.name.isEmpty { user.append(CBORMapEntry(key: .text("name"), value: .text(named.name))) }
                if let display = named.displayName { user.append(CBORMapEntry(key: .text("displayName"), value: .text(display))) }
            }
            entries.append((0x04, .map(user)))
        }
        if first, discoverable, response.numberOfCredentials > 1 { entries.append((0x05, .unsigned(UInt64(response.numberOfCredentials)))) }
        if let key = response.largeBlobKey { entries.append((0x07, .bytes(key.withUnsafeBytes { Array($0) }))) }
        return CTAPParameters.map(entries)
    }
}
