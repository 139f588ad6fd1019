public import TokenMintCore
import TokenMintCrypto

/// What a WhitelabelPay backend keeps besides the verifier's ledger: the
/// devices registered (by themselves or at a desk), their payment means, the
/// accepted payments, and the push events queued for each device.
///
/// `SQLiteStore` implements it for one server (its adapter lives beside this
/// protocol); `PostgresVerifierStore` (product `TokenMintPostgres`) for any
/// number of servers sharing one database. Every method commits its change
/// or throws and changes nothing; a change that queues an event writes the
/// event in the same transaction. Failures are `store` errors: `conflict`
/// and `notFound` where a method says so.
public protocol PaymentDirectory: Sendable {
    /// Registers a device by its enrolment token (a no-op when it is
    /// registered); returns the device as stored, whose enrolment may differ
    /// from `enrolment` when another token was registered under the subject.
    func registerDevice(_ enrolment: String, subjectID: String, referenceID: String, now: Int64) async throws(TokenMintError) -> DirectoryDevice
    /// The device registered under `subjectID`, if any.
    func device(_ subjectID: String) async throws(TokenMintError) -> DirectoryDevice?
    /// Completes an enrolment at a desk: the device is marked enrolled, the
    /// payment means `meansID` (or a new one) becomes its one active means,
    /// and `enrolment-succeeded.v1` is queued for it.
    /// - Throws: `store.conflict` when `meansID` belongs to another device.
    func completeEnrolment(_ subjectID: String, meansID: String?, now: Int64) async throws(TokenMintError) -> (means: String, event: DirectoryEvent)
    /// The device's payment means, oldest first.
    func means(of subjectID: String) async throws(TokenMintError) -> [DirectoryMeans]
    /// The payment means `id`, whoever owns it.
    func means(id: String) async throws(TokenMintError) -> DirectoryMeans?
    /// Deactivates, or reactivates (making it the one active means), a means
    /// of the device; returns the device's means after the change.
    /// - Throws: `store.notFound` when the device has no such means.
    func setActive(_ meansID: String, of subjectID: String, _ active: Bool) async throws(TokenMintError) -> [DirectoryMeans]
    /// The payment recorded for `attemptID`, if any.
    func payment(attempt attemptID: String) async throws(TokenMintError) -> RecordedPayment?
    /// Records an accepted payment and queues `payment-succeeded.v1`; a
    /// second call for the same attempt returns the first record and no event.
    func recordPayment(_ payment: RecordedPayment) async throws(TokenMintError) -> (RecordedPayment, DirectoryEvent?)
    /// Queues an event `{"aps":{},"yp-type":type, …extra}` for a device.
    func addEvent(_ subjectID: String, type: String, extra: JSONObject, now: Int64) async throws(TokenMintError) -> DirectoryEvent
    /// The device's events after `sequence`, oldest first, at most `limit`.
    func events(of subjectID: String, after sequence: Int64, limit: Int) async throws(TokenMintError) -> [DirectoryEvent]
    /// One page of payments (of one device, or all), sorted as `query`
    /// says, and the total count.
    func payments(of subjectID: String?, query: TransactionQuery) async throws(TokenMintError) -> (rows: [RecordedPayment], total: Int64)
}

/// A device as a backend's directory holds it.
public struct DirectoryDevice: Sendable, Hashable {
    /// The device's subject ID.
    public let subjectID: String
    /// Its enrolment token, as registered.
    public let enrolment: String
    /// Whether a desk has enrolled it.
    public let enrolled: Bool

    /// A device.
    public init(subjectID: String, enrolment: String, enrolled: Bool) {
        self.subjectID = subjectID
        self.enrolment = enrolment
        self.enrolled = enrolled
    }
}

/// A payment means as a backend's directory holds it.
public struct DirectoryMeans: Sendable, Hashable {
    /// The means' ID.
    public let id: String
    /// The device it belongs to.
    public let subjectID: String
    /// Whether it is the device's active means.
    public let active: Bool

    /// A payment means.
    public init(id: String, subjectID: String, active: Bool) {
        self.id = id
        self.subjectID = subjectID
        self.active = active
    }

    /// A new payment means ID, for an enrolment whose desk named none:
    /// `pm-` and 16 random hexadecimal digits.
    public static func newID() -> String { "pm-" + Hex.encode(SecureRandom.bytes(count: 8)) }
}

/// A push event queued for a device: its sequence number and JSON payload.
public struct DirectoryEvent: Sendable, Hashable {
    /// The sequence number (increasing per directory).
    public let sequence: Int64
    /// The payload, `{"aps":{},"yp-type":…}`.
    public let payload: String

    /// An event.
    public init(sequence: Int64, payload: String) {
        self.sequence = sequence
        self.payload = payload
    }

    /// The payload's `yp-type`.
    public var type: String? { (try? JSONParser.parse(Array(payload.utf8)))?.objectValue?["yp-type"]?.stringValue }

    /// The seed's push payload `{"aps":{},"yp-type":type}` with `extra` members.
    public static func payload(type: String, extra: JSONObject) -> String {
        var payload = JSONObject([("aps", .object(JSONObject())), ("yp-type", .string(type))])
        for member in extra { payload.set(member.name, member.value) }
        return String(decoding: JSONWriter.encode(.object(payload)), as: UTF8.self)
    }
}

/// A payment a backend accepted.
public struct RecordedPayment: Sendable, Hashable {
    /// The transaction ID.
    public let id: String
    /// The desk's attempt ID (a retry of it gets this record again).
    public let attemptID: String
    /// SHA-256 of the token's signed message: the attempt's token.
    public let tokenHash: [UInt8]
    /// The paying device.
    public let subjectID: String
    /// The payment means charged.
    public let meansID: String
    /// The amount in minor units.
    public let amount: Int64
    /// The ISO 4217 currency.
    public let currency: String
    /// The desk's client ID.
    public let clientID: String
    /// When it was accepted, seconds since the epoch.
    public let createdAt: Int64

    /// A payment.
    public init(id: String, attemptID: String, tokenHash: [UInt8], subjectID: String, meansID: String, amount: Int64, currency: String,
                clientID: String, createdAt: Int64) {
        self.id = id
        self.attemptID = attemptID
        self.tokenHash = tokenHash
        self.subjectID = subjectID
        self.meansID = meansID
        self.amount = amount
        self.currency = currency
        self.clientID = clientID
        self.createdAt = createdAt
    }
}
