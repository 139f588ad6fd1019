public import TokenMintCore
public import TokenMintStore

/// The verifier's tables in a SQLite store file, created the first time a
/// verifier uses the store.
extension SQLiteStore: VerifierStore {
    static let verifierSchema = SQLiteStore.Schema(
        name: "pay.verifier",
        statements: """
            CREATE TABLE IF NOT EXISTS ledger (id BLOB PRIMARY KEY, expires_at INTEGER NOT NULL, attempt BLOB);
            CREATE INDEX IF NOT EXISTS ledger_expiry ON ledger (expires_at);
            CREATE TABLE IF NOT EXISTS devices (id TEXT PRIMARY KEY, record BLOB NOT NULL, next_counter INTEGER NOT NULL DEFAULT 1);
            CREATE TABLE IF NOT EXISTS grants (device_id TEXT NOT NULL REFERENCES devices (id), first INTEGER NOT NULL,
                count INTEGER NOT NULL, not_after INTEGER NOT NULL, PRIMARY KEY (device_id, first));
            CREATE TABLE IF NOT EXISTS spent (slot BLOB PRIMARY KEY, id BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS issued (device_id TEXT NOT NULL REFERENCES devices (id), part TEXT NOT NULL,
                not_after INTEGER NOT NULL, PRIMARY KEY (device_id, part));
            """,
        // Only the replay ledger is emptied on reset: spent slots, devices,
        // grants and issued parts are what keep a counter from being used twice.
        clearedOnReset: ["ledger"],
        migrate: { connection throws(TokenMintError) in
            // Stores made before ledger attempts existed get the column.
            let columns = try connection.query("SELECT name FROM pragma_table_info('ledger')")
            if !columns.contains(where: { $0.first?.bytes == Array("attempt".utf8) }) {
                try connection.run("ALTER TABLE ledger ADD COLUMN attempt BLOB")
            }
        })

    /// Inserts `identifier` once (a primary key makes the second insert a
    /// no-op); a retry of the same attempt is recognised. The slot and the
    /// identifier are written in one transaction, committed together with
    /// those of concurrent callers (one fsync for the group); the call
    /// returns once its own write is durable.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]? = nil, spending slot: [UInt8]? = nil) async throws(TokenMintError) -> Bool {
        try VerifierStoreLimits.checkIdentifier(identifier, attempt: attempt)
        try VerifierStoreLimits.checkSlot(slot)
        return try await groupedTransaction(Self.verifierSchema) { db throws(TokenMintError) in
            if let slot {
                try db.run("INSERT OR IGNORE INTO spent (slot, id) VALUES (?, ?)", [.blob(slot), .blob(identifier)])
                if db.changes == 0 {
                    let owner = try db.query("SELECT id FROM spent WHERE slot = ?", [.blob(slot)]).first?.first?.bytes
                    guard owner == identifier else { return false }
                }
            }
            try db.run("INSERT OR IGNORE INTO ledger (id, expires_at, attempt) VALUES (?, ?, ?)",
                       [.blob(identifier), .integer(expiresAt), attempt.map { .blob($0) } ?? .null])
            if db.changes == 1 { return true }
            guard let attempt else { return false }
            return try db.query("SELECT attempt FROM ledger WHERE id = ?", [.blob(identifier)]).first?.first?.bytes == attempt
        }
    }

    /// Deletes expired ledger entries.
    public func prune(expiredBefore time: Int64) throws(TokenMintError) -> Int {
        try withTables(Self.verifierSchema, transaction: false) { db throws(TokenMintError) in
            try db.run("DELETE FROM ledger WHERE expires_at < ?", [.integer(time)])
            return db.changes
        }
    }

    /// Enrols a device (idempotent for the same record).
    public func enrolDevice(_ deviceID: String, record: [UInt8]) throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID, record: record)
        try withTables(Self.verifierSchema, transaction: false) { db throws(TokenMintError) in
            try db.run("INSERT OR IGNORE INTO devices (id, record) VALUES (?, ?)", [.text(deviceID), .blob(record)])
            guard let stored = try db.query("SELECT record FROM devices WHERE id = ?", [.text(deviceID)]).first?.first?.bytes,
                stored == record
            else { throw TokenMintError(.store.conflict, "device \(deviceID) is enrolled with another record") }
        }
    }

    /// The record of an enrolled device.
    public func deviceRecord(_ deviceID: String) throws(TokenMintError) -> [UInt8]? {
        try VerifierStoreLimits.checkDevice(deviceID)
        return try withReader(Self.verifierSchema) { db throws(TokenMintError) in
            try db.query("SELECT record FROM devices WHERE id = ?", [.text(deviceID)]).first?.first?.bytes
        }
    }

    /// Takes the next `count` counter values of the device in one transaction.
    public func grantOfflineAllowance(_ deviceID: String, count: Int64, notAfter: Int64) throws(TokenMintError) -> OfflineGrant {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkGrant(count: count)
        return try withTables(Self.verifierSchema, transaction: true) { db throws(TokenMintError) in
            guard let first = try db.query("SELECT next_counter FROM devices WHERE id = ?", [.text(deviceID)]).first?.first?.integer else {
                throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled")
            }
            try db.run("UPDATE devices SET next_counter = ? WHERE id = ?", [.integer(first + count), .text(deviceID)])
            try db.run("INSERT INTO grants (device_id, first, count, not_after) VALUES (?, ?, ?, ?)",
                       [.text(deviceID), .integer(first), .integer(count), .integer(notAfter)])
            return OfflineGrant(deviceID: deviceID, first: first, count: count, notAfter: notAfter)
        }
    }

    /// The grant holding `counter`.
    public func offlineGrant(_ deviceID: String, containing counter: Int64) throws(TokenMintError) -> OfflineGrant? {
        try VerifierStoreLimits.checkDevice(deviceID)
        return try withReader(Self.verifierSchema) { db throws(TokenMintError) in
            let rows = try db.query(
                "SELECT first, count, not_after FROM grants WHERE device_id = ? AND first <= ? ORDER BY first DESC LIMIT 1",
                [.text(deviceID), .integer(counter)])
            guard let row = rows.first, row.count == 3, let first = row[0].integer, let count = row[1].integer,
                let notAfter = row[2].integer
            else { return nil }
            let grant = OfflineGrant(deviceID: deviceID, first: first, count: count, notAfter: notAfter)
            return grant.contains(counter) ? grant : nil
        }
    }

    /// Records an issued unsigned part.
    public func issueOnlinePart(_ deviceID: String, part: String, notAfter: Int64) throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        try withTables(Self.verifierSchema, transaction: true) { db throws(TokenMintError) in
            guard try !db.query("SELECT 1 FROM devices WHERE id = ?", [.text(deviceID)]).isEmpty else {
                throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled")
            }
            try db.run("INSERT OR IGNORE INTO issued (device_id, part, not_after) VALUES (?, ?, ?)",
                       [.text(deviceID), .text(part), .integer(notAfter)])
            guard db.changes == 1 else { throw TokenMintError(.store.conflict, "this unsigned part was issued before") }
        }
    }

    /// The `notAfter` of an issued unsigned part.
    public func onlinePart(_ deviceID: String, part: String) throws(TokenMintError) -> Int64? {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        return try withReader(Self.verifierSchema) { db throws(TokenMintError) in
            try db.query("SELECT not_after FROM issued WHERE device_id = ? AND part = ?", [.text(deviceID), .text(part)]).first?.first?.integer
        }
    }
}
