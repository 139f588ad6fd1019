public import TokenMintCore
public import TokenMintStore

/// The verifier's tables in memory, kept by the store and forgotten on reset.
final class MemoryVerifierTables {
    var ledger: [[UInt8]: (expiresAt: Int64, attempt: [UInt8]?)] = [:]
    var devices: [String: (record: [UInt8], next: Int64)] = [:]
    var grants: [String: [OfflineGrant]] = [:]
    var spent: [[UInt8]: [UInt8]] = [:]
    var issued: [String: [String: Int64]] = [:]
}

extension InMemoryStore: VerifierStore {
    func verifierTables<T>(_ body: (MemoryVerifierTables) throws(TokenMintError) -> T) throws(TokenMintError) -> T {
        try withState("pay.verifier", make: MemoryVerifierTables.init, body)
    }
    /// Records `identifier` once, spending `slot` with it.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]? = nil, spending slot: [UInt8]? = nil) throws(TokenMintError) -> Bool {
        try VerifierStoreLimits.checkIdentifier(identifier, attempt: attempt)
        try VerifierStoreLimits.checkSlot(slot)
        return try verifierTables { t in
            if let slot, let owner = t.spent[slot], owner != identifier { return false }
            if let existing = t.ledger[identifier] { return attempt != nil && existing.attempt == attempt }
            t.ledger[identifier] = (expiresAt, attempt)
            if let slot { t.spent[slot] = identifier }
            return true
        }
    }

    /// Drops expired identifiers.
    public func prune(expiredBefore time: Int64) throws(TokenMintError) -> Int {
        try verifierTables { t in
            let expired = t.ledger.filter { $0.value.expiresAt < time }.map(\.key)
            for key in expired { t.ledger[key] = nil }
            return expired.count
        }
    }

    /// Enrols a device (idempotent for the same record).
    public func enrolDevice(_ deviceID: String, record: [UInt8]) throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID, record: record)
        try verifierTables { (t) throws(TokenMintError) in
            if let existing = t.devices[deviceID] {
                guard existing.record == record else { throw TokenMintError(.store.conflict, "device \(deviceID) is enrolled with another record") }
                return
            }
            t.devices[deviceID] = (record, 1)
        }
    }

    /// The record of an enrolled device.
    public func deviceRecord(_ deviceID: String) throws(TokenMintError) -> [UInt8]? {
        try VerifierStoreLimits.checkDevice(deviceID)
        return try verifierTables { t in t.devices[deviceID]?.record }
    }

    /// Takes the next `count` counter values of the device.
    public func grantOfflineAllowance(_ deviceID: String, count: Int64, notAfter: Int64) throws(TokenMintError) -> OfflineGrant {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkGrant(count: count)
        return try verifierTables { (t) throws(TokenMintError) in
            guard let device = t.devices[deviceID] else { throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled") }
            let grant = OfflineGrant(deviceID: deviceID, first: device.next, count: count, notAfter: notAfter)
            t.devices[deviceID] = (device.record, device.next + count)
            t.grants[deviceID, default: []].append(grant)
            return grant
        }
    }

    /// The grant holding `counter`.
    public func offlineGrant(_ deviceID: String, containing counter: Int64) throws(TokenMintError) -> OfflineGrant? {
        try VerifierStoreLimits.checkDevice(deviceID)
        return try verifierTables { t in t.grants[deviceID]?.first { $0.contains(counter) } }
    }

    /// Records an issued unsigned part.
    public func issueOnlinePart(_ deviceID: String, part: String, notAfter: Int64) throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        try verifierTables { (t) throws(TokenMintError) in
            guard t.devices[deviceID] != nil else { throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled") }
            guard t.issued[deviceID]?[part] == nil else { throw TokenMintError(.store.conflict, "this unsigned part was issued before") }
            t.issued[deviceID, default: [:]][part] = notAfter
        }
    }

    /// The `notAfter` of an issued unsigned part.
    public func onlinePart(_ deviceID: String, part: String) throws(TokenMintError) -> Int64? {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        return try verifierTables { t in t.issued[deviceID]?[part] }
    }
}
