package import TokenMintCore
internal import CSQLite
import Foundation

/// The write transactions of concurrent callers waiting to be committed
/// together (``SQLiteStore/groupedTransaction(_:_:)``).
final class CommitQueue: @unchecked Sendable {
    /// One caller's transaction body and how to answer it.
    final class Job: @unchecked Sendable {
        /// Runs the body on the connection; true when it threw.
        let run: (SQLiteStore.Connection) -> Bool
        /// Replaces the body's result with the batch's failure.
        let fail: (TokenMintError) -> Void
        /// Resumed with true to lead the next batch, false once committed
        /// (or failed); nil for the job of the caller that leads (under `lock`).
        var continuation: CheckedContinuation<Bool, Never>?

        init(run: @escaping (SQLiteStore.Connection) -> Bool, fail: @escaping (TokenMintError) -> Void) {
            self.run = run
            self.fail = fail
        }
    }

    let lock = NSLock()
    /// Jobs not yet taken into a batch (under `lock`).
    var pending: [Job] = []
    /// Whether a caller is running batches (under `lock`).
    var leading = false

    /// Queues `job`: resumes `continuation` at once with true when no batch
    /// is running (the caller leads), or later from the batch that takes it.
    func enqueue(_ job: Job, _ continuation: CheckedContinuation<Bool, Never>) {
        lock.lock()
        pending.append(job)
        guard !leading else {
            job.continuation = continuation
            lock.unlock()
            return
        }
        leading = true
        lock.unlock()
        continuation.resume(returning: true)
    }
}

/// The result of one caller's body, written by whichever task runs the batch.
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
    /// group gets that error and nothing of the group is written. A caller
    /// that finds no group running starts one at once: a single caller
    /// waits for nobody. Callers wait suspended, not on a thread.
    package func groupedTransaction<T: Sendable>(
        _ schema: Schema, _ body: @escaping @Sendable (Connection) throws(TokenMintError) -> T
    ) async throws(TokenMintError) -> T {
        try prepare(schema)
        let outcome = Outcome<T>()
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
            fail: { error in outcome.result = .failure(error) })
        let leads = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in commits.enqueue(job, continuation) }
        if leads { commitBatch() }
        guard let result = outcome.result else { throw TokenMintError(.store.databaseFailure, "a grouped transaction ended without a result") }
        return try result.get()
    }

    /// Creates `schema`'s tables if this open store has not yet.
    func prepare(_ schema: Schema) throws(TokenMintError) {
        lock.lock()
        defer { lock.unlock() }
        try prepareIfNeededLocked(schema)
    }

    /// Takes every waiting job, runs them in one transaction (each in its
    /// own savepoint) and commits; then answers them and hands the lead to
    /// the first job that arrived meanwhile.
    func commitBatch() {
        commits.lock.lock()
        let batch = commits.pending
        commits.pending = []
        commits.lock.unlock()

        lock.lock()
        let connection = Connection(db: db)
        var failure: TokenMintError?
        do throws(TokenMintError) {
            try SQLiteStore.execute(db, "BEGIN IMMEDIATE")
            for job in batch {
                try SQLiteStore.execute(db, "SAVEPOINT grouped")
                if job.run(connection) { try SQLiteStore.execute(db, "ROLLBACK TO grouped") }
                try SQLiteStore.execute(db, "RELEASE grouped")
                // Some errors (a full disk, I/O) make SQLite roll the whole
                // transaction back: what ran before is gone too.
                guard sqlite3_get_autocommit(db) == 0 else {
                    throw TokenMintError(.store.databaseFailure, "SQLite rolled the transaction back")
                }
            }
            try SQLiteStore.execute(db, "COMMIT")
        } catch {
            failure = error
            _ = sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        }
        lock.unlock()
        if let failure { for job in batch { job.fail(failure) } }

        commits.lock.lock()
        let answered = batch.compactMap(\.continuation)
        for job in batch { job.continuation = nil }
        let next = commits.pending.first
        let promoted = next?.continuation
        next?.continuation = nil
        if next == nil { commits.leading = false }
        commits.lock.unlock()
        for continuation in answered { continuation.resume(returning: false) }
        promoted?.resume(returning: true)
    }
}
