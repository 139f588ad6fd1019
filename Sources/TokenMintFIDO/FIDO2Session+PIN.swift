public import TokenMintCore
public import TokenMintCrypto
import TokenMintCBOR
public import TokenMintWebAuthn
import Foundation

extension FIDO2Session {
    /// A PIN/UV auth token from the key (CTAP 2.1 §6.5.5.7), for the
    /// operations its permissions name; pass it to ``makeCredential(clientDataHash:rp:user:algorithms:excludeList:residentKey:userVerification:extensions:pinToken:)``,
    /// ``getAssertion(rpID:clientDataHash:allowList:userPresence:userVerification:credBlob:largeBlobKey:hmacSecret:pinToken:using:)``
    /// or credential management. The token stays in zeroing memory.
    public struct PINToken: Sendable {
        /// The protocol it was obtained with.
        public let version: PINUVAuthProtocol
        let token: SecureBytes
        /// What it may be used for.
        public let permissions: PINUVAuthPermissions
        /// The RP it is bound to, when one was named.
        public let rpID: String?

        /// pinUvAuthParam over `message`.
        func authenticate(_ message: [UInt8]) throws(TokenMintError) -> [UInt8] { try version.authenticate(token, message) }
    }

    /// PIN retries left, and whether the key waits for a power cycle.
    public func pinRetries() async throws(TokenMintError) -> (retries: Int, powerCycleRequired: Bool) {
        let map = try await call(.clientPIN, [(0x02, .unsigned(0x01))])
        guard let retries = map[.unsigned(0x03)]?.intValue else { throw TokenMintError(.fido.invalidResponse, "getPINRetries has no count") }
        return (Int(retries), map[.unsigned(0x04)]?.boolValue ?? false)
    }

    /// Built-in user verification attempts left before the key blocks it
    /// (getUVRetries); a key without built-in verification refuses
    /// (`invalidSubcommand`).
    public func userVerificationRetries() async throws(TokenMintError) -> Int {
        let map = try await call(.clientPIN, [(0x02, .unsigned(0x07))])
        guard let retries = map[.unsigned(0x05)]?.intValue else { throw TokenMintError(.fido.invalidResponse, "getUVRetries has no count") }
        return Int(retries)
    }

    /// Sets the first PIN (at least the key's minimum length in Unicode
    /// code points, at most 63 bytes of UTF-8).
    public func setPIN(_ pin: String, using version: PINUVAuthProtocol = .two) async throws(TokenMintError) {
        let (platformKey, shared) = try await keyAgreement(version)
        let newPinEnc = try version.encrypt(shared, try Self.padded(pin))
        _ = try await call(.clientPIN, [(0x01, .unsigned(UInt64(version.rawValue))), (0x02, .unsigned(0x03)), (0x03, platformKey),
                                        (0x04, .bytes(try version.authenticate(shared, newPinEnc))), (0x05, .bytes(newPinEnc))])
    }

    /// Changes the PIN; a wrong `current` costs a retry.
    public func changePIN(from current: String, to new: String, using version: PINUVAuthProtocol = .two) async throws(TokenMintError) {
        let (platformKey, shared) = try await keyAgreement(version)
        let newPinEnc = try version.encrypt(shared, try Self.padded(new))
        let pinHashEnc = try version.encrypt(shared, Self.pinHash(current))
        _ = try await call(.clientPIN, [(0x01, .unsigned(UInt64(version.rawValue))), (0x02, .unsigned(0x04)), (0x03, platformKey),
                                        (0x04, .bytes(try version.authenticate(shared, newPinEnc + pinHashEnc))),
                                        (0x05, .bytes(newPinEnc)), (0x06, .bytes(pinHashEnc))])
    }

    /// A token for `permissions` (bound to `rpID` when given) with the PIN
    /// (getPinUvAuthTokenUsingPinWithPermissions); a wrong PIN costs a retry.
    public func pinToken(pin: String, permissions: PINUVAuthPermissions, rpID: String? = nil, using version: PINUVAuthProtocol = .two)
        async throws(TokenMintError) -> PINToken
    {
        let (platformKey, shared) = try await keyAgreement(version)
        let pinHashEnc = try version.encrypt(shared, Self.pinHash(pin))
        var entries: [(UInt64, CBOR)] = [(0x01, .unsigned(UInt64(version.rawValue))), (0x02, .unsigned(0x09)), (0x03, platformKey),
                                         (0x06, .bytes(pinHashEnc)), (0x09, .unsigned(UInt64(permissions.rawValue)))]
        if let rpID { entries.append((0x0A, .text(rpID))) }
        return try await token(try await call(.clientPIN, entries), version: version, shared: shared, permissions: permissions, rpID: rpID)
    }

