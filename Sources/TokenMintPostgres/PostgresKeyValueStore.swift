#if Postgres
public import TokenMintCore
public import TokenMintStore
import TokenMintCrypto
public import Logging
internal import PostgresNIO
import Foundation

/// A `KeyValueStore` on a PostgreSQL server, shared by any number of
/// processes: what a `LocalTokenIssuer` and `tokenmint serve` keep (signing
/// keys, refresh families, OAuth clients, accounts, codes, passkeys) in three
/// tables, so that several servers behind one name issue and accept the same
/// tokens.
///
/// The protocol is synchronous, so a transaction blocks its caller on one
/// connection of the store's own (on its own event loop thread) until
/// PostgreSQL answers. Transactions are serialized across every process on
/// the database by an advisory lock taken after `BEGIN`: as with SQLite, one
/// writer at a time, and what a transaction read is still true when it
/// commits. It suits state that changes at sign-in rates, not a ledger
/// (`PostgresVerifierStore` is the ledger).
///
/// Secrets are sealed with the master key before they are sent; a sealed key
/// check in the database refuses a server started with another master key,
/// so every server sharing the database needs the same key (copy the first
/// server's key file). Every failure is a typed `TokenMintError`:
/// `unavailable`, `timeout`, `diskFull`, `readOnly`, `databaseFailure`, and
/// `wrongMasterKey`. A `COMMIT` whose answer was lost may have committed.
public final class PostgresKeyValueStore: KeyValueStore, @unchecked Sendable {
    /// The configuration.
    public let configuration: PostgresConfiguration
    /// The store's identity: random bytes made when its tables were first used.
    public let identity: [UInt8]
    let group: MultiThreadedEventLoopGroup
    let logger: Logger
    let masterKey: SecureBytes
    /// Serializes every use of `connection`.
    let lock = NSLock()
    /// The open connection (under `lock`); nil after a failure, reopened on next use.
    var connection: PostgresConnection?
    /// When the last connect failed (under `lock`).
    var lastConnectFailure: Date?

    /// Connects, checks the schema and the master key (sealing the key check
    /// on first use).
    ///
    /// The tables come with the schema migrations: run
    /// `PostgresVerifierStore.migrate()` first (`tokenmint serve --postgres`
    /// does).
    /// - Throws: `wrongMasterKey` when `masterKey` is not the key this
    ///   database's state was sealed with; `masterKeyUnavailable` when a key
    ///   file is missing and the database has state already; `unavailable`
    ///   or `databaseFailure` (with the schema missing) otherwise.
    public init(configuration: PostgresConfiguration, masterKey keySource: MasterKeySource,
                logger: Logger = Logger(label: "tokenmint.postgres", factory: { _ in SwiftLogNoOpLogHandler() })) throws(TokenMintError) {
        self.configuration = configuration
        self.logger = logger
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var opened: PostgresConnection?
        do {
            let connection = try Self.connect(configuration, group: group, logger: logger)
            opened = connection
            // The salt and the key check are made once, by whichever server
            // comes first (under the store-wide lock).
            let exec = Executor(connection: connection, limit: Self.limit(configuration), logger: logger)
            (identity, masterKey) = try exec.locked {
                let salt: [UInt8]
                if let existing = try exec.rows("SELECT value FROM tokenmint_kv_meta WHERE name = 'salt'").first {
                    salt = try Self.bytes(existing, "the store's salt")
                } else {
                    salt = SecureRandom.bytes(count: PasswordKeyDerivation.saltByteCount)
                    try exec.run("INSERT INTO tokenmint_kv_meta (name, value) VALUES ('salt', \(ByteBuffer(bytes: salt)))")
                }
                let check = try exec.rows("SELECT value FROM tokenmint_kv_meta WHERE name = 'check'").first
                let key = try keySource.resolve(salt: salt, storeIsNew: check == nil)
                if let check {
                    try SealedItems.verifyKeyCheck(try Self.bytes(check, "the key check"), key: key)
                } else {
                    let sealed = try SealedItems.sealKeyCheck(key)
                    try exec.run("INSERT INTO tokenmint_kv_meta (name, value) VALUES ('check', \(ByteBuffer(bytes: sealed)))")
                }
                return (salt, key)
            }
        } catch {
            if let opened { Self.close(opened).whenComplete { _ in group.shutdownGracefully { _ in } } } else { group.shutdownGracefully { _ in } }
            if let failure = error as? Executor.BeginFailure { throw failure.error }
            throw (error as? TokenMintError) ?? TokenMintError(.store.databaseFailure, "the state store did not open: \(type(of: error))")
        }
        self.group = group
        self.connection = opened
    }

