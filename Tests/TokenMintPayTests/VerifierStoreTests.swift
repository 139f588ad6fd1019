import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintPay
import TokenMintStore
#if Postgres
@testable import TokenMintPostgres
#endif

/// The verifier-store backends. Every test below runs on each: in memory,
/// SQLite (one file, a connection per verifier), and PostgreSQL (a pool per
/// verifier) when TOKENMINT_POSTGRES_URL names a server — the test command
/// starts a throwaway one (scripts/postgres-cluster).
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, sqlite, postgres
    var testDescription: String { rawValue }

    static var postgresURL: String? { ProcessInfo.processInfo.environment["TOKENMINT_POSTGRES_URL"] }

    /// Whether the PostgreSQL tests can run: the backend is built in (not a
    /// build without the Postgres trait) and a server is named.
    static var postgresAvailable: Bool {
        #if Postgres
        postgresURL != nil
        #else
        false
        #endif
    }

    /// `count` stores over the same state, as `count` verifier processes would have.
    func withStores(_ count: Int, _ body: @Sendable ([any VerifierStore]) async throws -> Void) async throws {
        switch self {
        case .memory:
            let store = InMemoryStore()
            try await body(Array(repeating: store, count: count))
        case .sqlite:
            let path = try temporaryDirectory() + "/verifier.sqlite"
            let key = SecureBytes(randomCount: 32)
            try await body(try (0..<count).map { _ in try SQLiteStore(path: path, masterKey: .key(key)) })
        case .postgres:
            #if Postgres
            let configuration = try PostgresConfiguration(url: try #require(Self.postgresURL))
            let stores = (0..<count).map { _ in PostgresVerifierStore(configuration: configuration) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores { group.addTask { await store.run() } }
                try await stores[0].migrate()
                try await body(stores)
                group.cancelAll()
            }
            #else
            Issue.record("built without TokenMintPostgres")
            #endif
        }
    }
}

/// The same verifier-store suite for every backend.
@Suite("Verifier store")
struct VerifierStoreTests {
    static let local: [Backend] = [.memory, .sqlite]
    static let postgresReason: Comment = """
        needs a PostgreSQL server and a build with TokenMintPostgres: set TOKENMINT_POSTGRES_URL \
        (scripts/test starts one with scripts/postgres-cluster)
        """

    /// The verifier's tables belong to the payment module: a SQLite file gets
    /// them the first time a verifier uses it, a reset empties the replay
    /// ledger only, and spent slots survive it (a counter is never spent twice).
    @Test("SQLite: the verifier's tables made on first use; reset keeps spent slots")
    func sqliteTablesAndReset() async throws {
        let path = try temporaryDirectory() + "/verifier.sqlite"
        let key = SecureBytes(randomCount: 32)
        let store = try SQLiteStore(path: path, masterKey: .key(key))
        let slot = Array("device:1".utf8)
        #expect(try await store.recordOnce([1], expiresAt: 100, attempt: nil, spending: slot))
        #expect(try await !store.recordOnce([1], expiresAt: 100))
        try store.reset()
        // Another process opening the file after the reset sees the same rules.
        let reopened = try SQLiteStore(path: path, masterKey: .key(key))
        #expect(try await reopened.recordOnce([1], expiresAt: 100), "the ledger was emptied")
        #expect(try await !reopened.recordOnce([2], expiresAt: 100, attempt: nil, spending: slot), "the spent slot was forgotten")
        #expect(try await reopened.recordOnce([3], expiresAt: 100, attempt: nil, spending: Array("device:2".utf8)))
    }

    @Test(arguments: local) func ledger(_ backend: Backend) async throws { try await backend.withStores(1) { try await Self.ledger($0[0]) } }
    @Test(.enabled(if: Backend.postgresAvailable, postgresReason)) func ledgerPostgres() async throws {
        try await Backend.postgres.withStores(1) { try await Self.ledger($0[0]) }
    }

    @Test(arguments: local) func concurrentLedger(_ backend: Backend) async throws { try await backend.withStores(1) { try await Self.concurrentLedger($0[0]) } }
    @Test(.enabled(if: Backend.postgresAvailable, postgresReason)) func concurrentLedgerPostgres() async throws {
        try await Backend.postgres.withStores(1) { try await Self.concurrentLedger($0[0]) }
    }

