import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
@testable import TokenMintStore
import TokenMintPay

func temporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func expectStore(_ code: TokenMintError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected TokenMintError.\(code)", sourceLocation: sourceLocation)
    } catch let error as TokenMintError {
        if error.code != code { Issue.record("expected TokenMintError.\(code), got \(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("expected TokenMintError.\(code), got \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("SQLite store")
struct StoreTests {
    @Test("values, secrets and counters survive reopening; secrets are sealed on disk")
    func roundTrip() throws {
        let dir = try temporaryDirectory()
        let path = dir + "/s.sqlite"
        let secret = SecureBytes(Array("device-seed-0123456789abcdef0123".utf8))
        do {
            let store = try SQLiteStore(path: path, masterKey: .file(path: dir + "/master.key"))
            try store.transaction { tx in
                try tx.setValue("plain", [1, 2, 3])
                try tx.setSecret("key", secret)
                _ = try tx.increment("n", by: 5)
            }
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/master.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(raw.range(of: Data("device-seed-0123456789abcdef0123".utf8)) == nil, "the secret is on disk in the clear")
        let store = try SQLiteStore(path: path, masterKey: .file(path: dir + "/master.key", create: false))
        let (plain, key, n, missing) = try store.transaction { tx in
            (try tx.value("plain"), try tx.secret("key"), try tx.counter("n"), try tx.value("missing"))
        }
        #expect(plain == [1, 2, 3])
        #expect(key == secret)
        #expect(n == 5)
        #expect(missing == nil)
    }

    @Test("a wrong master key is a typed error, never garbage")
    func wrongMasterKey() throws {
        let dir = try temporaryDirectory()
        let path = dir + "/s.sqlite"
        _ = try SQLiteStore(path: path, masterKey: .key(SecureBytes(randomCount: 32)))
        expectStore(.store.wrongMasterKey) { _ = try SQLiteStore(path: path, masterKey: .key(SecureBytes(randomCount: 32))) }
        expectStore(.store.masterKeyUnavailable) { _ = try SQLiteStore(path: path, masterKey: .key(SecureBytes(randomCount: 16))) }
        expectStore(.store.masterKeyUnavailable) { _ = try SQLiteStore(path: path, masterKey: .environment(variable: "TOKENMINT_NO_SUCH_VARIABLE")) }
        expectStore(.store.masterKeyUnavailable) { _ = try SQLiteStore(path: dir + "/t.sqlite", masterKey: .file(path: dir + "/none.key", create: false)) }
    }

    @Test("a passphrase-derived key (Argon2id) opens the store again, another does not")
    func passphrase() throws {
        let dir = try temporaryDirectory()
        let path = dir + "/p.sqlite"
        do {
            let store = try SQLiteStore(path: path, masterKey: .passphrase("correct horse", cost: .minimum))
            try store.transaction { tx in try tx.setSecret("s", SecureBytes([9, 9, 9])) }
        }
        let again = try SQLiteStore(path: path, masterKey: .passphrase("correct horse", cost: .minimum))
        #expect(try again.transaction { tx in try tx.secret("s") } == SecureBytes([9, 9, 9]))
        expectStore(.store.wrongMasterKey) { _ = try SQLiteStore(path: path, masterKey: .passphrase("wrong horse", cost: .minimum)) }
    }

    @Test("a failed transaction leaves nothing behind")
    func rollback() throws {
        let dir = try temporaryDirectory()
        let store = try SQLiteStore(path: dir + "/r.sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try store.transaction { tx in
                try tx.setValue("a", [1])
                _ = try tx.increment("c", by: 1)
                throw Boom()
            }
        }
        let (a, c) = try store.transaction { tx in (try tx.value("a"), try tx.counter("c")) }
        #expect(a == nil)
        #expect(c == 0)
    }

    @Test("in memory, a failed transaction puts back exactly what it changed: values, secrets, counters, removals")
    func inMemoryRollback() throws {
        let store = InMemoryStore()
        try store.transaction { tx in
            try tx.setValue("a", [1])
            try tx.setValue("r1", [2])
            try tx.setValue("r2", [3])
            try tx.setSecret("s", SecureBytes([4]))
            try tx.setCounter("c", 5)
        }
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try store.transaction { tx in
                try tx.setValue("a", [9])
                try tx.setValue("new", [9])
                try tx.setSecret("s", SecureBytes([9]))
                try tx.setSecret("s2", SecureBytes([9]))
                _ = try tx.increment("c", by: 10)
                _ = try tx.increment("c2", by: 1)
                try tx.remove("a")
                #expect(try tx.removeValues(from: "r", upTo: "s") == 2)
                let gone = try ["a", "r1"].map { try tx.value($0) }
                #expect(gone == [nil, nil])
                throw Boom()
            }
        }
        let values = try store.transaction { tx in try ["a", "r1", "r2", "new"].map { try tx.value($0) } }
        #expect(values == [[1], [2], [3], nil])
        let secrets = try store.transaction { tx in try ["s", "s2"].map { try tx.secret($0) } }
        #expect(secrets == [SecureBytes([4]), nil])
        let counters = try store.transaction { tx in try ["c", "c2"].map { try tx.counter($0) } }
        #expect(counters == [5, 0])
        // The store reuses one transaction: a failure undoes its own changes, never those
        // of transactions that committed before it (an increment that made its counter too).
        #expect(try store.transaction { tx in try tx.increment("c", by: 1) } == 6)
        #expect(try store.transaction { tx in try tx.increment("c3", by: 2) } == 2)
        #expect(throws: Boom.self) {
            try store.transaction { tx in
                _ = try tx.increment("c", by: 100)
                throw Boom()
            }
        }
        #expect(try store.transaction { tx in try ["c", "c3"].map { try tx.counter($0) } } == [6, 2])
    }

    @Test("grouped transactions, SQLite and memory: 32 at once, each its own result; one that throws leaves nothing and gets its error")
    func groupedTransactions() async throws {
        let dir = try temporaryDirectory()
        let stores: [any KeyValueStore] = [try SQLiteStore(path: dir + "/g.sqlite", masterKey: .key(SecureBytes(randomCount: 32))), InMemoryStore()]
        struct Boom: Error {}
        for store in stores {
            let results = try await withThrowingTaskGroup(of: (Int, Int64?).self) { group in
                for i in 0..<32 {
                    group.addTask {
                        do {
                            let value = try await store.groupedTransaction { tx -> Int64 in
                                try tx.setValue("v\(i)", [UInt8(i)])
                                let count = try tx.increment("count", by: 1)
                                if i == 7 { throw Boom() }
                                return count
                            }
                            return (i, value)
                        } catch is Boom {
                            return (i, nil)
                        }
                    }
                }
                return try await group.reduce(into: [Int: Int64?]()) { $0[$1.0] = $1.1 }
            }
            #expect(results.count == 32 && results[7] == .some(nil))
            // The counter values handed out are 1...31, each once: every body saw the ones before it.
            #expect(Set(results.values.compactMap { $0 }) == Set(1...31))
            let (count, v7, v8) = try store.transaction { tx in (try tx.counter("count"), try tx.value("v7"), try tx.value("v8")) }
            #expect(count == 31 && v7 == nil && v8 == [8])
        }
    }

    @Test("a file that is not a store, and a read-only store, give typed errors")
    func corruptedAndReadOnly() throws {
        let dir = try temporaryDirectory()
        let bad = dir + "/bad.sqlite"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: bad))
        expectStore(.store.corrupted) { _ = try SQLiteStore(path: bad, masterKey: .key(SecureBytes(randomCount: 32))) }
        let key = SecureBytes(randomCount: 32)
        let path = dir + "/ro.sqlite"
        do {
            let store = try SQLiteStore(path: path, masterKey: .key(key))
            try store.transaction { tx in try tx.setValue("x", [1]) }
        }
        if getuid() != 0 {  // root ignores file modes
            chmod(path, 0o400)
            #expect(throws: TokenMintError.self) { _ = try SQLiteStore(path: path, masterKey: .key(key)) }
        }
    }

    @Test("reset wipes secrets, values, counters and the ledger")
    func reset() async throws {
        let dir = try temporaryDirectory()
        let store = try SQLiteStore(path: dir + "/x.sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        try store.transaction { tx in
            try tx.setSecret("k", SecureBytes([1]))
            try tx.setValue("v", [2])
            try tx.setCounter("c", 7)
        }
        #expect(try await store.recordOnce([1, 2, 3], expiresAt: 100, attempt: nil, spending: nil))
        try store.reset()
        let (k, v, c) = try store.transaction { tx in (try tx.secret("k"), try tx.value("v"), try tx.counter("c")) }
        #expect(k == nil)
        #expect(v == nil)
        #expect(c == 0)
        #expect(try await store.recordOnce([1, 2, 3], expiresAt: 100, attempt: nil, spending: nil))
    }

    @Test("the ledger accepts an identifier once, also under concurrency; pruning frees it")
    func ledger() async throws {
        let dir = try temporaryDirectory()
        let store = try SQLiteStore(path: dir + "/l.sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        let accepted = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 { group.addTask { (try? await store.recordOnce([7, 7, 7], expiresAt: 50, attempt: nil, spending: nil)) == true ? 1 : 0 } }
            return await group.reduce(0, +)
        }
        #expect(accepted == 1)
        #expect(try store.prune(expiredBefore: 51) == 1)
        #expect(try await store.recordOnce([7, 7, 7], expiresAt: 50, attempt: nil, spending: nil))
        await VerifierStoreTests.expectStoreError(.store.invalidArgument) { _ = try await store.recordOnce([], expiresAt: 1, attempt: nil, spending: nil) }
    }

    @Test("XChaCha20-Poly1305 seals bind the associated data")
    func sealing() throws {
        let key = SecureBytes(randomCount: 32)
        let box = try XChaCha20Poly1305.seal([1, 2, 3], key: key, associatedData: Array("a".utf8))
        #expect(box.count == 3 + XChaCha20Poly1305.overhead)
        #expect(try XChaCha20Poly1305.open(box, key: key, associatedData: Array("a".utf8)) == SecureBytes([1, 2, 3]))
        #expect(throws: TokenMintError.self) { try XChaCha20Poly1305.open(box, key: key, associatedData: Array("b".utf8)) }
        var tampered = box
        tampered[30] ^= 1
        #expect(throws: TokenMintError.self) { try XChaCha20Poly1305.open(tampered, key: key, associatedData: Array("a".utf8)) }
    }
}

