#if Postgres
public import TokenMintCore
public import TokenMintPay
import TokenMintStore
import Logging
internal import PostgresNIO

/// A WhitelabelPay backend's directory on PostgreSQL, beside the verifier's
/// ledger in the same database, so any number of `tokenmint serve`
/// instances agree on devices, means, payments and events. A change and the
/// event it queues commit in one transaction; a payment's row is unique per
/// attempt, so a retry on any instance finds the first.
extension PostgresVerifierStore: PaymentDirectory {
    static func directoryDevice(_ subjectID: String, _ rows: PostgresRowSequence) async throws -> DirectoryDevice? {
        for try await (enrolment, enrolled) in rows.decode((String, Bool).self) {
            return DirectoryDevice(subjectID: subjectID, enrolment: enrolment, enrolled: enrolled)
        }
        return nil
    }

    static func means(_ subjectID: String, _ rows: PostgresRowSequence) async throws -> [DirectoryMeans] {
        var list: [DirectoryMeans] = []
        for try await (id, active) in rows.decode((String, Bool).self) { list.append(DirectoryMeans(id: id, subjectID: subjectID, active: active)) }
        return list
    }

    static let paymentColumns = "id, attempt_id, token_hash, subject_id, means_id, amount, currency, client_id, created_at"

    static func payments(_ rows: PostgresRowSequence) async throws -> [RecordedPayment] {
        var list: [RecordedPayment] = []
        for try await (id, attempt, hash, subject, means, amount, currency, client, created)
            in rows.decode((String, String, ByteBuffer, String, String, Int64, String, String, Int64).self)
        {
            list.append(RecordedPayment(id: id, attemptID: attempt, tokenHash: Array(hash.readableBytesView), subjectID: subject, meansID: means,
                                        amount: amount, currency: currency, clientID: client, createdAt: created))
        }
        return list
    }

    /// Queues an event inside the caller's transaction. The device's row is
    /// locked first, so one device's events commit in the order of their
    /// sequence numbers: a reader that has seen event N never misses an
    /// earlier one still to commit (a sequence is taken at insert, not at commit).
    static func addEvent(_ connection: PostgresConnection, _ subjectID: String, type: String, extra: JSONObject, now: Int64, logger: Logger) async throws -> DirectoryEvent {
        try await connection.query("SELECT 1 FROM tokenmint_wlp_devices WHERE subject_id = \(subjectID) FOR UPDATE", logger: logger)
        let payload = DirectoryEvent.payload(type: type, extra: extra)
        let rows = try await connection.query(
            "INSERT INTO tokenmint_wlp_events (subject_id, payload, created_at) VALUES (\(subjectID), \(payload), \(now)) RETURNING seq", logger: logger)
        for try await sequence in rows.decode(Int64.self) { return DirectoryEvent(sequence: sequence, payload: payload) }
        throw TokenMintError(.store.databaseFailure, "no event sequence")
    }

    /// Registers a device (idempotent).
    public func registerDevice(_ enrolment: String, subjectID: String, referenceID: String, now: Int64) async throws(TokenMintError) -> DirectoryDevice {
        let device = try await bounded("device registration") { client, logger -> DirectoryDevice? in
            try await client.query("""
                INSERT INTO tokenmint_wlp_devices (subject_id, reference_id, enrolment, created_at)
                VALUES (\(subjectID), \(referenceID), \(enrolment), \(now)) ON CONFLICT (subject_id) DO NOTHING
                """, logger: logger)
            return try await Self.directoryDevice(subjectID, try await client.query(
                "SELECT enrolment, enrolled FROM tokenmint_wlp_devices WHERE subject_id = \(subjectID)", logger: logger))
        }
        guard let device else { throw TokenMintError(.store.databaseFailure, "the device row is missing") }
        return device
    }

    /// The device under `subjectID`.
    public func device(_ subjectID: String) async throws(TokenMintError) -> DirectoryDevice? {
        try await bounded("device lookup") { client, logger in
            try await Self.directoryDevice(subjectID, try await client.query(
                "SELECT enrolment, enrolled FROM tokenmint_wlp_devices WHERE subject_id = \(subjectID)", logger: logger))
        }
    }

