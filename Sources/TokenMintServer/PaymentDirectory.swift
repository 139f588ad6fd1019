import TokenMintCore
import TokenMintCrypto
import TokenMintStore

/// What the WhitelabelPay backend knows besides the verifier's ledger: the
/// devices registered (by themselves or at a desk), their payment means, the
/// accepted payments and the events pushed to each device. Kept in the
/// server's SQLite store, beside the verifier's tables; every change that
/// pushes an event writes the event in the same transaction.
struct PaymentDirectory: Sendable {
    let store: SQLiteStore

    static let schema = SQLiteStore.Schema(
        name: "server.wlp",
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

    /// A registered device.
    struct Device: Sendable, Equatable {
        let subjectID: String
        let enrolment: EnrolmentTokenText
        let enrolled: Bool
    }

    /// The enrolment token as stored (parsed again where its key is needed).
    typealias EnrolmentTokenText = String

    /// A payment means on the server.
    struct Means: Sendable, Equatable {
        let id: String
        let subjectID: String
        let active: Bool
    }

    /// An accepted payment.
    struct Transaction: Sendable, Equatable {
        let id: String
        let attemptID: String
        let tokenHash: [UInt8]
        let subjectID: String
        let meansID: String
        let amount: Int64
        let currency: String
        let clientID: String
        let createdAt: Int64
    }

    /// An event for a device: its sequence number and its JSON payload.
    struct Event: Sendable, Equatable {
        let sequence: Int64
        let payload: String
    }

    func tables<T>(transaction: Bool, _ body: (SQLiteStore.Connection) throws(TokenMintError) -> T) throws(TokenMintError) -> T {
        do { return try store.withTables(Self.schema, transaction: transaction, body) } catch {
            throw TokenMintError.wrap(error, as: .server.internalFailure, "the server's store failed")
        }
    }

    static func text(_ value: SQLiteStore.Value?) -> String { value?.bytes.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// Registers a device by its enrolment token (idempotent); returns it.
    func register(_ enrolment: String, subjectID: String, referenceID: String, now: Int64) throws(TokenMintError) -> Device {
        try tables(transaction: true) { db throws(TokenMintError) in
            try db.run("INSERT OR IGNORE INTO wlp_devices (subject_id, reference_id, enrolment, created_at) VALUES (?, ?, ?, ?)",
                       [.text(subjectID), .text(referenceID), .text(enrolment), .integer(now)])
            guard let device = try Self.device(db, subjectID) else { throw TokenMintError(.server.internalFailure, "the device row is missing") }
            return device
        }
    }

    static func device(_ db: SQLiteStore.Connection, _ subjectID: String) throws(TokenMintError) -> Device? {
        guard let row = try db.query("SELECT enrolment, enrolled FROM wlp_devices WHERE subject_id = ?", [.text(subjectID)]).first, row.count == 2
        else { return nil }
        return Device(subjectID: subjectID, enrolment: text(row[0]), enrolled: row[1].integer == 1)
    }

    /// The device registered under `subjectID`, if any.
    func device(_ subjectID: String) throws(TokenMintError) -> Device? {
        try tables(transaction: false) { db throws(TokenMintError) in try Self.device(db, subjectID) }
    }

    /// Completes an enrolment at a desk: the device is marked enrolled, the
    /// payment means `meansID` (or a new one) becomes its active means, and
    /// `enrolment-succeeded.v1` is queued for it — in one transaction.
    /// - Throws: `server.conflict` when `meansID` belongs to another device.
    func completeEnrolment(_ subjectID: String, meansID: String?, now: Int64) throws(TokenMintError) -> (means: String, event: Event) {
        try tables(transaction: true) { db throws(TokenMintError) in
            let means = meansID ?? "pm-" + Hex.encode(SecureRandom.bytes(count: 8))
            if let owner = try db.query("SELECT subject_id FROM wlp_means WHERE id = ?", [.text(means)]).first?.first, Self.text(owner) != subjectID {
                throw TokenMintError(.server.conflict, "payment means \(means) belongs to another device")
            }
            try db.run("UPDATE wlp_devices SET enrolled = 1 WHERE subject_id = ?", [.text(subjectID)])
            try db.run("UPDATE wlp_means SET active = 0 WHERE subject_id = ?", [.text(subjectID)])
            try db.run("INSERT INTO wlp_means (id, subject_id, active, created_at) VALUES (?, ?, 1, ?) ON CONFLICT (id) DO UPDATE SET active = 1",
                       [.text(means), .text(subjectID), .integer(now)])
            let event = try Self.addEvent(db, subjectID, type: "enrolment-succeeded.v1", extra: ["paymentMeansId": .string(means)], now: now)
            return (means, event)
        }
    }

    /// The device's payment means, oldest first.
    func means(of subjectID: String) throws(TokenMintError) -> [Means] {
        try tables(transaction: false) { db throws(TokenMintError) in
            try db.query("SELECT id, active FROM wlp_means WHERE subject_id = ? ORDER BY created_at, id", [.text(subjectID)]).map {
                Means(id: Self.text($0[0]), subjectID: subjectID, active: $0[1].integer == 1)
            }
        }
    }

    /// The payment means `id`, whoever owns it.
    func means(id: String) throws(TokenMintError) -> Means? {
        try tables(transaction: false) { db throws(TokenMintError) in
            guard let row = try db.query("SELECT subject_id, active FROM wlp_means WHERE id = ?", [.text(id)]).first else { return nil }
            return Means(id: id, subjectID: Self.text(row[0]), active: row[1].integer == 1)
        }
    }

    /// Deactivates, or reactivates (making it the one active means), a means of the device.
    /// - Throws: `server.notFound` when the device has no such means.
    func setActive(_ meansID: String, of subjectID: String, _ active: Bool) throws(TokenMintError) -> [Means] {
        try tables(transaction: true) { db throws(TokenMintError) in
            guard try !db.query("SELECT 1 FROM wlp_means WHERE id = ? AND subject_id = ?", [.text(meansID), .text(subjectID)]).isEmpty else {
                throw TokenMintError(.server.notFound, "the device has no payment means \(meansID)")
            }
            if active { try db.run("UPDATE wlp_means SET active = 0 WHERE subject_id = ?", [.text(subjectID)]) }
            try db.run("UPDATE wlp_means SET active = ? WHERE id = ?", [.integer(active ? 1 : 0), .text(meansID)])
            return try db.query("SELECT id, active FROM wlp_means WHERE subject_id = ? ORDER BY created_at, id", [.text(subjectID)]).map {
                Means(id: Self.text($0[0]), subjectID: subjectID, active: $0[1].integer == 1)
            }
        }
    }

    static func transaction(_ row: [SQLiteStore.Value]) -> Transaction {
        Transaction(id: text(row[0]), attemptID: text(row[1]), tokenHash: row[2].bytes ?? [], subjectID: text(row[3]), meansID: text(row[4]),
                    amount: row[5].integer ?? 0, currency: text(row[6]), clientID: text(row[7]), createdAt: row[8].integer ?? 0)
    }

    static let transactionColumns = "id, attempt_id, token_hash, subject_id, means_id, amount, currency, client_id, created_at"

    /// The payment recorded for `attemptID`, if any.
    func transaction(attempt attemptID: String) throws(TokenMintError) -> Transaction? {
        try tables(transaction: false) { db throws(TokenMintError) in
            try db.query("SELECT \(Self.transactionColumns) FROM wlp_transactions WHERE attempt_id = ?", [.text(attemptID)]).first.map(Self.transaction)
        }
    }

    /// Records an accepted payment and queues `payment-succeeded.v1`, in one
    /// transaction; a second call for the same attempt returns the first
    /// record and queues nothing.
    func recordPayment(_ payment: Transaction) throws(TokenMintError) -> (Transaction, Event?) {
        try tables(transaction: true) { db throws(TokenMintError) in
            try db.run("INSERT OR IGNORE INTO wlp_transactions (\(Self.transactionColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [.text(payment.id), .text(payment.attemptID), .blob(payment.tokenHash), .text(payment.subjectID), .text(payment.meansID),
                        .integer(payment.amount), .text(payment.currency), .text(payment.clientID), .integer(payment.createdAt)])
            guard db.changes == 1 else {
                guard let stored = try db.query("SELECT \(Self.transactionColumns) FROM wlp_transactions WHERE attempt_id = ?",
                                                [.text(payment.attemptID)]).first
                else { throw TokenMintError(.server.conflict, "transaction \(payment.id) exists") }
                return (Self.transaction(stored), nil)
            }
            let event = try Self.addEvent(db, payment.subjectID, type: "payment-succeeded.v1",
                                          extra: ["transactionId": .string(payment.id)], now: payment.createdAt)
            return (payment, event)
        }
    }

    /// Queues an event for a device.
    func addEvent(_ subjectID: String, type: String, extra: JSONObject = JSONObject(), now: Int64) throws(TokenMintError) -> Event {
        try tables(transaction: true) { db throws(TokenMintError) in try Self.addEvent(db, subjectID, type: type, extra: extra, now: now) }
    }

    /// The seed's push payload `{"aps":{},"yp-type":…}` with what the event is about.
    static func addEvent(_ db: SQLiteStore.Connection, _ subjectID: String, type: String, extra: JSONObject, now: Int64) throws(TokenMintError) -> Event {
        var payload = JSONObject([("aps", .object(JSONObject())), ("yp-type", .string(type))])
        for member in extra { payload.set(member.name, member.value) }
        let text = String(decoding: JSONWriter.encode(.object(payload)), as: UTF8.self)
        try db.run("INSERT INTO wlp_events (subject_id, payload, created_at) VALUES (?, ?, ?)", [.text(subjectID), .text(text), .integer(now)])
        guard let sequence = try db.query("SELECT last_insert_rowid()").first?.first?.integer else {
            throw TokenMintError(.server.internalFailure, "no event sequence")
        }
        return Event(sequence: sequence, payload: text)
    }

    /// The device's events after `sequence`, oldest first, at most `limit`.
    func events(of subjectID: String, after sequence: Int64, limit: Int = 256) throws(TokenMintError) -> [Event] {
        try tables(transaction: false) { db throws(TokenMintError) in
            try db.query("SELECT seq, payload FROM wlp_events WHERE subject_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                         [.text(subjectID), .integer(sequence), .integer(Int64(limit))]).map {
                Event(sequence: $0[0].integer ?? 0, payload: Self.text($0[1]))
            }
        }
    }

    /// One page of payments (of one device, or all), sorted, and the total count.
    func transactions(of subjectID: String?, page: TransactionPage) throws(TokenMintError) -> (rows: [Transaction], total: Int64) {
        try tables(transaction: false) { db throws(TokenMintError) in
            let filter = subjectID == nil ? "" : " WHERE subject_id = ?"
            let parameters: [SQLiteStore.Parameter] = subjectID.map { [.text($0)] } ?? []
            let total = try db.query("SELECT COUNT(*) FROM wlp_transactions" + filter, parameters).first?.first?.integer ?? 0
            let order = (page.sort.map { "\($0.property.column) \($0.ascending ? "ASC" : "DESC")" } + ["id ASC"]).joined(separator: ", ")
            let rows = try db.query("SELECT \(Self.transactionColumns) FROM wlp_transactions\(filter) ORDER BY \(order) LIMIT ? OFFSET ?",
                                    parameters + [.integer(Int64(page.size)), .integer(Int64(page.page - 1) * Int64(page.size))])
            return (rows.map(Self.transaction), total)
        }
    }
}
