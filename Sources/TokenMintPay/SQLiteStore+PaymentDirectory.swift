public import TokenMintCore
public import TokenMintStore

/// A WhitelabelPay backend's directory in a SQLite store file, beside the
/// verifier's tables, created the first time a backend uses the store.
extension SQLiteStore: PaymentDirectory {
    static let directorySchema = SQLiteStore.Schema(
        name: "pay.directory",
        statements: """
            CREATE TABLE IF NOT EXISTS wlp_devices (subject_id TEXT PRIMARY KEY, reference_id TEXT NOT NULL,
                enrolment TEXT NOT NULL, enrolled INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS wlp_means (id TEXT PRIMARY KEY, subject_id TEXT NOT NULL REFERENCES wlp_devices (subject_id),
                active INTEGER NOT NULL, created_at INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS wlp_means_subject ON wlp_means (subject_id);
            CREATE TABLE IF NOT EXISTS wlp_transactions (id TEXT PRIMARY KEY, attempt_id TEXT NOT NULL UNIQUE, token_hash BLOB NOT NULL,
                subject_id TEXT NOT NULL, means_id TEXT NOT NULL, amount INTEGER NOT NULL, currency TEXT NOT NULL,
                client_id TEXT NOT NULL, created_at INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS wlp_transactions_subject ON wlp_transactions (subject_id, created_at);
            CREATE TABLE IF NOT EXISTS wlp_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, subject_id TEXT NOT NULL,
                payload TEXT NOT NULL, created_at INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS wlp_events_subject ON wlp_events (subject_id, seq);
            """,
        clearedOnReset: [],
        migrate: { _ throws(TokenMintError) in })

    func directory<T>(transaction: Bool, _ body: (Connection) throws(TokenMintError) -> T) throws(TokenMintError) -> T {
        try withTables(Self.directorySchema, transaction: transaction, body)
    }

