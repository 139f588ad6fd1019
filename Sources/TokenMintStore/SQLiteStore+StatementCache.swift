import TokenMintCore
internal import CSQLite

/// Prepared statements kept per connection and reused: for the short
/// statements the stores run, parsing the SQL costs more than running it.
///
/// A statement is taken out of the cache while it runs, so two uses of the
/// same SQL at once (a nested call) never share one; when it is given back
/// it is reset (ending its read of the database) and its bindings cleared.
/// A connection keeps at most ``limit`` statements; ``forget(_:)``
/// finalizes them before the connection closes.
final class StatementCache: Sendable {
    static let shared = StatementCache()
    /// Statements kept per connection.
    static let limit = 64

    /// A connection's handle as a dictionary key.
    struct Handle: Hashable, @unchecked Sendable {
        let pointer: OpaquePointer
        static func == (lhs: Handle, rhs: Handle) -> Bool { lhs.pointer == rhs.pointer }
        func hash(into hasher: inout Hasher) { hasher.combine(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))) }
    }

    /// A statement handle that crosses threads only under the mutex.
    struct Statement: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    // Behind TokenMintCore's pthread Lock, which ThreadSanitizer sees; it did
    // not see Synchronization.Mutex's futex and reported a race.
    private let statements = Locked<[Handle: [String: Statement]]>([:])

    /// A statement for `sql` on `db` with `parameters` bound: a cached one, or a new one.
    func take(_ db: OpaquePointer, _ sql: String, _ parameters: [SQLiteStore.Parameter]) throws(TokenMintError) -> OpaquePointer {
        let cached = statements.withLock { $0[Handle(pointer: db)]?.removeValue(forKey: sql) }
        guard let cached else { return try SQLiteStore.prepare(db, sql, parameters) }
        try SQLiteStore.bind(db, cached.pointer, parameters)
        return cached.pointer
    }

    /// Resets `statement` and keeps it for the next use of `sql` on `db`
    /// (finalizes it when the connection already keeps as many as it may).
    func give(_ db: OpaquePointer, _ sql: String, _ statement: OpaquePointer) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        let kept = statements.withLock { all -> Bool in
            let handle = Handle(pointer: db)
            guard all[handle]?[sql] == nil, all[handle]?.count ?? 0 < StatementCache.limit else { return false }
            all[handle, default: [:]][sql] = Statement(pointer: statement)  // in place: no copy of the connection's statements
            return true
        }
        if !kept { sqlite3_finalize(statement) }
    }

    /// Finalizes every statement kept for `db`, which is about to close.
    func forget(_ db: OpaquePointer) {
        let mine = statements.withLock { $0.removeValue(forKey: Handle(pointer: db)) } ?? [:]
        for statement in mine.values { sqlite3_finalize(statement.pointer) }
    }
}
