public import TokenMintCore
import TokenMintCrypto
public import TokenMintStore
import Foundation
import Logging

/// The WhitelabelPay device SDK surface on Linux: enrolment, payment means,
/// payment tokens online and offline within a durable quota, monitoring,
/// push handling, reset and log export.
///
/// An actor: every call is serialized; the quota lives in the store, so it
/// also holds across processes sharing the store.
public actor WhitelabelPay {
    /// The configuration.
    public let configuration: WhitelabelPayConfiguration
    let store: any KeyValueStore
    let backend: any WhitelabelPayBackend
    let clock: WhitelabelPayClock
    let logger: Logger
    let logFile: String?
    private var monitor: Task<Void, Never>?
    private var pushListener: Task<Void, Never>?
    private var monitorContinuation: AsyncStream<WhitelabelPayUpdate>.Continuation?
    private var currentToken: PaymentToken?
    /// Bumped by ``reset()``: a mint that waited across a reset (its commit
    /// or its signature) keeps nothing of the wiped device in the actor.
    private var generation = 0
    /// Mints in start order; `currentToken` only moves forward.
    private var mintsStarted = 0
    private var currentTokenMint = 0
    // Read-through caches of what only this instance writes (the quota
    // counters are never cached: they are read inside each minting transaction).
    private var cachedKey: Ed25519.PrivateKey?
    private var cachedMeans: [PaymentMeans]?
    private var cachedState: WhitelabelPayState?

    enum Name {
        static let deviceKey = "pay.deviceKey"
        static let device = "pay.device"
    }

    /// Everything the SDK keeps besides the device key, in one record sealed
    /// with the master key (XChaCha20-Poly1305, bound to its name) and bound
    /// to the store's identity and to the device key: the offline count, the
    /// sequence, the limit and the payment means can only change together,
    /// through the SDK. An edited, corrupted, moved or deleted record, or one
    /// that does not match the device key beside it, is `tampered`.
    struct DeviceRecord: Equatable {
        var store: String
        var environment: String
        var state = WhitelabelPayState.inactive.rawValue
        var deviceKey: String?
        var online = true
        var serverOffset: Int64 = 0
        var offlineMinted: Int64 = 0
        var offlineSequence: Int64 = 0
        var offlineLimit: Int
        var wasted: Int64 = 0
        var means: [PaymentMeans] = []
        /// The last counter value of the server's latest offline grant (0:
        /// no server grants; the quota alone bounds offline minting).
        var grantEnd: Int64 = 0
        /// The last moment a token of that grant may be dated.
        var grantNotAfter: Int64 = 0
        /// The last push event received from the server's stream.
        var lastEventID: Int64 = 0
    }

    /// Opens the SDK over `store`.
    /// - Throws: `invalidConfiguration` when the store was set up for another
    ///   environment (call ``reset()`` first), `storeFailure` when the store fails.
    public init(
        configuration: WhitelabelPayConfiguration, store: any KeyValueStore, backend: any WhitelabelPayBackend,
        clock: WhitelabelPayClock = .system, logDirectory: String? = nil
    ) throws(TokenMintError) {
        self.configuration = configuration
        self.store = store
        self.backend = backend
        self.clock = clock
        let file = configuration.debug ? logDirectory.map { $0 + "/tokenmint-pay.log" } : nil
        self.logFile = file
        var logger = Logger(label: "tokenmint.pay") { _ in
            file.map { RotatingFileLogHandler(path: $0) as any LogHandler } ?? SwiftLogNoOpLogHandler()
        }
        logger.logLevel = configuration.debug ? .debug : .critical
        self.logger = logger
        try WhitelabelPay.storeCall(store) { tx in
            let stored = try WhitelabelPay.loadRecord(tx, store: store)
            var record = try stored ?? WhitelabelPay.currentRecord(tx, store: store, configuration: configuration)
            if record.environment != configuration.environment.rawValue {
                throw TokenMintError(.pay.invalidConfiguration,
                    "the store belongs to the \(record.environment) environment; reset() before switching to \(configuration.environment.rawValue)")
            }
            // Written only when new or changed: a store on read-only media still opens.
            record.offlineLimit = configuration.offlineTokenLimit
            if record != stored { try WhitelabelPay.saveRecord(record, tx) }
        }
        logger.info("opened", metadata: ["environment": "\(configuration.environment.rawValue)"])
    }

    /// Runs a store transaction, turning store failures into `storeFailure`.
    static func storeCall<T>(_ store: any KeyValueStore, _ body: (any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        do {
            return try store.transaction(body)
        } catch {
            throw TokenMintError.wrap(error, as: .pay.storeFailure, "\(error)")
        }
    }

    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        try WhitelabelPay.storeCall(store, body)
    }

    /// The store's identity as the record carries it.
    static func identity(of store: any KeyValueStore) throws -> String {
        Base64URL.encode(try store.identity)
    }

    /// Opens and checks the sealed device record; nil in a new store.
    static func loadRecord(_ tx: any StoreTransaction, store: any KeyValueStore) throws -> DeviceRecord? {
        let sealed: SecureBytes?
        do { sealed = try tx.secret(Name.device) } catch {
            throw TokenMintError(.pay.tampered, "the device state does not open with the master key: it was edited or damaged", underlying: error)
        }
        guard let sealed else { return nil }
        guard let record = sealed.withUnsafeBytes({ DeviceRecord(encoded: $0) }) else {
            throw TokenMintError(.pay.tampered, "the device state is unreadable")
        }
        guard record.store == (try identity(of: store)) else {
            throw TokenMintError(.pay.tampered, "the device state belongs to another store")
        }
        guard record.offlineMinted >= 0, record.offlineSequence >= record.offlineMinted || record.offlineSequence >= 0,
            record.offlineLimit >= 0, record.wasted >= 0, record.grantEnd >= 0, record.lastEventID >= 0,
            WhitelabelPayState(rawValue: record.state) != nil
        else { throw TokenMintError(.pay.tampered, "the device state holds impossible values") }
        return record
    }

    /// The record, or a new one for a new (or reset) store: one without a
    /// device key. A device key without its record means the record was removed.
    static func currentRecord(_ tx: any StoreTransaction, store: any KeyValueStore, configuration: WhitelabelPayConfiguration) throws -> DeviceRecord {
        if let record = try loadRecord(tx, store: store) { return record }
        guard try tx.secret(Name.deviceKey) == nil else {
            throw TokenMintError(.pay.tampered, "the device state is missing beside an existing device key")
        }
        return DeviceRecord(store: try identity(of: store), environment: configuration.environment.rawValue,
                            offlineLimit: configuration.offlineTokenLimit)
    }

    static func saveRecord(_ record: DeviceRecord, _ tx: any StoreTransaction) throws {
        try tx.setSecret(Name.device, SecureBytes(record.encoded))
    }

    /// Reads the record in a transaction of its own.
    func record() throws(TokenMintError) -> DeviceRecord {
        let (store, configuration) = (self.store, self.configuration)
        return try transaction { tx in try WhitelabelPay.currentRecord(tx, store: store, configuration: configuration) }
    }

    /// Changes the record in one transaction; `body` may also use the
    /// transaction. The record is written only when `body` changed it.
    func update<T>(_ body: (inout DeviceRecord, any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        let (store, configuration) = (self.store, self.configuration)
        return try transaction { tx in
            let stored = try WhitelabelPay.loadRecord(tx, store: store)
            var record = try stored ?? WhitelabelPay.currentRecord(tx, store: store, configuration: configuration)
            let result = try body(&record, tx)
            if record != stored { try WhitelabelPay.saveRecord(record, tx) }
            return result
        }
    }

    /// ``update(_:)`` through the store's group commit: mints running at
    /// the same moment share one commit (one fsync), each returning only
    /// after its own slot is durable. The body runs on the store's
    /// committing thread, so it uses only what it is given.
    func groupedUpdate<T: Sendable>(
        _ body: @escaping @Sendable (inout DeviceRecord, any StoreTransaction) throws -> T
    ) async throws(TokenMintError) -> T {
        let (store, configuration) = (self.store, self.configuration)
        do {
            return try await store.groupedTransaction { tx in
                let stored = try WhitelabelPay.loadRecord(tx, store: store)
                var record = try stored ?? WhitelabelPay.currentRecord(tx, store: store, configuration: configuration)
                let result = try body(&record, tx)
                if record != stored { try WhitelabelPay.saveRecord(record, tx) }
                return result
            }
        } catch {
            throw TokenMintError.wrap(error, as: .pay.storeFailure, "\(error)")
        }
    }

    // MARK: State

    /// The enrolment state.
    public var state: WhitelabelPayState {
        get throws(TokenMintError) {
            if let cachedState { return cachedState }
            let state = WhitelabelPayState(rawValue: try record().state) ?? .inactive
            cachedState = state
            return state
        }
    }

    func setState(_ state: WhitelabelPayState) throws(TokenMintError) {
        try update { record, _ in record.state = state.rawValue }
        cachedState = state
        monitorContinuation?.yield(.stateChanged(state))
        logger.info("state", metadata: ["state": "\(state.rawValue)"])
    }

    /// The current time as the server sees it: the local clock corrected by
    /// the offset learned at the last sync.
    public var serverTime: Int64 {
        get throws(TokenMintError) {
            TimeArithmetic.adding(clock.now(), try record().serverOffset)
        }
    }

    /// Stores the offset of the server's clock and returns it.
    @discardableResult
    func learnServerTime(_ serverTime: Int64) throws(TokenMintError) -> Int64 {
        let offset = TimeArithmetic.subtracting(serverTime, clock.now())
        try update { record, _ in record.serverOffset = offset }
        return offset
    }

    // MARK: Enrolment

    /// The device's enrolment token. The device key is created on first use,
    /// sealed in the store and reused; the token is the same every time. When
    /// the device is not enrolled yet, the backend is told and the state
    /// moves to `activating`.
    public func getEnrolmentToken() async throws(TokenMintError) -> EnrolmentToken {
        let key = try update { record, tx -> Ed25519.PrivateKey in
            if let existing = try tx.secret(Name.deviceKey) { return try WhitelabelPay.checkedKey(existing, record) }
            guard record.deviceKey == nil else { throw TokenMintError(.pay.tampered, "the device key was removed") }
            let seed = SecureBytes(randomCount: 32)
            let key = try WhitelabelPay.makeKey(seed)
            try tx.setSecret(Name.deviceKey, seed)
            record.deviceKey = Base64URL.encode(key.publicKey.rawRepresentation)
            return key
        }
        let device = self.device(key)
        let token = device.enrolmentToken
        let current = try state
        if current == .inactive || current == .onboarding {
            if current == .inactive { try setState(.onboarding) }
            // No network: the token is still the device's, shown at once; the
            // registration is retried by the next call.
            let serverTime: Int64
            do {
                serverTime = try await backendCall(.pay.enrollmentError, "the backend refused the enrolment") { try await backend.enrol(token, device: device) }
            } catch where error.code == .pay.backendUnreachable {
                logger.info("enrolment registration deferred: backend unreachable")
                return token
            }
            try learnServerTime(serverTime)
            try setState(.activating)
        }
        return token
    }

    /// The device as the backend sees it. Its request JWTs are dated by the
    /// server's time as last learned, so a device whose own clock is off
    /// still authenticates (and can sync to learn the offset anew).
    func device(_ key: Ed25519.PrivateKey) -> WhitelabelPayDevice {
        let (base, offset) = (clock, (try? record().serverOffset) ?? 0)
        return WhitelabelPayDevice(
            enrolmentToken: EnrolmentToken(tenant: configuration.tenantID, publicKey: key.publicKey, referenceID: configuration.referenceID),
            key: key, authorizedParty: configuration.authorizedParty, clock: WhitelabelPayClock { TimeArithmetic.adding(base.now(), offset) })
    }

    /// The device's subject ID at the backend (derived from its enrolment
    /// token: the server and the device agree on it without a round trip).
    /// - Throws: `deviceNotEnrolled` before ``getEnrolmentToken()``.
    public var subjectId: String {
        get throws(TokenMintError) { device(try deviceKey()).subjectID }
    }

    func deviceKey() throws(TokenMintError) -> Ed25519.PrivateKey {
        if let cachedKey { return cachedKey }
        let (store, configuration) = (self.store, self.configuration)
        let key = try transaction { tx -> Ed25519.PrivateKey in
            try WhitelabelPay.storedKey(tx, try WhitelabelPay.currentRecord(tx, store: store, configuration: configuration))
        }
        cachedKey = key
        return key
    }

    /// The sealed device key, checked against the record.
    static func storedKey(_ tx: any StoreTransaction, _ record: DeviceRecord) throws -> Ed25519.PrivateKey {
        guard let seed = try tx.secret(Name.deviceKey) else {
            if record.deviceKey != nil { throw TokenMintError(.pay.tampered, "the device key was removed") }
            throw TokenMintError(.pay.deviceNotEnrolled, "no device key: call getEnrolmentToken() first")
        }
        return try WhitelabelPay.checkedKey(seed, record)
    }

    static func makeKey(_ seed: SecureBytes) throws(TokenMintError) -> Ed25519.PrivateKey {
        do { return try Ed25519.PrivateKey(rawRepresentation: seed) } catch {
            throw TokenMintError(.pay.tampered, "the stored device key is unusable", underlying: error)
        }
    }

    /// The device key, checked against the public key its record names.
    static func checkedKey(_ seed: SecureBytes, _ record: DeviceRecord) throws(TokenMintError) -> Ed25519.PrivateKey {
        let key = try makeKey(seed)
        guard record.deviceKey == Base64URL.encode(key.publicKey.rawRepresentation) else {
            throw TokenMintError(.pay.tampered, "the device key is not the one the device state names")
        }
        return key
    }

    /// The push types the SDK understands.
    public enum PushType: String, Sendable {
        /// Enrolment accepted: the device becomes active.
        case enrolmentSucceeded = "enrolment-succeeded.v1"
        /// A payment succeeded.
        case paymentSucceeded = "payment-succeeded.v1"
        /// A payment failed.
        case paymentFailed = "payment-failed.v1"
    }

    /// Handles a push payload `{"aps":{…},"yp-type":"…"}`.
    @discardableResult
    public func handlePush(_ payload: [UInt8]) throws(TokenMintError) -> PushType {
        // The strict parser: a second "yp-type" (one parser reading the first,
        // another the last), bad UTF-8 or deep nesting is refused, not guessed at.
        var limits = JSONParser.Limits()
        limits.maximumBytes = 4096
        limits.maximumDepth = 8
        guard let object = (try? JSONParser.parse(payload, limits: limits))?.objectValue,
            object["aps"]?.objectValue != nil, let name = object["yp-type"]?.stringValue
        else { throw TokenMintError(.pay.invalidPush, "not a WhitelabelPay push payload") }
        guard let type = PushType(rawValue: name) else { throw TokenMintError(.pay.invalidPush, "unknown yp-type \"\(name)\"") }
        switch type {
        case .enrolmentSucceeded:
            _ = try deviceKey()
            try setState(.active)
        case .paymentSucceeded: monitorContinuation?.yield(.paymentSucceeded)
        case .paymentFailed: monitorContinuation?.yield(.paymentFailed)
        }
        logger.info("push", metadata: ["type": "\(type.rawValue)"])
        return type
    }

    /// The backend reported `invalidEnrolmentInstance`: everything is wiped, as the SDK does.
    public func handleInvalidEnrolmentInstance() throws(TokenMintError) {
        try reset()
    }

    /// Calls the backend. A backend that no longer knows this enrolment
    /// throws `invalidEnrolmentInstance`: the device is wiped, as the SDK
    /// does, and that error reaches the caller. Other payment errors pass
    /// unchanged when `keepingPaymentErrors`; any other failure becomes
    /// `code`, keeping its cause.
    func backendCall<T: Sendable>(
        _ code: TokenMintError.Code, _ reason: String, keepingPaymentErrors: Bool = true, _ body: () async throws -> T
    ) async throws(TokenMintError) -> T {
        do {
            return try await body()
        } catch {
            if let failure = error as? TokenMintError, failure.code == .pay.invalidEnrolmentInstance {
                try reset()
                throw failure
            }
            if !keepingPaymentErrors { throw TokenMintError(code, "\(reason): \(error)", underlying: error) }
            throw TokenMintError.wrap(error, as: code, "\(reason): \(error)")
        }
    }

    // MARK: Payment means

    /// The payment means known to the device.
    public func paymentMeans() throws(TokenMintError) -> [PaymentMeans] {
        if let cachedMeans { return cachedMeans }
        let list = try record().means
        cachedMeans = list
        return list
    }

    /// The active payment means, if any.
    public func activePaymentMeans() throws(TokenMintError) -> PaymentMeans? {
        try paymentMeans().first { $0.isActive }
    }

    /// Adds a payment means (as the backend reported it) and makes it the active one.
    public func addPaymentMeans(_ id: String) throws(TokenMintError) {
        guard PaymentMeans.isValidID(id) else { throw TokenMintError(.pay.failureToRetrievePaymentMeans, "payment means ids are 1 to 64 characters of [A-Za-z0-9-]") }
        var list = try paymentMeans().map { PaymentMeans(id: $0.id, isActive: false) }.filter { $0.id != id }
        list.append(PaymentMeans(id: id, isActive: true))
        try saveMeans(list)
    }

    /// Deactivates a payment means, at the backend and locally.
    public func deactivatePaymentMeans(_ id: String) async throws(TokenMintError) {
        var list = try paymentMeans()
        guard let index = list.firstIndex(where: { $0.id == id }) else {
            throw TokenMintError(.pay.failureToRetrievePaymentMeans, "no payment means \(id)")
        }
        let device = self.device(try deviceKey())
        try await backendCall(.pay.failureToRetrievePaymentMeans, "the backend refused", keepingPaymentErrors: false) {
            try await backend.deactivate(paymentMeansID: id, device: device)
        }
        list[index].isActive = false
        try saveMeans(list)
    }

    /// Makes a payment means the active one again, at the backend and locally.
    public func reactivatePaymentMeans(_ id: String) async throws(TokenMintError) {
        guard try paymentMeans().contains(where: { $0.id == id }) else {
            throw TokenMintError(.pay.failureToRetrievePaymentMeans, "no payment means \(id)")
        }
        let device = self.device(try deviceKey())
        try await backendCall(.pay.failureToRetrievePaymentMeans, "the backend refused", keepingPaymentErrors: false) {
            try await backend.reactivate(paymentMeansID: id, device: device)
        }
        try saveMeans(try paymentMeans().map { PaymentMeans(id: $0.id, isActive: $0.id == id) })
    }

    /// Where ``getPaymentMeans(fetchMode:)`` reads from.
    public enum FetchMode: Sendable {
        /// The means known locally, at once; a sync with the server runs in
        /// the background and its failures are swallowed.
        case fromLocalFirst
        /// The means as the server has them now (a sync first).
        case network
    }

    /// The payment means, local first or from the network.
    public func getPaymentMeans(fetchMode: FetchMode = .fromLocalFirst) async throws(TokenMintError) -> [PaymentMeans] {
        switch fetchMode {
        case .network:
            try await sync()
            return try paymentMeans()
        case .fromLocalFirst:
            let local = try paymentMeans()
            if backend.confirmsState { Task { _ = try? await self.sync() } }
            return local
        }
    }

    /// One page of the device's transactions from the backend.
    public func fetchTransactions(page: Int = 1, size: Int = 20, sort: [String] = []) async throws(TokenMintError) -> TransactionResponse {
        let query = try TransactionQuery(page: page, size: size, sort: sort)
        let device = self.device(try deviceKey())
        return try await backendCall(.pay.failureToRetrievePaymentMeans, "the backend did not list transactions") {
            try await backend.transactions(query, device: device)
        }
    }

    // MARK: Sync with the server

    /// Asks the server what it knows of the device and brings the device in
    /// line: the state (active once a desk enrolled it), the payment means,
    /// the server's time, and — because the server has confirmed the device
    /// is back — a new offline grant and the offline count reset. Returns
    /// nil when the backend has no server (``LocalBackend``).
    /// - Throws: `backendUnreachable` (the device is then offline),
    ///   `invalidEnrolmentInstance` (the device was wiped), `storeFailure`.
    @discardableResult
    public func sync() async throws(TokenMintError) -> WhitelabelPaySync? {
        let device = self.device(try deviceKey())
        let backend = self.backend
        guard let report = try await serverCall({ try await backend.sync(device: device) }) else { return nil }
        var grant: WhitelabelPayGrant?
        if report.enrolled, configuration.offlineTokenLimit > 0 {
            let count = Int64(configuration.offlineTokenLimit)
            grant = try await serverCall { try await backend.offlineGrant(count: count, device: device) }
        }
        // What the server said lands in one transaction: the means, the
        // grant, the reset count, the clock offset; then the state, last, so
        // a device seen active has its means and its grant.
        let offset = TimeArithmetic.subtracting(report.serverTime, clock.now())
        try update { record, _ in
            record.serverOffset = offset
            record.means = report.paymentMeans
            record.online = true
            record.offlineMinted = 0
            if let grant, grant.first >= 1, grant.count >= 1 {
                record.offlineSequence = max(record.offlineSequence, grant.first - 1)
                record.grantEnd = TimeArithmetic.adding(grant.first, grant.count - 1)
                record.grantNotAfter = grant.notAfter
            }
        }
        cachedMeans = report.paymentMeans
        if report.enrolled, try state != .active { try setState(.active) }
        if !report.enrolled, try state == .active { try setState(.activating) }
        logger.info("synced", metadata: ["enrolled": "\(report.enrolled)", "grant": "\(grant?.count ?? 0)"])
        return report
    }

    /// Calls the server: unreachable marks the device offline, an unknown
    /// enrolment wipes it; either way the error reaches the caller.
    func serverCall<T: Sendable>(_ body: () async throws -> T) async throws(TokenMintError) -> T {
        do {
            return try await body()
        } catch {
            let failure = (error as? TokenMintError) ?? TokenMintError(.pay.backendUnreachable, "\(error)", underlying: error)
            if failure.code == .pay.invalidEnrolmentInstance { try reset() }
            if failure.code == .pay.backendUnreachable { try markOfflineForServer() }
            throw failure
        }
    }

    func markOfflineForServer() throws(TokenMintError) {
        try update { record, _ in record.online = false }
        logger.info("backend unreachable: offline")
    }

    func saveMeans(_ list: [PaymentMeans]) throws(TokenMintError) {
        try update { record, _ in record.means = list }
        cachedMeans = list
    }

    // MARK: Online and the offline quota

    /// Whether the device mints with the backend (true) or locally within the quota.
    public var isOnline: Bool {
        get throws(TokenMintError) { try record().online }
    }

    /// Goes offline: tokens are minted locally, within `offlineTokenLimit`.
    public func markOffline() throws(TokenMintError) {
        try update { record, _ in record.online = false }
    }

    /// Back online: the offline count resets. With a backend that confirms
    /// state (a server), only ``sync()`` does that, when the server answers.
    /// - Throws: `invalidConfiguration` with such a backend.
    public func markOnline(serverTime: Int64? = nil) throws(TokenMintError) {
        guard !backend.confirmsState else {
            throw TokenMintError(.pay.invalidConfiguration, "with a server, the device is back online when sync() reaches it")
        }
        try update { record, _ in
            record.online = true
            record.offlineMinted = 0
        }
        if let serverTime { try learnServerTime(serverTime) }
        logger.info("online: offline count reset")
    }

    /// The offline limit.
    public var offlineTokenLimit: Int { configuration.offlineTokenLimit }

    /// Whether the backend is a server that confirms the device's state
    /// (then ``sync()``, not ``markOnline(serverTime:)``, brings it back online).
    public nonisolated var hasServer: Bool { backend.confirmsState }

    /// Tokens minted offline since the device was last online.
    public var offlineMintedTokenCount: Int {
        get throws(TokenMintError) { Int(try record().offlineMinted) }
    }

    /// Tokens minted (their slot or sequence number used) whose output the
    /// host reported lost with ``recordWastedToken()``.
    public var wastedTokenCount: Int {
        get throws(TokenMintError) { Int(try record().wasted) }
    }

    /// Records that a token minted here never reached its user (the screen,
    /// file or pipe it was written to failed). Its quota slot stays used —
    /// a slot is never given out twice — and the count shows in
    /// ``wastedTokenCount``.
    public func recordWastedToken() throws(TokenMintError) {
        try update { record, _ in record.wasted += 1 }
    }

    /// `offlineTokenLimit − offlineMintedTokenCount`.
    public var availableOfflineTokensCount: Int {
        get throws(TokenMintError) { max(0, offlineTokenLimit - (try offlineMintedTokenCount)) }
    }

    /// Whether offline minting is at the limit.
    public var offlineTokenLimitReached: Bool {
        get throws(TokenMintError) { try availableOfflineTokensCount == 0 }
    }

    // MARK: Payment tokens

    /// A payment token. Online, the unsigned part comes from the backend;
    /// offline (or when `offline` is true) it is composed on the device as
    /// `off.<meansId>.<sequence>.<nonce>`, after the offline count and the
    /// sequence number are committed durably — a crash wastes a slot, never
    /// reuses one, and never mints past the limit.
    public func getPaymentToken(offline: Bool? = nil) async throws(TokenMintError) -> PaymentToken {
        let started = generation
        mintsStarted += 1
        let mint = mintsStarted
        let plan = try await planMint(offline: offline)
        try checkNotReset(since: started)
        let (key, means) = (plan.key, plan.means)
        let unsigned: String
        // Offline, the quota and the server-time offset come from the one
        // minting transaction; online, the offset is the one the backend's
        // answer just taught.
        let offset: Int64
        if let slot = plan.offline {
            offset = slot.serverOffset
            unsigned = "off.\(means.id).\(slot.sequence).\(B64.random(9))"
            logger.info("minted offline", metadata: ["sequence": "\(slot.sequence)"])
        } else {
            let device = self.device(key)
            let issued: (unsigned: String, serverTime: Int64)
            do {
                issued = try await backendCall(.pay.failureToRetrievePaymentToken, "the backend did not issue a token") {
                    try await backend.issueUnsignedToken(paymentMeansID: means.id, device: device)
                }
            } catch where error.code == .pay.backendUnreachable && offline == nil {
                // Unreachable: mint offline within the quota instead of failing.
                try markOfflineForServer()
                return try await getPaymentToken(offline: true)
            }
            offset = try learnServerTime(issued.serverTime)
            unsigned = issued.unsigned
            guard !unsigned.isEmpty, unsigned.utf8.count <= 256, unsigned.utf8.allSatisfy(WhitelabelPayFormat.isTokenCharacter) else {
                throw TokenMintError(.pay.failureToRetrievePaymentToken, "the backend issued a malformed unsigned part")
            }
            logger.info("minted online")
        }
        let epoch = TimeArithmetic.adding(clock.now(), offset)
        // With a store that groups commits, the signature is made off the
        // actor: concurrent mints sign on every core while the actor plans
        // the next ones. Otherwise the two executor hops would cost more
        // than they overlap.
        let token = store.groupsCommits
            ? await WhitelabelPay.sign(unsigned, at: epoch, with: key)
            : PaymentToken.sign(unsigned, at: epoch, with: key)
        try checkNotReset(since: started)
        if mint > currentTokenMint {
            currentToken = token
            currentTokenMint = mint
        }
        return token
    }

    /// Throws when ``reset()`` ran since `started`: what was minted then
    /// belongs to a device that no longer exists.
    private func checkNotReset(since started: Int) throws(TokenMintError) {
        guard generation == started else { throw TokenMintError(.pay.deviceNotEnrolled, "the device was reset during the mint") }
    }

    @concurrent
    static func sign(_ unsigned: String, at epoch: Int64, with key: Ed25519.PrivateKey) async -> PaymentToken {
        PaymentToken.sign(unsigned, at: epoch, with: key)
    }

    /// What one mint needs: the key, the active payment means and, offline,
    /// the sequence number and server-time offset of the slot it takes.
    struct MintPlan: Sendable {
        let key: Ed25519.PrivateKey
        let means: PaymentMeans
        let offline: (sequence: Int64, serverOffset: Int64)?
    }

    /// Reads the state, the active means, the key and the online flag and,
    /// offline, takes the next quota slot — in one transaction, committed
    /// before the token is made (a crash wastes the slot, never reuses it).
    /// Concurrent mints share commits (``groupedUpdate(_:)``).
    func planMint(offline: Bool?) async throws(TokenMintError) -> MintPlan {
        let known = cachedKey
        let limit = Int64(configuration.offlineTokenLimit)
        let confirmsState = backend.confirmsState
        let now = clock.now()
        let started = generation
        let plan = try await groupedUpdate { record, tx -> MintPlan in
            guard record.state == WhitelabelPayState.active.rawValue else {
                throw TokenMintError(.pay.deviceNotEnrolled, "the device is not enrolled and active")
            }
            guard let means = record.means.first(where: { $0.isActive }) else {
                throw TokenMintError(.pay.failureToRetrievePaymentMeans, "no active payment means")
            }
            let key = try known ?? WhitelabelPay.storedKey(tx, record)
            guard offline ?? !record.online else { return MintPlan(key: key, means: means, offline: nil) }
            guard record.offlineMinted < limit, record.offlineMinted < Int64(record.offlineLimit) else {
                throw TokenMintError(.pay.offlineTokenLimitReached, "\(limit) tokens minted offline; reconnect to mint more")
            }
            guard record.offlineSequence < Int64.max else { throw TokenMintError(.pay.offlineTokenLimitReached, "the sequence is exhausted") }
            if confirmsState {
                // A server accepts offline counters only from its grants.
                guard record.grantEnd > 0 else {
                    throw TokenMintError(.pay.offlineTokenLimitReached, "no offline grant from the server yet; sync() while online")
                }
                guard record.offlineSequence < record.grantEnd else {
                    throw TokenMintError(.pay.offlineTokenLimitReached, "the server's offline grant is used up; reconnect to mint more")
                }
                guard TimeArithmetic.adding(now, record.serverOffset) <= record.grantNotAfter else {
                    throw TokenMintError(.pay.offlineTokenLimitReached, "the server's offline grant has expired; reconnect to mint more")
                }
            }
            record.offlineMinted += 1
            record.offlineSequence += 1
            return MintPlan(key: key, means: means, offline: (record.offlineSequence, record.serverOffset))
        }
        // A reset during the commit wiped this key: it is not cached again.
        if generation == started { cachedKey = plan.key }
        return plan
    }

    // MARK: Monitoring

    /// Starts the monitoring stream: online a fresh token every
    /// `refreshInterval` seconds; offline a new one only when the current
    /// token is about to expire, so idle screens do not burn the quota.
    public func startMonitoringUpdates(
        refreshInterval: Int64 = 30,
        sleep: @escaping @Sendable (Int64) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64($0) * 1_000_000_000) }
    ) -> AsyncStream<WhitelabelPayUpdate> {
        stopMonitoringUpdates()
        let (stream, continuation) = AsyncStream<WhitelabelPayUpdate>.makeStream()
        monitorContinuation = continuation
        monitor = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                await self.refresh(refreshInterval: refreshInterval)
                do { try await sleep(refreshInterval) } catch { return }
            }
        }
        pushListener = Task { [weak self] in await self?.listenForPushes() }
        return stream
    }

    /// Reads the server's push channel (when the backend has one) into
    /// ``handlePush(_:)``, resuming after the last event received; reconnects
    /// after a failure. An `enrolment-succeeded.v1` push is followed by a
    /// sync, which brings the payment means and the offline grant.
    func listenForPushes() async {
        while !Task.isCancelled {
            guard let key = try? deviceKey(), let after = try? record().lastEventID,
                let events = backend.events(after: after, device: device(key))
            else { return }
            do {
                for try await event in events {
                    let type = try? handlePush(event.payload)
                    _ = try? update { record, _ in record.lastEventID = max(record.lastEventID, event.id) }
                    if type == .enrolmentSucceeded, backend.confirmsState { _ = try? await sync() }
                }
            } catch {
                logger.info("push channel lost", metadata: ["error": "\(type(of: error))"])
            }
            try? await Task.sleep(nanoseconds: 2_000_000_000)
        }
    }

    func refresh(refreshInterval: Int64) async {
        do {
            // Offline with a server: try to reach it first (once per interval),
            // so a device back in reach is online again by itself.
            if backend.confirmsState, try !isOnline { _ = try? await sync() }
            let online = try isOnline
            if !online, let current = currentToken,
                current.epochSeconds + configuration.tokenLifetime - (try serverTime) > refreshInterval
            {
                return  // offline and the current token is still good: keep the quota
            }
            monitorContinuation?.yield(.token(try await getPaymentToken()))
        } catch where error.code == .pay.offlineTokenLimitReached {
            monitorContinuation?.yield(.offlineTokenLimitReached)
        } catch {
            monitorContinuation?.yield(.failure(error))
        }
    }

    /// Stops the monitoring stream.
    public func stopMonitoringUpdates() {
        monitor?.cancel()
        monitor = nil
        pushListener?.cancel()
        pushListener = nil
        monitorContinuation?.finish()
        monitorContinuation = nil
    }

    // MARK: Reset and logs

    /// Wipes every key, token count, payment means and state (keys first).
    public func reset() throws(TokenMintError) {
        stopMonitoringUpdates()
        generation += 1
        currentToken = nil
        cachedKey = nil
        cachedMeans = nil
        cachedState = nil
        do { try store.reset() } catch { throw TokenMintError(.pay.storeFailure, error.description, underlying: error) }
        logger.info("reset")
    }

    /// The debug log (needs `debug` in the configuration and a log directory).
    public func exportLogs() throws(TokenMintError) -> String {
        guard let logFile else { throw TokenMintError(.pay.invalidConfiguration, "log export needs debug and a log directory") }
        let previous = (try? String(contentsOfFile: logFile + ".1", encoding: .utf8)) ?? ""
        let current = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        return previous + current
    }
}

/// A swift-log handler appending to a file that rotates at 256 KiB (one
/// previous file kept). Callers log event names and counts only: never keys,
/// signatures, tokens or the master key.
struct RotatingFileLogHandler: LogHandler {
    let path: String
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug
    static let lock = NSLock()
    static let limit = 256 * 1024

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let line = "\(ISO8601DateFormatter().string(from: Date())) \(event.level) \(event.message) \(fields.joined(separator: " "))\n"
        RotatingFileLogHandler.lock.lock()
        defer { RotatingFileLogHandler.lock.unlock() }
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > RotatingFileLogHandler.limit {
            try? FileManager.default.removeItem(atPath: path + ".1")
            try? FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        }
        if let handle = FileHandle(forWritingAtPath: path) {
            handle.seekToEndOfFile()
            handle.write(Data(line.utf8))
            try? handle.close()
        } else {
            _ = FileManager.default.createFile(atPath: path, contents: Data(line.utf8), attributes: [.posixPermissions: 0o600])
        }
    }
}
