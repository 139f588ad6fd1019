public import TokenMintCore
public import TokenMintCrypto
public import TokenMintCBOR
public import TokenMintWebAuthn

/// A FIDO2 session with an authenticator over a ``FIDOConnection``, in
/// YubiKit's shape: methods take their arguments and return parsed results;
/// the CBOR stays inside. Obtain one with `try await connection.fido2Session()`.
///
/// A key's refusal is a `TokenMintError` whose code is named after the CTAP
/// status (`.fido.ctap(.noCredentials)`, number 0x2E).
public struct FIDO2Session: Sendable {
    let connection: any FIDOConnection
    let generation: Int

    /// getInfo's answer.
    public struct Info: Sendable, Hashable {
        /// Protocol versions (`FIDO_2_0`, `FIDO_2_1`, …).
        public let versions: [String]
        /// Extensions the key supports.
        public let extensions: [String]
        /// The AAGUID.
        public let aaguid: [UInt8]
        /// Options (`rk`, `up`, `uv`, `clientPin`, …).
        public let options: [String: Bool]
        /// The largest message the key takes.
        public let maximumMessageSize: Int?
        /// The PIN/UV auth protocols it supports.
        public let pinUVAuthProtocols: [Int]
        /// The credential algorithms it makes, in its order of preference.
        public let algorithms: [COSEAlgorithm]
        /// The minimum PIN length.
        public let minimumPINLength: Int?
        /// The largest credBlob it keeps.
        public let maximumCredBlobLength: Int?
    }

    /// makeCredential's answer.
    public struct Credential: Sendable {
        /// The attestation format.
        public let format: String
        /// The authenticator data, parsed.
        public let authenticatorData: AuthenticatorData
        /// The attestation statement.
        public let attestationStatement: CBOR
        /// The credential's large-blob key, when asked for.
        public let largeBlobKey: SecureBytes?
        /// The hmac-secret-mc outputs (32 or 64 bytes), decrypted, when asked for.
        public var hmacSecret: SecureBytes? = nil
        /// The credential ID.
        public var credentialID: [UInt8] { authenticatorData.attestedCredential?.credentialID ?? [] }
        /// The WebAuthn attestation object.
        public var attestationObject: AttestationObject {
            AttestationObject(format: format, statement: attestationStatement, authenticatorData: authenticatorData)
        }
    }

    /// getAssertion's (and getNextAssertion's) answer.
    public struct Assertion: Sendable {
        /// The credential that signed.
        public let credentialID: [UInt8]
        /// The authenticator data, parsed.
        public let authenticatorData: AuthenticatorData
        /// The signature over authenticatorData ‖ clientDataHash.
        public let signature: [UInt8]
        /// The user handle, for discoverable credentials.
        public let userHandle: [UInt8]?
        /// How many credentials matched (the first answer of a discoverable request).
        public let numberOfCredentials: Int?
        /// The credential's large-blob key, when asked for.
        public let largeBlobKey: SecureBytes?
        /// The hmac-secret outputs (32 or 64 bytes), decrypted, when asked for.
        public var hmacSecret: SecureBytes? = nil
    }

    /// makeCredential's extension inputs a key takes over CTAP.
    public struct MakeCredentialExtensions: Sendable {
        /// credProtect level.
        public var credProtect: CredentialProtection?
        /// credBlob.
        public var credBlob: [UInt8]?
        /// minPinLength.
        public var minPinLength = false
        /// largeBlobKey.
        public var largeBlobKey = false
        /// hmac-secret: the credential gets PRF secrets.
        public var hmacSecret = false
        /// hmac-secret-mc: PRF outputs for these 32-byte salts at creation (implies ``hmacSecret``).
        public var hmacSecretMC: (salt1: [UInt8], salt2: [UInt8]?)?
        /// None by default.
        public init(credProtect: CredentialProtection? = nil, credBlob: [UInt8]? = nil, minPinLength: Bool = false, largeBlobKey: Bool = false,
                    hmacSecret: Bool = false, hmacSecretMC: (salt1: [UInt8], salt2: [UInt8]?)? = nil) {
            self.credProtect = credProtect
            self.credBlob = credBlob
            self.minPinLength = minPinLength
            self.largeBlobKey = largeBlobKey
            self.hmacSecret = hmacSecret || hmacSecretMC != nil
            self.hmacSecretMC = hmacSecretMC
        }
    }