@Suite("Group commit")
struct GroupCommitTests {
    static let schema = SQLiteStore.Schema(name: "tests.group", statements: "CREATE TABLE IF NOT EXISTS grouped (n INTEGER PRIMARY KEY);",
                                           clearedOnReset: [])

    @Test("concurrent write transactions commit together; a body that throws leaves nothing and spoils no other's write")
    func savepoints() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let key = SecureBytes(randomCount: 32)
        let store = try SQLiteStore(path: dir + "/g.sqlite", masterKey: .key(key))
        let outcomes = await withTaskGroup(of: (Int, Result<Int, TokenMintError>).self) { group in
            for n in 0..<64 {
                group.addTask {
                    do throws(TokenMintError) {
                        return (n, .success(try await store.groupedTransaction(Self.schema) { db throws(TokenMintError) -> Int in
                            try db.run("INSERT INTO grouped (n) VALUES (?)", [.integer(Int64(n))])
                            // Odd bodies fail after their write: the write must vanish.
                            if n % 2 == 1 { throw TokenMintError(.store.conflict, "odd \(n)") }
                            return n * 10
                        }))
                    } catch { return (n, .failure(error)) }
                }
            }
            return await group.reduce(into: [Int: Result<Int, TokenMintError>]()) { $0[$1.0] = $1.1 }
        }
        for n in 0..<64 {
            if n % 2 == 0 {
                #expect((try? outcomes[n]?.get()) == n * 10, "caller \(n) gets its own result")
            } else {
                guard case .failure(let error) = outcomes[n] else { Issue.record("caller \(n) should fail"); continue }
                #expect(error.code == .store.conflict && error.reason == "odd \(n)", "caller \(n) gets its own error")
            }
        }
        // What a fresh connection reads from the file is exactly the even writes.
        let reopened = try SQLiteStore(path: dir + "/g.sqlite", masterKey: .key(key))
        let rows = try reopened.withTables(Self.schema, transaction: false) { db throws(TokenMintError) in
            try db.query("SELECT n FROM grouped ORDER BY n").compactMap { $0.first?.integer }
        }
        #expect(rows == Array(stride(from: 0, to: 64, by: 2)).map(Int64.init))
    }
}
