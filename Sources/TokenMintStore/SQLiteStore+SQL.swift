package import TokenMintCore
internal import CSQLite

extension SQLiteStore {

    /// A value bound to a statement's `?`.
    package enum Parameter {
        case text(String)
        case blob([UInt8])
        case integer(Int64)
        case null
    }

    /// A column of a result row: integers as integers, text and blobs as bytes.
    package enum Value: Equatable {
        case null
        case integer(Int64)
        case bytes([UInt8])

        /// The bytes of a text or blob column; `nil` for NULL and integers.
        package var bytes: [UInt8]? { if case .bytes(let bytes) = self { bytes } else { nil } }
        /// The value of an integer column; `nil` otherwise.
        package var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    }

    /// Statements on the store's one connection, for the tables another
    /// module of the package owns (the payment verifier's ledger, devices,
    /// grants). Only valid inside ``SQLiteStore/withTables(_:transaction:_:)``.
    package struct Connection {
        let db: OpaquePointer

        /// Runs a statement that returns no rows.
        package func run(_ sql: String, _ parameters: [Parameter] = []) throws(TokenMintError) {
            try SQLiteStore.run(db, sql, parameters)
        }

        /// The rows a query returns.
        package func query(_ sql: String, _ parameters: [Parameter] = []) throws(TokenMintError) -> [[Value]] {
            try SQLiteStore.query(db, sql, parameters)
        }

        /// How many rows the last statement inserted, changed or deleted.
        package var changes: Int { Int(sqlite3_changes(db)) }
    }

    /// Tables another module of the package keeps in the store file: created
    /// (and migrated) once per open store, in one transaction, the first time
    /// that module uses them.
    package struct Schema: Sendable {
        /// A name for the set of tables, unique in the package.
        package let name: String
        /// `CREATE TABLE IF NOT EXISTS …` statements.
        package let statements: String
        /// Tables ``SQLiteStore/reset()`` empties.
        package let clearedOnReset: [String]
        /// Changes for files made by earlier versions, run after `statements`.
        package let migrate: @Sendable (Connection) throws(TokenMintError) -> Void

        package init(
            name: String, statements: String, clearedOnReset: [String],
            migrate: @escaping @Sendable (Connection) throws(TokenMintError) -> Void = { _ in }
        ) {
            self.name = name
            self.statements = statements
            self.clearedOnReset = clearedOnReset
            self.migrate = migrate
        }
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

    /// Closes a connection, finalizing its cached statements first.
    static func closeConnection(_ db: OpaquePointer?) {
        guard let db else { return }
        StatementCache.shared.forget(db)
        sqlite3_close(db)
    }

    static func prepare(_ db: OpaquePointer, _ sql: String, _ parameters: [Parameter]) throws(TokenMintError) -> OpaquePointer {
        var statement: OpaquePointer? = nil
        let status = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(db, status, "prepare") }
        try bind(db, statement, parameters)
        return statement
    }

    /// Binds `parameters` to a fresh or reset statement.
    static func bind(_ db: OpaquePointer, _ statement: OpaquePointer, _ parameters: [Parameter]) throws(TokenMintError) {
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
    }

    static func run(_ db: OpaquePointer, _ sql: String, _ parameters: [Parameter]) throws(TokenMintError) {
        let statement = try StatementCache.shared.take(db, sql, parameters)
        defer { StatementCache.shared.give(db, sql, statement) }
        let status = sqlite3_step(statement)
        guard status == SQLITE_DONE || status == SQLITE_ROW else { throw failure(db, status, "write") }
    }

    /// The rows of a query, each column typed.
    static func query(_ db: OpaquePointer, _ sql: String, _ parameters: [Parameter]) throws(TokenMintError) -> [[Value]] {
        let statement = try StatementCache.shared.take(db, sql, parameters)
        defer { StatementCache.shared.give(db, sql, statement) }
        var rows: [[Value]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw failure(db, status, "read") }
            var row: [Value] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_NULL: row.append(.null)
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                default:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    if let pointer = sqlite3_column_blob(statement, column), count > 0 {
                        row.append(.bytes(Array(UnsafeRawBufferPointer(start: pointer, count: count))))
                    } else {
                        row.append(.bytes([]))
                    }
                }
            }
            rows.append(row)
        }
        return rows
    }
}
