package import TokenMintCore
internal import CSQLite
import Foundation

/// The write transactions of concurrent callers waiting to be committed
/// together (``SQLiteStore/groupedTransaction(_:_:)``), and the thread that
/// commits them.
final class CommitQueue: @unchecked Sendable {
    /// One caller's transaction body and how to answer it.
    final class Job: @unchecked Sendable {
        /// Runs the body on the connection; true when it threw.
        let run: (SQLiteStore.Connection) -> Bool
        /// Replaces the body's result with the batch's failure.
        let fail: (TokenMintError) -> Void
        /// Resumed once the batch holding the job has committed (or failed).
        let continuation: CheckedContinuation<Void, Never>

        init(run: @escaping (SQLiteStore.Connection) -> Bool, fail: @escaping (TokenMintError) -> Void,
             continuation: CheckedContinuation<Void, Never>) {
            self.run = run
            self.fail = fail
            self.continuation = continuation
        }
    }

    let condition = NSCondition()
    /// Jobs not yet taken into a batch (under `condition`).
    var pending: [Job] = []
    /// Whether the committing thread runs (under `condition`).
    var running = false
    /// How long the committing thread waits for work before it ends.
    static let idleTimeout: TimeInterval = 0.5

    /// Queues `job` for `store`'s committing thread, starting it if it is not running.
    ///
    /// The thread holds the store weakly: a store its users have let go of
    /// closes at once (checkpointing its WAL into the file, which a later
    /// read-only, immutable open depends on) instead of when the thread
    /// idles out. A queued job's caller holds the store until it is answered.
    func enqueue(_ job: Job, for store: SQLiteStore) {
        condition.lock()
        pending.append(job)
        if !running {
            running = true
            let thread = Thread { [self, weak store] in drain { store } }
            thread.name = "tokenmint.sqlite.commit"
            thread.start()
        }
        condition.signal()
        condition.unlock()
    }

    /// The committing thread: takes every waiting job as one batch, commits
    /// it, and again, until no job has come for ``idleTimeout``.
    func drain(_ store: () -> SQLiteStore?) {
        while true {
            condition.lock()
            while pending.isEmpty {
                if !condition.wait(until: Date(timeIntervalSinceNow: Self.idleTimeout)), pending.isEmpty {
                    running = false
                    condition.unlock()
                    return
                }
            }
            let batch = pending
            pending = []
            condition.unlock()
            guard let store = store() else {
                // Unreachable while a caller waits (it holds the store); answered anyway.
                for job in batch {
                    job.fail(TokenMintError(.store.databaseFailure, "the store was closed"))
                    job.continuation.resume()
                }
                continue
            }
            store.commit(batch)
        }
    }
}

/// The result of one caller's body, written by the committing thread.
private final class Outcome<T>: @unchecked Sendable {
    var result: Result<T, TokenMintError>?
}