    /// authenticatorGetInfo.
    public func getInfo() async throws(TokenMintError) -> Info {
        let map = try await call(.getInfo, [])
        func int(_ key: UInt64) -> Int? { map[.unsigned(key)]?.intValue.map { Int($0) } }
        func texts(_ key: UInt64) -> [String] { map[.unsigned(key)]?.arrayValue?.compactMap(\.textValue) ?? [] }
        var options: [String: Bool] = [:]
        for entry in map[.unsigned(0x04)]?.mapValue ?? [] {
            if let name = entry.key.textValue, let flag = entry.value.boolValue { options[name] = flag }
        }
        guard let aaguid = map[.unsigned(0x03)]?.bytesValue, aaguid.count == 16, !texts(0x01).isEmpty else {
            throw TokenMintError(.fido.invalidResponse, "getInfo has no versions or AAGUID")
        }
        let algorithms = (map[.unsigned(0x0A)]?.arrayValue ?? []).compactMap { $0[.text("alg")]?.intValue.flatMap(COSEAlgorithm.init(rawValue:)) }
        return Info(versions: texts(0x01), extensions: texts(0x02), aaguid: aaguid, options: options, maximumMessageSize: int(0x05),
                    pinUVAuthProtocols: (map[.unsigned(0x06)]?.arrayValue ?? []).compactMap { $0.intValue.map { Int($0) } },
                    algorithms: algorithms, minimumPINLength: int(0x0D), maximumCredBlobLength: int(0x0F))
    }

    /// authenticatorMakeCredential.
    public func makeCredential(
        clientDataHash: [UInt8], rp: (id: String, name: String?), user: (id: [UInt8], name: String?, displayName: String?),
        algorithms: [COSEAlgorithm] = [.es256, .edDSA], excludeList: [[UInt8]] = [], residentKey: Bool = false,
        userVerification: Bool = false, extensions: MakeCredentialExtensions = .init(), pinToken: PINToken? = nil
    ) async throws(TokenMintError) -> Credential {
        var rpMap = [CBORMapEntry(key: .text("id"), value: .text(rp.id))]
        if let name = rp.name { rpMap.append(.init(key: .text("name"), value: .text(name))) }
        var userMap = [CBORMapEntry(key: .text("id"), value: .bytes(user.id))]
        if let name = user.name { userMap.append(.init(key: .text("name"), value: .text(name))) }
        if let name = user.displayName { userMap.append(.init(key: .text("displayName"), value: .text(name))) }
        var entries: [(UInt64, CBOR)] = [
            (0x01, .bytes(clientDataHash)), (0x02, .map(rpMap)), (0x03, .map(userMap)),
            (0x04, .array(algorithms.map { .map([CBORMapEntry(key: .text("alg"), value: .int($0.rawValue)),
                                                 CBORMapEntry(key: .text("type"), value: .text("public-key"))]) })),
        ]
        if !excludeList.isEmpty { entries.append((0x05, Self.descriptors(excludeList))) }
        var requested: [CBORMapEntry] = []
        if let level = extensions.credProtect { requested.append(.init(key: .text("credProtect"), value: .int(Int64(level.rawValue)))) }
        if let blob = extensions.credBlob { requested.append(.init(key: .text("credBlob"), value: .bytes(blob))) }
        if extensions.minPinLength { requested.append(.init(key: .text("minPinLength"), value: .bool(true))) }
        if extensions.largeBlobKey { requested.append(.init(key: .text("largeBlobKey"), value: .bool(true))) }
        if extensions.hmacSecret { requested.append(.init(key: .text("hmac-secret"), value: .bool(true))) }
        var sealed: (PINUVAuthProtocol, SecureBytes)?
        if let salts = extensions.hmacSecretMC {
            let (input, secret) = try await hmacSecretInput(salts, version: pinToken?.version ?? .two)
            requested.append(.init(key: .text("hmac-secret-mc"), value: input))
            sealed = secret
        }
        if !requested.isEmpty { entries.append((0x06, .map(requested))) }
        if let pinToken {
            entries.append((0x08, .bytes(try pinToken.authenticate(clientDataHash))))
            entries.append((0x09, .unsigned(UInt64(pinToken.version.rawValue))))
        }
        var options: [CBORMapEntry] = []
        if residentKey { options.append(.init(key: .text("rk"), value: .bool(true))) }
        if userVerification { options.append(.init(key: .text("uv"), value: .bool(true))) }
        if !options.isEmpty { entries.append((0x07, .map(options))) }
        let map = try await call(.makeCredential, entries)
        guard let format = map[.unsigned(0x01)]?.textValue, let data = map[.unsigned(0x02)]?.bytesValue, let statement = map[.unsigned(0x03)],
            statement.mapValue != nil || statement.arrayValue != nil
        else { throw TokenMintError(.fido.invalidResponse, "makeCredential's answer has no fmt, authData or attStmt") }
        let authenticatorData: AuthenticatorData
        do { authenticatorData = try AuthenticatorData(parsing: data) } catch {
            throw TokenMintError(.fido.invalidResponse, "makeCredential's authData: \(error.reason)", underlying: error)
        }
        guard authenticatorData.attestedCredential != nil else { throw TokenMintError(.fido.invalidResponse, "makeCredential's authData has no credential") }
        var credential = Credential(format: format, authenticatorData: authenticatorData, attestationStatement: statement,
                                    largeBlobKey: map[.unsigned(0x05)]?.bytesValue.map { SecureBytes($0) })
        if let (version, shared) = sealed {
            let outputs = try? AuthenticatorExtensionOutputs(authenticatorData.extensions, ceremony: .registration)
            guard let encrypted = outputs?.hmacSecretMCOutput else { throw TokenMintError(.fido.invalidResponse, "no hmac-secret-mc output") }
            credential.hmacSecret = try Self.open(encrypted, version, shared)
        }
        return credential
    }

