public import TokenMintCore
internal import CSQLite
public import TokenMintCrypto

#if canImport(Glibc)
import Glibc
#endif

import Foundation

/// Where the master key that seals the store's secrets comes from.
public enum MasterKeySource: Sendable {
    /// A 32-byte key file, mode 0600 (a file that group or others may read
    /// or write, or a symbolic link, is refused). Created (mode 0600 from
    /// the first byte, random key) when missing, `create` is true and the
    /// store is new: a store that exists never gets a new master key, so a
    /// deleted key file is an error, not a silent fresh start.
    case file(path: String, create: Bool = true)
    /// An environment variable holding the key as base64url (43 characters).
    case environment(variable: String)
    /// A passphrase, stretched with Argon2id; the salt is kept in the store.
    case passphrase(String, cost: PasswordKeyDerivation.Cost = .interactive)
    /// A key the host holds already.
    case key(SecureBytes)
}

/// The operations a transaction offers; all of them commit or roll back together.
public protocol StoreTransaction {
    /// A plain value.
    func value(_ name: String) throws(TokenMintError) -> [UInt8]?
    /// Stores a plain value.
    func setValue(_ name: String, _ value: [UInt8]) throws(TokenMintError)
    /// A secret, opened with the master key.
    func secret(_ name: String) throws(TokenMintError) -> SecureBytes?
    /// Seals and stores a secret.
    func setSecret(_ name: String, _ value: SecureBytes) throws(TokenMintError)
    /// Removes a value or secret.
    func remove(_ name: String) throws(TokenMintError)
    /// A counter's value (0 when never set).
    func counter(_ name: String) throws(TokenMintError) -> Int64
    /// Sets a counter.
    func setCounter(_ name: String, _ value: Int64) throws(TokenMintError)
    /// Adds `delta` to a counter and returns the new value.
    func increment(_ name: String, by delta: Int64) throws(TokenMintError) -> Int64
}

/// The durable state TokenMint keeps: typed values, sealed secrets and
/// counters, changed only in transactions. SQLite is the embedded default;
/// a server deployment may put the same protocol on another database.
public protocol KeyValueStore: Sendable {
    /// Runs `body` in one transaction: committed durably when it returns,
    /// rolled back entirely when it throws.
    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// Wipes every secret, value, counter and ledger entry.
    func reset() throws(TokenMintError)
    /// Random bytes that name this store and no other (made when it was
    /// created, kept across reset): state sealed in one store can be bound
    /// to it, so a copy moved into another store sealed with the same master
    /// key is recognised.
    var identity: [UInt8] { get throws(TokenMintError) }
}

/// What a payment-token verifier keeps, shared by every verifier that sees
/// the same devices: the single-use replay ledger, the enrolled devices'
/// keys, and the offline allowances granted to them.
///
/// ``SQLiteStore`` and ``InMemoryStore`` implement it for one machine;
/// `TokenMintPostgres` implements it on a PostgreSQL server for many.
/// Every method either commits its change or throws and changes nothing.
public protocol VerifierStore: Sendable {
    /// Records `identifier` and returns true, or returns false when it was
    /// recorded before (and has not been pruned).
    ///
    /// `attempt` makes a retry safe: when the identifier was recorded by the
    /// same attempt (a payment transaction's ID, retried after a crash or a
    /// lost answer), the call returns true again. Another attempt, or none,
    /// gets false.
    ///
    /// `slot` is what the token uses up for good, beyond its own identifier:
    /// one offline counter value, or one server-issued unsigned part, of one
    /// device. It is spent in the same transaction as the identifier is
    /// recorded, belongs to that identifier from then on and is never pruned,
    /// so a second token for the same slot returns false, however long after
    /// and whichever verifier sees it.
    func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]?, spending slot: [UInt8]?) async throws(TokenMintError) -> Bool
    /// Drops ledger entries that expired before `time`; returns how many.
    /// Spent slots stay.
    func prune(expiredBefore time: Int64) async throws(TokenMintError) -> Int
    /// Enrols a device: its record (for WhitelabelPay, the enrolment token)
    /// under `deviceID`. Enrolling the same record again is a no-op; a
    /// different record for a known device throws `conflict`.
    func enrolDevice(_ deviceID: String, record: [UInt8]) async throws(TokenMintError)
    /// The record of an enrolled device, or nil.
    func deviceRecord(_ deviceID: String) async throws(TokenMintError) -> [UInt8]?
    /// Grants the device the next `count` offline counter values, usable
    /// until `notAfter`. Each value is granted once, whichever verifier asks.
    /// - Throws: `notFound` for a device that is not enrolled.
    func grantOfflineAllowance(_ deviceID: String, count: Int64, notAfter: Int64) async throws(TokenMintError) -> OfflineGrant
    /// The grant of `deviceID` that contains counter value `counter`, or nil.
    func offlineGrant(_ deviceID: String, containing counter: Int64) async throws(TokenMintError) -> OfflineGrant?
    /// Records that the server issued the unsigned part `part` to the device,
    /// for a token dated up to `notAfter`.
    /// - Throws: `notFound` for a device that is not enrolled, `conflict` when
    ///   the part was issued before.
    func issueOnlinePart(_ deviceID: String, part: String, notAfter: Int64) async throws(TokenMintError)
    /// The `notAfter` of the unsigned part `part` issued to the device, or nil
    /// when it was never issued to it.
    func onlinePart(_ deviceID: String, part: String) async throws(TokenMintError) -> Int64?
}

