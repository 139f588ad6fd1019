#if Postgres
import TokenMintCore
import TokenMintPay
import TokenMintStore
internal import PostgresNIO

/// Group commit on PostgreSQL: the writes of callers running at the same
/// moment go to the server as one statement, one round trip and one commit,
/// and each caller is answered when that commit is done. A caller alone
/// waits for nobody: a batch starts as soon as fewer than
/// ``maximumInFlight`` are on the wire, and the writes that arrive meanwhile
/// form the next one. The ledger's inserts (`RecordOnceBatch`) and the
/// offline grants (`GrantBatch`) each have one; `run` sends a batch of
/// `Request`s on a connection and answers each, in order.
///
/// Time limit: one watchdog task looks at the batches on the wire while
/// there are any (every quarter of the limit, at most every second), and
/// answers a batch that has had no answer within the limit with `timeout`,
/// cancels its sender and gives its place on the wire to what waits. A late
/// answer to it is dropped (its callers were told the answer was lost: a
/// ledger retry is refused, never accepted twice; a grant's counter values
/// may be wasted, never granted twice). One watchdog for every batch,
/// instead of a timer and two tasks per batch, measured 20.3k → 21.4–22.7k
/// ledger inserts/s at 16 callers.
///
/// Connections: a sender keeps the pooled connection it leased for the
/// batches it sends in a row, and gives it back once ``maximumHold`` has
/// passed (see `send`).
final class StatementBatcher<Request: Sendable, Answer: Sendable>: Sendable {
    /// Sends one batch on a connection: each request's answer in order, or
    /// the statement's one failure. Never throws.
    typealias Run = @Sendable ([Request], PostgresConnection, PostgresVerifierStore) async -> Result<[Answer], TokenMintError>

    struct Entry: Sendable {
        let request: Request
        let continuation: CheckedContinuation<Result<Answer, TokenMintError>, Never>
    }

    /// A sender's task, which the watchdog cancels when its batch is late
    /// (a query still waiting for a pooled connection then withdraws).
    final class Sender: Sendable {
        private let state = Locked<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

        /// Binds the task running this sender (cancelled at once if already asked).
        func attach(_ task: Task<Void, Never>) {
            if state.withLock({ state -> Bool in
                state.task = task
                return state.cancelled
            }) { task.cancel() }
        }

        /// Cancels the sender's task, now or when it is attached.
        func cancel() {
            state.withLock { state -> Task<Void, Never>? in
                state.cancelled = true
                return state.task
            }?.cancel()
        }
    }

    /// A batch on the wire: its entries, its sender, and when it is late.
    struct Flight {
        let entries: [Entry]
        let sender: Sender
        let deadline: ContinuousClock.Instant
    }

    /// A batch to send, under its flight number, by `sender`.
    struct Launch: Sendable {
        let batch: [Entry]
        let flight: Int
        let sender: Sender
        let startsWatchdog: Bool
    }

    /// What the batcher holds, under its lock.
    struct State {
        /// Requests waiting for a batch.
        var pending: [Entry] = []
        /// Batches on the wire (late ones leave it, though their senders may
        /// still wait for an answer they will drop).
        var inFlight = 0
        /// The batches on the wire, by flight number.
        var flights: [Int: Flight] = [:]
        /// The next flight number.
        var nextFlight = 0
        /// The most requests one batch has held.
        var largestBatch = 0
        /// Whether a watchdog runs.
        var watching = false
    }

    /// Batches on the wire at once (each holds a pooled connection). Two
    /// measured best on the 2-core VM at 16 callers (1: 19.0k inserts/s,
    /// 2: 20.2k, 4: 14.6k; with the watchdog, in one run each: 1: 19.6k,
    /// 2: 22.1k, 3: 20.1k; later, in the same minutes: 2: 18.8k, 3: 17.8k,
    /// 4: 17.4k; all before senders kept their connections): fewer, larger
    /// batches cost the server less. (Measured on the ledger; grants share it.)
    static var maximumInFlight: Int { 2 }
    /// Requests per statement.
    static var maximumBatch: Int { 256 }
    /// How long a sender keeps one pooled connection: the first batch that
    /// ends this long after the lease gives it back, and the next leases
    /// again (behind whatever else waits for one).
    static var maximumHold: Duration { .milliseconds(20) }