    deinit {
        // Never blocks: the last reference may go on any thread. The group
        // stops once the connection has closed.
        let group = self.group
        if let connection {
            Self.close(connection).whenComplete { _ in group.shutdownGracefully { _ in } }
        } else {
            group.shutdownGracefully { _ in }
        }
    }

    /// Closes `connection` without waiting; the connection is kept alive
    /// until it has closed (postgres-nio requires that of its connections).
    @discardableResult
    static func close(_ connection: PostgresConnection) -> EventLoopFuture<Void> {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
        return closing
    }

    /// Runs `body` in one transaction under the store-wide lock: committed
    /// when it returns, rolled back when it throws.
    ///
    /// Every wait is bounded: for this process's other transactions (the
    /// statement timeout plus a second), for each statement (the same), and
    /// for a connection (the connect timeout; for a second after a failed
    /// connect, callers fail at once instead of queueing behind it).
    public func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        let limit = Self.limit(configuration)
        guard lock.lock(before: Date(timeIntervalSinceNow: Double(limit.nanoseconds) / 1e9)) else {
            throw TokenMintError(.store.timeout, "state store: other transactions of this process held it for \(limit)")
        }
        defer { lock.unlock() }
        var attempt = 0
        while true {
            attempt += 1
            let connection = try usableConnection()
            let exec = Executor(connection: connection, limit: limit, logger: logger)
            do {
                return try exec.locked { try body(Transaction(exec: exec, key: masterKey)) }
            } catch let failure as Executor.BeginFailure {
                // Nothing ran: a connection that died while idle gets one
                // retry on a new connection.
                drop(connection)
                if attempt == 1 { continue }
                throw failure.error
            } catch {
                if connection.isClosed || (error as? TokenMintError).map({ $0.code == .store.unavailable || $0.code == .store.timeout }) == true {
                    drop(connection)
                }
                throw error
            }
        }
    }

    /// Closes `connection` without waiting and forgets it (under `lock`).
    func drop(_ connection: PostgresConnection) {
        Self.close(connection)
        if self.connection === connection { self.connection = nil }
    }

    /// The open connection, or a new one (under `lock`).
    func usableConnection() throws(TokenMintError) -> PostgresConnection {
        if let open = connection, !open.isClosed { return open }
        connection = nil
        if let failed = lastConnectFailure, Date().timeIntervalSince(failed) < 1 {
            throw TokenMintError(.store.unavailable, "state store: the server could not be reached a moment ago")
        }
        do {
            let opened = try Self.connect(configuration, group: group, logger: logger)
            connection = opened
            lastConnectFailure = nil
            return opened
        } catch {
            lastConnectFailure = Date()
            throw error
        }
    }

    /// Removes every value, secret and counter (the identity and key check stay).
    public func reset() throws(TokenMintError) {
        do {
            try transaction { transaction in
                guard let exec = (transaction as? Transaction)?.exec else { return }
                try exec.run("DELETE FROM tokenmint_kv_items")
                try exec.run("DELETE FROM tokenmint_kv_counters")
            }
        } catch let error as TokenMintError { throw error } catch {
            throw TokenMintError(.store.databaseFailure, "reset: \(type(of: error))")
        }
    }

    /// Closes the connection (a later transaction opens a new one).
    public func close() {
        lock.withLock {
            if let connection { Self.close(connection) }
            connection = nil
        }
    }

    // MARK: Connections

    /// The statement timeout plus a second, at most a day.
    static func limit(_ configuration: PostgresConfiguration) -> TimeAmount {
        .nanoseconds(nanoseconds(configuration.statementTimeout) + 1_000_000_000)
    }

    /// `duration` in nanoseconds, clamped to 0 … one day.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let seconds = min(max(duration.components.seconds, 0), 86_400)
        return seconds * 1_000_000_000 + max(duration.components.attoseconds, 0) / 1_000_000_000
    }

    static func connect(_ configuration: PostgresConfiguration, group: MultiThreadedEventLoopGroup, logger: Logger) throws(TokenMintError) -> PostgresConnection {
        do {
            let tls: PostgresConnection.Configuration.TLS =
                configuration.requireTLS ? .require(try NIOSSLContext(configuration: .makeClientConfiguration())) : .disable
            var config = PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: tls)
            config.options.connectTimeout = .nanoseconds(nanoseconds(configuration.connectTimeout))
            // At least 1 ms: 0 would switch the server's limits off.
            let milliseconds = max(nanoseconds(configuration.statementTimeout) / 1_000_000, 1)
            // A session that stops talking inside a transaction (a frozen
            // process, a cut network) must not hold the store-wide lock: the
            // server ends it after the statement timeout, and keepalives
            // find a dead peer within a minute.
            config.options.additionalStartupParameters = [
                ("statement_timeout", "\(milliseconds)"), ("idle_in_transaction_session_timeout", "\(milliseconds)"),
                ("tcp_keepalives_idle", "30"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "3"),
                ("application_name", "tokenmint-state"),
            ]
            return try PostgresConnection.connect(on: group.next(), configuration: config, id: 1, logger: logger).wait()
        } catch {
            throw PostgresErrors.storeError(error, "connect to \(configuration)")
        }
    }

    static func bytes(_ row: PostgresRow, _ what: String) throws(TokenMintError) -> [UInt8] {
        do { return Array(try row.decode(ByteBuffer.self).readableBytesView) } catch {
            throw TokenMintError(.store.corrupted, "\(what) does not decode")
        }
    }

    /// Runs statements on one connection, each within the time limit: a
    /// statement without an answer by then closes the connection, which
    /// fails the wait.
    struct Executor {
        let connection: PostgresConnection
        let limit: TimeAmount
        let logger: Logger

        @discardableResult
        func rows(_ query: PostgresQuery) throws(TokenMintError) -> [PostgresRow] {
            try result(query).rows
        }

        func run(_ query: PostgresQuery) throws(TokenMintError) {
            _ = try result(query)
        }

        func result(_ query: PostgresQuery) throws(TokenMintError) -> PostgresQueryResult {
            let connection = self.connection
            let expired = Flag()
            let timer = connection.eventLoop.scheduleTask(in: limit) {
                expired.set()
                PostgresKeyValueStore.close(connection)
            }
            defer { timer.cancel() }
            do {
                return try connection.query(query, logger: logger).wait()
            } catch {
                if expired.isSet { throw TokenMintError(.store.timeout, "state store: no answer within \(limit) (server unreachable or overloaded)") }
                throw PostgresErrors.storeError(error, "state store")
            }
        }

        /// Runs `body` in a transaction that holds the store-wide advisory
        /// lock: committed when it returns, rolled back when it throws.
        func locked<T>(_ body: () throws -> T) throws -> T {
            // READ COMMITTED whatever the database's default: each statement
            // sees what committed before it, and the lock is taken first.
            do { try run("BEGIN ISOLATION LEVEL READ COMMITTED") } catch { throw BeginFailure(error: error) }
            do {
                try run("SELECT pg_advisory_xact_lock(\(PostgresSchema.itemsLockKey))")
                let result = try body()
                // A transaction the server aborted answers COMMIT with ROLLBACK.
                guard try self.result("COMMIT").metadata.command == "COMMIT" else {
                    throw TokenMintError(.store.databaseFailure, "state store: the transaction was rolled back by the server")
                }
                return result
            } catch {
                _ = try? run("ROLLBACK")
                throw error
            }
        }

        /// BEGIN failed: nothing of the transaction ran.
        struct BeginFailure: Error {
            let error: TokenMintError
        }
    }

    /// Set once, by the time limit's task.
    final class Flag: Sendable {
        private let value = Locked(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    final class Transaction: StoreTransaction {
        let exec: Executor
        let key: SecureBytes

        init(exec: Executor, key: SecureBytes) {
            self.exec = exec
            self.key = key
        }

        func row(_ name: String) throws(TokenMintError) -> (sealed: Bool, value: [UInt8])? {
            try SealedItems.checkName(name)
            guard let row = try exec.rows("SELECT sealed, value FROM tokenmint_kv_items WHERE name = \(name)").first else { return nil }
            do {
                let (sealed, value) = try row.decode((Bool, ByteBuffer).self)
                return (sealed, Array(value.readableBytesView))
            } catch {
                throw TokenMintError(.store.corrupted, "\(name) does not decode")
            }
        }

        func value(_ name: String) throws(TokenMintError) -> [UInt8]? {
            guard let row = try row(name) else { return nil }
            guard !row.sealed else { throw TokenMintError(.store.invalidArgument, "\(name) is a secret; read it with secret(_:)") }
            return row.value
        }

        func put(_ name: String, sealed: Bool, _ value: [UInt8]) throws(TokenMintError) {
            try exec.run("""
                INSERT INTO tokenmint_kv_items (name, sealed, value) VALUES (\(name), \(sealed), \(ByteBuffer(bytes: value)))
                ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, value = excluded.value
                """)
        }

        func setValue(_ name: String, _ value: [UInt8]) throws(TokenMintError) {
            try SealedItems.checkName(name)
            try SealedItems.checkValue(value)
            try put(name, sealed: false, value)
        }

        func secret(_ name: String) throws(TokenMintError) -> SecureBytes? {
            guard let row = try row(name) else { return nil }
            guard row.sealed else { throw TokenMintError(.store.corrupted, "\(name) should be sealed") }
            return try SealedItems.open(row.value, name: name, key: key)
        }

        func setSecret(_ name: String, _ value: SecureBytes) throws(TokenMintError) {
            try SealedItems.checkName(name)
            try SealedItems.checkSecret(value)
            try put(name, sealed: true, try SealedItems.seal(value, name: name, key: key))
        }

        func remove(_ name: String) throws(TokenMintError) {
            try SealedItems.checkName(name)
            try exec.run("DELETE FROM tokenmint_kv_items WHERE name = \(name)")
        }

        func removeValues(from lower: String, upTo upper: String) throws(TokenMintError) -> Int {
            try SealedItems.checkName(lower)
            try SealedItems.checkName(upper)
            // The column's "C" collation compares bytewise, as SQLite's BINARY does.
            return try exec.result("DELETE FROM tokenmint_kv_items WHERE name >= \(lower) AND name < \(upper)").metadata.rows ?? 0
        }

        func counter(_ name: String) throws(TokenMintError) -> Int64 {
            try SealedItems.checkName(name)
            guard let row = try exec.rows("SELECT value FROM tokenmint_kv_counters WHERE name = \(name)").first else { return 0 }
            do { return try row.decode(Int64.self) } catch { throw TokenMintError(.store.corrupted, "counter \(name) does not decode") }
        }

        func setCounter(_ name: String, _ value: Int64) throws(TokenMintError) {
            try SealedItems.checkName(name)
            try exec.run("""
                INSERT INTO tokenmint_kv_counters (name, value) VALUES (\(name), \(value))
                ON CONFLICT (name) DO UPDATE SET value = excluded.value
                """)
        }

        func increment(_ name: String, by delta: Int64) throws(TokenMintError) -> Int64 {
            let (value, overflow) = try counter(name).addingReportingOverflow(delta)
            guard !overflow else { throw TokenMintError(.store.invalidArgument, "counter \(name) would overflow") }
            try setCounter(name, value)
            return value
        }
    }
}
#endif
