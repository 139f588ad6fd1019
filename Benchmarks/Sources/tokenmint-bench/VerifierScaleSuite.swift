import Foundation
import Logging
import PostgresNIO
import TokenMintCrypto
import TokenMintPay
import TokenMintPostgres
import TokenMintStore

/// Payment-token verification with a shared ledger at 1, 4 and 16 concurrent
/// verifiers: PostgreSQL on loopback, SQLite, and a bare
/// `INSERT … ON CONFLICT DO NOTHING` loop through postgres-nio (the
/// database's own limit on this machine). Each verify uses a fresh token.
/// Then offline grants on PostgreSQL, next to the bare single-row grant
/// statement.
enum VerifierScaleSuite {
    struct Row {
        let backend: String
        let concurrency: Int
        let operations: Int
        let perSecond: Double
        let p50: Double
        let p99: Double
        /// What the row measures ("ledger", "grant" or "sqlite"); a row's
        /// ×bare is the bare row of the same kind.
        var kind = "ledger"
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        func take(below limit: Int) -> Int? {
            lock.withLock {
                guard next < limit else { return nil }
                defer { next += 1 }
                return next
            }
        }
    }

    /// Runs `operation(index)` for indices 0..<count from `concurrency` tasks;
    /// returns ops/s and the latency percentiles in microseconds.
    static func measure(
        _ backend: String, concurrency: Int, count: Int, _ operation: @escaping @Sendable (Int) async throws -> Void
    ) async throws -> Row {
        let counter = Counter()
        let clock = ContinuousClock()
        let start = clock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var mine: [Double] = []
                    while let index = counter.take(below: count) {
                        let t0 = clock.now
                        try await operation(index)
                        let elapsed = clock.now - t0
                        mine.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
                    }
                    return mine
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }.sorted()
        let wall = clock.now - start
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        return Row(backend: backend, concurrency: concurrency, operations: count, perSecond: Double(count) / seconds,
                   p50: percentile(0.5), p99: percentile(0.99))
    }

    /// The store's single-row grant statement (`Grant`, 10 values), as every grant
    /// was sent before grants were batched: prepared once per connection.
    struct BareGrant: PostgresPreparedStatement {
        static let sql = """
            WITH taken AS (
                UPDATE tokenmint_devices SET next_counter = next_counter + $2 WHERE id = $1 RETURNING next_counter - $2 AS first)
            INSERT INTO tokenmint_grants (device_id, first, count, not_after)
            SELECT $1, first, $2, $3 FROM taken RETURNING first
            """
        typealias Row = Int64
        let deviceID: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(deviceID)
            bindings.append(Int64(10))
            bindings.append(Int64(10_000_000_000))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }

    /// The round with the median rate.
    static func median(_ rounds: [Row]) -> Row { rounds.sorted { $0.perSecond < $1.perSecond }[rounds.count / 2] }

    /// An enrolled device's enrolment token and `count` online payment tokens (each a fresh ledger entry).
    static func onlineTokens(_ count: Int) async throws -> (EnrolmentToken, [String]) {
        let configuration = try WhitelabelPayConfiguration(
            tenantID: "0b6d5b8e-8c1b-4a0a-9f5e-3c2d1e0f9a8b", referenceID: UUID().uuidString.lowercased(), offlineTokenLimit: 0)
        let sdk = try WhitelabelPay(configuration: configuration, store: InMemoryStore(), backend: LocalBackend(clock: .system))
        let enrolment = try await sdk.getEnrolmentToken()
        try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"enrolment-succeeded.v1"}"#.utf8))
        try await sdk.addPaymentMeans("card-1")
        var tokens: [String] = []
        for _ in 0..<count { tokens.append(try await sdk.getPaymentToken().description) }
        return (enrolment, tokens)
    }

    static func run(url: String, quick: Bool, directory: String, progress: @escaping @Sendable (String) -> Void) async throws -> [Row] {
        let perCell = quick ? 2_000 : 20_000
        let levels = [1, 4, 16]
        progress("verifier scale-out: minting \(perCell * levels.count * 2) tokens")
        let (enrolment, all) = try await onlineTokens(perCell * levels.count * 2)

        var postgres = try PostgresConfiguration(url: url)
        postgres.maximumConnections = 16
        // The run empties the ledger table: only a server on this machine
        // (scripts/postgres-cluster's throwaway one), never a shared database.
        guard ["127.0.0.1", "localhost", "::1"].contains(postgres.host) else {
            throw BenchError("--postgres empties the ledger it is given: use a throwaway server on this machine (scripts/postgres-cluster), not \(postgres.host)")
        }
        var rows: [Row] = []
        let sqlite = try SQLiteStore(path: directory + "/scale-ledger.sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        let sqliteVerifier = try PaymentTokenVerifier(store: sqlite, lifetime: 86_400, clock: .system)
        // The bare insert loop: what the server does for one ledger entry.
        var bare = PostgresClient.Configuration(
            host: postgres.host, port: postgres.port, username: postgres.username, password: postgres.password,
            database: postgres.database, tls: .disable)
        bare.options.maximumConnections = 16
        let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let client = PostgresClient(configuration: bare, backgroundLogger: logger)
        rows += try await withThrowingTaskGroup(of: [Row]?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await PostgresVerifierStore.withStore(postgres) { store in
                try await store.migrate()
                // Both tables start empty (a ledger left by earlier runs is
                // larger, and each insert into its index costs more), and both
                // grow by the same rows: the ledger insert and the bare insert
                // are measured in turn, `rounds` times per level, and each
                // reports its median round.
                try await client.query("CREATE TABLE IF NOT EXISTS tokenmint_bench_ledger (id BYTEA PRIMARY KEY, expires_at BIGINT NOT NULL)")
                try await client.query("TRUNCATE tokenmint_bench_ledger")
                try await client.query("TRUNCATE tokenmint_ledger")
                let verifier = try PaymentTokenVerifier(store: store, lifetime: 86_400, clock: .system)
                let rounds = quick ? 1 : 3
                // Two operations measured in turn, `rounds` times per level, each
                // reporting its median round. Each cell starts just after a
                // checkpoint, so neither meets one halfway (its full-page writes
                // made single rows swing by a fifth between runs); a server that
                // refuses CHECKPOINT is measured as it is.
                typealias Operation = (name: String, label: String, run: @Sendable (Int) async throws -> Void)
                func inTurn(_ kind: String, _ first: Operation, _ second: Operation) async throws -> (first: [Row], second: [Row]) {
                    var out: (first: [Row], second: [Row]) = ([], [])
                    for level in levels {
                        var cells: (first: [Row], second: [Row]) = ([], [])
                        for round in 1...rounds {
                            for (n, operation) in [first, second].enumerated() {
                                _ = try? await client.query("CHECKPOINT")
                                progress("verifier scale-out: \(operation.label), \(level) callers, round \(round)/\(rounds)")
                                var row = try await measure(operation.name, concurrency: level, count: perCell, operation.run)
                                row.kind = kind
                                if n == 0 { cells.first.append(row) } else { cells.second.append(row) }
                            }
                        }
                        out.first.append(median(cells.first))
                        out.second.append(median(cells.second))
                    }
                    return out
                }
                // The ledger insert alone (no signature check): what the group
                // commit changes, next to the bare single-row insert.
                let (ledgerRows, bareRows) = try await inTurn(
                    "ledger",
                    ("PostgreSQL ledger (recordOnce only)", "PostgreSQL ledger insert", { _ in
                        _ = try await store.recordOnce(SecureRandom.bytes(count: 32), expiresAt: 10_000_000_000)
                    }),
                    ("bare INSERT … ON CONFLICT (postgres-nio)", "bare INSERT", { _ in
                        let id = ByteBuffer(bytes: SecureRandom.bytes(count: 32))
                        try await client.query("INSERT INTO tokenmint_bench_ledger (id, expires_at) VALUES (\(id), \(Int64(0))) ON CONFLICT DO NOTHING")
                    }))
                try await client.query("DROP TABLE tokenmint_bench_ledger")
                // Offline grants over 64 devices: the store's group commit
                // (GrantBatch) next to the single-row statement each grant was
                // before it, prepared as the store prepared it.
                let devices = (0..<64).map { _ in "bench-" + UUID().uuidString }
                for device in devices { try await store.enrolDevice(device, record: [1]) }
                let (grantRows, bareGrantRows) = try await inTurn(
                    "grant",
                    ("PostgreSQL grants (grantOfflineAllowance)", "PostgreSQL grants", { i in
                        _ = try await store.grantOfflineAllowance(devices[i % devices.count], count: 10, notAfter: 10_000_000_000)
                    }),
                    ("bare grant statement (prepared, postgres-nio)", "bare grant statement", { i in
                        for try await _ in try await client.execute(BareGrant(deviceID: devices[i % devices.count]), logger: logger) {}
                    }))
                var out = ledgerRows
                for (n, level) in levels.enumerated() {
                    progress("verifier scale-out: PostgreSQL ledger, \(level) verifiers")
                    let base = n * perCell
                    out.append(try await measure("PostgreSQL ledger (verify)", concurrency: level, count: perCell) { i in
                        _ = try await verifier.verify(all[base + i], enrolment: enrolment)
                    })
                }
                return out + bareRows + grantRows + bareGrantRows
            }
        }
        for (n, level) in levels.enumerated() {
            progress("verifier scale-out: SQLite ledger, \(level) verifiers")
            let base = (levels.count + n) * perCell
            var row = try await measure("SQLite ledger (verify)", concurrency: level, count: perCell) { i in
                _ = try await sqliteVerifier.verify(all[base + i], enrolment: enrolment)
            }
            row.kind = "sqlite"  // no bare row of its own
            rows.append(row)
        }
        return rows
    }
}
