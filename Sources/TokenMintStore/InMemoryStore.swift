public import TokenMintCrypto
import Foundation

/// A store that lives in memory: same semantics as ``SQLiteStore`` (all or
/// nothing per transaction, one writer), no durability. For tests, benchmarks
/// and hosts that persist elsewhere.
public final class InMemoryStore: KeyValueStore, ReplayLedger, @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String: [UInt8]] = [:]
    private var secrets: [String: SecureBytes] = [:]
    private var counters: [String: Int64] = [:]
    private var ledger: [[UInt8]: Int64] = [:]

    /// An empty store.
    public init() {}

    final class Transaction: StoreTransaction {
        var items: [String: [UInt8]]
        var secrets: [String: SecureBytes]
        var counters: [String: Int64]

        init(items: [String: [UInt8]], secrets: [String: SecureBytes], counters: [String: Int64]) {
            self.items = items
            self.secrets = secrets
            self.counters = counters
        }

        func value(_ name: String) throws(StoreError) -> [UInt8]? { items[name] }
        func setValue(_ name: String, _ value: [UInt8]) throws(StoreError) { items[name] = value }
        func secret(_ name: String) throws(StoreError) -> SecureBytes? { secrets[name] }
        func setSecret(_ name: String, _ value: SecureBytes) throws(StoreError) { secrets[name] = value }
        func remove(_ name: String) throws(StoreError) {
            items[name] = nil
            secrets[name] = nil
        }
        func counter(_ name: String) throws(StoreError) -> Int64 { counters[name] ?? 0 }
        func setCounter(_ name: String, _ value: Int64) throws(StoreError) { counters[name] = value }
        func increment(_ name: String, by delta: Int64) throws(StoreError) -> Int64 {
            let (value, overflow) = (counters[name] ?? 0).addingReportingOverflow(delta)
            guard !overflow else { throw StoreError(.invalidArgument, "counter \(name) would overflow") }
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
    public func reset() throws(StoreError) {
        lock.lock()
        defer { lock.unlock() }
        secrets = [:]
        items = [:]
        counters = [:]
        ledger = [:]
    }

    /// Records `identifier` once.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64) throws(StoreError) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard ledger[identifier] == nil else { return false }
        ledger[identifier] = expiresAt
        return true
    }

    /// Drops expired identifiers.
    public func prune(expiredBefore time: Int64) throws(StoreError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let expired = ledger.filter { $0.value < time }.map(\.key)
        for key in expired { ledger[key] = nil }
        return expired.count
    }
}
