#if Postgres
public import TokenMintCore
public import TokenMintPay
import TokenMintStore
public import Logging
internal import PostgresNIO
import Foundation

/// A `VerifierStore` on a PostgreSQL server, shared by any number of
/// verifier processes: the replay ledger is a table with a primary key
/// (insert-once decided by the primary key with `ON CONFLICT`), a device's offline grants are
/// taken with `UPDATE … RETURNING` under the row lock, so no token is
/// accepted twice and no counter value is granted twice, whichever server
/// asks.
///
/// Connections come from a pool (postgres-nio's `PostgresClient`), which
/// runs while ``run()`` runs; ``withStore(_:logger:_:)`` does that around a
/// closure. Every call has a time limit (the server's `statement_timeout`
/// and the client's own), and every failure is a typed `TokenMintError`:
/// `unavailable` when the server cannot be reached or the connection broke,
/// `timeout`, `diskFull`, `readOnly`, `busy`, `conflict`, `databaseFailure`.
/// A call that throws may still have committed on the server (the answer
/// was lost); for the ledger that means the token is refused on a retry,
/// never accepted twice.
public final class PostgresVerifierStore: VerifierStore, Sendable {
    let client: PostgresClient
    /// Gathers concurrent ledger inserts into one statement.
    let ledgerBatcher: LedgerBatcher
    /// Gathers concurrent offline grants into one statement.
    let grantBatcher: GrantBatcher
    /// The configuration.
    public let configuration: PostgresConfiguration
    let logger: Logger

    /// A store over a pool for `configuration`; nothing connects until
    /// ``run()`` runs.
    public init(configuration: PostgresConfiguration, logger: Logger = Logger(label: "tokenmint.postgres", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.configuration = configuration
        self.logger = logger
        ledgerBatcher = LedgerBatcher(Self.ledgerOperation, limit: Self.callLimit(configuration)) { batch, connection, store in
            await store.recordBatch(batch, on: connection)
        }
        grantBatcher = GrantBatcher(Self.grantOperation, limit: Self.callLimit(configuration)) { batch, connection, store in
            await store.grantBatch(batch, on: connection)
        }
        var config = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database,
            tls: configuration.requireTLS ? .require(.makeClientConfiguration()) : .disable)
        config.options.connectTimeout = configuration.connectTimeout
        config.options.maximumConnections = configuration.maximumConnections
        config.options.minimumConnections = 0
        let milliseconds = Int(configuration.statementTimeout.components.seconds * 1000)
            + Int(configuration.statementTimeout.components.attoseconds / 1_000_000_000_000_000)
        config.options.additionalStartupParameters = [
            ("statement_timeout", "\(milliseconds)"), ("application_name", "tokenmint-verifier"),
        ]
        client = PostgresClient(configuration: config, backgroundLogger: logger)
    }

    /// Runs the connection pool until the calling task is cancelled.
    public func run() async { await client.run() }

    /// Runs `body` with a store whose pool runs for as long as `body` does.
    ///
    /// When `body` returns the pool is cancelled and closes its connections
    /// in the background: the call does not wait for it. (A pool caught
    /// reconnecting after a server restart can take long to notice the
    /// cancellation; waiting for it left a finished verifier hanging.)
    public static func withStore<T: Sendable>(
        _ configuration: PostgresConfiguration, logger: Logger = Logger(label: "tokenmint.postgres", factory: { _ in SwiftLogNoOpLogHandler() }),
        _ body: @Sendable (PostgresVerifierStore) async throws -> T
    ) async throws -> T {
        let store = PostgresVerifierStore(configuration: configuration, logger: logger)
        let pool = Task { await store.run() }
        defer { pool.cancel() }
        return try await body(store)
    }

    // MARK: Schema

