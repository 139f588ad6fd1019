#if Postgres
import Foundation
import Synchronization
import Testing
import TokenMintCore
import TokenMintCrypto
import TokenMintStore
@testable import TokenMintPostgres
import PostgresNIO

/// The OAuth server's state store on PostgreSQL: the `KeyValueStore`
/// contract, sealing, bytewise name order and transactions serialized
/// across processes. Each test takes a new database of its own (the key
/// check binds a database to one master key).
@Suite("PostgreSQL key-value store", .enabled(if: Backend.postgresAvailable, VerifierStoreTests.postgresReason))
struct PostgresKeyValueStoreTests {
    /// A new, migrated database on the test cluster.
    static func freshDatabase() async throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: try #require(Backend.postgresURL))
        let name = "tokenmint_kv_\(UInt32.random(in: 0...UInt32.max))"
        let connection = try await PostgresConnection.connect(
            configuration: .init(host: configuration.host, port: configuration.port, username: configuration.username,
                                 password: configuration.password, database: configuration.database, tls: .disable),
            id: 1, logger: Logger(label: "test"))
        try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "test"))
        try await connection.close()
        configuration.database = name
        let copy = configuration
        _ = try await PostgresVerifierStore.withStore(copy) { try await $0.migrate() }
        return configuration
    }

    @Test("values, secrets and counters shared by two processes; secrets sealed; another master key refused")
    func contract() async throws {
        let configuration = try await Self.freshDatabase()
        let key = SecureBytes(randomCount: 32)
        let first = try PostgresKeyValueStore(configuration: configuration, masterKey: .key(key))
        try first.transaction { tx in
            try tx.setValue("plain", [1, 2, 3])
            try tx.setSecret("hidden", SecureBytes(Array("the signing key".utf8)))
            #expect(try tx.increment("counter", by: 41) == 41)
            #expect(try tx.increment("counter", by: 1) == 42)
        }
        let second = try PostgresKeyValueStore(configuration: configuration, masterKey: .key(key))
        let identity = first.identity
        #expect(identity == second.identity)
        #expect(identity.count == 16)
        try second.transaction { tx in
            #expect(try tx.value("plain") == [1, 2, 3])
            #expect(try tx.secret("hidden") == SecureBytes(Array("the signing key".utf8)))
            #expect(try tx.counter("counter") == 42)
            #expect(try tx.counter("never set") == 0)
            #expect(throws: TokenMintError.self) { try tx.value("hidden") }
            let raw = try #require(try (tx as? PostgresKeyValueStore.Transaction)?.row("hidden"))
            #expect(raw.sealed && !raw.value.isEmpty)
            #expect(String(decoding: raw.value, as: UTF8.self).range(of: "signing key") == nil, "the secret reached the server unsealed")
            try tx.remove("plain")
            #expect(try tx.value("plain") == nil)
        }
        let error = #expect(throws: TokenMintError.self) {
            _ = try PostgresKeyValueStore(configuration: configuration, masterKey: .key(SecureBytes(randomCount: 32)))
        }
        #expect(error?.code == .store.wrongMasterKey)
        // A missing key file for a database that has state is not a fresh start.
        let missing = #expect(throws: TokenMintError.self) {
            _ = try PostgresKeyValueStore(configuration: configuration, masterKey: .file(path: try temporaryDirectory() + "/master.key"))
        }
        #expect(missing?.code == .store.masterKeyUnavailable)
        let gone = try first.transaction { tx in try tx.value("plain") }
        #expect(gone == nil)
    }

    struct Planned: Error {}

    @Test("a transaction that throws leaves nothing behind, and the store goes on")
    func rollback() async throws {
        let store = try PostgresKeyValueStore(configuration: try await Self.freshDatabase(), masterKey: .key(SecureBytes(randomCount: 32)))
        #expect(throws: Planned.self) {
            try store.transaction { tx in
                try tx.setValue("half", [1])
                _ = try tx.increment("half", by: 5)
                throw Planned()
            }
        }
        try store.transaction { tx throws in
            #expect(try tx.value("half") == nil)
            #expect(try tx.counter("half") == 0)
        }
        #expect(throws: TokenMintError.self) { try store.transaction { tx in try tx.setValue("", [1]) } }
        #expect(throws: TokenMintError.self) { try store.transaction { tx in try tx.setValue(String(repeating: "n", count: 2049), [1]) } }
        try store.transaction { tx in try tx.setValue("kept", [7]) }
        #expect(try store.transaction { tx in try tx.value("kept") } == [7])
    }

    @Test("removeValues(from:upTo:) takes names in bytewise UTF-8 order, as SQLite does")
    func bytewiseRange() async throws {
        let store = try PostgresKeyValueStore(configuration: try await Self.freshDatabase(), masterKey: .key(SecureBytes(randomCount: 32)))
        let names = ["p.a", "p.b", "p.B", "p.z", "p.é", "p.e", "q.a"]
        try store.transaction { tx in for name in names { try tx.setValue(name, [1]) } }
        // Bytewise, "B" (0x42) < "a" < "b" < "e" < "z" < "{" (0x7B) < "é" (0xC3 0xA9):
        // a locale's order would put "é" beside "e" and "B" beside "b".
        let removed = try store.transaction { tx in try tx.removeValues(from: "p.b", upTo: "p.{") }
        #expect(removed == 3)
        let left = try store.transaction { tx in try names.filter { try tx.value($0) != nil } }
        #expect(left == ["p.a", "p.B", "p.é", "q.a"])
    }

    @Test("transactions are serialized across processes: 400 read-modify-writes from two stores lose none")
    func serialized() async throws {
        let configuration = try await Self.freshDatabase()
        let key = SecureBytes(randomCount: 32)
        let stores = [try PostgresKeyValueStore(configuration: configuration, masterKey: .key(key)),
                      try PostgresKeyValueStore(configuration: configuration, masterKey: .key(key))]
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for _ in 0..<50 {
                do {
                    try stores[worker % 2].transaction { tx in
                        // Not an increment in SQL: a read, then a write of what was read plus one.
                        let seen = try tx.counter("shared")
                        try tx.setCounter("shared", seen + 1)
                    }
                } catch { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try stores[0].transaction { tx in try tx.counter("shared") } == 400)
    }

    @Test("a connection the server ended while idle is replaced without failing the next transaction; NUL in a name is a typed error")
    func reconnects() async throws {
        let configuration = try await Self.freshDatabase()
        let store = try PostgresKeyValueStore(configuration: configuration, masterKey: .key(SecureBytes(randomCount: 32)))
        try store.transaction { tx in try tx.setValue("before", [1]) }
        // End the store's session from another connection, as a server restart or an idle timeout would.
        let admin = try await PostgresConnection.connect(
            configuration: .init(host: configuration.host, port: configuration.port, username: configuration.username,
                                 password: configuration.password, database: configuration.database, tls: .disable),
            id: 2, logger: Logger(label: "test"))
        let ended = try await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'tokenmint-state' AND datname = \(configuration.database ?? "")",
            logger: Logger(label: "test"))
        var count = 0
        for try await _ in ended { count += 1 }
        try await admin.close()
        #expect(count == 1)
        try await Task.sleep(for: .milliseconds(200))
        #expect(try store.transaction { tx in try tx.value("before") } == [1])
        let error = #expect(throws: TokenMintError.self) { try store.transaction { tx in try tx.setValue("a\u{0}b", [1]) } }
        #expect(error?.code == .store.invalidArgument)
        let sqlite = try SQLiteStore(path: try temporaryDirectory() + "/s.sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        let local = #expect(throws: TokenMintError.self) { try sqlite.transaction { tx in try tx.setValue("a\u{0}b", [1]) } }
        #expect(local?.code == .store.invalidArgument)
    }
}
#endif