    /// authenticatorGetAssertion; an empty `allowList` asks for discoverable
    /// credentials. `hmacSecret` salts (32 bytes each) are sent encrypted
    /// under a fresh key agreement (with `pinToken`'s protocol, else
    /// `version`), and the outputs come back decrypted.
    public func getAssertion(
        rpID: String, clientDataHash: [UInt8], allowList: [[UInt8]] = [], userPresence: Bool = true, userVerification: Bool = false,
        credBlob: Bool = false, largeBlobKey: Bool = false, hmacSecret: (salt1: [UInt8], salt2: [UInt8]?)? = nil, pinToken: PINToken? = nil,
        using version: PINUVAuthProtocol = .two
    ) async throws(TokenMintError) -> Assertion {
        var entries: [(UInt64, CBOR)] = [(0x01, .text(rpID)), (0x02, .bytes(clientDataHash))]
        if !allowList.isEmpty { entries.append((0x03, Self.descriptors(allowList))) }
        var requested: [CBORMapEntry] = []
        if credBlob { requested.append(.init(key: .text("credBlob"), value: .bool(true))) }
        if largeBlobKey { requested.append(.init(key: .text("largeBlobKey"), value: .bool(true))) }
        var sealed: (PINUVAuthProtocol, SecureBytes)?
        if let hmacSecret {
            let (input, secret) = try await hmacSecretInput(hmacSecret, version: pinToken?.version ?? version)
            requested.append(.init(key: .text("hmac-secret"), value: input))
            sealed = secret
        }
        if !requested.isEmpty { entries.append((0x04, .map(requested))) }
        if let pinToken {
            entries.append((0x06, .bytes(try pinToken.authenticate(clientDataHash))))
            entries.append((0x07, .unsigned(UInt64(pinToken.version.rawValue))))
        }
        var options: [CBORMapEntry] = []
        if !userPresence { options.append(.init(key: .text("up"), value: .bool(false))) }
        if userVerification { options.append(.init(key: .text("uv"), value: .bool(true))) }
        if !options.isEmpty { entries.append((0x05, .map(options))) }
        var assertion = try Self.assertion(try await call(.getAssertion, entries))
        if let (version, shared) = sealed {
            let outputs = try? AuthenticatorExtensionOutputs(assertion.authenticatorData.extensions, ceremony: .assertion)
            guard let encrypted = outputs?.hmacSecretOutput else { throw TokenMintError(.fido.invalidResponse, "no hmac-secret output") }
            assertion.hmacSecret = try Self.open(encrypted, version, shared)
        }
        return assertion
    }