    /// Marks the device enrolled with one active means, and queues the push, in one transaction.
    public func completeEnrolment(_ subjectID: String, meansID: String?, now: Int64) async throws(TokenMintError) -> (means: String, event: DirectoryEvent) {
        let means = meansID ?? DirectoryMeans.newID()
        let outcome = try await bounded("enrolment") { client, logger -> (Bool, DirectoryEvent?) in
            try await client.withTransaction(logger: logger) { connection -> (Bool, DirectoryEvent?) in
                // The device row lock orders concurrent enrolments of one device.
                try await connection.query("SELECT 1 FROM tokenmint_wlp_devices WHERE subject_id = \(subjectID) FOR UPDATE", logger: logger)
                for try await owner in try await connection.query("SELECT subject_id FROM tokenmint_wlp_means WHERE id = \(means)", logger: logger)
                    .decode(String.self) where owner != subjectID { return (false, nil) }
                try await connection.query("UPDATE tokenmint_wlp_devices SET enrolled = true WHERE subject_id = \(subjectID)", logger: logger)
                try await connection.query("UPDATE tokenmint_wlp_means SET active = false WHERE subject_id = \(subjectID)", logger: logger)
                try await connection.query("""
                    INSERT INTO tokenmint_wlp_means (id, subject_id, active, created_at) VALUES (\(means), \(subjectID), true, \(now))
                    ON CONFLICT (id) DO UPDATE SET active = true
                    """, logger: logger)
                let event = try await Self.addEvent(connection, subjectID, type: "enrolment-succeeded.v1", extra: ["paymentMeansId": .string(means)],
                                                    now: now, logger: logger)
                return (true, event)
            }
        }
        guard outcome.0, let event = outcome.1 else { throw TokenMintError(.store.conflict, "payment means \(means) belongs to another device") }
        return (means, event)
    }

    /// The device's payment means.
    public func means(of subjectID: String) async throws(TokenMintError) -> [DirectoryMeans] {
        try await bounded("means lookup") { client, logger in
            try await Self.means(subjectID, try await client.query(
                "SELECT id, active FROM tokenmint_wlp_means WHERE subject_id = \(subjectID) ORDER BY created_at, id", logger: logger))
        }
    }

    /// The payment means `id`.
    public func means(id: String) async throws(TokenMintError) -> DirectoryMeans? {
        try await bounded("means lookup") { client, logger -> DirectoryMeans? in
            for try await (subject, active) in try await client.query(
                "SELECT subject_id, active FROM tokenmint_wlp_means WHERE id = \(id)", logger: logger).decode((String, Bool).self)
            {
                return DirectoryMeans(id: id, subjectID: subject, active: active)
            }
            return nil
        }
    }

    /// (De)activates a means of the device.
    public func setActive(_ meansID: String, of subjectID: String, _ active: Bool) async throws(TokenMintError) -> [DirectoryMeans] {
        let list = try await bounded("means update") { client, logger -> [DirectoryMeans]? in
            try await client.withTransaction(logger: logger) { connection -> [DirectoryMeans]? in
                var owned = false
                for try await _ in try await connection.query(
                    "SELECT 1 FROM tokenmint_wlp_means WHERE id = \(meansID) AND subject_id = \(subjectID) FOR UPDATE", logger: logger) { owned = true }
                guard owned else { return nil }
                if active { try await connection.query("UPDATE tokenmint_wlp_means SET active = false WHERE subject_id = \(subjectID)", logger: logger) }
                try await connection.query("UPDATE tokenmint_wlp_means SET active = \(active) WHERE id = \(meansID)", logger: logger)
                return try await Self.means(subjectID, try await connection.query(
                    "SELECT id, active FROM tokenmint_wlp_means WHERE subject_id = \(subjectID) ORDER BY created_at, id", logger: logger))
            }
        }
        guard let list else { throw TokenMintError(.store.notFound, "the device has no payment means \(meansID)") }
        return list
    }

    /// The payment of `attemptID`.
    public func payment(attempt attemptID: String) async throws(TokenMintError) -> RecordedPayment? {
        try await bounded("payment lookup") { client, logger in
            try await Self.payments(try await client.query(PostgresQuery(
                unsafeSQL: "SELECT \(Self.paymentColumns) FROM tokenmint_wlp_transactions WHERE attempt_id = $1", binds: Self.binds([attemptID])),
                logger: logger)).first
        }
    }