    /// The operation, as its errors name it.
    let operation: String
    /// How long a batch may wait for its answer.
    let limit: Duration
    /// Sends a batch.
    private let run: Run
    private let state = Locked(State())

    /// A batcher of `operation`, whose batches `run` sends and may wait
    /// `limit` for their answers.
    init(_ operation: String, limit: Duration, run: @escaping Run) {
        self.operation = operation
        self.limit = limit
        self.run = run
    }

    /// How many batches were sent so far, and the most requests one held.
    var statistics: (batches: Int, largest: Int) { state.withLock { ($0.nextFlight, $0.largestBatch) } }

    /// `request`'s answer, from whichever batch takes it.
    func submit(_ request: Request, store: PostgresVerifierStore) async throws(TokenMintError) -> Answer {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Answer, TokenMintError>, Never>) in
            let entry = Entry(request: request, continuation: continuation)
            let launch = state.withLock { state -> Launch? in
                state.pending.append(entry)
                guard state.inFlight < Self.maximumInFlight else { return nil }
                state.inFlight += 1
                return launchNext(&state, by: nil)
            }
            if let launch { start(launch, store: store) }
        }
        return try result.get()
    }

    /// Takes the next batch from `pending` and puts it on the wire's list,
    /// for `sender` (nil: a new one).
    private func launchNext(_ state: inout State, by sender: Sender?) -> Launch {
        let batch = Array(state.pending.prefix(Self.maximumBatch))
        state.pending.removeFirst(batch.count)
        state.largestBatch = max(state.largestBatch, batch.count)
        let flight = state.nextFlight
        state.nextFlight &+= 1
        let sender = sender ?? Sender()
        state.flights[flight] = Flight(entries: batch, sender: sender, deadline: .now + limit)
        let startsWatchdog = !state.watching
        state.watching = true
        return Launch(batch: batch, flight: flight, sender: sender, startsWatchdog: startsWatchdog)
    }

    /// Runs a new sender for `launch` (and the watchdog, when none runs).
    private func start(_ launch: Launch, store: PostgresVerifierStore) {
        startWatchdog(for: launch, store: store)
        launch.sender.attach(Task { await self.send(launch, store: store) })
    }

    /// Starts the watchdog when `launch` was the first on the wire since it stopped.
    private func startWatchdog(for launch: Launch, store: PostgresVerifierStore) {
        if launch.startsWatchdog { Task { await self.watch(store: store) } }
    }

    /// Sends a batch, answers it, and goes on with what queued meanwhile.
    /// A batch the watchdog answered first is not answered again, and this
    /// sender stops: its place on the wire was given to another.
    ///
    /// The sender keeps one pooled connection while it has batches to send:
    /// a connection given back to the pool after every batch is parked with
    /// a keep-alive and an idle timer (a task and a dispatch timer each,
    /// cancelled at the next lease), 18 % of the benchmark's CPU samples at
    /// 16 callers; without them the ledger insert at 16 callers went from
    /// 1.73–1.91× to 1.99–2.43× the bare insert (Benchmarks/README.md). The
    /// first batch that ends ``maximumHold`` after the lease gives the
    /// connection back, so the store's other calls get one in their turn,
    /// however small the pool. A batch that failed closes its connection
    /// before giving it back: a broken one, or one whose prepared statement
    /// failed (PostgresNIO keeps that failure for the connection's life, so a
    /// prepare that met a lock or the statement timeout would fail every
    /// later batch on it), is not leased again. Failures are rare, and a new
    /// connection is cheap next to a ledger that keeps failing.
    private func send(_ first: Launch, store: PostgresVerifierStore) async {
        var launch: Launch? = first
        while launch != nil {
            do {
                // Nothing in this closure throws (`run` answers its
                // failures): an error here is the lease's, before any batch of
                // it was sent, and `launch` is the batch that waited for it.
                try await store.client.withConnection { connection in
                    let leased = ContinuousClock.now
                    while let batch = launch {
                        let outcome = await run(batch.batch.map(\.request), connection, store)
                        launch = finish(batch, outcome, store: store)
                        if case .failure = outcome {
                            try? await connection.close()
                            return
                        }
                        if ContinuousClock.now - leased >= Self.maximumHold { return }
                    }
                }
            } catch {
                if let waiting = launch {
                    launch = finish(waiting, .failure(PostgresErrors.typed(error, operation)), store: store)
                }
            }
        }
    }

    /// Answers `launch` with `outcome` (each entry's answer, or the batch's
    /// one failure) unless the watchdog already did, and takes the next batch
    /// for the same sender (nil: the sender stops).
    private func finish(_ launch: Launch, _ outcome: Result<[Answer], TokenMintError>, store: PostgresVerifierStore) -> Launch? {
        let (mine, next) = state.withLock { state -> (Bool, Launch?) in
            guard state.flights.removeValue(forKey: launch.flight) != nil else { return (false, nil) }
            guard !state.pending.isEmpty else {
                state.inFlight -= 1
                return (true, nil)
            }
            return (true, launchNext(&state, by: launch.sender))
        }
        if mine {
            switch outcome {
            case .success(let answers) where answers.count != launch.batch.count:
                // Every entry is answered exactly once, whatever `run` returned.
                let error = TokenMintError(.store.databaseFailure, "\(operation): \(answers.count) answers for \(launch.batch.count) requests")
                for entry in launch.batch { entry.continuation.resume(returning: .failure(error)) }
            case .success(let answers):
                for (entry, answer) in zip(launch.batch, answers) { entry.continuation.resume(returning: .success(answer)) }
            case .failure(let error):
                for entry in launch.batch { entry.continuation.resume(returning: .failure(error)) }
            }
        }
        if let next { startWatchdog(for: next, store: store) }
        return next
    }

    /// While batches are on the wire: answers the late ones with `timeout`,
    /// and starts senders for what was waiting behind them.
    private func watch(store: PostgresVerifierStore) async {
        let period = min(max(limit / 4, .milliseconds(50)), .seconds(1))
        while true {
            try? await Task.sleep(for: period)
            let (late, launches, done) = state.withLock { state -> ([Flight], [Launch], Bool) in
                let now = ContinuousClock.now
                var late: [Flight] = []
                for (number, flight) in state.flights where flight.deadline <= now {
                    late.append(flight)
                    state.flights[number] = nil
                    state.inFlight -= 1
                }
                var launches: [Launch] = []
                while state.inFlight < Self.maximumInFlight, !state.pending.isEmpty {
                    state.inFlight += 1
                    launches.append(launchNext(&state, by: nil))
                }
                // This watchdog goes on while anything is on the wire; a launch
                // made after it stops starts another.
                let done = state.flights.isEmpty
                if done { state.watching = false }
                return (late, launches, done)
            }
            if !late.isEmpty {
                let error = TokenMintError(.store.timeout, "\(operation): no answer within \(limit) (server unreachable or overloaded)")
                for flight in late {
                    flight.sender.cancel()
                    for entry in flight.entries { entry.continuation.resume(returning: .failure(error)) }
                }
            }
            for launch in launches { start(launch, store: store) }
            if done { return }
        }
    }
}