    /// Applies the schema migrations this version knows and the database
    /// lacks, each in its own transaction, serialized across processes by
    /// an advisory lock. Safe to call any number of times, from any number
    /// of processes at once.
    /// - Returns: The versions applied by this call (empty when current).
    @discardableResult
    public func migrate() async throws(TokenMintError) -> [Int] {
        try await bounded("migrate", limit: configuration.statementTimeout * 4) { client, logger in
            var applied: [Int] = []
            for migration in PostgresSchema.migrations {
                let done = try await client.withTransaction(logger: logger) { connection -> Bool in
                    try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.lockKey))", logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: PostgresSchema.versionTable), logger: logger)
                    let rows = try await connection.query(
                        "SELECT 1 FROM tokenmint_schema WHERE version = \(migration.version)", logger: logger)
                    for try await _ in rows { return false }
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query("INSERT INTO tokenmint_schema (version) VALUES (\(migration.version))", logger: logger)
                    return true
                }
                if done { applied.append(migration.version) }
            }
            return applied
        }
    }

    /// The newest schema version applied to the database (0 for none).
    public func schemaVersion() async throws(TokenMintError) -> Int {
        try await bounded("schema version") { client, logger in
            let exists = try await client.query("SELECT to_regclass('tokenmint_schema') IS NOT NULL", logger: logger)
            for try await present in exists.decode(Bool.self) where !present { return 0 }
            let rows = try await client.query("SELECT coalesce(max(version), 0) FROM tokenmint_schema", logger: logger)
            for try await version in rows.decode(Int.self) { return version }
            return 0
        }
    }

    // MARK: VerifierStore

    /// Inserts `identifier` once; the primary key decides between verifiers.
    /// A retry of the same attempt finds its own row and returns true again.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]?, spending slot: [UInt8]?) async throws(TokenMintError) -> Bool {
        try VerifierStoreLimits.checkIdentifier(identifier, attempt: attempt)
        try VerifierStoreLimits.checkSlot(slot)
        // Without a slot, through the group commit: concurrent verifiers'
        // inserts share one statement (LedgerBatcher).
        guard let slot else { return try await ledgerBatcher.submit(LedgerInsert(identifier: identifier, expiresAt: expiresAt, attempt: attempt), store: self) }
        return try await bounded(Self.ledgerOperation) { client, logger in
            let statement = RecordOnceSpending(identifier: ByteBuffer(bytes: identifier), expiresAt: expiresAt,
                                               attempt: attempt.map { ByteBuffer(bytes: $0) }, slot: ByteBuffer(bytes: slot))
            for try await mine in try await client.execute(statement, logger: logger) { return mine }
            return false
        }
    }

    /// Deletes ledger entries that expired before `time`.
    public func prune(expiredBefore time: Int64) async throws(TokenMintError) -> Int {
        try await bounded("ledger prune") { client, logger in
            let rows = try await client.query("DELETE FROM tokenmint_ledger WHERE expires_at < \(time) RETURNING 1", logger: logger)
            var count = 0
            for try await _ in rows { count += 1 }
            return count
        }
    }

    /// Enrols a device (idempotent for the same record).
    public func enrolDevice(_ deviceID: String, record: [UInt8]) async throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID, record: record)
        let stored = try await bounded("enrol") { client, logger -> [UInt8]? in
            try await client.query(
                "INSERT INTO tokenmint_devices (id, record) VALUES (\(deviceID), \(ByteBuffer(bytes: record))) ON CONFLICT (id) DO NOTHING",
                logger: logger)
            return try await Self.record(deviceID, client: client, logger: logger)
        }
        guard stored == record else { throw TokenMintError(.store.conflict, "device \(deviceID) is enrolled with another record") }
    }

    /// The record of an enrolled device.
    public func deviceRecord(_ deviceID: String) async throws(TokenMintError) -> [UInt8]? {
        try VerifierStoreLimits.checkDevice(deviceID)
        return try await bounded("device lookup") { client, logger in try await Self.record(deviceID, client: client, logger: logger) }
    }

    static func record(_ deviceID: String, client: PostgresClient, logger: Logger) async throws -> [UInt8]? {
        let rows = try await client.execute(DeviceRecord(deviceID: deviceID), logger: logger)
        for try await buffer in rows { return Array(buffer.readableBytesView) }
        return nil
    }

    /// Takes the next `count` counter values of the device. Concurrent
    /// grants share one statement and one commit (GrantBatcher); a grant
    /// alone is one statement.
    public func grantOfflineAllowance(_ deviceID: String, count: Int64, notAfter: Int64) async throws(TokenMintError) -> OfflineGrant {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkGrant(count: count)
        let first = try await grantBatcher.submit(GrantRequest(deviceID: deviceID, count: count, notAfter: notAfter), store: self)
        guard let first else { throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled") }
        return OfflineGrant(deviceID: deviceID, first: first, count: count, notAfter: notAfter)
    }

    /// The grant holding `counter`.
    public func offlineGrant(_ deviceID: String, containing counter: Int64) async throws(TokenMintError) -> OfflineGrant? {
        try VerifierStoreLimits.checkDevice(deviceID)
        return try await bounded("grant lookup") { client, logger -> OfflineGrant? in
            let rows = try await client.execute(GrantLookup(deviceID: deviceID, counter: counter), logger: logger)
            for try await (first, count, notAfter) in rows {
                let grant = OfflineGrant(deviceID: deviceID, first: first, count: count, notAfter: notAfter)
                return grant.contains(counter) ? grant : nil
            }
            return nil
        }
    }

    /// Records an issued unsigned part.
    public func issueOnlinePart(_ deviceID: String, part: String, notAfter: Int64) async throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        let inserted = try await bounded("issue") { client, logger -> Bool in
            for try await _ in try await client.execute(IssuePart(deviceID: deviceID, part: part, notAfter: notAfter), logger: logger) { return true }
            return false
        }
        guard !inserted else { return }
        guard try await deviceRecord(deviceID) != nil else { throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled") }
        throw TokenMintError(.store.conflict, "this unsigned part was issued before")
    }

    /// The `notAfter` of an issued unsigned part.
    public func onlinePart(_ deviceID: String, part: String) async throws(TokenMintError) -> Int64? {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        return try await bounded("issued part lookup") { client, logger -> Int64? in
            for try await notAfter in try await client.execute(PartLookup(deviceID: deviceID, part: part), logger: logger) { return notAfter }
            return nil
        }
    }

    // MARK: Limits and errors

    /// How long a call waits for its answer: the server's statement timeout and a second.
    static func callLimit(_ configuration: PostgresConfiguration) -> Duration { configuration.statementTimeout + .seconds(1) }

    /// Runs `body` with the client, within the time limit, mapping every
    /// failure to a `TokenMintError`.
    func bounded<T: Sendable>(
        _ what: String, limit: Duration? = nil, _ body: @escaping @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws(TokenMintError) -> T {
        let limit = limit ?? Self.callLimit(configuration)
        let client = self.client
        let logger = self.logger
        // The answer and the time limit race; whichever comes first answers
        // the caller. The work is not awaited after the limit: a query waiting
        // for a pool that is reconnecting may not notice cancellation, and
        // waiting for it held a verifier up forever.
        let outcome = Outcome<T>()
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            let work = Task {
                do { outcome.finish(.success(try await body(client, logger)), continuation) } catch {
                    outcome.finish(.failure(error), continuation)
                }
            }
            outcome.timer = Task {
                guard (try? await Task.sleep(for: limit)) != nil else { return }  // cancelled: the answer came
                if outcome.finish(.failure(TokenMintError(.store.timeout, "\(what): no answer within \(limit) (server unreachable or overloaded)")), continuation) {
                    work.cancel()
                }
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error): throw PostgresErrors.typed(error, what)
        }
    }
}

/// The first of several racing results, delivered once.
final class Outcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    private var timerTask: Task<Void, Never>?

    /// The time limit's task, cancelled when an answer comes first.
    var timer: Task<Void, Never>? {
        get { lock.withLock { timerTask } }
        set {
            let cancel = lock.withLock { () -> Bool in
                timerTask = newValue
                return done
            }
            if cancel { newValue?.cancel() }
        }
    }

    /// Resumes `continuation` with `result` unless another result came first;
    /// returns whether this one won (and stops the timer).
    @discardableResult
    func finish(_ result: Result<T, any Error>, _ continuation: CheckedContinuation<Result<T, any Error>, Never>) -> Bool {
        let (first, timer) = lock.withLock { () -> (Bool, Task<Void, Never>?) in
            defer { done = true }
            return (!done, timerTask)
        }
        guard first else { return false }
        timer?.cancel()
        continuation.resume(returning: result)
        return true
    }
}
#endif
