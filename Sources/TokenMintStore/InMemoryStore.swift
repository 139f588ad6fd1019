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

    /// Changes the store in place and keeps an undo log: a transaction costs
    /// what it touches, not a copy of the whole state (a copy made every
    /// write transaction O(n), which a store of thousands of refresh
    /// tokens felt). When the body throws, the log is undone in reverse.
    final class Transaction: StoreTransaction {
        enum Change {
            case item(String, [UInt8]?)
            case secret(String, SecureBytes?)
            case counter(String, Int64?)
        }

        private unowned let store: InMemoryStore
        private var undo: [Change] = []

        init(_ store: InMemoryStore) { self.store = store }

        func value(_ name: String) throws(TokenMintError) -> [UInt8]? { store.items[name] }
        func setValue(_ name: String, _ value: [UInt8]) throws(TokenMintError) {
            undo.append(.item(name, store.items.updateValue(value, forKey: name)))
        }
        func secret(_ name: String) throws(TokenMintError) -> SecureBytes? { store.secrets[name] }
        func setSecret(_ name: String, _ value: SecureBytes) throws(TokenMintError) {
            undo.append(.secret(name, store.secrets.updateValue(value, forKey: name)))
        }
        func remove(_ name: String) throws(TokenMintError) {
            if let old = store.items.removeValue(forKey: name) { undo.append(.item(name, old)) }
            if let old = store.secrets.removeValue(forKey: name) { undo.append(.secret(name, old)) }
        }
        func removeValues(from lower: String, upTo upper: String) throws(TokenMintError) -> Int {
            func inRange(_ name: String) -> Bool {
                !name.utf8.lexicographicallyPrecedes(lower.utf8) && name.utf8.lexicographicallyPrecedes(upper.utf8)
            }
            let doomed = Set(store.items.keys.filter(inRange)).union(store.secrets.keys.filter(inRange))
            for name in doomed { try remove(name) }
            return doomed.count
        }
        func counter(_ name: String) throws(TokenMintError) -> Int64 { store.counters[name] ?? 0 }
        func setCounter(_ name: String, _ value: Int64) throws(TokenMintError) {
            undo.append(.counter(name, store.counters.updateValue(value, forKey: name)))
        }
        func increment(_ name: String, by delta: Int64) throws(TokenMintError) -> Int64 {
            // One hash of the name for a counter that exists (every increment but its first).
            let index = store.counters.index(forKey: name)
            let old = index.map { store.counters.values[$0] }
            let (value, overflow) = (old ?? 0).addingReportingOverflow(delta)
            guard !overflow else { throw TokenMintError(.store.invalidArgument, "counter \(name) would overflow") }
            if let index { store.counters.values[index] = value } else { store.counters[name] = value }
            undo.append(.counter(name, old))
            return value
        }

        /// Puts back everything the transaction changed, newest first.
        func rollBack() {
            for change in undo.reversed() {
                switch change {
                case .item(let name, let old): store.items[name] = old
                case .secret(let name, let old): store.secrets[name] = old
                case .counter(let name, let old): store.counters[name] = old
                }
            }
            undo.removeAll(keepingCapacity: true)
        }

        /// Forgets the changes of a transaction that committed, keeping the
        /// log's storage for the next one.
        func commit() { undo.removeAll(keepingCapacity: true) }
    }

    /// The one transaction, reused under the lock: a transaction allocates
    /// neither itself nor its log once the log has grown.
    private lazy var current = Transaction(self)

    /// Runs `body` on the state in place; what it changed is undone when it throws.
    public func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        let transaction = current
        do {
            let result = try body(transaction)
            transaction.commit()
            return result
        } catch {
            transaction.rollBack()
            throw error
        }
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