extension SQLiteStore {
    /// Runs `body` in a write transaction committed together with the
    /// transactions of every other caller waiting at that moment: one
    /// `COMMIT`, so one fsync, for the whole group (group commit).
    ///
    /// The guarantee is a single transaction's: the call returns only after
    /// the commit that holds its writes is durable, and a body that throws
    /// leaves nothing (its writes are rolled back to a savepoint; the
    /// others' stand). When the commit itself fails, every caller of the
    /// group gets that error and nothing of the group is written. The
    /// store's committing thread takes a job as soon as it is queued — a
    /// single caller waits for nobody — and callers wait suspended, not on
    /// a thread of the caller's pool.
    package func groupedTransaction<T: Sendable>(
        _ schema: Schema, _ body: @escaping @Sendable (Connection) throws(TokenMintError) -> T
    ) async throws(TokenMintError) -> T {
        try prepare(schema)
        let outcome = Outcome<T>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let job = CommitQueue.Job(
                run: { connection in
                    do throws(TokenMintError) {
                        outcome.result = .success(try body(connection))
                        return false
                    } catch {
                        outcome.result = .failure(error)
                        return true
                    }
                },
                fail: { error in outcome.result = .failure(error) },
                continuation: continuation)
            commits.enqueue(job, for: self)
        }
        guard let result = outcome.result else { throw TokenMintError(.store.databaseFailure, "a grouped transaction ended without a result") }
        return try result.get()
    }

    /// SQLite gathers concurrent grouped transactions into shared commits.
    public var groupsCommits: Bool { true }

    /// ``KeyValueStore/groupedTransaction(_:)`` on SQLite: the body runs on
    /// the committing thread in its own savepoint of the group's transaction
    /// (one commit, one fsync, for the group); what it throws comes back as is.
    nonisolated(nonsending) public func groupedTransaction<T: Sendable>(
        _ body: @escaping @Sendable (any StoreTransaction) throws -> T
    ) async throws -> T {
        let key = masterKey
        let outcome = Outcome<Result<T, any Error>>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let job = CommitQueue.Job(
                run: { connection in
                    do {
                        outcome.result = .success(.success(try body(Transaction(db: connection.db, key: key))))
                        return false
                    } catch {
                        outcome.result = .success(.failure(error))
                        return true
                    }
                },
                fail: { error in outcome.result = .failure(error) },
                continuation: continuation)
            commits.enqueue(job, for: self)
        }
        guard let result = outcome.result else { throw TokenMintError(.store.databaseFailure, "a grouped transaction ended without a result") }
        return try result.get().get()
    }

    /// Creates `schema`'s tables if this open store has not yet.
    ///
    /// Once they exist this takes no lock of the writing connection: a
    /// reader or a queued write must not wait for a commit in progress.
    func prepare(_ schema: Schema) throws(TokenMintError) {
        if readySchemas.withLock({ $0.contains(schema.name) }) { return }
        lock.lock()
        defer { lock.unlock() }
        try prepareIfNeededLocked(schema)
        readySchemas.withLock { _ = $0.insert(schema.name) }
    }

    /// Runs `batch` in one transaction, each job in its own savepoint, commits,
    /// and answers every job.
    func commit(_ batch: [CommitQueue.Job]) {
        lock.lock()
        let connection = Connection(db: db)
        var failure: TokenMintError?
        do throws(TokenMintError) {
            // Prepared once per connection (StatementCache), not parsed per job.
            try SQLiteStore.run(db, "BEGIN IMMEDIATE", [])
            for job in batch {
                try SQLiteStore.run(db, "SAVEPOINT grouped", [])
                if job.run(connection) { try SQLiteStore.run(db, "ROLLBACK TO grouped", []) }
                try SQLiteStore.run(db, "RELEASE grouped", [])
                // Some errors (a full disk, I/O) make SQLite roll the whole
                // transaction back: what ran before is gone too.
                guard sqlite3_get_autocommit(db) == 0 else {
                    throw TokenMintError(.store.databaseFailure, "SQLite rolled the transaction back")
                }
            }
            try SQLiteStore.run(db, "COMMIT", [])
        } catch {
            failure = error
            _ = sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        }
        lock.unlock()
        for job in batch {
            if let failure { job.fail(failure) }
            job.continuation.resume()
        }
    }

    /// Runs `body` (reads only) on the store's second, read-only connection,
    /// in one read transaction (one snapshot for all its statements): in WAL
    /// mode it reads the last committed state without waiting for a commit
    /// in progress on the writing connection. A store opened on
    /// read-only media has one connection, used for both.
    package func withReader<T>(_ schema: Schema, _ body: (Connection) throws(TokenMintError) -> T) throws(TokenMintError) -> T {
        try prepare(schema)
        readerLock.lock()
        defer { readerLock.unlock() }
        if reader == nil {
            if isReadOnly { return try withTables(schema, transaction: false, body) }
            reader = try SQLiteStore.connectReader(path)
        }
        guard let reader else { throw TokenMintError(.store.cannotOpen, "no read connection") }
        // One read transaction: every statement of the body sees one snapshot.
        try SQLiteStore.run(reader, "BEGIN", [])
        do {
            let result = try body(Connection(db: reader))
            try SQLiteStore.run(reader, "COMMIT", [])
            return result
        } catch {
            _ = sqlite3_exec(reader, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// A read-only connection to a store file another connection writes (WAL).
    static func connectReader(_ path: String) throws(TokenMintError) -> OpaquePointer {
        var handle: OpaquePointer? = nil
        let status = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw TokenMintError(.store.cannotOpen, "cannot open \(path) for reading: \(message)")
        }
        sqlite3_busy_timeout(handle, 5000)
        return handle
    }
}
