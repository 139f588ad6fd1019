#if Postgres
import TokenMintCore
import TokenMintStore
internal import PostgresNIO
internal import _ConnectionPoolModule

/// The tables, as numbered migrations. A migration is never edited once
/// released; a change is a new migration.
enum PostgresSchema {
    struct Migration {
        let version: Int
        let statements: [String]
    }

    /// Serializes migrators across processes (`pg_advisory_xact_lock`).
    static let lockKey: Int64 = 0x746f_6b65_6e6d_696e  // "tokenmin"
    /// Serializes `PostgresKeyValueStore` transactions across processes.
    static let itemsLockKey: Int64 = 0x746f_6b65_6e6b_7673  // "tokenkvs"

    static let versionTable = """
        CREATE TABLE IF NOT EXISTS tokenmint_schema (
            version INTEGER PRIMARY KEY,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
        """

    static let migrations: [Migration] = [
        Migration(version: 1, statements: [
            """
            CREATE TABLE tokenmint_ledger (
                id BYTEA PRIMARY KEY CHECK (octet_length(id) BETWEEN 1 AND 64),
                expires_at BIGINT NOT NULL)
            """,
            "CREATE INDEX tokenmint_ledger_expiry ON tokenmint_ledger (expires_at)",
            """
            CREATE TABLE tokenmint_devices (
                id TEXT PRIMARY KEY CHECK (octet_length(id) BETWEEN 1 AND 128),
                record BYTEA NOT NULL CHECK (octet_length(record) BETWEEN 1 AND 4096),
                next_counter BIGINT NOT NULL DEFAULT 1 CHECK (next_counter >= 1))
            """,
            """
            CREATE TABLE tokenmint_grants (
                device_id TEXT NOT NULL REFERENCES tokenmint_devices (id),
                first BIGINT NOT NULL,
                count BIGINT NOT NULL CHECK (count BETWEEN 1 AND 1000000),
                not_after BIGINT NOT NULL,
                PRIMARY KEY (device_id, first))
            """,
        ]),
        // Retries of one payment attempt are recognised (see recordOnce).
        Migration(version: 2, statements: [
            "ALTER TABLE tokenmint_ledger ADD COLUMN attempt BYTEA CHECK (octet_length(attempt) BETWEEN 1 AND 64)",
        ]),
        // What a token uses up for good (an offline counter value, an issued
        // unsigned part), and the unsigned parts the server issued.
        Migration(version: 3, statements: [
            """
            CREATE TABLE tokenmint_spent (
                slot BYTEA PRIMARY KEY CHECK (octet_length(slot) BETWEEN 1 AND 64),
                id BYTEA NOT NULL)
            """,
            """
            CREATE TABLE tokenmint_issued (
                device_id TEXT NOT NULL REFERENCES tokenmint_devices (id),
                part TEXT NOT NULL CHECK (octet_length(part) BETWEEN 1 AND 256),
                not_after BIGINT NOT NULL,
                PRIMARY KEY (device_id, part))
            """,
        ]),
        // A WhitelabelPay backend's directory (`PaymentDirectory`): devices,
        // payment means, accepted payments and the push events per device.
        Migration(version: 4, statements: [
            """
            CREATE TABLE tokenmint_wlp_devices (
                subject_id TEXT PRIMARY KEY CHECK (octet_length(subject_id) BETWEEN 1 AND 64),
                reference_id TEXT NOT NULL,
                enrolment TEXT NOT NULL CHECK (octet_length(enrolment) BETWEEN 1 AND 256),
                enrolled BOOLEAN NOT NULL DEFAULT false,
                created_at BIGINT NOT NULL)
            """,
            """
            CREATE TABLE tokenmint_wlp_means (
                id TEXT PRIMARY KEY CHECK (octet_length(id) BETWEEN 1 AND 64),
                subject_id TEXT NOT NULL REFERENCES tokenmint_wlp_devices (subject_id),
                active BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX tokenmint_wlp_means_subject ON tokenmint_wlp_means (subject_id)",
            """
            CREATE TABLE tokenmint_wlp_transactions (
                id TEXT PRIMARY KEY,
                attempt_id TEXT NOT NULL UNIQUE CHECK (octet_length(attempt_id) BETWEEN 1 AND 128),
                token_hash BYTEA NOT NULL,
                subject_id TEXT NOT NULL,
                means_id TEXT NOT NULL,
                amount BIGINT NOT NULL,
                currency TEXT NOT NULL,
                client_id TEXT NOT NULL,
                created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX tokenmint_wlp_transactions_subject ON tokenmint_wlp_transactions (subject_id, created_at)",
            """
            CREATE TABLE tokenmint_wlp_events (
                seq BIGSERIAL PRIMARY KEY,
                subject_id TEXT NOT NULL,
                payload TEXT NOT NULL,
                created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX tokenmint_wlp_events_subject ON tokenmint_wlp_events (subject_id, seq)",
        ]),
        // A `KeyValueStore` (`PostgresKeyValueStore`): the OAuth server's
        // state — signing keys, refresh families, clients, accounts, codes,
        // passkeys — shared by every server. Names compare bytewise (COLLATE
        // "C"), as in SQLite; secrets are sealed before they get here.
        Migration(version: 5, statements: [
            "CREATE TABLE tokenmint_kv_meta (name TEXT PRIMARY KEY, value BYTEA NOT NULL)",
            """
            CREATE TABLE tokenmint_kv_items (
                name TEXT COLLATE "C" PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 2048),
                sealed BOOLEAN NOT NULL,
                value BYTEA NOT NULL CHECK (octet_length(value) <= 1048576 + 64))
            """,
            """
            CREATE TABLE tokenmint_kv_counters (
                name TEXT COLLATE "C" PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 2048),
                value BIGINT NOT NULL)
            """,
        ]),
    ]
}

/// A prepared statement whose bindings are its ``values`` in order.
protocol BoundStatement: PostgresPreparedStatement {
    /// The values bound to `$1`, `$2`, …; `nil` binds NULL.
    var values: [(any PostgresEncodable)?] { get }
}

extension BoundStatement {
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            if let value { try bindings.append(value) } else { bindings.appendNull() }
        }
        return bindings
    }
}

extension BoundStatement where Row: PostgresDecodable {
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Insert-once in one statement: the row back says whether this call (or an
/// earlier call of the same attempt) recorded the identifier. `ON CONFLICT DO
/// UPDATE` with an unchanged value locks and returns the existing row, so the
/// answer is decided by the primary key, never by a race between two reads.
struct RecordOnce: BoundStatement {
    static let sql = """
        INSERT INTO tokenmint_ledger AS l (id, expires_at, attempt) VALUES ($1, $2, $3)
        ON CONFLICT (id) DO UPDATE SET expires_at = l.expires_at
        RETURNING (xmax = 0) OR coalesce(l.attempt = $3, false)
        """
    typealias Row = Bool
    let identifier: ByteBuffer, expiresAt: Int64, attempt: ByteBuffer?

    var values: [(any PostgresEncodable)?] { [identifier, expiresAt, attempt] }
}

/// Insert-once for many identifiers in one statement (the group commit of
/// concurrent verifiers): one round trip and one commit for the lot. Rows
/// come back only for the identifiers this statement did not insert, each
/// with the attempt it holds, and one last row with no identifier counts
/// those it inserted: the caller checks that the two cover every identifier
/// sent (an insert skipped without a row, by a trigger or a rule, fails the
/// batch instead of passing for new) and decides each answer as `RecordOnce`
/// does. An empty attempt stands for none (attempts are 1 to 64 bytes).
/// Identifiers are distinct within a statement (`ON CONFLICT DO UPDATE` may
/// touch a row once).
struct RecordOnceBatch: BoundStatement {
    static let sql = """
        WITH w AS (
            INSERT INTO tokenmint_ledger AS l (id, expires_at, attempt)
            SELECT u.id, u.expires_at, nullif(u.attempt, ''::bytea) FROM unnest($1::bytea[], $2::int8[], $3::bytea[]) AS u(id, expires_at, attempt)
            ON CONFLICT (id) DO UPDATE SET expires_at = l.expires_at
            RETURNING l.id, (xmax = 0) AS fresh, l.attempt)
        SELECT id, attempt, 0::int8 FROM w WHERE NOT fresh
        UNION ALL SELECT NULL, NULL, count(*) FROM w WHERE fresh
        """
    typealias Row = (ByteBuffer?, ByteBuffer?, Int64)
    let identifiers: [ByteBuffer], expiresAt: [Int64], attempts: [ByteBuffer]

    var values: [(any PostgresEncodable)?] { [identifiers, expiresAt, attempts] }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Insert-once that also spends a slot, in one statement: the slot row is
/// claimed first (`ON CONFLICT DO UPDATE` with an unchanged value returns the
/// owner, decided by the primary key); the ledger row is written only when
/// the slot is this identifier's, so a slot another token spent leaves no
/// trace of this one.
struct RecordOnceSpending: BoundStatement {
    static let sql = """
        WITH s AS (
            INSERT INTO tokenmint_spent AS s (slot, id) VALUES ($4, $1)
            ON CONFLICT (slot) DO UPDATE SET id = s.id
            RETURNING s.id = $1 AS mine),
        l AS (
            INSERT INTO tokenmint_ledger AS l (id, expires_at, attempt)
            SELECT $1, $2, $3 FROM s WHERE s.mine
            ON CONFLICT (id) DO UPDATE SET expires_at = l.expires_at
            RETURNING (xmax = 0) OR coalesce(l.attempt = $3, false) AS ok)
        SELECT coalesce((SELECT ok FROM l), false)
        """
    typealias Row = Bool
    let identifier: ByteBuffer, expiresAt: Int64, attempt: ByteBuffer?, slot: ByteBuffer

    var values: [(any PostgresEncodable)?] { [identifier, expiresAt, attempt, slot] }
}

/// Records an issued unsigned part; no row back: the device is not enrolled
/// or the part was issued before.
struct IssuePart: BoundStatement {
    static let sql = """
        INSERT INTO tokenmint_issued (device_id, part, not_after)
        SELECT id, $2, $3 FROM tokenmint_devices WHERE id = $1
        ON CONFLICT (device_id, part) DO NOTHING RETURNING 1
        """
    typealias Row = Int32
    let deviceID: String, part: String, notAfter: Int64

    var values: [(any PostgresEncodable)?] { [deviceID, part, notAfter] }
}

/// The `not_after` of an issued unsigned part.
struct PartLookup: BoundStatement {
    static let sql = "SELECT not_after FROM tokenmint_issued WHERE device_id = $1 AND part = $2"
    typealias Row = Int64
    let deviceID: String, part: String

    var values: [(any PostgresEncodable)?] { [deviceID, part] }
}

/// A device's record.
struct DeviceRecord: BoundStatement {
    static let sql = "SELECT record FROM tokenmint_devices WHERE id = $1"
    typealias Row = ByteBuffer
    let deviceID: String

    var values: [(any PostgresEncodable)?] { [deviceID] }
}

/// Moves the device's counter on and records the grant, in one statement:
/// the `UPDATE` takes the row lock, so concurrent grants queue and each gets
/// its own range. No row back: the device is not enrolled.
struct Grant: BoundStatement {
    static let sql = """
        WITH taken AS (
            UPDATE tokenmint_devices SET next_counter = next_counter + $2 WHERE id = $1 RETURNING next_counter - $2 AS first)
        INSERT INTO tokenmint_grants (device_id, first, count, not_after)
        SELECT $1, first, $2, $3 FROM taken RETURNING first
        """
    typealias Row = Int64
    let deviceID: String, count: Int64, notAfter: Int64

    var values: [(any PostgresEncodable)?] { [deviceID, count, notAfter] }
}

/// Many grants in one statement (the group commit of concurrent grants): the
/// devices' rows are locked in one order (`ORDER BY id`, taken in full
/// before the `UPDATE` starts: the uncorrelated count is a one-time filter),
/// so two batches, here or in another process, cannot deadlock each other;
/// each device's counter moves on by the sum of its requests, and the
/// requests of one device take consecutive ranges in the order they came.
/// A row comes back for every request whose device is enrolled: its ordinal
/// (1-based) and the first value of the grant row inserted for it (NULL if
/// the insert was skipped, which fails the batch). The grants of a batch are
/// one transaction: all or none.
struct GrantBatch: BoundStatement {
    static let sql = """
        WITH r AS (
            SELECT u.device_id, u.count, u.not_after, u.ord
            FROM unnest($1::text[], $2::int8[], $3::int8[]) WITH ORDINALITY AS u(device_id, count, not_after, ord)),
        t AS (SELECT device_id, sum(count)::int8 AS total FROM r GROUP BY device_id),
        locked AS MATERIALIZED (
            SELECT id FROM tokenmint_devices WHERE id IN (SELECT device_id FROM t) ORDER BY id FOR NO KEY UPDATE),
        moved AS (
            UPDATE tokenmint_devices d SET next_counter = d.next_counter + t.total FROM t
            WHERE d.id = t.device_id AND (SELECT count(*) FROM locked) >= 0
            RETURNING d.id, d.next_counter - t.total AS base),
        placed AS (
            SELECT r.ord, r.device_id, r.count, r.not_after,
                (m.base + sum(r.count) OVER (PARTITION BY r.device_id ORDER BY r.ord) - r.count)::int8 AS first
            FROM r JOIN moved m ON m.id = r.device_id),
        ins AS (
            INSERT INTO tokenmint_grants (device_id, first, count, not_after)
            SELECT device_id, first, count, not_after FROM placed RETURNING device_id, first)
        SELECT p.ord, i.first FROM placed p LEFT JOIN ins i ON i.device_id = p.device_id AND i.first = p.first
        """
    typealias Row = (Int64, Int64?)
    let deviceIDs: [String], counts: [Int64], notAfters: [Int64]

    var values: [(any PostgresEncodable)?] { [deviceIDs, counts, notAfters] }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((Int64, Int64?).self) }
}

/// The last grant starting at or before a counter value.
struct GrantLookup: BoundStatement {
    static let sql = """
        SELECT first, count, not_after FROM tokenmint_grants WHERE device_id = $1 AND first <= $2 ORDER BY first DESC LIMIT 1
        """
    typealias Row = (Int64, Int64, Int64)
    let deviceID: String, counter: Int64

    var values: [(any PostgresEncodable)?] { [deviceID, counter] }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((Int64, Int64, Int64).self) }
}

/// PostgreSQL failures as `TokenMintError`s.
enum PostgresErrors {
    /// A store error passes as it is; any other is mapped by ``storeError(_:_:)``.
    static func typed(_ error: any Error, _ what: String) -> TokenMintError {
        if let error = error as? TokenMintError, error.code.domain == "store" { return error }
        return storeError(error, what)
    }

    static func storeError(_ error: any Error, _ what: String) -> TokenMintError {
        if error is CancellationError { return TokenMintError(.store.timeout, "\(what): cancelled") }
        // A lease the pool could not give (PostgresNIO passes these on as
        // they are): the client-side code each one amounts to.
        if let pool = error as? ConnectionPoolError {
            return clientError(pool == .requestCancelled ? .queryCancelled : pool == .poolShutdown ? .poolClosed : .connectionError, what)
        }
        if let transaction = error as? PostgresTransactionError {
            return storeError(transaction.closureError ?? transaction.beginError ?? transaction.commitError ?? transaction.rollbackError ?? error, what)
        }
        guard let error = error as? PSQLError else { return TokenMintError(.store.databaseFailure, "\(what): \(type(of: error))") }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? ""
            switch state {
            case "57014": return TokenMintError(.store.timeout, "\(what): statement timeout (\(message))")
            case "53100": return TokenMintError(.store.diskFull, "\(what): disk full (\(message))")
            case "25006": return TokenMintError(.store.readOnly, "\(what): read-only (\(message))")
            case "40001", "40P01", "55P03": return TokenMintError(.store.busy, "\(what): \(message) (SQLSTATE \(state))")
            case "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004":
                return TokenMintError(.store.unavailable, "\(what): server unavailable (\(message))")
            case _ where state.hasPrefix("23"): return TokenMintError(.store.conflict, "\(what): \(message) (SQLSTATE \(state))")
            case "42P01": return TokenMintError(.store.databaseFailure, "\(what): the schema is missing; run the migrations (\(message))")
            default: return TokenMintError(.store.databaseFailure, "\(what): \(message) (SQLSTATE \(state))")
            }
        default:
            return clientError(error.code, what)
        }
    }

    /// A failure on the client's side of the connection, by its code.
    private static func clientError(_ code: PSQLError.Code, _ what: String) -> TokenMintError {
        switch code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return TokenMintError(.store.unavailable, "\(what): connection failed (\(code))")
        case .queryCancelled:
            return TokenMintError(.store.timeout, "\(what): query cancelled")
        default:
            return TokenMintError(.store.databaseFailure, "\(what): \(code)")
        }
    }
}
#endif
