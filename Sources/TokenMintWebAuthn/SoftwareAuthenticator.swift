public import TokenMintCore
public import TokenMintCrypto
public import TokenMintCBOR
public import TokenMintStore
import Foundation

/// A software FIDO2 authenticator: makeCredential, getAssertion,
/// getNextAssertion, getInfo and reset, with CTAP2 semantics and status
/// codes. TokenMintFIDO serves it over CTAP2 and CTAPHID, so that CTAP
/// clients (and TokenMint's own `FIDO2Session`) can drive it as a security key.
///
/// Every credential's private key is sealed in the store (resident or not):
/// the signature counter has to be stored per credential anyway, so a record
/// exists in either case, and keeping keys out of credential IDs means a
/// leaked ID reveals nothing even to a future attacker who breaks a wrapping
/// key. The counter is committed durably before a signature leaves; it never
/// decreases (or stays 0 under the synced-passkey policy).
public actor SoftwareAuthenticator {
    /// What the host is asked to confirm.
    public struct Request: Sendable {
        /// "makeCredential", "getAssertion", "reset" or "selection".
        public let operation: String
        /// The RP ID.
        public let rpID: String
        /// The user name, when known.
        public let userName: String?
    }

    /// How signature counters behave.
    public enum SignCountPolicy: Sendable {
        /// One counter per credential, incremented on every assertion.
        case perCredential
        /// Always 0, as synced passkeys report.
        case alwaysZero
    }

    /// Options of makeCredential.
    public struct MakeCredentialOptions: Sendable {
        /// Resident (discoverable) credential.
        public var residentKey: Bool
        /// User verification requested.
        public var userVerification: Bool
        /// Extension inputs.
        public var extensions: MakeCredentialExtensions
        /// The user was verified already, by the platform (a PIN/UV auth
        /// token the CTAP layer checked): UV is set without built-in verification.
        package var userVerifiedByPlatform = false
        /// Options.
        public init(residentKey: Bool = false, userVerification: Bool = false, extensions: MakeCredentialExtensions = .init()) {
            self.residentKey = residentKey
            self.userVerification = userVerification
            self.extensions = extensions
        }
    }

    /// Options of getAssertion.
    public struct GetAssertionOptions: Sendable {
        /// User presence requested (default true).
        public var userPresence: Bool
        /// User verification requested.
        public var userVerification: Bool
        /// Extension inputs.
        public var extensions: GetAssertionExtensions
        /// The user was verified already, by the platform (a PIN/UV auth
        /// token the CTAP layer checked): UV is set without built-in verification.
        package var userVerifiedByPlatform = false
        /// Options.
        public init(userPresence: Bool = true, userVerification: Bool = false, extensions: GetAssertionExtensions = .init()) {
            self.userPresence = userPresence
            self.userVerification = userVerification
            self.extensions = extensions
        }
    }

    /// The attestation to produce.
    public enum Attestation: String, Sendable {
        /// `fmt: "none"`.
        case none
        /// `fmt: "packed"`, self attestation (signed by the credential key).
        case packed
    }

    /// makeCredential's result, parsed.
    public struct MakeCredentialResponse: Sendable {
        /// The authenticator data.
        public let authenticatorData: AuthenticatorData
        /// "none" or "packed".
        public let format: String
        /// The attestation statement.
        public let attestationStatement: CBOR
        /// The WebAuthn attestation object.
        public let attestationObject: AttestationObject
        /// The new credential's large-blob key (largeBlobKey extension).
        public let largeBlobKey: SecureBytes?
        /// The hmac-secret-mc outputs in clear, for the client only.
        public let hmacSecret: SecureBytes?
        /// The new credential's ID.
        public var credentialID: [UInt8] { authenticatorData.attestedCredential?.credentialID ?? [] }
        /// The signed extension outputs.
        public var extensionOutputs: AuthenticatorExtensionOutputs {
            (try? AuthenticatorExtensionOutputs(authenticatorData.extensions, ceremony: .registration)) ?? AuthenticatorExtensionOutputs()
        }
    }

    /// getAssertion's result, parsed.
    public struct GetAssertionResponse: Sendable {
        /// The credential used.
        public let credentialID: [UInt8]
        /// The authenticator data.
        public let authenticatorData: AuthenticatorData
        /// The signature over authenticatorData ‖ clientDataHash.
        public let signature: [UInt8]
        /// The user handle (resident credentials).
        public let userHandle: [UInt8]?
        /// The user's name and display name: for discoverable credentials,
        /// only when the user was verified (CTAP 2.1 §6.2.2).
        public let user: (name: String, displayName: String?)?
        /// Credentials that matched (first response only).
        public let numberOfCredentials: Int
        /// The hmac-secret outputs in clear (32 or 64 bytes), for the client
        /// only: the authenticator data carries them encrypted.
        public let hmacSecret: SecureBytes?
        /// The credential's large-blob key (largeBlobKey extension).
        public let largeBlobKey: SecureBytes?
        /// The signed extension outputs.
        public var extensionOutputs: AuthenticatorExtensionOutputs {
            (try? AuthenticatorExtensionOutputs(authenticatorData.extensions, ceremony: .assertion)) ?? AuthenticatorExtensionOutputs()
        }
    }

    /// getInfo's result.
    public struct Info: Sendable {
        /// Protocol versions.
        public let versions: [String]
        /// The AAGUID.
        public let aaguid: [UInt8]
        /// Options: rk, up, uv, plat.
        public let options: [String: Bool]
        /// Supported algorithms.
        public let algorithms: [COSEAlgorithm]
        /// Supported extensions.
        public let extensions: [String]
        /// The largest credBlob kept.
        public let maxCredBlobLength: Int
    }

    /// The store credentials live in (the CTAP layer keeps its PIN there too).
    nonisolated package let store: any KeyValueStore
    /// The AAGUID.
    public let aaguid: [UInt8]
    /// Whether the authenticator verifies users itself (getInfo's `uv`).
    nonisolated public let supportsUserVerification: Bool
    let backupEligible: Bool
    let backupState: Bool
    let signCountPolicy: SignCountPolicy
    /// The default of ``maximumResidentCredentials``.
    public static let defaultMaximumResidentCredentials = 1000
    /// How many discoverable (resident) credentials this authenticator keeps,
    /// over every RP. A makeCredential with `residentKey` beyond it fails with
    /// `keyStoreFull` (CTAP2_ERR_KEY_STORE_FULL, 0x28) and stores nothing;
    /// credentials that are not resident are not capped. The count is kept in
    /// the store, changed in the transaction that adds a resident credential,
    /// and cleared by ``reset()``. Resident credentials made before the count
    /// existed (stores written by an older TokenMint) are not in it.
    nonisolated public let maximumResidentCredentials: Int
    /// The minimum PIN length the minPinLength extension reports.
    nonisolated public let minimumPINLength: Int
    /// The RP IDs the minPinLength extension reports to; others get no output.
    public let minPinLengthRPIDs: Set<String>
    /// nil: presence is always confirmed, with no call (and no hop off the actor).
    let confirmPresence: (@Sendable (Request) async -> Bool)?
    /// nil: built-in verification always succeeds, with no call.
    let verifyUser: (@Sendable (Request) async -> Bool)?
    private var pending: [(id: [UInt8], hash: [UInt8])] = []
    /// What the actor keeps of a credential it has read: its record, its
    /// counter's store name and, once it has signed, its opened key (each
    /// open costs a key derivation). The counters themselves are never cached.
    final class Known {
        /// The credential's record, as last stored.
        var record: Record
        /// The store name of its signature counter.
        let countName: String
        /// Its signing key, once opened.
        var signer: Signer?

        /// What is kept of credential `id`, whose record is `record`.
        init(_ record: Record, id: [UInt8]) {
            self.record = record
            self.countName = SoftwareAuthenticator.name("count", id)
        }
    }
    /// The credentials read so far, by ID: one lookup per assertion.
    private var known: [[UInt8]: Known] = [:]

    enum Signer {
        case ed25519(Ed25519.PrivateKey)
        case ecdsa(ECDSA.PrivateKey)

        func sign(_ message: [UInt8]) throws(TokenMintError) -> [UInt8] {
            switch self {
            case .ed25519(let key): return try key.signature(for: message)
            case .ecdsa(let key): return try key.signature(for: message).derRepresentation
            }
        }
    }
    private var pendingRP = ""

    /// A session over `store`. BE and BS are fixed for the authenticator's life.
    /// `confirmPresence` and `verifyUser` ask the user; without them every
    /// request is confirmed (a test or headless authenticator).
    public init(
        store: any KeyValueStore, aaguid: [UInt8] = [UInt8](repeating: 0, count: 16), supportsUserVerification: Bool = false,
        backupEligible: Bool = false, backupState: Bool = false, signCountPolicy: SignCountPolicy = .perCredential,
        maximumResidentCredentials: Int = SoftwareAuthenticator.defaultMaximumResidentCredentials,
        minimumPINLength: Int = 4, minPinLengthRPIDs: Set<String> = [],
        confirmPresence: (@Sendable (Request) async -> Bool)? = nil,
        verifyUser: (@Sendable (Request) async -> Bool)? = nil
    ) throws(TokenMintError) {
        guard aaguid.count == 16 else { throw TokenMintError(.webAuthn.invalidParameter, "an AAGUID is 16 bytes") }
        guard backupEligible || !backupState else { throw TokenMintError(.webAuthn.invalidParameter, "BS needs BE") }
        guard maximumResidentCredentials >= 1 else {
            throw TokenMintError(.webAuthn.invalidParameter, "maximumResidentCredentials must be at least 1")
        }
        guard (4...63).contains(minimumPINLength) else { throw TokenMintError(.webAuthn.invalidParameter, "minimumPINLength must be 4 to 63") }
        self.minimumPINLength = minimumPINLength
        self.minPinLengthRPIDs = minPinLengthRPIDs
        self.store = store
        self.aaguid = aaguid
        self.supportsUserVerification = supportsUserVerification
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.signCountPolicy = signCountPolicy
        self.maximumResidentCredentials = maximumResidentCredentials
        self.confirmPresence = confirmPresence
        self.verifyUser = verifyUser
    }

    /// getInfo.
    public func getInfo() -> Info {
        Info(versions: ["FIDO_2_0", "FIDO_2_1"], aaguid: aaguid,
             options: ["rk": true, "up": true, "uv": supportsUserVerification, "plat": false],
             algorithms: [.es256, .edDSA], extensions: SoftwareAuthenticator.supportedExtensions, maxCredBlobLength: SoftwareAuthenticator.maximumCredBlobLength)
    }

    struct Record: Codable {
        var rpID: String
        var userID: [UInt8]
        var userName: String
        /// The user's display name (nil in records written before it was kept).
        var userDisplayName: String?
        var algorithm: Int64
        var resident: Bool
        /// credProtect level (nil: 1).
        var credProtect: Int?
        /// Whether the credential has hmac-secret secrets.
        var hmacSecret: Bool?
        /// The credBlob.
        var credBlob: [UInt8]?
    }

    /// ``storeCall(_:)`` through the store's group commit: assertions
    /// running at the same moment share one commit (one fsync), each
    /// returning only after its own counter is durable.
    func groupedStoreCall<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T) async throws(TokenMintError) -> T {
        do { return try await store.groupedTransaction(body) } catch {
            throw TokenMintError.wrap(error, as: .webAuthn.other, "the credential store failed: \(error)")
        }
    }

    func storeCall<T>(_ body: (any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        do { return try store.transaction(body) } catch {
            throw TokenMintError.wrap(error, as: .webAuthn.other, "the credential store failed: \(error)")
        }
    }

    static func name(_ kind: String, _ id: [UInt8]) -> String { "fido2.\(kind).\(Base64URL.encode(id))" }
    static func rpIndex(_ rpID: String) -> String { "fido2.rp.\(Base64URL.encode(HashFunction.sha256.hash(Array(rpID.utf8))))" }
    /// The counter of resident credentials, over every RP.
    static let residentCountName = "fido2.residents"
    /// The RP IDs with resident credentials, in the order they were first seen.
    static let rpListName = "fido2.rps"

    /// makeCredential (CTAP2 authenticatorMakeCredential).
    public func makeCredential(
        clientDataHash: [UInt8], rp: (id: String, name: String?), user: (id: [UInt8], name: String, displayName: String?),
        pubKeyCredParams: [COSEAlgorithm], excludeList: [[UInt8]] = [], options: MakeCredentialOptions = MakeCredentialOptions(),
        attestation: Attestation = .none
    ) async throws(TokenMintError) -> MakeCredentialResponse {
        let algorithm = try checkArguments(clientDataHash: clientDataHash, rpID: rp.id, userID: user.id, userName: user.name,
                                           pubKeyCredParams: pubKeyCredParams, options: options)
        try checkExtensions(options.extensions, residentKey: options.residentKey)
        let request = Request(operation: "makeCredential", rpID: rp.id, userName: user.name)
        // CTAP 2.1 §6.1.2: user verification first; the exclude list is read with its outcome, then presence.
        let verified = options.userVerifiedByPlatform ? true : try await verify(request, asked: options.userVerification)
        try await checkExcludeList(excludeList, rpID: rp.id, request: request, verified: verified)
        guard await askUser(confirmPresence, request) else { throw TokenMintError(.webAuthn.operationDenied, "the user did not confirm presence") }
        if options.residentKey { try checkResidentCapacity(rpID: rp.id, userID: user.id) }
        let credentialID = SecureRandom.bytes(count: 32)
        let key = try makeKey(algorithm, credentialID: credentialID)
        let made = try makeExtensions(options.extensions, rpID: rp.id, credentialID: credentialID, verified: verified)
        let record = Record(rpID: rp.id, userID: user.id, userName: user.name, userDisplayName: user.displayName, algorithm: algorithm.rawValue, resident: options.residentKey,
                            credProtect: options.extensions.credProtect?.rawValue, hmacSecret: made.outputs.hmacSecret,
                            credBlob: made.outputs.credBlobStored == true ? options.extensions.credBlob : nil)
        try storeCredential(credentialID, seed: key.seed, record: record, secrets: made.secrets)
        let authData = newAuthenticatorData(rpID: rp.id, verified: verified, credentialID: credentialID, publicKey: key.publicKey,
                                            extensions: made.outputs.cbor)
        let statement = try SoftwareAuthenticator.attestationStatement(attestation, algorithm: algorithm, authData: authData,
                                                              clientDataHash: clientDataHash, key: key)
        let object = AttestationObject(format: attestation.rawValue, statement: statement, authenticatorData: authData)
        return MakeCredentialResponse(authenticatorData: authData, format: attestation.rawValue, attestationStatement: statement,
                                      attestationObject: object, largeBlobKey: made.largeBlobKey, hmacSecret: made.hmacSecret)
    }

    /// A new credential's key: its COSE public key, the EdDSA seed still to be
    /// stored with the record (an ES256 scalar is stored as it is made), and
    /// how it signs the packed self attestation.
    private struct NewKey {
        let publicKey: COSEKey
        let seed: SecureBytes?
        let sign: (UnsafeRawBufferPointer) throws(TokenMintError) -> [UInt8]
    }

    /// makeCredential's argument checks; returns the first algorithm of
    /// `pubKeyCredParams` this authenticator makes.
    private func checkArguments(
        clientDataHash: [UInt8], rpID: String, userID: [UInt8], userName: String, pubKeyCredParams: [COSEAlgorithm],
        options: MakeCredentialOptions
    ) throws(TokenMintError) -> COSEAlgorithm {
        guard clientDataHash.count == 32 else { throw TokenMintError(.webAuthn.invalidParameter, "clientDataHash must be 32 bytes") }
        guard !rpID.isEmpty, rpID.utf8.count <= 253, (1...64).contains(userID.count), userName.utf8.count <= 256 else {
            throw TokenMintError(.webAuthn.invalidParameter, "rp id, user id (1–64 bytes) or user name out of range")
        }
        guard let algorithm = pubKeyCredParams.first(where: { $0 == .es256 || $0 == .edDSA }) else {
            throw TokenMintError(.webAuthn.unsupportedAlgorithm, "only ES256 and EdDSA credentials are made")
        }
        if options.userVerification && !supportsUserVerification {
            throw TokenMintError(.webAuthn.unsupportedOption, "this authenticator has no user verification")
        }
        return algorithm
    }

    /// Throws `credentialExcluded` (after asking for presence, as CTAP2 does)
    /// when a credential of the exclude list is on this authenticator for
    /// `rpID`; one whose credProtect requires UV is passed over without UV.
    private func checkExcludeList(_ excludeList: [[UInt8]], rpID: String, request: Request, verified: Bool) async throws(TokenMintError) {
        for id in excludeList where (try? storeCall({ tx in try tx.value(SoftwareAuthenticator.name("meta", id)) })).flatMap({ $0 }) != nil {
            if let record = try? loadRecord(id), record.rpID == rpID, SoftwareAuthenticator.usable(record, verified: verified, discoverable: false) {
                _ = await askUser(confirmPresence, request)
                throw TokenMintError(.webAuthn.credentialExcluded, "a credential in the exclude list is on this authenticator")
            }
        }
    }

    /// Told when the authenticator starts (true) and stops (false) waiting
    /// for the user, for presence or verification: a CTAPHID device sends
    /// KEEPALIVE with status UPNEEDED meanwhile. One observer at a time.
    private var userInteractionObserver: (@Sendable (Bool) -> Void)?

    /// Sets (or, with nil, removes) the observer of waits for the user.
    public func observeUserInteraction(_ observer: (@Sendable (Bool) -> Void)?) { userInteractionObserver = observer }

    /// Asks the user through `callback`; a cancelled task (CTAPHID CANCEL)
    /// counts as a refusal, so nothing is stored for it.
    private func askUser(_ callback: (@Sendable (Request) async -> Bool)?, _ request: Request) async -> Bool {
        let observer = userInteractionObserver
        observer?(true)
        defer { observer?(false) }
        // Without a callback the answer is yes, on the actor: no hop off it.
        let answer = if let callback { await callback(request) } else { true }
        return answer && !Task.isCancelled
    }

    /// Verifies the user when asked; returns whether the user was verified.
    ///
    /// Each attempt spends one of the built-in retries before the user is
    /// asked, committed first, and a success gives it back: killing the
    /// process during an attempt wastes a retry, never grants one. With none
    /// left, built-in verification is blocked (`userVerificationBlocked`)
    /// until a correct PIN or a reset.
    private func verify(_ request: Request, asked: Bool) async throws(TokenMintError) -> Bool {
        guard asked else { return false }
        let spent = try storeCall { tx -> Int64? in
            guard try tx.counter(SoftwareAuthenticator.userVerificationFailuresName) < SoftwareAuthenticator.maximumUserVerificationRetries else { return nil }
            return try tx.increment(SoftwareAuthenticator.userVerificationFailuresName, by: 1)
        }
        guard let spent else { throw TokenMintError(.webAuthn.userVerificationBlocked, "built-in user verification is blocked: use the PIN") }
        guard await askUser(verifyUser, request) else {
            if spent >= SoftwareAuthenticator.maximumUserVerificationRetries {
                throw TokenMintError(.webAuthn.userVerificationBlocked, "user verification failed; it is now blocked: use the PIN")
            }
            throw TokenMintError(.webAuthn.operationDenied, "user verification failed")
        }
        try storeCall { tx in try tx.setCounter(SoftwareAuthenticator.userVerificationFailuresName, 0) }
        return true
    }

    /// Makes the credential's key. An ES256 scalar is stored at once, under
    /// the credential's key name; an EdDSA seed is returned to be stored with the record.
    private func makeKey(_ algorithm: COSEAlgorithm, credentialID: [UInt8]) throws(TokenMintError) -> NewKey {
        do {
            if algorithm == .edDSA {
                let seed = SecureBytes(randomCount: 32)
                let key = try Ed25519.PrivateKey(rawRepresentation: seed)
                return NewKey(publicKey: COSEKey(key.publicKey), seed: seed, sign: { (m) throws(TokenMintError) in key.signature(for: m) })
            }
            let key = try ECDSA.PrivateKey(curve: .p256)
            let publicKey = try COSEKey(key.publicKey)
            let scalar = try key.rawRepresentation
            try storeCall { tx in try tx.setSecret(SoftwareAuthenticator.name("key", credentialID), scalar) }
            return NewKey(publicKey: publicKey, seed: nil, sign: { (m) throws(TokenMintError) in try key.signature(for: m).derRepresentation })
        } catch { throw TokenMintError.wrap(error, as: .webAuthn.other, "key generation failed: \(error)") }
    }

    /// Stores a new credential in one transaction, committed before
    /// makeCredential returns: the EdDSA seed, the record, the counter at 0
    /// and, for a resident credential, its place in the RP's index and the
    /// resident count (capped, see ``maximumResidentCredentials``).
    private func storeCredential(_ credentialID: [UInt8], seed: SecureBytes?, record: Record, secrets: [(String, SecureBytes)])
        throws(TokenMintError)
    {
        guard let recordData = try? JSONEncoder().encode(record) else { throw TokenMintError(.webAuthn.other, "cannot encode the credential record") }
        let cap = Int64(maximumResidentCredentials)
        let replaced = try storeCall { tx -> [[UInt8]] in
            if let seed { try tx.setSecret(SoftwareAuthenticator.name("key", credentialID), seed) }
            for (name, secret) in secrets { try tx.setSecret(name, secret) }
            try tx.setValue(SoftwareAuthenticator.name("meta", credentialID), Array(recordData))
            try tx.setCounter(SoftwareAuthenticator.name("count", credentialID), 0)
            guard record.resident else { return [] }
            return try SoftwareAuthenticator.addResident(credentialID, rpID: record.rpID, userID: record.userID, cap: cap, in: tx)
        }
        for id in replaced { forget(id) }
    }

    /// Appends a resident credential to its RP's index and counts it, in the
    /// caller's transaction, replacing the RP's resident credential for the
    /// same user handle (CTAP 2.1 §6.1.2: one discoverable credential per
    /// RP and user); throws `keyStoreFull` when `cap` are kept already.
    /// Returns the IDs of the credentials it replaced, now deleted.
    static func addResident(_ credentialID: [UInt8], rpID: String, userID: [UInt8], cap: Int64, in tx: any StoreTransaction) throws -> [[UInt8]] {
        let index = SoftwareAuthenticator.rpIndex(rpID)
        var ids = try residentIDs(rpID, in: tx)
        var replaced: [[UInt8]] = []
        for id in ids {
            guard let data = try tx.value(name("meta", id)), let old = try? JSONDecoder().decode(Record.self, from: Data(data)),
                old.userID == userID
            else { continue }
            for kind in ["meta", "key", "hmac", "lbk"] { try tx.remove(name(kind, id)) }
            replaced.append(id)
        }
        ids.removeAll { replaced.contains($0) }
        let total = max(0, try tx.counter(SoftwareAuthenticator.residentCountName) - Int64(replaced.count))
        guard total < cap else { throw SoftwareAuthenticator.keyStoreFull(cap) }
        ids.append(credentialID)
        try tx.setValue(index, Array(try JSONEncoder().encode(ids)))
        try tx.setCounter(SoftwareAuthenticator.residentCountName, total + 1)
        var rps = try relyingParties(in: tx)
        if !rps.contains(rpID) {
            rps.append(rpID)
            try tx.setValue(rpListName, Array(try JSONEncoder().encode(rps)))
        }
        return replaced
    }

    /// Fails early, before a key is made or stored, when no resident
    /// credential may be added; the transaction that adds one checks again.
    /// (A credential that will replace the user's old one always fits.)
    private func checkResidentCapacity(rpID: String, userID: [UInt8]) throws(TokenMintError) {
        let cap = Int64(maximumResidentCredentials)
        let total = try storeCall { tx in try tx.counter(SoftwareAuthenticator.residentCountName) }
        guard total >= cap else { return }
        for id in try residentIDs(rpID) where (try? loadRecord(id))??.userID == userID { return }
        throw SoftwareAuthenticator.keyStoreFull(cap)
    }

    /// The error for a resident credential beyond `cap`.
    static func keyStoreFull(_ cap: Int64) -> TokenMintError {
        TokenMintError(.webAuthn.keyStoreFull, "the authenticator keeps \(cap) resident credentials, its maximum")
    }

    /// The authenticator data of a new credential: UP, UV when verified, BE and BS as configured, signCount 0.
    private func newAuthenticatorData(rpID: String, verified: Bool, credentialID: [UInt8], publicKey: COSEKey, extensions: CBOR?)
        -> AuthenticatorData
    {
        var flags: AuthenticatorData.Flags = [.userPresent]
        if verified { flags.insert(.userVerified) }
        if backupEligible { flags.insert(.backupEligible) }
        if backupState { flags.insert(.backupState) }
        return AuthenticatorData(rpID: rpID, flags: flags, signCount: 0,
                                 attestedCredential: .init(aaguid: aaguid, credentialID: credentialID, publicKey: publicKey),
                                 extensions: extensions)
    }

    /// The attestation statement: empty for "none"; for "packed", the
    /// credential key's self signature over authenticatorData ‖ clientDataHash.
    private static func attestationStatement(
        _ attestation: Attestation, algorithm: COSEAlgorithm, authData: AuthenticatorData, clientDataHash: [UInt8], key: NewKey
    ) throws(TokenMintError) -> CBOR {
        switch attestation {
        case .none:
            return .map([])
        case .packed:
            let signature: [UInt8]
            do { signature = try (authData.bytes + clientDataHash).withUnsafeBytes { (m) throws(TokenMintError) in try key.sign(m) } } catch {
                throw TokenMintError(.webAuthn.other, "attestation signing failed", underlying: error)
            }
            return .map([
                CBORMapEntry(key: .text("alg"), value: .int(algorithm.rawValue)),
                CBORMapEntry(key: .text("sig"), value: .bytes(signature)),
            ])
        }
    }

    private var rpHashes: [String: [UInt8]] = [:]

    func rpIDHash(_ rpID: String) -> [UInt8] {
        if let hash = rpHashes[rpID] { return hash }
        let hash = HashFunction.sha256.hash(Array(rpID.utf8))
        if rpHashes.count < 64 { rpHashes[rpID] = hash }
        return hash
    }

    func loadRecord(_ id: [UInt8]) throws(TokenMintError) -> Record? { try load(id)?.record }

    /// The credential `id` as the actor keeps it, read from the store the first time.
    func load(_ id: [UInt8]) throws(TokenMintError) -> Known? {
        if let cached = known[id] { return cached }
        guard let data = try storeCall({ tx in try tx.value(SoftwareAuthenticator.name("meta", id)) }) else { return nil }
        guard let record = try? JSONDecoder().decode(Record.self, from: Data(data)) else { throw TokenMintError(.webAuthn.other, "damaged credential record") }
        let loaded = Known(record, id: id)
        known[id] = loaded
        return loaded
    }

    /// Keeps `record` as credential `id`'s, after it was stored.
    func replaceRecord(_ id: [UInt8], with record: Record) {
        if let cached = known[id] { cached.record = record }
    }

    /// Forgets what the actor keeps of credential `id` (its record and key).
    func forget(_ id: [UInt8]) {
        known[id] = nil
        forgotten &+= 1
    }

    /// Counts what was forgotten (deletes, replacements, resets): an entry
    /// read before a wait is checked again only when this moved meanwhile.
    private var forgotten = 0

    /// getAssertion (CTAP2 authenticatorGetAssertion). With an empty allow
    /// list, the RP's resident credentials are used (newest first).
    public func getAssertion(
        clientDataHash: [UInt8], rpID: String, allowList: [[UInt8]] = [], options: GetAssertionOptions = GetAssertionOptions()
    ) async throws(TokenMintError) -> GetAssertionResponse {
        guard clientDataHash.count == 32 else { throw TokenMintError(.webAuthn.invalidParameter, "clientDataHash must be 32 bytes") }
        // uv:false is always accepted (YubiKit #46); uv:true needs UV support.
        if options.userVerification && !supportsUserVerification {
            throw TokenMintError(.webAuthn.unsupportedOption, "this authenticator has no user verification")
        }
        // A new getAssertion ends the last one's getNextAssertion, whatever happens to it.
        pending = []
        let request = Request(operation: "getAssertion", rpID: rpID, userName: nil)
        // CTAP 2.1 §6.2.2: user verification before the credentials are looked up, so that
        // credProtect filters on what was verified, not on what was asked.
        let verified = options.userVerifiedByPlatform ? true : try await verify(request, asked: options.userVerification)
        // credProtect: a credential that needs UV, or an allow list without UV, is not a candidate.
        // The first candidate and its record go on to assert, which need not
        // look it up again; the others wait for getNextAssertion.
        var first: (id: [UInt8], credential: Known)?
        var others: [[UInt8]] = []
        func consider(_ id: [UInt8], _ credential: Known) {
            if first == nil { first = (id, credential) } else { others.append(id) }
        }
        if allowList.isEmpty {
            for id in try residentIDs(rpID).reversed() {
                if let credential = try load(id), SoftwareAuthenticator.usable(credential.record, verified: verified, discoverable: true) {
                    consider(id, credential)
                }
            }
        } else {
            for id in allowList where id.count <= 1023 {
                if let credential = try load(id), credential.record.rpID == rpID,
                    SoftwareAuthenticator.usable(credential.record, verified: verified, discoverable: false)
                {
                    consider(id, credential)
                }
            }
        }
        guard let first else { throw TokenMintError(.webAuthn.noCredentials, "no credential for \(rpID)") }
        let readAt = forgotten
        var flags: AuthenticatorData.Flags = verified ? [.userVerified] : []
        if options.userPresence {
            guard await askUser(confirmPresence, request) else { throw TokenMintError(.webAuthn.operationDenied, "the user did not confirm presence") }
            flags.insert(.userPresent)
        }
        // Always set: another getAssertion may have left its own while the user was asked.
        pending = others.map { (id: $0, hash: clientDataHash) }
        if !others.isEmpty {
            pendingDeadline = ContinuousClock.now + SoftwareAuthenticator.nextAssertionWindow
            pendingRP = rpID
        }
        lastExtensions = options.extensions.isEmpty ? nil : options.extensions
        return try await assert(first.id, credential: first.credential, readAt: readAt, clientDataHash: clientDataHash, rpID: rpID, flags: flags, count: 1 + others.count,
                                discoverable: allowList.isEmpty)
    }

    /// How long getNextAssertion may follow its getAssertion (CTAP 2.1 §6.3: 30 s).
    public static let nextAssertionWindow: Duration = .seconds(30)
    private var pendingDeadline = ContinuousClock.now

    /// Ends the last getAssertion's getNextAssertion sequence: CTAP 2.1
    /// §6.3 discards it when any other command arrives.
    public func discardPendingAssertions() { pending = [] }

    /// How many failed built-in user verifications in a row block it
    /// (CTAP 2.1's uvRetries, reported by getUVRetries).
    public static let maximumUserVerificationRetries: Int64 = 8
    static let userVerificationFailuresName = "fido2.uv.failures"

    /// Built-in user verification attempts left before it is blocked.
    public func userVerificationRetries() throws(TokenMintError) -> Int64 {
        let failures = try storeCall { tx in try tx.counter(SoftwareAuthenticator.userVerificationFailuresName) }
        return max(0, SoftwareAuthenticator.maximumUserVerificationRetries - failures)
    }

    /// Gives back every built-in verification retry, as a correct PIN does
    /// (CTAP 2.1 §6.5.5.7); nothing is written when none was spent.
    public func restoreUserVerificationRetries() throws(TokenMintError) {
        try storeCall { tx in
            if try tx.counter(SoftwareAuthenticator.userVerificationFailuresName) != 0 {
                try tx.setCounter(SoftwareAuthenticator.userVerificationFailuresName, 0)
            }
        }
    }

    /// Asks for built-in user verification, as
    /// getPinUvAuthTokenUsingUvWithPermissions does; throws
    /// `unsupportedOption` without it and `operationDenied` when it fails.
    public func confirmUserVerification(for operation: String, rpID: String?) async throws(TokenMintError) {
        guard supportsUserVerification else { throw TokenMintError(.webAuthn.unsupportedOption, "this authenticator has no user verification") }
        _ = try await verify(Request(operation: operation, rpID: rpID ?? "", userName: nil), asked: true)
    }

    /// Asks for the user's presence, as authenticatorReset and
    /// authenticatorSelection do; throws `operationDenied` when refused.
    public func confirmUserPresence(for operation: String) async throws(TokenMintError) {
        guard await askUser(confirmPresence, Request(operation: operation, rpID: "", userName: nil)) else {
            throw TokenMintError(.webAuthn.operationDenied, "the user did not confirm presence")
        }
    }

    var lastFlags: AuthenticatorData.Flags = [.userPresent]
    /// The last getAssertion's extension inputs, for its getNextAssertion; nil: none.
    var lastExtensions: GetAssertionExtensions?
    var lastDiscoverable = false

    /// getNextAssertion: the next resident credential of the last getAssertion.
    public func getNextAssertion() async throws(TokenMintError) -> GetAssertionResponse {
        if ContinuousClock.now > pendingDeadline { pending = [] }
        guard !pending.isEmpty else { throw TokenMintError(.webAuthn.notAllowed, "no getAssertion is pending") }
        let next = pending.removeFirst()
        return try await assert(next.id, clientDataHash: next.hash, rpID: pendingRP, flags: lastFlags, count: 0, discoverable: lastDiscoverable)
    }

    /// Signs one assertion with credential `id`; `credential` is what the
    /// actor keeps of it when the caller has just read it.
    func assert(_ id: [UInt8], credential given: Known? = nil, readAt: Int = 0, clientDataHash: [UInt8], rpID: String,
                flags: AuthenticatorData.Flags, count: Int, discoverable: Bool) async throws(TokenMintError) -> GetAssertionResponse
    {
        lastFlags = flags
        lastDiscoverable = discoverable
        let credential: Known
        if let given {
            credential = given
        } else {
            guard let loaded = try load(id) else { throw TokenMintError(.webAuthn.invalidCredential, "the credential vanished") }
            credential = loaded
        }
        let record = credential.record
        var allFlags = flags
        if backupEligible { allFlags.insert(.backupEligible) }
        if backupState { allFlags.insert(.backupState) }
        // The credential may have been deleted, replaced or reset away while
        // the user was asked (getAssertion read it before, at `readAt`): then
        // no counter is spent and nothing is signed.
        if given != nil, forgotten != readAt, known[id] !== credential {
            throw TokenMintError(.webAuthn.invalidCredential, "the credential vanished")
        }
        let forgottenBefore = forgotten
        // The counter is committed before the signature is made, in a
        // commit shared with the assertions running at the same moment. What
        // the actor holds for this assertion is read before the wait.
        let cached = credential.signer
        let requested = lastExtensions
        let alwaysZero = signCountPolicy == .alwaysZero
        let countName = credential.countName
        let seed: SecureBytes?, counter: Int64
        if cached != nil {
            // The common case: the key is open, and only the counter is committed.
            seed = nil
            counter = alwaysZero ? 0 : try await groupedStoreCall { tx in try tx.increment(countName, by: 1) }
        } else {
            (seed, counter) = try await groupedStoreCall { tx -> (SecureBytes?, Int64) in
                (try tx.secret(SoftwareAuthenticator.name("key", id)), alwaysZero ? 0 : try tx.increment(countName, by: 1))
            }
        }
        // Deleted, replaced or reset away during the commit: nothing is signed.
        if forgotten != forgottenBefore, known[id] !== credential {
            throw TokenMintError(.webAuthn.invalidCredential, "the credential was deleted, or the authenticator reset, during the assertion")
        }
        guard counter <= Int64(UInt32.max) else { throw TokenMintError(.webAuthn.invalidCredential, "the signature counter is exhausted") }
        let signer: Signer
        if let cached {
            signer = cached
        } else {
            guard let seed else { throw TokenMintError(.webAuthn.invalidCredential, "the credential key is missing") }
            do {
                signer = record.algorithm == COSEAlgorithm.edDSA.rawValue
                    ? .ed25519(try Ed25519.PrivateKey(rawRepresentation: seed))
                    : .ecdsa(try ECDSA.PrivateKey(rawRepresentation: seed, curve: .p256))
            } catch { throw TokenMintError(.webAuthn.other, "the credential key does not open", underlying: error) }
            credential.signer = signer
        }
        var extensionData: CBOR?, hmacSecret: SecureBytes?, largeBlobKey: SecureBytes?
        if let requested {
            let extensions = try assertionExtensions(requested, id: id, record: record, verified: flags.contains(.userVerified))
            (extensionData, hmacSecret, largeBlobKey) = (extensions.outputs.cbor, extensions.hmacSecret, extensions.largeBlobKey)
        }
        let authData = AuthenticatorData(rpIDHash: rpIDHash(rpID), flags: allFlags, signCount: UInt32(counter), extensions: extensionData)
        var message = [UInt8]()
        message.reserveCapacity(authData.bytes.count + clientDataHash.count)
        message += authData.bytes
        message += clientDataHash
        let signature: [UInt8]
        do { signature = try signer.sign(message) } catch { throw TokenMintError(.webAuthn.other, "signing failed", underlying: error) }
        let identifiable = discoverable && flags.contains(.userVerified)
        return GetAssertionResponse(credentialID: id, authenticatorData: authData, signature: signature,
                                    userHandle: record.resident || discoverable ? record.userID : nil,
                                    user: identifiable ? (record.userName, record.userDisplayName) : nil, numberOfCredentials: count,
                                    hmacSecret: hmacSecret, largeBlobKey: largeBlobKey)
    }

    /// Removes every credential.
    public func reset() throws(TokenMintError) {
        do { try store.reset() } catch { throw TokenMintError(.webAuthn.other, "reset failed: \(error)", underlying: error) }
        pending = []
        lastExtensions = nil
        known = [:]
        forgotten &+= 1
    }
}