extension VerifierStore {
    /// Records `identifier` once, with no attempt and no slot.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64) async throws(TokenMintError) -> Bool {
        try await recordOnce(identifier, expiresAt: expiresAt, attempt: nil, spending: nil)
    }

    /// Records `identifier` once for `attempt`, spending no slot.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]?) async throws(TokenMintError) -> Bool {
        try await recordOnce(identifier, expiresAt: expiresAt, attempt: attempt, spending: nil)
    }
}

/// Offline counter values granted to one device: `first ..< first + count`.
public struct OfflineGrant: Sendable, Hashable {
    /// The device.
    public let deviceID: String
    /// The first counter value of the grant (the first grant starts at 1).
    public let first: Int64
    /// How many values.
    public let count: Int64
    /// The last second (since the epoch) a token of this grant may be dated.
    public let notAfter: Int64

    /// A grant.
    public init(deviceID: String, first: Int64, count: Int64, notAfter: Int64) {
        self.deviceID = deviceID
        self.first = first
        self.count = count
        self.notAfter = notAfter
    }

    /// Whether `counter` is one of the granted values.
    public func contains(_ counter: Int64) -> Bool { counter >= first && counter - first < count }
}

/// The checks every ``VerifierStore`` applies to its arguments.
public enum VerifierStoreLimits {
    /// Ledger identifiers and attempts are 1 to 64 bytes.
    public static func checkIdentifier(_ identifier: [UInt8], attempt: [UInt8]? = nil) throws(TokenMintError) {
        guard !identifier.isEmpty, identifier.count <= 64 else { throw TokenMintError(.store.invalidArgument, "ledger identifiers are 1 to 64 bytes") }
        if let attempt { guard !attempt.isEmpty, attempt.count <= 64 else { throw TokenMintError(.store.invalidArgument, "attempts are 1 to 64 bytes") } }
    }

    /// Device IDs are 1 to 128 bytes of UTF-8; records at most 4 KiB.
    public static func checkDevice(_ deviceID: String, record: [UInt8]? = nil) throws(TokenMintError) {
        guard !deviceID.isEmpty, deviceID.utf8.count <= 128 else { throw TokenMintError(.store.invalidArgument, "device IDs are 1 to 128 bytes") }
        if let record { guard !record.isEmpty, record.count <= 4096 else { throw TokenMintError(.store.invalidArgument, "device records are 1 to 4096 bytes") } }
    }

    /// Slots are 1 to 64 bytes.
    public static func checkSlot(_ slot: [UInt8]?) throws(TokenMintError) {
        if let slot { guard !slot.isEmpty, slot.count <= 64 else { throw TokenMintError(.store.invalidArgument, "slots are 1 to 64 bytes") } }
    }

    /// Issued unsigned parts are 1 to 256 bytes.
    public static func checkPart(_ part: String) throws(TokenMintError) {
        guard !part.isEmpty, part.utf8.count <= 256 else { throw TokenMintError(.store.invalidArgument, "unsigned parts are 1 to 256 bytes") }
    }

