import TokenMintCrypto
public import TokenMintStore
import Foundation
import Logging

/// The device's enrolment state.
public enum WhitelabelPayState: String, Sendable, Hashable, CaseIterable {
    /// Not enrolled.
    case inactive
    /// Enrolment token created, not yet accepted by the backend.
    case onboarding
    /// Accepted by the backend; waiting for the `enrolment-succeeded.v1` push.
    case activating
    /// Enrolled: payment tokens can be minted.
    case active
}

/// What the monitoring stream reports.
public enum WhitelabelPayUpdate: Sendable {
    /// A fresh payment token to show.
    case token(PaymentToken)
    /// Offline minting stopped at the limit.
    case offlineTokenLimitReached
    /// The enrolment state changed.
    case stateChanged(WhitelabelPayState)
    /// The backend reported a successful payment (push `payment-succeeded.v1`).
    case paymentSucceeded
    /// The backend reported a failed payment (push `payment-failed.v1`).
    case paymentFailed
    /// Minting failed for another reason.
    case failure(WhitelabelPayError)
}

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
    private var monitorContinuation: AsyncStream<WhitelabelPayUpdate>.Continuation?
    private var currentToken: PaymentToken?
    // Read-through caches of what only this instance writes (the quota
    // counters are never cached: they are read inside each minting transaction).
    private var cachedKey: Ed25519.PrivateKey?
    private var cachedMeans: [PaymentMeans]?
    private var cachedState: WhitelabelPayState?

    enum Name {
        static let state = "pay.state"
        static let environment = "pay.environment"
        static let deviceKey = "pay.deviceKey"
        static let means = "pay.means"
        static let online = "pay.online"
        static let serverOffset = "pay.serverOffset"
        static let offlineMinted = "pay.offline.minted"
        static let offlineSequence = "pay.offline.sequence"
    }

    /// Opens the SDK over `store`.
    /// - Throws: `invalidConfiguration` when the store was set up for another
    ///   environment (call ``reset()`` first), `storeFailure` when the store fails.
    public init(
        configuration: WhitelabelPayConfiguration, store: any KeyValueStore, backend: any WhitelabelPayBackend,
        clock: WhitelabelPayClock = .system, logDirectory: String? = nil
    ) throws(WhitelabelPayError) {
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
            let environment = try tx.value(Name.environment).map { String(decoding: $0, as: UTF8.self) }
            if let environment, environment != configuration.environment.rawValue {
                throw WhitelabelPayError(.invalidConfiguration,
                    "the store belongs to the \(environment) environment; reset() before switching to \(configuration.environment.rawValue)")
            }
            if environment == nil { try tx.setValue(Name.environment, Array(configuration.environment.rawValue.utf8)) }
        }
        logger.info("opened", metadata: ["environment": "\(configuration.environment.rawValue)"])
    }

    /// Runs a store transaction, turning store failures into `storeFailure`.
    static func storeCall<T>(_ store: any KeyValueStore, _ body: (any StoreTransaction) throws -> T) throws(WhitelabelPayError) -> T {
        do {
            return try store.transaction(body)
        } catch let error as WhitelabelPayError {
            throw error
        } catch let error as StoreError {
            throw WhitelabelPayError(.storeFailure, error.description)
        } catch {
            throw WhitelabelPayError(.storeFailure, "\(error)")
        }
    }

    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws(WhitelabelPayError) -> T {
        try WhitelabelPay.storeCall(store, body)
    }

    // MARK: State

    /// The enrolment state.
    public var state: WhitelabelPayState {
        get throws(WhitelabelPayError) {
            if let cachedState { return cachedState }
            let state = try transaction { tx in
                try tx.value(Name.state).flatMap { WhitelabelPayState(rawValue: String(decoding: $0, as: UTF8.self)) } ?? .inactive
            }
            cachedState = state
            return state
        }
    }

    func setState(_ state: WhitelabelPayState) throws(WhitelabelPayError) {
        try transaction { tx in try tx.setValue(Name.state, Array(state.rawValue.utf8)) }
        cachedState = state
        monitorContinuation?.yield(.stateChanged(state))
        logger.info("state", metadata: ["state": "\(state.rawValue)"])
    }

    /// The current time as the server sees it: the local clock corrected by
    /// the offset learned at the last sync.
    public var serverTime: Int64 {
        get throws(WhitelabelPayError) {
            clock.now() + (try transaction { tx in try tx.counter(Name.serverOffset) })
        }
    }

    func learnServerTime(_ serverTime: Int64) throws(WhitelabelPayError) {
        let offset = serverTime - clock.now()
        try transaction { tx in try tx.setCounter(Name.serverOffset, offset) }
    }

    // MARK: Enrolment

    /// The device's enrolment token. The device key is created on first use,
    /// sealed in the store and reused; the token is the same every time. When
    /// the device is not enrolled yet, the backend is told and the state
    /// moves to `activating`.
    public func getEnrolmentToken() async throws(WhitelabelPayError) -> EnrolmentToken {
        let seed = try transaction { tx -> SecureBytes in
            if let existing = try tx.secret(Name.deviceKey) { return existing }
            let seed = SecureBytes(randomCount: 32)
            try tx.setSecret(Name.deviceKey, seed)
            return seed
        }
        let key: Ed25519.PrivateKey
        do { key = try Ed25519.PrivateKey(rawRepresentation: seed.unsafeCopy) } catch {
            throw WhitelabelPayError(.enrollmentError, "the stored device key is unusable")
        }
        let token = EnrolmentToken(tenant: configuration.tenantID, publicKey: key.publicKey, referenceID: configuration.referenceID)
        if try state == .inactive {
            try setState(.onboarding)
            do {
                let serverTime = try await backend.enrol(token)
                try learnServerTime(serverTime)
            } catch let error as WhitelabelPayError {
                throw error
            } catch {
                throw WhitelabelPayError(.enrollmentError, "the backend refused the enrolment: \(error)")
            }
            try setState(.activating)
        }
        return token
    }

    func deviceKey() throws(WhitelabelPayError) -> Ed25519.PrivateKey {
        if let cachedKey { return cachedKey }
        guard let seed = try transaction({ tx in try tx.secret(Name.deviceKey) }) else {
            throw WhitelabelPayError(.deviceNotEnrolled, "no device key: call getEnrolmentToken() first")
        }
        do {
            let key = try Ed25519.PrivateKey(rawRepresentation: seed.unsafeCopy)
            cachedKey = key
            return key
        } catch {
            throw WhitelabelPayError(.deviceNotEnrolled, "the stored device key is unusable")
        }
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
    public func handlePush(_ payload: [UInt8]) throws(WhitelabelPayError) -> PushType {
        guard payload.count <= 4096,
            let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
            object["aps"] is [String: Any], let name = object["yp-type"] as? String
        else { throw WhitelabelPayError(.invalidPush, "not a WhitelabelPay push payload") }
        guard let type = PushType(rawValue: name) else { throw WhitelabelPayError(.invalidPush, "unknown yp-type \"\(name)\"") }
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
    public func handleInvalidEnrolmentInstance() throws(WhitelabelPayError) {
        try reset()
    }

    // MARK: Payment means

    /// The payment means known to the device.
    public func paymentMeans() throws(WhitelabelPayError) -> [PaymentMeans] {
        if let cachedMeans { return cachedMeans }
        let list = try transaction { tx in
            guard let data = try tx.value(Name.means) else { return [PaymentMeans]() }
            return (try? JSONDecoder().decode([PaymentMeans].self, from: Data(data))) ?? []
        }
        cachedMeans = list
        return list
    }

    /// The active payment means, if any.
    public func activePaymentMeans() throws(WhitelabelPayError) -> PaymentMeans? {
        try paymentMeans().first { $0.isActive }
    }

    /// Adds a payment means (as the backend reported it) and makes it the active one.
    public func addPaymentMeans(_ id: String) throws(WhitelabelPayError) {
        guard (1...64).contains(id.utf8.count),
            id.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == UInt8(ascii: "-") })
        else { throw WhitelabelPayError(.failureToRetrievePaymentMeans, "payment means ids are 1 to 64 characters of [A-Za-z0-9-]") }
        var list = try paymentMeans().map { PaymentMeans(id: $0.id, isActive: false) }.filter { $0.id != id }
        list.append(PaymentMeans(id: id, isActive: true))
        try saveMeans(list)
    }

    /// Deactivates a payment means, at the backend and locally.
    public func deactivatePaymentMeans(_ id: String) async throws(WhitelabelPayError) {
        var list = try paymentMeans()
        guard let index = list.firstIndex(where: { $0.id == id }) else {
            throw WhitelabelPayError(.failureToRetrievePaymentMeans, "no payment means \(id)")
        }
        do { try await backend.deactivate(paymentMeansID: id) } catch {
            throw WhitelabelPayError(.failureToRetrievePaymentMeans, "the backend refused: \(error)")
        }
        list[index].isActive = false
        try saveMeans(list)
    }

    func saveMeans(_ list: [PaymentMeans]) throws(WhitelabelPayError) {
        guard let data = try? JSONEncoder().encode(list) else { throw WhitelabelPayError(.storeFailure, "cannot encode payment means") }
        try transaction { tx in try tx.setValue(Name.means, Array(data)) }
        cachedMeans = list
    }

    // MARK: Online and the offline quota

    /// Whether the device mints with the backend (true) or locally within the quota.
    public var isOnline: Bool {
        get throws(WhitelabelPayError) { try transaction { tx in try tx.value(Name.online) != [0] } }
    }

    /// Goes offline: tokens are minted locally, within `offlineTokenLimit`.
    public func markOffline() throws(WhitelabelPayError) {
        try transaction { tx in try tx.setValue(Name.online, [0]) }
    }

    /// Back online after a successful sync: the offline count resets.
    public func markOnline(serverTime: Int64? = nil) throws(WhitelabelPayError) {
        try transaction { tx in
            try tx.setValue(Name.online, [1])
            try tx.setCounter(Name.offlineMinted, 0)
        }
        if let serverTime { try learnServerTime(serverTime) }
        logger.info("online: offline count reset")
    }

    /// The offline limit.
    public var offlineTokenLimit: Int { configuration.offlineTokenLimit }

    /// Tokens minted offline since the device was last online.
    public var offlineMintedTokenCount: Int {
        get throws(WhitelabelPayError) { Int(try transaction { tx in try tx.counter(Name.offlineMinted) }) }
    }

    /// `offlineTokenLimit − offlineMintedTokenCount`.
    public var availableOfflineTokensCount: Int {
        get throws(WhitelabelPayError) { max(0, offlineTokenLimit - (try offlineMintedTokenCount)) }
    }

    /// Whether offline minting is at the limit.
    public var offlineTokenLimitReached: Bool {
        get throws(WhitelabelPayError) { try availableOfflineTokensCount == 0 }
    }

    // MARK: Payment tokens

    /// A payment token. Online, the unsigned part comes from the backend;
    /// offline (or when `offline` is true) it is composed on the device as
    /// `off.<meansId>.<sequence>.<nonce>`, after the offline count and the
    /// sequence number are committed durably — a crash wastes a slot, never
    /// reuses one, and never mints past the limit.
    public func getPaymentToken(offline: Bool? = nil) async throws(WhitelabelPayError) -> PaymentToken {
        guard try state == .active else { throw WhitelabelPayError(.deviceNotEnrolled, "the device is not enrolled and active") }
        guard let means = try activePaymentMeans() else {
            throw WhitelabelPayError(.failureToRetrievePaymentMeans, "no active payment means")
        }
        let key = try deviceKey()
        let unsigned: String
        let goOffline: Bool
        if let offline { goOffline = offline } else { goOffline = !(try isOnline) }
        if goOffline {
            let limit = Int64(configuration.offlineTokenLimit)
            let sequence = try transaction { tx -> Int64 in
                let minted = try tx.counter(Name.offlineMinted)
                guard minted < limit else {
                    throw WhitelabelPayError(.offlineTokenLimitReached, "\(limit) tokens minted offline; reconnect to mint more")
                }
                _ = try tx.increment(Name.offlineMinted, by: 1)
                return try tx.increment(Name.offlineSequence, by: 1)
            }
            unsigned = "off.\(means.id).\(sequence).\(B64.random(9))"
            logger.info("minted offline", metadata: ["sequence": "\(sequence)"])
        } else {
            do {
                let issued = try await backend.issueUnsignedToken(paymentMeansID: means.id)
                try learnServerTime(issued.serverTime)
                unsigned = issued.unsigned
            } catch let error as WhitelabelPayError {
                throw error
            } catch {
                throw WhitelabelPayError(.failureToRetrievePaymentToken, "the backend did not issue a token: \(error)")
            }
            guard !unsigned.isEmpty, unsigned.utf8.count <= 256, unsigned.utf8.allSatisfy(WhitelabelPayFormat.isTokenCharacter) else {
                throw WhitelabelPayError(.failureToRetrievePaymentToken, "the backend issued a malformed unsigned part")
            }
            logger.info("minted online")
        }
        let epoch = try serverTime
        let message = Array("\(unsigned)/\(epoch)".utf8)
        let token = PaymentToken(unsignedPart: unsigned, epochSeconds: epoch, signature: message.withUnsafeBytes { key.signature(for: $0) })
        currentToken = token
        return token
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
        return stream
    }

    func refresh(refreshInterval: Int64) async {
        do {
            let online = try isOnline
            if !online, let current = currentToken,
                current.epochSeconds + configuration.tokenLifetime - (try serverTime) > refreshInterval
            {
                return  // offline and the current token is still good: keep the quota
            }
            monitorContinuation?.yield(.token(try await getPaymentToken()))
        } catch where error.code == .offlineTokenLimitReached {
            monitorContinuation?.yield(.offlineTokenLimitReached)
        } catch {
            monitorContinuation?.yield(.failure(error))
        }
    }

    /// Stops the monitoring stream.
    public func stopMonitoringUpdates() {
        monitor?.cancel()
        monitor = nil
        monitorContinuation?.finish()
        monitorContinuation = nil
    }

    // MARK: Reset and logs

    /// Wipes every key, token count, payment means and state (keys first).
    public func reset() throws(WhitelabelPayError) {
        stopMonitoringUpdates()
        currentToken = nil
        cachedKey = nil
        cachedMeans = nil
        cachedState = nil
        do { try store.reset() } catch { throw WhitelabelPayError(.storeFailure, error.description) }
        logger.info("reset")
    }

    /// The debug log (needs `debug` in the configuration and a log directory).
    public func exportLogs() throws(WhitelabelPayError) -> String {
        guard let logFile else { throw WhitelabelPayError(.invalidConfiguration, "log export needs debug and a log directory") }
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