    /// A token for `permissions` with the key's built-in user verification
    /// (getPinUvAuthTokenUsingUvWithPermissions).
    public func uvToken(permissions: PINUVAuthPermissions, rpID: String? = nil, using version: PINUVAuthProtocol = .two) async throws(TokenMintError) -> PINToken {
        let (platformKey, shared) = try await keyAgreement(version)
        var entries: [(UInt64, CBOR)] = [(0x01, .unsigned(UInt64(version.rawValue))), (0x02, .unsigned(0x06)), (0x03, platformKey),
                                         (0x09, .unsigned(UInt64(permissions.rawValue)))]
        if let rpID { entries.append((0x0A, .text(rpID))) }
        return try await token(try await call(.clientPIN, entries), version: version, shared: shared, permissions: permissions, rpID: rpID)
    }

    private func token(_ map: CBOR, version: PINUVAuthProtocol, shared: SecureBytes, permissions: PINUVAuthPermissions, rpID: String?)
        async throws(TokenMintError) -> PINToken
    {
        guard let encrypted = map[.unsigned(0x02)]?.bytesValue else { throw TokenMintError(.fido.invalidResponse, "no pinUvAuthToken in the answer") }
        let token: SecureBytes
        do { token = try version.decrypt(shared, encrypted) } catch { throw TokenMintError(.fido.invalidResponse, "the token does not decrypt", underlying: error) }
        guard token.count == 32 || (version == .one && token.count == 16) else { throw TokenMintError(.fido.invalidResponse, "a token is 16 or 32 bytes") }
        return PINToken(version: version, token: token, permissions: permissions, rpID: rpID)
    }

    /// getKeyAgreement, then a fresh platform key: its COSE key and the shared secret.
    func keyAgreement(_ version: PINUVAuthProtocol) async throws(TokenMintError) -> (CBOR, SecureBytes) {
        let map = try await call(.clientPIN, [(0x01, .unsigned(UInt64(version.rawValue))), (0x02, .unsigned(0x02))])
        guard let peer = map[.unsigned(0x01)] else { throw TokenMintError(.fido.invalidResponse, "getKeyAgreement has no key") }
        let own: ECDSA.PrivateKey
        do { own = try ECDSA.PrivateKey(curve: .p256) } catch { throw TokenMintError(.fido.transportError, "platform key", underlying: error) }
        let shared: SecureBytes
        do { shared = try version.sharedSecret(own, peer: peer) } catch {
            throw TokenMintError(.fido.invalidResponse, "the key's key agreement key: \(error.reason)", underlying: error)
        }
        return (PINUVAuthProtocol.coseKey(own.publicKey), shared)
    }

    /// The PIN's UTF-8 padded with zeros to 64 bytes; refused here when it
    /// cannot be a PIN (empty, over 63 bytes, or holding a zero byte).
    static func padded(_ pin: String) throws(TokenMintError) -> SecureBytes {
        let utf8 = normalized(pin).utf8
        guard !utf8.isEmpty, utf8.count <= 63, !utf8.contains(0) else {
            throw TokenMintError(.fido.ctap(.pinPolicyViolation), "a PIN is 1 to 63 bytes of UTF-8 without NUL")
        }
        return SecureBytes(count: 64, initializingWith: { (out: UnsafeMutableRawBufferPointer) in
            out.initializeMemory(as: UInt8.self, repeating: 0)
            for (index, byte) in utf8.enumerated() { out[index] = byte }
        })
    }

    /// The PIN in Unicode Normalization Form C, as CTAP 2.1 §6.5.1 has the
    /// platform send it: a PIN typed with a combining accent and the same PIN
    /// typed precomposed are one PIN.
    static func normalized(_ pin: String) -> String { pin.precomposedStringWithCanonicalMapping }

    /// LEFT(SHA-256(PIN), 16).
    static func pinHash(_ pin: String) throws(TokenMintError) -> SecureBytes {
        let utf8 = normalized(pin).utf8
        let bytes = SecureBytes(count: utf8.count, initializingWith: { (out: UnsafeMutableRawBufferPointer) in
            for (index, byte) in utf8.enumerated() { out[index] = byte }
        })
        return try HashFunction.sha256.secretHash(bytes).slice(0..<16)
    }
}

extension FIDO2Session {
    /// A discoverable credential as credential management reports it.
    public struct ManagedCredential: Sendable {
        /// The credential ID.
        public let credentialID: [UInt8]
        /// The user handle.
        public let userID: [UInt8]
        /// The user name.
        public let userName: String?
        /// The user's display name.
        public let userDisplayName: String?
        /// The credential public key.
        public let publicKey: COSEKey
        /// Its credProtect level.
        public let protection: CredentialProtection?
        /// Its large-blob key.
        public let largeBlobKey: SecureBytes?
    }

