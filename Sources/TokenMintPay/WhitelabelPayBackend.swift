import TokenMintCore

/// The backend the SDK talks to: `HTTPWhitelabelPayBackend` (product
/// `TokenMintHTTP`) over the WhitelabelPay REST API, ``LocalBackend`` with no
/// server, or a host's own (a test double, another transport).
///
/// Every request names the device (``WhitelabelPayDevice``), which signs a
/// short JWT per request. A backend that cannot reach its server throws
/// `pay.backendUnreachable`: the SDK then mints offline within its quota. A
/// server that no longer knows the device throws
/// `pay.invalidEnrolmentInstance`: the SDK wipes itself, as the seed does.
public protocol WhitelabelPayBackend: Sendable {
    /// Whether a server confirms the device's state: then the offline count
    /// resets only after ``sync(device:)`` succeeds, never because a caller
    /// said the device is online. False for ``LocalBackend``.
    var confirmsState: Bool { get }
    /// Registers the enrolment token; returns the server time.
    func enrol(_ token: EnrolmentToken, device: WhitelabelPayDevice) async throws -> Int64
    /// Issues the unsigned part of a payment token for a payment means; returns it with the server time.
    func issueUnsignedToken(paymentMeansID: String, device: WhitelabelPayDevice) async throws -> (unsigned: String, serverTime: Int64)
    /// Deactivates a payment means.
    func deactivate(paymentMeansID: String, device: WhitelabelPayDevice) async throws
    /// Makes a payment means the active one again.
    func reactivate(paymentMeansID: String, device: WhitelabelPayDevice) async throws
    /// What the server knows of the device (nil when there is no server).
    func sync(device: WhitelabelPayDevice) async throws -> WhitelabelPaySync?
    /// The device's next `count` offline counter values (nil when there is no server).
    func offlineGrant(count: Int64, device: WhitelabelPayDevice) async throws -> WhitelabelPayGrant?
    /// One page of the device's transactions.
    func transactions(_ query: TransactionQuery, device: WhitelabelPayDevice) async throws -> TransactionResponse
    /// The device's push payloads after event `after`, as the server sends
    /// them, until the stream is cancelled (nil when there is no server).
    func events(after: Int64, device: WhitelabelPayDevice) -> AsyncThrowingStream<WhitelabelPayEvent, any Error>?
}

extension WhitelabelPayBackend {
    /// No server confirms anything.
    public var confirmsState: Bool { false }
    /// Nothing to reactivate at a server.
    public func reactivate(paymentMeansID: String, device: WhitelabelPayDevice) async throws {}
    /// No server.
    public func sync(device: WhitelabelPayDevice) async throws -> WhitelabelPaySync? { nil }
    /// No server grants counters.
    public func offlineGrant(count: Int64, device: WhitelabelPayDevice) async throws -> WhitelabelPayGrant? { nil }
    /// No server keeps transactions: an empty page.
    public func transactions(_ query: TransactionQuery, device: WhitelabelPayDevice) async throws -> TransactionResponse {
        TransactionResponse(transactions: [], page: query.page, size: query.size, totalElements: 0, totalPages: 0, sort: query.sort)
    }
    /// No push channel.
    public func events(after: Int64, device: WhitelabelPayDevice) -> AsyncThrowingStream<WhitelabelPayEvent, any Error>? { nil }
}

/// What a server reports of a device when it syncs.
public struct WhitelabelPaySync: Sendable, Hashable {
    /// Whether a desk has enrolled the device.
    public var enrolled: Bool
    /// The device's payment means as the server has them.
    public var paymentMeans: [PaymentMeans]
    /// The server's time, seconds since the epoch.
    public var serverTime: Int64

    /// A sync report.
    public init(enrolled: Bool, paymentMeans: [PaymentMeans], serverTime: Int64) {
        self.enrolled = enrolled
        self.paymentMeans = paymentMeans
        self.serverTime = serverTime
    }
}

/// Offline counter values a server granted the device: `first` to
/// `first + count − 1`, for tokens dated up to `notAfter`.
public struct WhitelabelPayGrant: Sendable, Hashable {
    /// The first counter value.
    public var first: Int64
    /// How many values.
    public var count: Int64
    /// The last moment a token of the grant may be dated, seconds since the epoch.
    public var notAfter: Int64
    /// The server's time, seconds since the epoch.
    public var serverTime: Int64

    /// A grant.
    public init(first: Int64, count: Int64, notAfter: Int64, serverTime: Int64) {
        self.first = first
        self.count = count
        self.notAfter = notAfter
        self.serverTime = serverTime
    }
}

/// A push payload from the server's event stream, with its sequence number.
public struct WhitelabelPayEvent: Sendable, Hashable {
    /// The event's sequence number (the stream resumes after it).
    public var id: Int64
    /// The payload, `{"aps":{…},"yp-type":"…", …}`.
    public var payload: [UInt8]

    /// An event.
    public init(id: Int64, payload: [UInt8]) {
        self.id = id
        self.payload = payload
    }
}