    /// Grants hold 1 to 1,000,000 values.
    public static func checkGrant(count: Int64) throws(TokenMintError) {
        guard (1...1_000_000).contains(count) else { throw TokenMintError(.store.invalidArgument, "a grant holds 1 to 1,000,000 counter values") }
    }
}

/// A SQLite store in one file: WAL journal, `synchronous=FULL` (a commit is on
/// disk when it returns), `secure_delete` (removed secrets are overwritten),
/// secrets sealed with XChaCha20-Poly1305 under the master key and bound to
/// their names. One connection, serialized: one writer; other processes wait
/// up to five seconds for the file lock.
public final class SQLiteStore: KeyValueStore, VerifierStore, @unchecked Sendable {
    private let db: OpaquePointer
    private let lock = NSLock()
    private let masterKey: SecureBytes
    /// The database file.
    public let path: String
    /// The store's identity: the random salt made when the file was created.
    public let identity: [UInt8]

    /// Names are at most 2 KiB: room for a prefix and the base64url of a
    /// 1,023-byte WebAuthn credential ID (1,364 characters).
    static let maximumNameBytes = 2048
    static let maximumValueBytes = 1 << 20

    /// Opens (or creates) the store at `path` with the master key from `keySource`.
    ///
    /// A store on read-only media (a read-only mount, a file without write
    /// permission) opens for reading: lookups work, and every write throws
    /// `readOnly`.
    /// - Throws: `wrongMasterKey` when the key does not open this store,
    ///   `corrupted` when the file is not a store, `cannotOpen`, `readOnly`, `diskFull`.
    public init(path: String, masterKey keySource: MasterKeySource) throws(TokenMintError) {
        self.path = path
        let handle: OpaquePointer
        do { handle = try SQLiteStore.connect(path, readOnly: false) } catch {
            guard SQLiteStore.isOnReadOnlyMedia(path) else { throw error }
            handle = try SQLiteStore.connect(path, readOnly: true)
        }
        db = handle
        do {
            let isNew = try SQLiteStore.query(db, "SELECT 1 FROM meta WHERE name = 'check'", []).isEmpty
            let salt = try SQLiteStore.metaSalt(db)
            identity = salt
            masterKey = try SQLiteStore.resolve(keySource, salt: salt, storeIsNew: isNew)
            try SQLiteStore.checkMasterKey(db, masterKey)
        } catch {
            sqlite3_close(db)
            throw error
        }
    }