    static func text(_ value: Value?) -> String { value?.bytes.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    static func device(_ db: Connection, _ subjectID: String) throws(TokenMintError) -> DirectoryDevice? {
        guard let row = try db.query("SELECT enrolment, enrolled FROM wlp_devices WHERE subject_id = ?", [.text(subjectID)]).first, row.count == 2
        else { return nil }
        return DirectoryDevice(subjectID: subjectID, enrolment: text(row[0]), enrolled: row[1].integer == 1)
    }

    static func means(_ db: Connection, of subjectID: String) throws(TokenMintError) -> [DirectoryMeans] {
        try db.query("SELECT id, active FROM wlp_means WHERE subject_id = ? ORDER BY created_at, id", [.text(subjectID)]).map {
            DirectoryMeans(id: text($0[0]), subjectID: subjectID, active: $0[1].integer == 1)
        }
    }

    static func payment(_ row: [Value]) -> RecordedPayment {
        RecordedPayment(id: text(row[0]), attemptID: text(row[1]), tokenHash: row[2].bytes ?? [], subjectID: text(row[3]), meansID: text(row[4]),
                        amount: row[5].integer ?? 0, currency: text(row[6]), clientID: text(row[7]), createdAt: row[8].integer ?? 0)
    }

    static let paymentColumns = "id, attempt_id, token_hash, subject_id, means_id, amount, currency, client_id, created_at"

    static func addEvent(_ db: Connection, _ subjectID: String, type: String, extra: JSONObject, now: Int64) throws(TokenMintError) -> DirectoryEvent {
        let payload = DirectoryEvent.payload(type: type, extra: extra)
        try db.run("INSERT INTO wlp_events (subject_id, payload, created_at) VALUES (?, ?, ?)", [.text(subjectID), .text(payload), .integer(now)])
        guard let sequence = try db.query("SELECT last_insert_rowid()").first?.first?.integer else {
            throw TokenMintError(.store.databaseFailure, "no event sequence")
        }
        return DirectoryEvent(sequence: sequence, payload: payload)
    }

    /// Registers a device (idempotent).
    public func registerDevice(_ enrolment: String, subjectID: String, referenceID: String, now: Int64) throws(TokenMintError) -> DirectoryDevice {
        try directory(transaction: true) { db throws(TokenMintError) in
            try db.run("INSERT OR IGNORE INTO wlp_devices (subject_id, reference_id, enrolment, created_at) VALUES (?, ?, ?, ?)",
                       [.text(subjectID), .text(referenceID), .text(enrolment), .integer(now)])
            guard let device = try Self.device(db, subjectID) else { throw TokenMintError(.store.databaseFailure, "the device row is missing") }
            return device
        }
    }

    /// The device under `subjectID`.
    public func device(_ subjectID: String) throws(TokenMintError) -> DirectoryDevice? {
        try withReader(Self.directorySchema) { db throws(TokenMintError) in try Self.device(db, subjectID) }
    }

    /// Marks the device enrolled with one active means, and queues the push, in one transaction.
    public func completeEnrolment(_ subjectID: String, meansID: String?, now: Int64) throws(TokenMintError) -> (means: String, event: DirectoryEvent) {
        try directory(transaction: true) { db throws(TokenMintError) in
            let means = meansID ?? DirectoryMeans.newID()
            if let owner = try db.query("SELECT subject_id FROM wlp_means WHERE id = ?", [.text(means)]).first?.first, Self.text(owner) != subjectID {
                throw TokenMintError(.store.conflict, "payment means \(means) belongs to another device")
            }
            try db.run("UPDATE wlp_devices SET enrolled = 1 WHERE subject_id = ?", [.text(subjectID)])
            try db.run("UPDATE wlp_means SET active = 0 WHERE subject_id = ?", [.text(subjectID)])
            try db.run("INSERT INTO wlp_means (id, subject_id, active, created_at) VALUES (?, ?, 1, ?) ON CONFLICT (id) DO UPDATE SET active = 1",
                       [.text(means), .text(subjectID), .integer(now)])
            let event = try Self.addEvent(db, subjectID, type: "enrolment-succeeded.v1", extra: ["paymentMeansId": .string(means)], now: now)
            return (means, event)
        }
    }

    /// The device's payment means.
    public func means(of subjectID: String) throws(TokenMintError) -> [DirectoryMeans] {
        try withReader(Self.directorySchema) { db throws(TokenMintError) in try Self.means(db, of: subjectID) }
    }

    /// The payment means `id`.
    public func means(id: String) throws(TokenMintError) -> DirectoryMeans? {
        try withReader(Self.directorySchema) { db throws(TokenMintError) in
            guard let row = try db.query("SELECT subject_id, active FROM wlp_means WHERE id = ?", [.text(id)]).first else { return nil }
            return DirectoryMeans(id: id, subjectID: Self.text(row[0]), active: row[1].integer == 1)
        }
    }

    /// (De)activates a means of the device.
    public func setActive(_ meansID: String, of subjectID: String, _ active: Bool) throws(TokenMintError) -> [DirectoryMeans] {
        try directory(transaction: true) { db throws(TokenMintError) in
            guard try !db.query("SELECT 1 FROM wlp_means WHERE id = ? AND subject_id = ?", [.text(meansID), .text(subjectID)]).isEmpty else {
                throw TokenMintError(.store.notFound, "the device has no payment means \(meansID)")
            }
            if active { try db.run("UPDATE wlp_means SET active = 0 WHERE subject_id = ?", [.text(subjectID)]) }
            try db.run("UPDATE wlp_means SET active = ? WHERE id = ?", [.integer(active ? 1 : 0), .text(meansID)])
            return try Self.means(db, of: subjectID)
        }
    }

    /// The payment of `attemptID`.
    public func payment(attempt attemptID: String) throws(TokenMintError) -> RecordedPayment? {
        try withReader(Self.directorySchema) { db throws(TokenMintError) in
            try db.query("SELECT \(Self.paymentColumns) FROM wlp_transactions WHERE attempt_id = ?", [.text(attemptID)]).first.map(Self.payment)
        }
    }

    /// Records a payment and queues its push, once per attempt, committed
    /// together with concurrent callers' writes (one fsync for the group).
    public func recordPayment(_ payment: RecordedPayment) async throws(TokenMintError) -> (RecordedPayment, DirectoryEvent?) {
        try await groupedTransaction(Self.directorySchema) { db throws(TokenMintError) in
            try db.run("INSERT OR IGNORE INTO wlp_transactions (\(Self.paymentColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [.text(payment.id), .text(payment.attemptID), .blob(payment.tokenHash), .text(payment.subjectID), .text(payment.meansID),
                        .integer(payment.amount), .text(payment.currency), .text(payment.clientID), .integer(payment.createdAt)])
            guard db.changes == 1 else {
                guard let stored = try db.query("SELECT \(Self.paymentColumns) FROM wlp_transactions WHERE attempt_id = ?",
                                                [.text(payment.attemptID)]).first
                else { throw TokenMintError(.store.conflict, "transaction \(payment.id) exists") }
                return (Self.payment(stored), nil)
            }
            let event = try Self.addEvent(db, payment.subjectID, type: "payment-succeeded.v1",
                                          extra: ["transactionId": .string(payment.id)], now: payment.createdAt)
            return (payment, event)
        }
    }

