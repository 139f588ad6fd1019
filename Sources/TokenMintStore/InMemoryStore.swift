public import TokenMintCore
import TokenMintCrypto
import Foundation

/// A store that lives in memory: same semantics as ``SQLiteStore`` (all or
/// nothing per transaction, one writer), no durability. For tests, benchmarks
/// and hosts that persist elsewhere.
public final class InMemoryStore: KeyValueStore, @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String: [UInt8]] = [:]
    private var secrets: [String: SecureBytes] = [:]
    private var counters: [String: Int64] = [:]
    private var states: [String: AnyObject] = [:]

    /// An empty store.
    public init() {}

    /// Random bytes made with the store.
    public let identity: [UInt8] = SecureRandom.bytes(count: 16)

    final class Transaction: StoreTransaction {
        var items: [String: [UInt8]]
        var secrets: [String: SecureBytes]
        var counters: [String: Int64]

        init(items: [String: [UInt8]], secrets: [String: SecureBytes], counters: [String: Int64]) {
            self.items = items
            self.secrets = secrets
            self.counters = counters
        }

        func value(_ name: String) throws(TokenMintError) -> [UInt8]? { items[name] }
        func setValue(_ name: String, _ value: [UInt8]) throws(TokenMintError) { items[name] = value }
        func secret(_ name: String) throws(TokenMintError) -> SecureBytes? { secrets[name] }
        func setSecret(_ name: String, _ value: SecureBytes) throws(TokenMintError) { secrets[name] = value }
        func remove(_ name: String) throws(TokenMintError) {
            items[name] = nil
            secrets[name] = nil
        }
        func removeValues(from lower: String, upTo upper: String) throws(TokenMintError) -> Int {
            func inRange(_ name: String) -> Bool {
                !name.utf8.lexicographicallyPrecedes(lower.utf8) && name.utf8.lexicographicallyPrecedes(upper.utf8)
            }
            let doomed = Set(items.keys.filter(inRange)).union(secrets.keys.filter(inRange))
            for name in doomed {
                items[name] = nil
                secrets[name] = nil
            }
            return doomed.count
        }
        func counter(_ name: String) throws(TokenMintError) -> Int64 { counters[name] ?? 0 }
        func setCounter(_ name: String, _ value: Int64) throws(TokenMintError) { counters[name] = value }
        func increment(_ name: String, by delta: Int64) throws(TokenMintError) -> Int64 {
            let (value, overflow) = (counters[name] ?? 0).addingReportingOverflow(delta)
            guard !overflow else { throw TokenMintError(.store.invalidArgument, "counter \(name) would overflow") }
            counters[name] = value
            return value
        }
    }

    /// Runs `body` on a copy of the state and keeps the copy only when it returns.
    public func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        let transaction = Transaction(items: items, secrets: secrets, counters: counters)
        let result = try body(transaction)
        items = transaction.items
        secrets = transaction.secrets
        counters = transaction.counters
        return result
    }

    /// Forgets everything.
    public func reset() throws(TokenMintError) {
        lock.lock()
        defer { lock.unlock() }
        secrets = [:]
        items = [:]
        counters = [:]
        states = [:]
    }

    // MARK: State of other modules

    /// Runs `body` under the store's lock with the state another module of
    /// the package keeps in this store under `key` (the payment verifier's
    /// ledger, devices and grants), made by `make` the first time.
    /// ``reset()`` forgets it.
    package func withState<State: AnyObject, T>(
        _ key: String, make: () -> State, _ body: (State) throws(TokenMintError) -> T
    ) throws(TokenMintError) -> T {
        lock.lock()
        defer { lock.unlock() }
        let state: State
        if let existing = states[key] as? State {
            state = existing
        } else {
            state = make()
            states[key] = state
        }
        return try body(state)
    }
}