    /// Opens the database and, for writing, sets the journal up and creates the tables.
    static func connect(_ path: String, readOnly: Bool) throws(TokenMintError) -> OpaquePointer {
        var handle: OpaquePointer? = nil
        // Read-only media cannot hold the WAL index, so the file is opened
        // as immutable: nobody can change it while it is mounted read-only.
        let status = readOnly
            ? sqlite3_open_v2("file:\(SQLiteStore.uriEscaped(path))?immutable=1", &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nil)
            : sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw TokenMintError(.store.cannotOpen, "cannot open \(path): \(message)")
        }
        if readOnly { return handle }
        chmod(path, 0o600)  // secrets are sealed; the rest is still nobody else's business
        sqlite3_busy_timeout(handle, 5000)
        do {
            try SQLiteStore.execute(handle, """
                PRAGMA journal_mode=WAL;
                PRAGMA synchronous=FULL;
                PRAGMA secure_delete=ON;
                PRAGMA foreign_keys=ON;
                CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS items (name TEXT PRIMARY KEY, sealed INTEGER NOT NULL, value BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS ledger (id BLOB PRIMARY KEY, expires_at INTEGER NOT NULL, attempt BLOB);
                CREATE INDEX IF NOT EXISTS ledger_expiry ON ledger (expires_at);
                CREATE TABLE IF NOT EXISTS devices (id TEXT PRIMARY KEY, record BLOB NOT NULL, next_counter INTEGER NOT NULL DEFAULT 1);
                CREATE TABLE IF NOT EXISTS grants (device_id TEXT NOT NULL REFERENCES devices (id), first INTEGER NOT NULL,
                    count INTEGER NOT NULL, not_after INTEGER NOT NULL, PRIMARY KEY (device_id, first));
                CREATE TABLE IF NOT EXISTS spent (slot BLOB PRIMARY KEY, id BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS issued (device_id TEXT NOT NULL REFERENCES devices (id), part TEXT NOT NULL,
                    not_after INTEGER NOT NULL, PRIMARY KEY (device_id, part));
                """)
            // Stores made before ledger attempts existed get the column.
            let columns = try SQLiteStore.query(handle, "SELECT name FROM pragma_table_info('ledger')", [])
            if !columns.contains(where: { $0.first == Array("attempt".utf8) }) {
                try SQLiteStore.execute(handle, "ALTER TABLE ledger ADD COLUMN attempt BLOB")
            }
        } catch {
            sqlite3_close(handle)
            throw error
        }
        return handle
    }

    /// Whether `path` is an existing file this process cannot write, or lies
    /// in a folder it cannot write (where SQLite keeps its journal).
    static func isOnReadOnlyMedia(_ path: String) -> Bool {
        guard access(path, F_OK) == 0 else { return false }
        let folder = (path as NSString).deletingLastPathComponent
        return access(path, W_OK) != 0 || access(folder.isEmpty ? "." : folder, W_OK) != 0
    }

    /// `path` with the characters a SQLite URI gives meaning to percent-encoded.
    static func uriEscaped(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x20, 0x7f...: out += String(format: "%%%02X", byte)
            default: out.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return out
    }

    deinit { sqlite3_close(db) }

    // MARK: Master key

    static func resolve(_ source: MasterKeySource, salt: [UInt8], storeIsNew: Bool) throws(TokenMintError) -> SecureBytes {
        switch source {
        case .key(let key):
            guard key.count == 32 else { throw TokenMintError(.store.masterKeyUnavailable, "the master key must be 32 bytes") }
            return key
        case .environment(let variable):
            guard let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty else {
                throw TokenMintError(.store.masterKeyUnavailable, "environment variable \(variable) is not set")
            }
            guard let bytes = try? Base64URL.decode(text.trimmingCharacters(in: .whitespacesAndNewlines), padding: .either),
                bytes.count == 32
            else { throw TokenMintError(.store.masterKeyUnavailable, "\(variable) must hold 32 bytes as base64url") }
            return SecureBytes(bytes)
        case .passphrase(let passphrase, let cost):
            guard !passphrase.isEmpty else { throw TokenMintError(.store.masterKeyUnavailable, "empty passphrase") }
            do {
                return try PasswordKeyDerivation.deriveKey(passphrase: Array(passphrase.utf8), salt: salt, cost: cost)
            } catch {
                throw TokenMintError(.store.masterKeyUnavailable, "Argon2id: \(error.reason)")
            }
        case .file(let path, let create):
            if let key = try readKeyFile(path) { return key }
            guard create else { throw TokenMintError(.store.masterKeyUnavailable, "\(path) does not exist") }
            guard storeIsNew else {
                throw TokenMintError(.store.masterKeyUnavailable, "\(path) is missing but the store exists: restore the key file (a new key would not open the store)")
            }
            let key = SecureBytes(randomCount: 32)
            // O_EXCL: never overwrite a key another process just created; the
            // mode is set by open itself, so the key is never readable by others.
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                if errno == EEXIST, let existing = try readKeyFile(path) { return existing }
                throw TokenMintError(.store.masterKeyUnavailable, "cannot create \(path): \(String(cString: strerror(errno)))")
            }
            let written = key.withUnsafeBytes { write(fd, $0.baseAddress, 32) }
            guard written == 32, fsync(fd) == 0, close(fd) == 0 else {
                unlink(path)
                throw TokenMintError(.store.masterKeyUnavailable, "cannot write \(path)")
            }
            SQLiteStore.syncFolder(of: path)
            return key
        }
    }

    /// Reads a master key file straight into secure memory; nil when it does
    /// not exist. Refuses a symbolic link, anything but a regular file, a
    /// file group or others may access, and a file that is not 32 bytes.
    static func readKeyFile(_ path: String) throws(TokenMintError) -> SecureBytes? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw TokenMintError(.store.masterKeyUnavailable, "\(path) is a symbolic link; a master key file must be a regular file") }
            throw TokenMintError(.store.masterKeyUnavailable, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
            throw TokenMintError(.store.masterKeyUnavailable, "\(path) is not a regular file")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw TokenMintError(.store.masterKeyUnavailable,
                "\(path) may be read or written by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard info.st_size == 32 else { throw TokenMintError(.store.masterKeyUnavailable, "\(path) does not hold a 32-byte key") }
        var done = 0
        let key = SecureBytes(count: 32) { (buffer: UnsafeMutableRawBufferPointer) in
            while done < 32 {
                let n = read(fd, buffer.baseAddress.map { $0 + done }, 32 - done)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                done += n
            }
        }
        guard done == 32 else { throw TokenMintError(.store.masterKeyUnavailable, "\(path) could not be read whole") }
        return key
    }

    /// fsyncs the folder holding `path`, so a new file's name is durable too.
    static func syncFolder(of path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    static func metaSalt(_ db: OpaquePointer) throws(TokenMintError) -> [UInt8] {
        if let salt = try query(db, "SELECT value FROM meta WHERE name = 'salt'", []).first?.first.flatMap({ $0 }) { return salt }
        let salt = SecureRandom.bytes(count: PasswordKeyDerivation.saltByteCount)
        try run(db, "INSERT OR IGNORE INTO meta (name, value) VALUES ('salt', ?)", [.blob(salt)])
        return try query(db, "SELECT value FROM meta WHERE name = 'salt'", []).first?.first.flatMap({ $0 }) ?? salt
    }

    static let checkPlaintext = Array("tokenmint-store-v1".utf8)

    static func checkMasterKey(_ db: OpaquePointer, _ key: SecureBytes) throws(TokenMintError) {
        let ad = Array("meta:check".utf8)
        if let sealed = try query(db, "SELECT value FROM meta WHERE name = 'check'", []).first?.first.flatMap({ $0 }) {
            guard let opened = try? XChaCha20Poly1305.open(sealed, key: key, associatedData: ad),
                opened == SecureBytes(checkPlaintext)
            else { throw TokenMintError(.store.wrongMasterKey, "the master key does not open this store") }
            return
        }
        let sealed: [UInt8]
        do {
            sealed = try XChaCha20Poly1305.seal(checkPlaintext, key: key, associatedData: ad)
        } catch {
            throw TokenMintError(.store.databaseFailure, "cannot seal the key check", underlying: error)
        }
        try run(db, "INSERT OR IGNORE INTO meta (name, value) VALUES ('check', ?)", [.blob(sealed)])
        // Another process may have won the race with its own key: check again.
        try checkMasterKey(db, key)
    }

    // MARK: KeyValueStore

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction; commits durably or rolls back.
    public func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        try immediate { try body(Transaction(db: db, key: masterKey)) }
    }

    /// Runs `body` under the lock between `BEGIN IMMEDIATE` and `COMMIT`,
    /// rolling back when anything throws.
    func immediate<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        try SQLiteStore.execute(db, "BEGIN IMMEDIATE")
        do {
            let result = try body()
            try SQLiteStore.execute(db, "COMMIT")
            return result
        } catch {
            _ = sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// Wipes secrets first, then everything else; deleted pages are overwritten.
    public func reset() throws(TokenMintError) {
        lock.lock()
        defer { lock.unlock() }
        try SQLiteStore.execute(db, """
            BEGIN IMMEDIATE;
            DELETE FROM items WHERE sealed = 1;
            DELETE FROM items;
            DELETE FROM counters;
            DELETE FROM ledger;
            COMMIT;
            """)
        _ = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;", nil, nil, nil)
    }

    // MARK: VerifierStore

    /// Inserts `identifier` once (a primary key makes the second insert a
    /// no-op); a retry of the same attempt is recognised. The slot and the
    /// identifier are written in one transaction.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]? = nil, spending slot: [UInt8]? = nil) throws(TokenMintError) -> Bool {
        try VerifierStoreLimits.checkIdentifier(identifier, attempt: attempt)
        try VerifierStoreLimits.checkSlot(slot)
        do {
            return try immediate {
                if let slot {
                    try SQLiteStore.run(db, "INSERT OR IGNORE INTO spent (slot, id) VALUES (?, ?)", [.blob(slot), .blob(identifier)])
                    if sqlite3_changes(db) == 0 {
                        let owner = try SQLiteStore.query(db, "SELECT id FROM spent WHERE slot = ?", [.blob(slot)]).first?.first ?? nil
                        guard owner == identifier else { return false }
                    }
                }
                try SQLiteStore.run(db, "INSERT OR IGNORE INTO ledger (id, expires_at, attempt) VALUES (?, ?, ?)",
                                    [.blob(identifier), .integer(expiresAt), attempt.map { .blob($0) } ?? .null])
                if sqlite3_changes(db) == 1 { return true }
                guard let attempt else { return false }
                let stored = try SQLiteStore.query(db, "SELECT attempt FROM ledger WHERE id = ?", [.blob(identifier)]).first?.first ?? nil
                return stored == attempt
            }
        } catch {
            throw TokenMintError.wrap(error, as: .store.databaseFailure, "ledger: \(error)")
        }
    }

    /// Deletes expired ledger entries.
    public func prune(expiredBefore time: Int64) throws(TokenMintError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        try SQLiteStore.run(db, "DELETE FROM ledger WHERE expires_at < ?", [.integer(time)])
        return Int(sqlite3_changes(db))
    }

    /// Enrols a device (idempotent for the same record).
    public func enrolDevice(_ deviceID: String, record: [UInt8]) throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID, record: record)
        lock.lock()
        defer { lock.unlock() }
        try SQLiteStore.run(db, "INSERT OR IGNORE INTO devices (id, record) VALUES (?, ?)", [.text(deviceID), .blob(record)])
        guard let stored = try SQLiteStore.query(db, "SELECT record FROM devices WHERE id = ?", [.text(deviceID)]).first?.first ?? nil,
            stored == record
        else { throw TokenMintError(.store.conflict, "device \(deviceID) is enrolled with another record") }
    }

    /// The record of an enrolled device.
    public func deviceRecord(_ deviceID: String) throws(TokenMintError) -> [UInt8]? {
        try VerifierStoreLimits.checkDevice(deviceID)
        lock.lock()
        defer { lock.unlock() }
        return try SQLiteStore.query(db, "SELECT record FROM devices WHERE id = ?", [.text(deviceID)]).first?.first ?? nil
    }

    /// Takes the next `count` counter values of the device in one transaction.
    public func grantOfflineAllowance(_ deviceID: String, count: Int64, notAfter: Int64) throws(TokenMintError) -> OfflineGrant {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkGrant(count: count)
        do {
            return try immediate {
                guard let row = try SQLiteStore.query(db, "SELECT next_counter FROM devices WHERE id = ?", [.text(deviceID)]).first,
                    let bytes = row.first ?? nil
                else { throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled") }
                let first = SQLiteStore.integer(bytes)
                try SQLiteStore.run(db, "UPDATE devices SET next_counter = ? WHERE id = ?", [.integer(first + count), .text(deviceID)])
                try SQLiteStore.run(db, "INSERT INTO grants (device_id, first, count, not_after) VALUES (?, ?, ?, ?)",
                                    [.text(deviceID), .integer(first), .integer(count), .integer(notAfter)])
                return OfflineGrant(deviceID: deviceID, first: first, count: count, notAfter: notAfter)
            }
        } catch {
            throw TokenMintError.wrap(error, as: .store.databaseFailure, "grant: \(error)")
        }
    }

    /// The grant holding `counter`.
    public func offlineGrant(_ deviceID: String, containing counter: Int64) throws(TokenMintError) -> OfflineGrant? {
        try VerifierStoreLimits.checkDevice(deviceID)
        lock.lock()
        defer { lock.unlock() }
        let rows = try SQLiteStore.query(
            db, "SELECT first, count, not_after FROM grants WHERE device_id = ? AND first <= ? ORDER BY first DESC LIMIT 1",
            [.text(deviceID), .integer(counter)])
        guard let row = rows.first, row.count == 3, let first = row[0], let count = row[1], let notAfter = row[2] else { return nil }
        let grant = OfflineGrant(deviceID: deviceID, first: SQLiteStore.integer(first), count: SQLiteStore.integer(count),
                                 notAfter: SQLiteStore.integer(notAfter))
        return grant.contains(counter) ? grant : nil
    }

    /// Records an issued unsigned part.
    public func issueOnlinePart(_ deviceID: String, part: String, notAfter: Int64) throws(TokenMintError) {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        do {
            try immediate {
                guard try !SQLiteStore.query(db, "SELECT 1 FROM devices WHERE id = ?", [.text(deviceID)]).isEmpty else {
                    throw TokenMintError(.store.notFound, "device \(deviceID) is not enrolled")
                }
                try SQLiteStore.run(db, "INSERT OR IGNORE INTO issued (device_id, part, not_after) VALUES (?, ?, ?)",
                                    [.text(deviceID), .text(part), .integer(notAfter)])
                guard sqlite3_changes(db) == 1 else { throw TokenMintError(.store.conflict, "this unsigned part was issued before") }
            }
        } catch {
            throw TokenMintError.wrap(error, as: .store.databaseFailure, "issue: \(error)")
        }
    }

    /// The `notAfter` of an issued unsigned part.
    public func onlinePart(_ deviceID: String, part: String) throws(TokenMintError) -> Int64? {
        try VerifierStoreLimits.checkDevice(deviceID)
        try VerifierStoreLimits.checkPart(part)
        lock.lock()
        defer { lock.unlock() }
        let rows = try SQLiteStore.query(db, "SELECT not_after FROM issued WHERE device_id = ? AND part = ?", [.text(deviceID), .text(part)])
        return (rows.first?.first ?? nil).map(SQLiteStore.integer)
    }

    /// An integer column as ``query(_:_:_:)`` returns it (8 big-endian bytes).
    static func integer(_ bytes: [UInt8]) -> Int64 {
        Int64(bitPattern: bytes.reduce(0) { $0 << 8 | UInt64($1) })
    }

    // MARK: SQL helpers

    enum Parameter {
        case text(String)
        case blob([UInt8])
        case integer(Int64)
        case null
    }

    static func failure(_ db: OpaquePointer, _ status: Int32, _ what: String) -> TokenMintError {
        let message = String(cString: sqlite3_errmsg(db))
        switch status & 0xff {
        case SQLITE_FULL: return TokenMintError(.store.diskFull, "\(what): disk full (\(message))")
        case SQLITE_READONLY: return TokenMintError(.store.readOnly, "\(what): read-only store (\(message))")
        case SQLITE_CORRUPT, SQLITE_NOTADB: return TokenMintError(.store.corrupted, "\(what): not a TokenMint store or damaged (\(message))")
        case SQLITE_BUSY, SQLITE_LOCKED: return TokenMintError(.store.busy, "\(what): store busy (\(message))")
        case SQLITE_CANTOPEN, SQLITE_IOERR: return TokenMintError(.store.cannotOpen, "\(what): I/O error (\(message))")
        default: return TokenMintError(.store.databaseFailure, "\(what): \(message)")
        }
    }

    static func execute(_ db: OpaquePointer, _ sql: String) throws(TokenMintError) {
        let status = sqlite3_exec(db, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw failure(db, status, "SQL") }
    }

    static func prepare(_ db: OpaquePointer, _ sql: String, _ parameters: [Parameter]) throws(TokenMintError) -> OpaquePointer {
        var statement: OpaquePointer? = nil
        let status = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(db, status, "prepare") }
        // SQLITE_TRANSIENT: SQLite copies the bound bytes.
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, parameter) in parameters.enumerated() {
            let position = Int32(index + 1)
            switch parameter {
            case .text(let text): sqlite3_bind_text(statement, position, text, -1, transient)
            case .blob(let bytes): sqlite3_bind_blob(statement, position, bytes, Int32(bytes.count), transient)
            case .integer(let value): sqlite3_bind_int64(statement, position, value)
            case .null: sqlite3_bind_null(statement, position)
            }
        }
        return statement
    }

    static func run(_ db: OpaquePointer, _ sql: String, _ parameters: [Parameter]) throws(TokenMintError) {
        let statement = try prepare(db, sql, parameters)
        defer { sqlite3_finalize(statement) }
        let status = sqlite3_step(statement)
        guard status == SQLITE_DONE || status == SQLITE_ROW else { throw failure(db, status, "write") }
    }

    /// Rows of blob/integer columns (integers come back as 8 big-endian bytes).
    static func query(_ db: OpaquePointer, _ sql: String, _ parameters: [Parameter]) throws(TokenMintError) -> [[[UInt8]?]] {
        let statement = try prepare(db, sql, parameters)
        defer { sqlite3_finalize(statement) }
        var rows: [[[UInt8]?]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw failure(db, status, "read") }
            var row: [[UInt8]?] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_NULL: row.append(nil)
                case SQLITE_INTEGER:
                    let v = UInt64(bitPattern: sqlite3_column_int64(statement, column))
                    row.append((0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) })
                default:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    if let pointer = sqlite3_column_blob(statement, column), count > 0 {
                        row.append(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
                    } else {
                        row.append([])
                    }
                }
            }
            rows.append(row)
        }
        return rows
    }

    final class Transaction: StoreTransaction {
        let db: OpaquePointer
        let key: SecureBytes

        init(db: OpaquePointer, key: SecureBytes) {
            self.db = db
            self.key = key
        }

        func check(_ name: String) throws(TokenMintError) {
            guard !name.isEmpty, name.utf8.count <= SQLiteStore.maximumNameBytes else {
                throw TokenMintError(.store.invalidArgument, "names are 1 to \(SQLiteStore.maximumNameBytes) bytes")
            }
        }

        func row(_ name: String) throws(TokenMintError) -> (sealed: Bool, value: [UInt8])? {
            try check(name)
            guard let row = try SQLiteStore.query(db, "SELECT sealed, value FROM items WHERE name = ?", [.text(name)]).first,
                row.count == 2, let sealed = row[0], let value = row[1]
            else { return nil }
            return (sealed.last == 1, value)
        }

        func value(_ name: String) throws(TokenMintError) -> [UInt8]? {
            guard let row = try row(name) else { return nil }
            guard !row.sealed else { throw TokenMintError(.store.invalidArgument, "\(name) is a secret; read it with secret(_:)") }
            return row.value
        }

        func setValue(_ name: String, _ value: [UInt8]) throws(TokenMintError) {
            try check(name)
            guard value.count <= SQLiteStore.maximumValueBytes else { throw TokenMintError(.store.invalidArgument, "values are at most 1 MiB") }
            try SQLiteStore.run(db, "INSERT OR REPLACE INTO items (name, sealed, value) VALUES (?, 0, ?)", [.text(name), .blob(value)])
        }

        func secret(_ name: String) throws(TokenMintError) -> SecureBytes? {
            guard let row = try row(name) else { return nil }
            guard row.sealed else { throw TokenMintError(.store.corrupted, "\(name) should be sealed") }
            do {
                return try XChaCha20Poly1305.open(row.value, key: key, associatedData: Array("item:\(name)".utf8))
            } catch {
                throw TokenMintError(.store.wrongMasterKey, "the secret \(name) does not open with the master key")
            }
        }

        func setSecret(_ name: String, _ value: SecureBytes) throws(TokenMintError) {
            try check(name)
            let sealed: [UInt8]
            do {
                sealed = try value.withUnsafeBytes { (bytes) throws(TokenMintError) -> [UInt8] in
                    try XChaCha20Poly1305.seal(Array(bytes), key: key, associatedData: Array("item:\(name)".utf8))
                }
            } catch {
                throw TokenMintError(.store.databaseFailure, "cannot seal \(name)")
            }
            try SQLiteStore.run(db, "INSERT OR REPLACE INTO items (name, sealed, value) VALUES (?, 1, ?)", [.text(name), .blob(sealed)])
        }

        func remove(_ name: String) throws(TokenMintError) {
            try check(name)
            try SQLiteStore.run(db, "DELETE FROM items WHERE name = ?", [.text(name)])
        }

        func counter(_ name: String) throws(TokenMintError) -> Int64 {
            try check(name)
            guard let bytes = try SQLiteStore.query(db, "SELECT value FROM counters WHERE name = ?", [.text(name)]).first?.first.flatMap({ $0 }),
                bytes.count == 8
            else { return 0 }
            return SQLiteStore.integer(bytes)
        }

        func setCounter(_ name: String, _ value: Int64) throws(TokenMintError) {
            try check(name)
            try SQLiteStore.run(db, "INSERT OR REPLACE INTO counters (name, value) VALUES (?, ?)", [.text(name), .integer(value)])
        }

        func increment(_ name: String, by delta: Int64) throws(TokenMintError) -> Int64 {
            let (value, overflow) = try counter(name).addingReportingOverflow(delta)
            guard !overflow else { throw TokenMintError(.store.invalidArgument, "counter \(name) would overflow") }
            try setCounter(name, value)
            return value
        }
    }
}