    /// Queues an event.
    public func addEvent(_ subjectID: String, type: String, extra: JSONObject, now: Int64) throws(TokenMintError) -> DirectoryEvent {
        try directory(transaction: true) { db throws(TokenMintError) in try Self.addEvent(db, subjectID, type: type, extra: extra, now: now) }
    }

    /// The device's events after `sequence`.
    public func events(of subjectID: String, after sequence: Int64, limit: Int) throws(TokenMintError) -> [DirectoryEvent] {
        try withReader(Self.directorySchema) { db throws(TokenMintError) in
            try db.query("SELECT seq, payload FROM wlp_events WHERE subject_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                         [.text(subjectID), .integer(sequence), .integer(Int64(max(1, min(limit, 1024))))]).map {
                DirectoryEvent(sequence: $0[0].integer ?? 0, payload: Self.text($0[1]))
            }
        }
    }

    /// One sorted page of payments and the total.
    public func payments(of subjectID: String?, query: TransactionQuery) throws(TokenMintError) -> (rows: [RecordedPayment], total: Int64) {
        try withReader(Self.directorySchema) { db throws(TokenMintError) in
            let filter = subjectID == nil ? "" : " WHERE subject_id = ?"
            let parameters: [Parameter] = subjectID.map { [.text($0)] } ?? []
            let total = try db.query("SELECT COUNT(*) FROM wlp_transactions" + filter, parameters).first?.first?.integer ?? 0
            let rows = try db.query("SELECT \(Self.paymentColumns) FROM wlp_transactions\(filter) ORDER BY \(query.orderBy) LIMIT ? OFFSET ?",
                                    parameters + [.integer(Int64(query.size)), .integer(Int64(query.page - 1) * Int64(query.size))])
            return (rows.map(Self.payment), total)
        }
    }
}

extension TransactionQuery.Property {
    /// The column a directory's table keeps the property in.
    package var column: String {
        switch self {
        case .createdAt: "created_at"
        case .amount: "amount"
        case .currency: "currency"
        case .transactionId: "id"
        case .paymentMeansId: "means_id"
        }
    }
}

extension TransactionQuery {
    /// The `ORDER BY` list: the sort keys, then the transaction ID (a total order).
    /// Built only from the known columns, never from the request's text.
    package var orderBy: String {
        (orders.map { "\($0.property.column) \($0.ascending ? "ASC" : "DESC")" } + ["id ASC"]).joined(separator: ", ")
    }
}