    /// The hmac-secret (or hmac-secret-mc) input for `salts` under a fresh
    /// key agreement, and the shared secret its output comes back under.
    private func hmacSecretInput(_ salts: (salt1: [UInt8], salt2: [UInt8]?), version: PINUVAuthProtocol)
        async throws(TokenMintError) -> (CBOR, (PINUVAuthProtocol, SecureBytes))
    {
        guard salts.salt1.count == 32, salts.salt2.map({ $0.count == 32 }) ?? true else {
            throw TokenMintError(.fido.ctap(.invalidLength), "hmac-secret salts are 32 bytes")
        }
        let (platformKey, shared) = try await keyAgreement(version)
        let saltEnc = try version.encrypt(shared, SecureBytes(salts.salt1 + (salts.salt2 ?? [])))
        let input = CBOR.map([
            CBORMapEntry(key: .unsigned(1), value: platformKey), CBORMapEntry(key: .unsigned(2), value: .bytes(saltEnc)),
            CBORMapEntry(key: .unsigned(3), value: .bytes(try version.authenticate(shared, saltEnc))),
            CBORMapEntry(key: .unsigned(4), value: .unsigned(UInt64(version.rawValue))),
        ])
        return (input, (version, shared))
    }

    /// An hmac-secret output, decrypted.
    private static func open(_ encrypted: [UInt8], _ version: PINUVAuthProtocol, _ shared: SecureBytes) throws(TokenMintError) -> SecureBytes {
        do { return try version.decrypt(shared, encrypted) } catch {
            throw TokenMintError(.fido.invalidResponse, "the hmac-secret output does not decrypt", underlying: error)
        }
    }

    /// authenticatorGetNextAssertion.
    public func getNextAssertion() async throws(TokenMintError) -> Assertion {
        try Self.assertion(try await call(.getNextAssertion, []))
    }

    /// authenticatorReset: every credential is gone.
    public func reset() async throws(TokenMintError) { _ = try await call(.reset, []) }

    /// authenticatorSelection: the user touches this key.
    public func selection() async throws(TokenMintError) { _ = try await call(.selection, []) }

    static func descriptors(_ ids: [[UInt8]]) -> CBOR {
        .array(ids.map(descriptor))
    }

    static func assertion(_ map: CBOR) throws(TokenMintError) -> Assertion {
        guard let id = map[.unsigned(0x01)]?[.text("id")]?.bytesValue, let data = map[.unsigned(0x02)]?.bytesValue,
            let signature = map[.unsigned(0x03)]?.bytesValue
        else { throw TokenMintError(.fido.invalidResponse, "the assertion has no credential, authData or signature") }
        let authenticatorData: AuthenticatorData
        do { authenticatorData = try AuthenticatorData(parsing: data) } catch {
            throw TokenMintError(.fido.invalidResponse, "the assertion's authData: \(error.reason)", underlying: error)
        }
        return Assertion(credentialID: id, authenticatorData: authenticatorData, signature: signature,
                         userHandle: map[.unsigned(0x04)]?[.text("id")]?.bytesValue,
                         numberOfCredentials: map[.unsigned(0x05)]?.intValue.map { Int($0) },
                         largeBlobKey: map[.unsigned(0x07)]?.bytesValue.map { SecureBytes($0) })
    }

    /// One command: its answer map (empty for none), or the key's status as an error.
    func call(_ command: CTAP2Command, _ entries: [(UInt64, CBOR)]) async throws(TokenMintError) -> CBOR {
        try connection.sessions.check(generation)
        let request = [command.rawValue] + (entries.isEmpty ? [] : CBOREncoder.encode(CTAPParameters.map(entries.sorted { $0.0 < $1.0 })))
        let response = try await connection.exchangeCTAP2(request)
        guard let status = response.first else { throw TokenMintError(.fido.invalidResponse, "an empty CTAP2 response") }
        guard status == 0 else {
            let known = CTAP2Status(rawValue: status) ?? .other
            throw TokenMintError(.fido.ctap(known), "the authenticator answered \(known) (0x\(String(status, radix: 16)))")
        }
        guard response.count > 1 else { return .map([]) }
        do { return try CBORDecoder.decode(Array(response.dropFirst()), requireCanonical: false) } catch {
            throw TokenMintError(.fido.invalidResponse, "the response is not CBOR: \(error.reason)", underlying: error)
        }
    }
}