    @Test(arguments: local) func devicesAndGrants(_ backend: Backend) async throws { try await backend.withStores(4) { try await Self.devicesAndGrants($0) } }
    @Test(.enabled(if: Backend.postgresAvailable, postgresReason)) func devicesAndGrantsPostgres() async throws {
        try await Backend.postgres.withStores(4) { try await Self.devicesAndGrants($0) }
    }

    @Test(arguments: local) func concurrentGrants(_ backend: Backend) async throws { try await backend.withStores(2) { _ = try await Self.concurrentGrants($0) } }
    /// On PostgreSQL each store gathers its concurrent grants into shared
    /// statements (GrantBatch), and the two stores' batches lock the same
    /// devices' rows at once: in one order, so neither deadlocks (a deadlock
    /// fails a batch with `busy`).
    @Test("PostgreSQL: concurrent grants share statements, never deadlock, and take consecutive ranges",
          .enabled(if: Backend.postgresAvailable, postgresReason), .timeLimit(.minutes(1)))
    func concurrentGrantsPostgres() async throws {
        try await Backend.postgres.withStores(2) { stores in
            let calls = try await Self.concurrentGrants(stores)
            #if Postgres
            // A batch of two or more is one GrantBatch statement (a batch of one, the single-row Grant).
            let statistics = stores.compactMap { ($0 as? PostgresVerifierStore)?.grantBatcher.statistics }
            let batches = statistics.map(\.batches).reduce(0, +)
            #expect(statistics.count == 2 && batches < calls && statistics.allSatisfy { $0.largest > 1 },
                    "\(calls) grants in \(batches) batches, the largest \(statistics.map(\.largest))")
            #endif
        }
    }

    @Test(arguments: local) func fourVerifiers(_ backend: Backend) async throws { try await backend.withStores(4) { try await Self.fourVerifiers($0) } }
    @Test(.enabled(if: Backend.postgresAvailable, postgresReason)) func fourVerifiersPostgres() async throws {
        try await Backend.postgres.withStores(4) { try await Self.fourVerifiers($0) }
    }

    @Test(arguments: local) func offlineGrants(_ backend: Backend) async throws { try await backend.withStores(2) { try await Self.offlineGrants($0) } }
    @Test(.enabled(if: Backend.postgresAvailable, postgresReason)) func offlineGrantsPostgres() async throws {
        try await Backend.postgres.withStores(2) { try await Self.offlineGrants($0) }
    }

    #if Postgres
    @Test("PostgreSQL URLs: parts, sslmode, refusals; the password never printed")
    func postgresURL() throws {
        let config = try PostgresConfiguration(url: "postgres://desk:s3cret@db.internal:6543/payments?sslmode=require",
                                               environment: ["PGPASSWORD": "from-the-environment"])
        #expect(config.host == "db.internal" && config.port == 6543 && config.username == "desk")
        #expect(config.password == "s3cret" && config.database == "payments" && config.requireTLS)
        #expect(!config.description.contains("s3cret") && !"\(config)".contains("s3cret"))
        let local = try PostgresConfiguration(url: "postgresql://desk@127.0.0.1/payments", environment: [:])
        #expect(local.port == 5432 && !local.requireTLS && local.password == nil)
        // No password in the URL (one on a command line shows in the process list): PGPASSWORD's.
        let hidden = try PostgresConfiguration(url: "postgresql://desk@127.0.0.1/payments", environment: ["PGPASSWORD": "from-the-environment"])
        #expect(hidden.password == "from-the-environment" && !hidden.description.contains("from-the-environment"))
        #expect(try PostgresConfiguration(url: "postgresql://desk@127.0.0.1/payments", environment: ["PGPASSWORD": ""]).password == nil)
        for bad in ["http://desk@h/db", "postgres://h/db", "postgres://desk@h/db?sslmode=prefer", "postgres://desk@h/db?x=1", "not a url"] {
            #expect(throws: TokenMintError.self) { try PostgresConfiguration(url: bad) }
        }
    }

    @Test("PostgreSQL ledger: a server that never answers gets `timeout` after the limit, for a lone insert, a batch and those queued behind it",
          .timeLimit(.minutes(1)))
    func postgresLedgerTimeout() async throws {
        // A listening socket nobody accepts on: the connection opens, the server never speaks.
        #if os(Linux)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound)
        var configuration = PostgresConfiguration(host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)), username: "nobody")
        configuration.connectTimeout = .seconds(60)
        configuration.statementTimeout = .milliseconds(300)
        let limit = configuration.statementTimeout + .seconds(1)
        let clock = ContinuousClock()
        try await PostgresVerifierStore.withStore(configuration) { store in
            // More callers than batches on the wire: some wait behind the first two batches.
            let outcomes = await withTaskGroup(of: (TokenMintError?, Duration).self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        let started = clock.now
                        do throws(TokenMintError) {
                            _ = try await store.recordOnce(SecureRandom.bytes(count: 32), expiresAt: 1, attempt: nil, spending: nil)
                            return (nil, clock.now - started)
                        } catch { return (error, clock.now - started) }
                    }
                }
                return await group.reduce(into: [(TokenMintError?, Duration)]()) { $0.append($1) }
            }
            #expect(outcomes.count == 12 && outcomes.allSatisfy { $0.0?.code == .store.timeout })
            // Never before the limit; and answered, not held: those behind the first
            // batches are sent when those time out, and time out in turn (the bound
            // is loose because other suites run at the same time and can delay a task).
            #expect(outcomes.allSatisfy { $0.1 >= limit && $0.1 < .seconds(30) })
        }
    }

    /// The ledger's batch senders keep their pooled connections between
    /// batches, but give them back in turn: with a pool of two (both held by
    /// senders under load), another call still gets a connection quickly.
    /// 1,200 callers keep more than two full batches (256 each) waiting, so a
    /// sender always has another batch: one that kept its connection until it
    /// had none left held both to the end of the load, and this read timed out.
    @Test("PostgreSQL ledger under load leaves a two-connection pool to other calls",
          .enabled(if: Backend.postgresAvailable, postgresReason), .timeLimit(.minutes(1)))
    func postgresLedgerSharesPool() async throws {
        var configuration = try PostgresConfiguration(url: try #require(Backend.postgresURL))
        configuration.maximumConnections = 2
        let clock = ContinuousClock()
        try await PostgresVerifierStore.withStore(configuration) { store in
            _ = try await store.migrate()
            let stop = Locked(false)
            let waited = try await withThrowingTaskGroup(of: Duration?.self) { group in
                for _ in 0..<1200 {
                    group.addTask {
                        let started = clock.now
                        while !stop.withLock({ $0 }), clock.now - started < .seconds(8) {
                            _ = try await store.recordOnce(SecureRandom.bytes(count: 32), expiresAt: 1, attempt: nil, spending: nil)
                        }
                        return nil
                    }
                }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(500))  // the senders hold both connections by now
                    let started = clock.now
                    _ = try await store.deviceRecord("nobody")
                    let waited = clock.now - started
                    stop.withLock { $0 = true }
                    return waited
                }
                var waited: Duration?
                for try await result in group { if let result { waited = result } }
                return waited
            }
            // Held to the end of the load, the read times out at the 6 s limit.
            #expect(try #require(waited) < .seconds(4))
            // The load's rows (expired at 1) leave the shared test ledger.
            _ = try await store.prune(expiredBefore: 2)
        }
    }

    /// A store whose pool has shut down answers `unavailable`, for the
    /// ledger's batched inserts (which lease their connection themselves) as
    /// for the other calls: PostgresNIO passes the pool's lease errors on as
    /// they are, and both were `databaseFailure` before they were mapped.
    @Test("PostgreSQL: calls after the pool has shut down are `unavailable`",
          .enabled(if: Backend.postgresAvailable, postgresReason), .timeLimit(.minutes(1)))
    func postgresAfterShutdown() async throws {
        let store = PostgresVerifierStore(configuration: try PostgresConfiguration(url: try #require(Backend.postgresURL)))
        let running = Task { await store.run() }
        _ = try await store.schemaVersion()
        running.cancel()
        await running.value
        await Self.expectStoreError(.store.unavailable) {
            _ = try await store.recordOnce(SecureRandom.bytes(count: 32), expiresAt: 1, attempt: nil, spending: nil)
        }
        await Self.expectStoreError(.store.unavailable) { _ = try await store.deviceRecord("nobody") }
    }
    #endif

    // MARK: The suite

    static func expectStoreError(_ code: TokenMintError.Code, _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await body()
            Issue.record("expected TokenMintError.\(code)", sourceLocation: sourceLocation)
        } catch let error as TokenMintError {
            #expect(error.code == code, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected TokenMintError.\(code), got \(error)", sourceLocation: sourceLocation)
        }
    }

    /// Insert-once, limits, pruning.
    static func ledger(_ store: any VerifierStore) async throws {
        let a = SecureRandom.bytes(count: 32), b = SecureRandom.bytes(count: 32)
        #expect(try await store.recordOnce(a, expiresAt: 100))
        #expect(try await !store.recordOnce(a, expiresAt: 100))
        #expect(try await store.recordOnce(b, expiresAt: 10_000_000_000))
        await expectStoreError(.store.invalidArgument) { _ = try await store.recordOnce([], expiresAt: 1) }
        await expectStoreError(.store.invalidArgument) { _ = try await store.recordOnce(Array(repeating: 1, count: 65), expiresAt: 1) }
        #expect(try await store.prune(expiredBefore: 101) >= 1)
        #expect(try await store.recordOnce(a, expiresAt: 100), "a pruned identifier may be recorded again")
        #expect(try await !store.recordOnce(b, expiresAt: 1), "an unexpired one may not")
        // Attempts: the same attempt's retry is accepted again, any other is not.
        let c = SecureRandom.bytes(count: 32)
        #expect(try await store.recordOnce(c, expiresAt: 10_000_000_000, attempt: [1]))
        #expect(try await store.recordOnce(c, expiresAt: 10_000_000_000, attempt: [1]))
        #expect(try await !store.recordOnce(c, expiresAt: 10_000_000_000, attempt: [2]))
        #expect(try await !store.recordOnce(c, expiresAt: 10_000_000_000))
        #expect(try await !store.recordOnce(b, expiresAt: 10_000_000_000, attempt: [1]), "no attempt recorded: a retry is a replay")
        await expectStoreError(.store.invalidArgument) { _ = try await store.recordOnce(c, expiresAt: 1, attempt: []) }
    }

    /// 192 inserts at once, as concurrent verifiers send them (on PostgreSQL
    /// they share statements, group commit): each of 32 identifiers is sent
    /// by three callers. Without an attempt exactly one is accepted; with
    /// the same attempt all three are; with three different attempts one is.
    /// Then every identifier is a replay, and the answers held.
    static func concurrentLedger(_ store: any VerifierStore) async throws {
        let plain = (0..<32).map { _ in SecureRandom.bytes(count: 32) }
        let retried = (0..<32).map { _ in SecureRandom.bytes(count: 32) }
        let contested = (0..<32).map { _ in SecureRandom.bytes(count: 32) }
        let answers = try await withThrowingTaskGroup(of: (Int, Int, Bool).self) { group in
            for i in 0..<32 {
                for copy in 0..<3 {
                    group.addTask { (0, i, try await store.recordOnce(plain[i], expiresAt: 10_000_000_000)) }
                    group.addTask { (1, i, try await store.recordOnce(retried[i], expiresAt: 10_000_000_000, attempt: [7])) }
                    group.addTask { (2, i, try await store.recordOnce(contested[i], expiresAt: 10_000_000_000, attempt: [UInt8(copy + 1)])) }
                }
            }
            return try await group.reduce(into: [[Int]](repeating: [Int](repeating: 0, count: 32), count: 3)) { counts, answer in
                if answer.2 { counts[answer.0][answer.1] += 1 }
            }
        }
        #expect(answers[0] == [Int](repeating: 1, count: 32), "one acceptance per identifier without an attempt")
        #expect(answers[1] == [Int](repeating: 3, count: 32), "the same attempt accepted each time")
        #expect(answers[2] == [Int](repeating: 1, count: 32), "one of three different attempts accepted")
        for identifier in plain + retried + contested {
            #expect(try await !store.recordOnce(identifier, expiresAt: 10_000_000_000))
        }
    }

    /// Enrolment is idempotent and refuses a second key; grants from four
    /// verifiers at once never overlap and cover the counter without gaps.
    static func devicesAndGrants(_ stores: [any VerifierStore]) async throws {
        let device = UUID().uuidString
        await expectStoreError(.store.notFound) { _ = try await stores[0].grantOfflineAllowance(device, count: 5, notAfter: 1) }
        #expect(try await stores[1].deviceRecord(device) == nil)
        try await stores[0].enrolDevice(device, record: [1, 2, 3])
        try await stores[1].enrolDevice(device, record: [1, 2, 3])
        await expectStoreError(.store.conflict) { try await stores[2].enrolDevice(device, record: [9]) }
        #expect(try await stores[3].deviceRecord(device) == [1, 2, 3])
        await expectStoreError(.store.invalidArgument) { _ = try await stores[0].grantOfflineAllowance(device, count: 0, notAfter: 1) }
        await expectStoreError(.store.invalidArgument) { try await stores[0].enrolDevice("", record: [1]) }
        // NUL cannot be stored in PostgreSQL's text: refused on every backend
        // (on PostgreSQL it failed with databaseFailure, and in a batch of grants, all of them).
        await expectStoreError(.store.invalidArgument) { try await stores[0].enrolDevice("a\0b", record: [1]) }
        await expectStoreError(.store.invalidArgument) { _ = try await stores[0].grantOfflineAllowance("a\0b", count: 1, notAfter: 1) }

        let grants = try await withThrowingTaskGroup(of: [OfflineGrant].self) { group in
            for store in stores {
                group.addTask {
                    var mine: [OfflineGrant] = []
                    for _ in 0..<25 { mine.append(try await store.grantOfflineAllowance(device, count: 10, notAfter: 2_000_000_000)) }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let values = grants.flatMap { $0.first..<($0.first + $0.count) }.sorted()
        #expect(values == Array(1...1000), "every counter value granted exactly once")
        let probe = try #require(grants.randomElement())
        #expect(try await stores[2].offlineGrant(device, containing: probe.first + 9) == probe)
        #expect(try await stores[2].offlineGrant(device, containing: 1001) == nil)
        #expect(try await stores[2].offlineGrant(device, containing: 0) == nil)
    }

    /// 240 grants at once from two stores over four devices, one of them not
    /// enrolled, with counts of 1 to 7: each enrolled device's values are
    /// granted exactly once, from 1 without a gap, through both stores, and
    /// each grant is stored with its own count and end; the unknown device's grants are
    /// `notFound` (on PostgreSQL, inside batches that grant the others).
    /// Returns the number of grant calls.
    static func concurrentGrants(_ stores: [any VerifierStore]) async throws -> Int {
        let devices = (0..<4).map { _ in UUID().uuidString }
        for device in devices.dropLast() { try await stores[0].enrolDevice(device, record: [7]) }
        let calls = 240
        let outcomes = try await withThrowingTaskGroup(of: (Int, OfflineGrant?).self) { group in
            for i in 0..<calls {
                group.addTask {
                    let device = devices[i % devices.count]
                    // Every device is granted through both stores at once.
                    let store = stores[(i / devices.count) % stores.count]
                    do {
                        return (i, try await store.grantOfflineAllowance(device, count: Int64(1 + i % 7), notAfter: 2_000_000_000 + Int64(i)))
                    } catch let error as TokenMintError where error.code == .store.notFound && device == devices.last {
                        return (i, nil)
                    }
                }
            }
            return try await group.reduce(into: [Int: OfflineGrant?]()) { $0[$1.0] = $1.1 }
        }
        #expect(outcomes.count == calls)
        for (d, device) in devices.enumerated() {
            let indices = Array(stride(from: d, to: calls, by: devices.count))
            guard device != devices.last else {
                #expect(indices.allSatisfy { outcomes[$0].map { $0 == nil } ?? false }, "an unknown device is granted nothing")
                continue
            }
            let grants = indices.compactMap { outcomes[$0] ?? nil }
            #expect(grants.count == indices.count)
            let values = grants.flatMap { $0.first..<($0.first + $0.count) }.sorted()
            let total = indices.reduce(Int64(0)) { $0 + Int64(1 + $1 % 7) }
            #expect(values == Array(1...total), "every value of \(device) granted exactly once")
            // What the store holds for each grant: its own range, count and end.
            for i in indices {
                let grant = try #require(outcomes[i] ?? nil)
                let stored = try await stores[(i / devices.count + 1) % stores.count].offlineGrant(device, containing: grant.first + grant.count - 1)
                #expect(stored == OfflineGrant(deviceID: device, first: grant.first, count: Int64(1 + i % 7), notAfter: 2_000_000_000 + Int64(i)))
            }
        }
        return calls
    }

    /// Four verifiers over the same state see the same 10,000 tokens in their
    /// own random orders: each token is accepted exactly once.
    static func fourVerifiers(_ stores: [any VerifierStore]) async throws {
        let count = ProcessInfo.processInfo.environment["TOKENMINT_VERIFIER_TOKENS"].flatMap(Int.init) ?? 10_000
        let (sdk, enrolment) = try await Self.device(limit: 0)
        var tokens: [String] = []
        for _ in 0..<count { tokens.append(try await sdk.getPaymentToken().description) }
        let verifiers = try stores.map { try PaymentTokenVerifier(store: $0, lifetime: 86_400, clock: .system) }
        let tokenList = tokens
        let accepted = try await withThrowingTaskGroup(of: [Int].self) { group in
            for verifier in verifiers {
                group.addTask {
                    var mine: [Int] = []
                    for index in (0..<tokenList.count).shuffled() {
                        do {
                            _ = try await verifier.verify(tokenList[index], enrolment: enrolment)
                            mine.append(index)
                        } catch let error as TokenMintError where error.code == .pay.replayedToken {
                            continue
                        }
                    }
                    return mine
                }
            }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        let acceptedCount = accepted.count
        #expect(acceptedCount == count, "accepted \(acceptedCount) of \(count)")
        #expect(Set(accepted).count == count, "no token accepted twice")
    }

    /// A verifier that requires grants refuses offline counters no server
    /// granted, and accepts them once granted; lookups by device ID work.
    static func offlineGrants(_ stores: [any VerifierStore]) async throws {
        let (sdk, enrolment) = try await Self.device(limit: 10)
        try await sdk.markOffline()
        var offline: [String] = []
        for _ in 0..<4 { offline.append(try await sdk.getPaymentToken().description) }
        var strict = try PaymentTokenVerifier(store: stores[0], lifetime: 600, clock: .system)
        strict.requiresOfflineGrant = true
        let other = try PaymentTokenVerifier(store: stores[1], lifetime: 600, clock: .system)
        let deviceID = PaymentTokenVerifier.deviceID(of: enrolment)
        await expectPay(.pay.deviceNotEnrolled) { _ = try await strict.verify(offline[0], deviceID: deviceID) }
        try await strict.enrol(enrolment)
        await expectPay(.pay.offlineTokenLimitReached) { _ = try await strict.verify(offline[0], deviceID: deviceID) }
        let grant = try await other.grantOfflineAllowance(deviceID: deviceID, count: 3, window: 3600)
        #expect(grant.first == 1 && grant.count == 3)
        for token in offline.prefix(3) { _ = try await strict.verify(token, deviceID: deviceID) }
        await expectPay(.pay.offlineTokenLimitReached) { _ = try await strict.verify(offline[3], deviceID: deviceID) }
        await expectPay(.pay.replayedToken) { _ = try await other.verify(offline[0], deviceID: deviceID) }
        let stranger = EnrolmentToken(tenant: enrolment.tenant, publicKey: Ed25519.PrivateKey().publicKey, referenceID: enrolment.referenceID)
        await expectPay(.pay.enrollmentError) { try await other.enrol(stranger) }
    }

    /// An enrolled, active device with its own reference ID.
    static func device(limit: Int) async throws -> (WhitelabelPay, EnrolmentToken) {
        let configuration = try WhitelabelPayConfiguration(
            tenantID: WhitelabelPayTests.tenant, referenceID: UUID().uuidString.lowercased(), offlineTokenLimit: limit)
        let sdk = try WhitelabelPay(configuration: configuration, store: InMemoryStore(), backend: LocalBackend(clock: .system))
        let enrolment = try await sdk.getEnrolmentToken()
        try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"enrolment-succeeded.v1"}"#.utf8))
        try await sdk.addPaymentMeans("card-1")
        return (sdk, enrolment)
    }
}
