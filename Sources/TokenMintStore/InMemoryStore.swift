public import TokenMintCore
import TokenMintCrypto
import Foundation

/// A store that lives in memory: same semantics as ``SQLiteStore`` (all or
/// nothing per transaction, one writer), no durability. For tests, benchmarks
/// and hosts that persist elsewhere.
public final class InMemoryStore: KeyValueStore, VerifierStore, @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String: [UInt8]] = [:]
    private var secrets: [String: SecureBytes] = [:]
    private var counters: [String: Int64] = [:]
    private var ledger: [[UInt8]: (expiresAt: Int64, attempt: [UInt8]?)] = [:]
    private var devices: [String: (record: [UInt8], next: Int64)] = [:]
    private var grants: [String: [OfflineGrant]] = [:]
    private var spent: [[UInt8]: [UInt8]] = [:]
    private var issued: [String: [String: Int64]] = [:]

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
        ledger = [:]
        devices = [:]
        grants = [:]
        spent = [:]
        issued = [:]
    }

    /// Records `identifier` once, spending `slot` with it.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]? = nil, spending slot: [UInt8]? = nil) throws(TokenMintError) -> Bool {
        try VerifierStoreLimits.checkIdentifier(identifier, attempt: attempt)
        try VerifierStoreLimits.checkSlot(slot)
        lock.lock()
        defer { lock.unlock() }
        if let slot, let owner = spent[slot], owner != identifier { return false }
        if let existing = ledger[identifier] { return attempt != nil && existing.attempt == attempt }
        ledger[identifier] = (expiresAt, attempt)
        if let slot { spent[slot] = identifier }
        return true
    }

    /// Drops expired identifiers.
    public func prune(expiredBefore time: Int64) throws(TokenMintError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let expired = ledger.filter { $0.value.expiresAt < time }.map(\.key)
        for key in expired { ledger[key] = nil }
        return expired.count
    }

    /// Enrols a device (idempotent for the same record).
    public func enrolDevice(_ deviceID: String, record: [UInt8]) throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID, record: record)
        lock.lock()
        defer { lock.unlock() }
        if let existing = devices[deviceID] {
            guard existing.record == record else { throw TokenMintError(.store.conflict, "device \(deviceID) is enrolled with another record") }
            return
        }
        devices[deviceID] = (record, 1)
    }

    /// The record of an enrolled device.
    public func deviceRecord(_ deviceID: String) throws(TokenMintError) -> [UInt8]? {
        try VerifierStoreLimits.checkDevice(deviceID)
        lock.lock()
        defer { lock.unlock() }
        return devices[deviceID]?.record
    }

    /// Takes the next `count` counter values of the device.
    public func grantOfflineAllowance(_ deviceID: String, count: Int64, notAfter: Int64) throws(TokenMintError) -> OfflineGrant {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkGrant(count: count)
        lock.lock()
        defer { lock.unlock() }
        guard let device = devices[deviceID] else { throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled") }
        let grant = OfflineGrant(deviceID: deviceID, first: device.next, count: count, notAfter: notAfter)
        devices[deviceID] = (device.record, device.next + count)
        grants[deviceID, default: []].append(grant)
        return grant
    }

    /// The grant holding `counter`.
    public func offlineGrant(_ deviceID: String, containing counter: Int64) throws(TokenMintError) -> OfflineGrant? {
        try VerifierStoreLimits.checkDevice(deviceID)
        lock.lock()
        defer { lock.unlock() }
        return grants[deviceID]?.first { $0.contains(counter) }
    }

    /// Records an issued unsigned part.
    public func issueOnlinePart(_ deviceID: String, part: String, notAfter: Int64) throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        lock.lock()
        defer { lock.unlock() }
        guard devices[deviceID] != nil else { throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled") }
        guard issued[deviceID]?[part] == nil else { throw TokenMintError(.store.conflict, "this unsigned part was issued before") }
        issued[deviceID, default: [:]][part] = notAfter
    }

    /// The `notAfter` of an issued unsigned part.
    public func onlinePart(_ deviceID: String, part: String) throws(TokenMintError) -> Int64? {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        lock.lock()
        defer { lock.unlock() }
        return issued[deviceID]?[part]
    }
}