    /// Records a payment and queues its push, once per attempt.
    public func recordPayment(_ payment: RecordedPayment) async throws(TokenMintError) -> (RecordedPayment, DirectoryEvent?) {
        try await bounded("payment record") { client, logger -> (RecordedPayment, DirectoryEvent?) in
            try await client.withTransaction(logger: logger) { connection -> (RecordedPayment, DirectoryEvent?) in
                var inserted = false
                for try await _ in try await connection.query("""
                    INSERT INTO tokenmint_wlp_transactions (id, attempt_id, token_hash, subject_id, means_id, amount, currency, client_id, created_at)
                    VALUES (\(payment.id), \(payment.attemptID), \(ByteBuffer(bytes: payment.tokenHash)), \(payment.subjectID), \(payment.meansID),
                            \(payment.amount), \(payment.currency), \(payment.clientID), \(payment.createdAt))
                    ON CONFLICT (attempt_id) DO NOTHING RETURNING 1
                    """, logger: logger) { inserted = true }
                guard inserted else {
                    let stored = try await Self.payments(try await connection.query(PostgresQuery(
                        unsafeSQL: "SELECT \(Self.paymentColumns) FROM tokenmint_wlp_transactions WHERE attempt_id = $1",
                        binds: Self.binds([payment.attemptID])), logger: logger))
                    guard let first = stored.first else { throw TokenMintError(.store.conflict, "transaction \(payment.id) exists") }
                    return (first, nil)
                }
                let event = try await Self.addEvent(connection, payment.subjectID, type: "payment-succeeded.v1",
                                                    extra: ["transactionId": .string(payment.id)], now: payment.createdAt, logger: logger)
                return (payment, event)
            }
        }
    }

    /// Queues an event.
    public func addEvent(_ subjectID: String, type: String, extra: JSONObject, now: Int64) async throws(TokenMintError) -> DirectoryEvent {
        try await bounded("event") { client, logger in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.addEvent(connection, subjectID, type: type, extra: extra, now: now, logger: logger)
            }
        }
    }

    /// The device's events after `sequence`.
    public func events(of subjectID: String, after sequence: Int64, limit: Int) async throws(TokenMintError) -> [DirectoryEvent] {
        let count = Int64(max(1, min(limit, 1024)))
        return try await bounded("events") { client, logger in
            var list: [DirectoryEvent] = []
            for try await (seq, payload) in try await client.query("""
                SELECT seq, payload FROM tokenmint_wlp_events WHERE subject_id = \(subjectID) AND seq > \(sequence) ORDER BY seq LIMIT \(count)
                """, logger: logger).decode((Int64, String).self)
            {
                list.append(DirectoryEvent(sequence: seq, payload: payload))
            }
            return list
        }
    }

    /// One sorted page of payments and the total.
    public func payments(of subjectID: String?, query: TransactionQuery) async throws(TokenMintError) -> (rows: [RecordedPayment], total: Int64) {
        let offset = Int64(query.page - 1) * Int64(query.size)
        let size = Int64(query.size)
        // The ORDER BY list is built from known columns only (TransactionQuery.orderBy).
        let filter = subjectID == nil ? "" : " WHERE subject_id = $1"
        let first = subjectID == nil ? 1 : 2
        let values: [any PostgresEncodable & Sendable] = (subjectID.map { [$0] } ?? []) + [size, offset]
        let countValues: [any PostgresEncodable & Sendable] = subjectID.map { [$0] } ?? []
        return try await bounded("payments") { client, logger in
            var total: Int64 = 0
            for try await count in try await client.query(PostgresQuery(
                unsafeSQL: "SELECT count(*) FROM tokenmint_wlp_transactions" + filter, binds: Self.binds(countValues)), logger: logger).decode(Int64.self)
            {
                total = count
            }
            let rows = try await Self.payments(try await client.query(PostgresQuery(
                unsafeSQL: "SELECT \(Self.paymentColumns) FROM tokenmint_wlp_transactions\(filter) ORDER BY \(query.orderBy) LIMIT $\(first) OFFSET $\(first + 1)",
                binds: Self.binds(values)), logger: logger))
            return (rows, total)
        }
    }

    static func binds(_ values: [any PostgresEncodable & Sendable]) throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { try bindings.append(value) }
        return bindings
    }
}
#endif
