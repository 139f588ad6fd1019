public import TokenMintCore
internal import CSQLite
import TokenMintCrypto

#if canImport(Glibc)
import Glibc
#endif

import Foundation

/// A SQLite store in one file: WAL journal, `synchronous=FULL` (a commit is on
/// disk when it returns), `secure_delete` (removed secrets are overwritten),
/// secrets sealed with XChaCha20-Poly1305 under the master key and bound to
/// their names. One connection, serialized: one writer; other processes wait
/// up to five seconds for the file lock.
public final class SQLiteStore: KeyValueStore, @unchecked Sendable {
    let db: OpaquePointer
    /// Serializes every use of `db`.
    let lock = NSLock()
    /// The write transactions waiting for the next group commit.
    let commits = CommitQueue()
    /// The read-only connection of ``withReader(_:_:)``, opened on first use (under `readerLock`).
    var reader: OpaquePointer?
    let readerLock = NSLock()
    /// The schemas whose tables exist in this open store (its own lock).
    let readySchemas = Locked<Set<String>>([])
    let isReadOnly: Bool
    /// Schemas of other modules created in this file since it was opened (under `lock`).
    private var preparedSchemas: Set<String> = []
    let masterKey: SecureBytes
    /// The database file.
    public let path: String
    /// The store's identity: the random salt made when the file was created.
    public let identity: [UInt8]

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
        var readOnly = false
        do { handle = try SQLiteStore.connect(path, readOnly: false) } catch {
            guard SQLiteStore.isOnReadOnlyMedia(path) else { throw error }
            handle = try SQLiteStore.connect(path, readOnly: true)
            readOnly = true
        }
        db = handle
        isReadOnly = readOnly
        do {
            let isNew = try SQLiteStore.query(db, "SELECT 1 FROM meta WHERE name = 'check'", []).isEmpty
            let salt = try SQLiteStore.metaSalt(db)
            identity = salt
            masterKey = try SQLiteStore.resolve(keySource, salt: salt, storeIsNew: isNew)
            try SQLiteStore.checkMasterKey(db, masterKey)
        } catch {
            SQLiteStore.closeConnection(db)
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
                -- Files made before the payment module kept its own tables hold a
                -- replay ledger that reset() has always emptied: it still does.
                INSERT OR IGNORE INTO meta (name, value)
                    SELECT 'reset:ledger', x'' FROM sqlite_master WHERE type = 'table' AND name = 'ledger';
                """)
        } catch {
            SQLiteStore.closeConnection(handle)
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

    deinit {
        SQLiteStore.closeConnection(reader)
        SQLiteStore.closeConnection(db)
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
        return try immediateLocked(body)
    }

    /// ``immediate(_:)`` for a caller that holds the lock.
    private func immediateLocked<T>(_ body: () throws -> T) throws -> T {
        try SQLiteStore.run(db, "BEGIN IMMEDIATE", [])
        do {
            let result = try body()
            try SQLiteStore.run(db, "COMMIT", [])
            return result
        } catch {
            _ = sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// Wipes secrets first, then everything else (and the tables other
    /// modules asked to be emptied on reset); deleted pages are overwritten.
    public func reset() throws(TokenMintError) {
        lock.lock()
        defer { lock.unlock() }
        let registered = try SQLiteStore.query(db, "SELECT name FROM meta WHERE name LIKE 'reset:%'", [])
        let tables = registered.compactMap { $0.first?.bytes.map { String(decoding: $0.dropFirst(6), as: UTF8.self) } }
            .filter { !$0.isEmpty && $0.utf8.allSatisfy { (0x61...0x7A).contains($0) || $0 == 0x5F } }
        try SQLiteStore.execute(db, """
            BEGIN IMMEDIATE;
            DELETE FROM items WHERE sealed = 1;
            DELETE FROM items;
            DELETE FROM counters;
            \(tables.map { "DELETE FROM \($0);" }.joined(separator: "\n"))
            COMMIT;
            """)
        _ = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;", nil, nil, nil)
    }

    // MARK: Tables of other modules

    /// Runs `body` on the store's connection under its lock — in one
    /// `BEGIN IMMEDIATE` transaction when `transaction` is true — after
    /// creating `schema`'s tables if this open store has not yet.
    package func withTables<T>(
        _ schema: Schema, transaction: Bool, _ body: (Connection) throws(TokenMintError) -> T
    ) throws(TokenMintError) -> T {
        lock.lock()
        defer { lock.unlock() }
        try prepareIfNeededLocked(schema)
        let connection = Connection(db: db)
        guard transaction else { return try body(connection) }
        return try typedTransactionLocked { () throws(TokenMintError) -> T in try body(connection) }
    }

    /// Creates `schema`'s tables the first time this open store uses them.
    func prepareIfNeededLocked(_ schema: Schema) throws(TokenMintError) {
        guard !preparedSchemas.contains(schema.name) else { return }
        if !isReadOnly { try prepareLocked(schema) }
        preparedSchemas.insert(schema.name)
    }

    private func prepareLocked(_ schema: Schema) throws(TokenMintError) {
        let connection = Connection(db: db)
        try typedTransactionLocked { () throws(TokenMintError) in
            try SQLiteStore.execute(db, schema.statements)
            try schema.migrate(connection)
            for table in schema.clearedOnReset {
                try connection.run("INSERT OR IGNORE INTO meta (name, value) VALUES (?, x'')", [.text("reset:" + table)])
            }
        }
    }

    /// ``immediateLocked(_:)`` for a body that throws only `TokenMintError`.
    private func typedTransactionLocked<T>(_ body: () throws(TokenMintError) -> T) throws(TokenMintError) -> T {
        do { return try immediateLocked { try body() } } catch {
            throw TokenMintError.wrap(error, as: .store.databaseFailure, "\(error)")
        }
    }
}
