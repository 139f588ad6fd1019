#if Postgres
import TokenMintCore
import TokenMintPay
import TokenMintStore
internal import PostgresNIO

/// Group commit for the ledger on PostgreSQL: the inserts of verifiers
/// running at the same moment go to the server as one `RecordOnceBatch`
/// statement, one round trip and one commit, and each verifier is answered
/// when that commit is done. A verifier alone waits for nobody: a batch
/// starts as soon as fewer than ``maximumInFlight`` are on the wire, and the
/// inserts that arrive meanwhile form the next one.
///
/// Time limit: one watchdog task looks at the batches on the wire while
/// there are any (every quarter of the limit, at most every second), and
/// answers a batch that has had no answer within the limit with `timeout`,
/// cancels its sender and gives its place on the wire to what waits. A late
/// answer to it is dropped (its verifiers were told the answer was lost: a
/// retry is refused, never accepted twice). One watchdog for every batch,
/// instead of a timer and two tasks per batch, measured 20.3k → 21.4–22.7k
/// inserts/s at 16 callers.
///
/// Connections: a sender keeps the pooled connection it leased for the
/// batches it sends in a row, and gives it back once ``maximumHold`` has
/// passed (see `send`).
final class LedgerBatcher: Sendable {
    struct Entry: Sendable {
        let identifier: [UInt8]
        let expiresAt: Int64
        let attempt: [UInt8]?
        let continuation: CheckedContinuation<Result<Bool, TokenMintError>, Never>
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
        /// Inserts waiting for a batch.
        var pending: [Entry] = []
        /// Batches on the wire (late ones leave it, though their senders may
        /// still wait for an answer they will drop).
        var inFlight = 0
        /// The batches on the wire, by flight number.
        var flights: [Int: Flight] = [:]
        /// The next flight number.
        var nextFlight = 0
        /// Whether a watchdog runs.
        var watching = false
    }

    /// Batches on the wire at once (each holds a pooled connection). Two
    /// measured best on the 2-core VM at 16 callers (1: 19.0k inserts/s,
    /// 2: 20.2k, 4: 14.6k; with the watchdog, in one run each: 1: 19.6k,
    /// 2: 22.1k, 3: 20.1k; later, in the same minutes: 2: 18.8k, 3: 17.8k,
    /// 4: 17.4k; all before senders kept their connections): fewer, larger
    /// batches cost the server less.
    static let maximumInFlight = 2
    /// Identifiers per statement.
    static let maximumBatch = 256
    /// How long a sender keeps one pooled connection: the first batch that
    /// ends this long after the lease gives it back, and the next leases
    /// again (behind whatever else waits for one).
    static let maximumHold: Duration = .milliseconds(20)
    /// The ledger insert, as its errors name it.
    static let operation = "ledger insert"

    /// How long a batch may wait for its answer.
    let limit: Duration
    private let state = Locked(State())

    /// A batcher whose batches may wait `limit` for their answers.
    init(limit: Duration) { self.limit = limit }

    /// Records `identifier` once, in whichever batch takes it.
    func record(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]?, store: PostgresVerifierStore) async throws(TokenMintError) -> Bool {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Bool, TokenMintError>, Never>) in
            let entry = Entry(identifier: identifier, expiresAt: expiresAt, attempt: attempt, continuation: continuation)
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
                // Nothing in this closure throws (`recordBatch` answers its
                // failures): an error here is the lease's, before any batch of
                // it was sent, and `launch` is the batch that waited for it.
                try await store.client.withConnection { connection in
                    let leased = ContinuousClock.now
                    while let batch = launch {
                        let outcome = await store.recordBatch(batch.batch, on: connection)
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
                    launch = finish(waiting, .failure(PostgresErrors.typed(error, Self.operation)), store: store)
                }
            }
        }
    }

    /// Answers `launch` with `outcome` (each entry's answer, or the batch's
    /// one failure) unless the watchdog already did, and takes the next batch
    /// for the same sender (nil: the sender stops).
    private func finish(_ launch: Launch, _ outcome: Result<[Bool], TokenMintError>, store: PostgresVerifierStore) -> Launch? {
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
                let error = TokenMintError(.store.timeout, "\(Self.operation): no answer within \(limit) (server unreachable or overloaded)")
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

extension PostgresVerifierStore {
    /// One statement for `batch`: whether each entry is fresh, in order, or
    /// the statement's failure, every entry's answer (none of them was
    /// recorded, or the answer was lost: a retry is refused, never accepted
    /// twice). Never throws: a failure is answered.
    func recordBatch(_ batch: [LedgerBatcher.Entry], on connection: PostgresConnection) async -> Result<[Bool], TokenMintError> {
        // The batcher's watchdog keeps the time limit: no timer per batch.
        func failure(_ error: any Error) -> TokenMintError { PostgresErrors.typed(error, LedgerBatcher.operation) }
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
}
#endif