    /// getCredsMetadata: discoverable credentials kept, and how many more fit.
    public func credentialMetadata(token: PINToken) async throws(TokenMintError) -> (existing: Int, remaining: Int) {
        let map = try await management(0x01, nil, token: token)
        guard let existing = map[.unsigned(0x01)]?.intValue, let remaining = map[.unsigned(0x02)]?.intValue else {
            throw TokenMintError(.fido.invalidResponse, "getCredsMetadata has no counts")
        }
        return (Int(existing), Int(remaining))
    }

    /// The RP IDs with discoverable credentials (empty when there are none).
    public func relyingParties(token: PINToken) async throws(TokenMintError) -> [String] {
        let first: CBOR
        do { first = try await management(0x02, nil, token: token) } catch where error.code == .fido.ctap(.noCredentials) { return [] }
        let total = max(1, Int(first[.unsigned(0x05)]?.intValue ?? 1))
        var rps = [first]
        while rps.count < min(total, 10_000) { rps.append(try await management(0x03, nil, token: nil)) }
        return try rps.map { (map) throws(TokenMintError) -> String in
            guard let id = map[.unsigned(0x03)]?[.text("id")]?.textValue else { throw TokenMintError(.fido.invalidResponse, "an RP without an id") }
            return id
        }
    }

    /// The discoverable credentials of `rpID` (empty when there are none).
    public func credentials(rpID: String, token: PINToken) async throws(TokenMintError) -> [ManagedCredential] {
        let params = CTAPParameters.map([(0x01, .bytes(HashFunction.sha256.hash(Array(rpID.utf8))))])
        let first: CBOR
        do { first = try await management(0x04, params, token: token) } catch where error.code == .fido.ctap(.noCredentials) { return [] }
        let total = max(1, Int(first[.unsigned(0x09)]?.intValue ?? 1))
        var maps = [first]
        while maps.count < min(total, 10_000) { maps.append(try await management(0x05, nil, token: nil)) }
        return try maps.map { (map) throws(TokenMintError) -> ManagedCredential in
            guard let user = map[.unsigned(0x06)], let userID = user[.text("id")]?.bytesValue,
                let id = map[.unsigned(0x07)]?[.text("id")]?.bytesValue, let key = map[.unsigned(0x08)]
            else { throw TokenMintError(.fido.invalidResponse, "a credential without user, id or public key") }
            let publicKey: COSEKey
            do { publicKey = try COSEKey(cbor: CBOREncoder.encode(key)) } catch {
                throw TokenMintError(.fido.invalidResponse, "the credential's public key", underlying: error)
            }
            return ManagedCredential(credentialID: id, userID: userID, userName: user[.text("name")]?.textValue,
                                     userDisplayName: user[.text("displayName")]?.textValue, publicKey: publicKey,
                                     protection: map[.unsigned(0x0A)]?.intValue.flatMap { CredentialProtection(rawValue: Int($0)) },
                                     largeBlobKey: map[.unsigned(0x0B)]?.bytesValue.map { SecureBytes($0) })
        }
    }

    /// Deletes a discoverable credential.
    public func deleteCredential(_ credentialID: [UInt8], token: PINToken) async throws(TokenMintError) {
        _ = try await management(0x06, CTAPParameters.map([(0x02, Self.descriptor(credentialID))]), token: token)
    }

    /// Replaces a discoverable credential's user name and display name.
    public func updateUser(credentialID: [UInt8], userID: [UInt8], name: String, displayName: String?, token: PINToken) async throws(TokenMintError) {
        var user = [CBORMapEntry(key: .text("id"), value: .bytes(userID)), CBORMapEntry(key: .text("name"), value: .text(name))]
        if let displayName { user.append(CBORMapEntry(key: .text("displayName"), value: .text(displayName))) }
        let params = CTAPParameters.map([(0x02, Self.descriptor(credentialID)), (0x03, .map(user))])
        _ = try await management(0x07, params, token: token)
    }

    static func descriptor(_ id: [UInt8]) -> CBOR {
        .map([CBORMapEntry(key: .text("id"), value: .bytes(id)), CBORMapEntry(key: .text("type"), value: .text("public-key"))])
    }

    /// One credential management subcommand, authenticated with `token` when given.
    private func management(_ subCommand: UInt8, _ params: CBOR?, token: PINToken?) async throws(TokenMintError) -> CBOR {
        var entries: [(UInt64, CBOR)] = [(0x01, .unsigned(UInt64(subCommand)))]
        if let params { entries.append((0x02, params)) }
        if let token {
            entries.append((0x03, .unsigned(UInt64(token.version.rawValue))))
            entries.append((0x04, .bytes(try token.authenticate([subCommand] + (params.map { CBOREncoder.encode($0) } ?? [])))))
        }
        return try await call(.credentialManagement, entries)
    }
}