/// A ledger insert waiting for its batch.
struct LedgerInsert: Sendable {
    let identifier: [UInt8]
    let expiresAt: Int64
    let attempt: [UInt8]?
}

/// An offline grant waiting for its batch.
struct GrantRequest: Sendable {
    let deviceID: String
    let count: Int64
    let notAfter: Int64
}

/// Gathers concurrent ledger inserts into one statement: whether each is fresh.
typealias LedgerBatcher = StatementBatcher<LedgerInsert, Bool>
/// Gathers concurrent offline grants into one statement: each one's first
/// counter value, or nil for a device that is not enrolled.
typealias GrantBatcher = StatementBatcher<GrantRequest, Int64?>

extension PostgresVerifierStore {
    /// The ledger insert, as its errors name it.
    static let ledgerOperation = "ledger insert"
    /// The offline grant, as its errors name it.
    static let grantOperation = "grant"

    /// One statement for `batch`: whether each entry is fresh, in order, or
    /// the statement's failure, every entry's answer (none of them was
    /// recorded, or the answer was lost: a retry is refused, never accepted
    /// twice). Never throws: a failure is answered.
    func recordBatch(_ batch: [LedgerInsert], on connection: PostgresConnection) async -> Result<[Bool], TokenMintError> {
        // The batcher's watchdog keeps the time limit: no timer per batch.
        func failure(_ error: any Error) -> TokenMintError { PostgresErrors.typed(error, Self.ledgerOperation) }
        // A batch of one takes the single-row statement, which the server runs faster.
        if batch.count == 1, let entry = batch.first {
            let statement = RecordOnce(identifier: ByteBuffer(bytes: entry.identifier), expiresAt: entry.expiresAt,
                                       attempt: entry.attempt.map { ByteBuffer(bytes: $0) })
            do {
                for try await mine in try await connection.execute(statement, logger: logger) { return .success([mine]) }
                return .success([false])
            } catch {
                return .failure(failure(error))
            }
        }
        // Distinct identifiers go to the server; a repeat is answered from its first's row.
        var order: [[UInt8]] = []
        var seen: Set<[UInt8]> = []
        for entry in batch where seen.insert(entry.identifier).inserted { order.append(entry.identifier) }
        // One order for every batch (bytewise): two batches in flight, here or
        // in another verifier process, lock their rows in the same order and
        // cannot deadlock each other, whatever order the tokens came in.
        order.sort { $0.lexicographicallyPrecedes($1) }
        let firsts = Dictionary(batch.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        let statement = RecordOnceBatch(
            identifiers: order.map { ByteBuffer(bytes: $0) }, expiresAt: order.map { firsts[$0]?.expiresAt ?? 0 },
            attempts: order.map { ByteBuffer(bytes: firsts[$0]?.attempt ?? []) })
        let rows: [[UInt8]: (inserted: Bool, attempt: [UInt8]?)]
        do {
            var out: [[UInt8]: (inserted: Bool, attempt: [UInt8]?)] = [:]
            var inserted: Int64 = 0
            for try await (id, attempt, count) in try await connection.execute(statement, logger: logger) {
                if let id { out[Array(id.readableBytesView)] = (false, attempt.map { Array($0.readableBytesView) }) } else { inserted += count }
            }
            // Fail closed: every identifier sent is either inserted (counted) or returned.
            guard inserted + Int64(out.count) == Int64(order.count) else {
                throw TokenMintError(.store.databaseFailure, "the ledger insert answered for \(inserted + Int64(out.count)) of \(order.count) identifiers")
            }
            rows = out
        } catch {
            return .failure(failure(error))
        }
        var answered: Set<[UInt8]> = []
        return .success(batch.map { entry in
            let row = rows[entry.identifier] ?? (true, firsts[entry.identifier]?.attempt)
            // As RecordOnce: inserted now, or already there from the same attempt.
            let first = answered.insert(entry.identifier).inserted
            let sameAttempt = entry.attempt.map { $0 == row.attempt } ?? false
            return (first && row.inserted) || sameAttempt
        })
    }

    /// One statement for `batch`: each grant's first counter value, in
    /// order (nil: the device is not enrolled), or the statement's failure,
    /// every entry's answer (nothing was granted, or the answer was lost:
    /// those values are never granted again). Never throws.
    func grantBatch(_ batch: [GrantRequest], on connection: PostgresConnection) async -> Result<[Int64?], TokenMintError> {
        func failure(_ error: any Error) -> TokenMintError { PostgresErrors.typed(error, Self.grantOperation) }
        do {
            // A batch of one takes the single-row statement, which the server runs faster.
            if batch.count == 1, let grant = batch.first {
                for try await first in try await connection.execute(Grant(deviceID: grant.deviceID, count: grant.count, notAfter: grant.notAfter), logger: logger) {
                    return .success([first])
                }
                return .success([nil])
            }
            let statement = GrantBatch(deviceIDs: batch.map(\.deviceID), counts: batch.map(\.count), notAfters: batch.map(\.notAfter))
            var firsts = [Int64?](repeating: nil, count: batch.count)
            for try await (ordinal, first) in try await connection.execute(statement, logger: logger) {
                // Fail closed: an answer for a request that was not sent or twice
                // for one, or a counter moved whose grant row was not inserted.
                guard ordinal >= 1, ordinal <= Int64(batch.count), firsts[Int(ordinal - 1)] == nil, let first else {
                    throw TokenMintError(.store.databaseFailure, "the grant answered request \(ordinal) of \(batch.count) without its grant")
                }
                firsts[Int(ordinal - 1)] = first
            }
            return .success(firsts)
        } catch {
            return .failure(failure(error))
        }
    }
}
#endif
