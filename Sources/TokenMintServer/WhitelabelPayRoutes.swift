#if Server
import TokenMintCore
import TokenMintCrypto
import TokenMintPay
import TokenMintAuth
import TokenMintJOSE
import Hummingbird
import HTTPTypes
import Logging
import ServiceLifecycle

/// The WhitelabelPay REST API under `/wlp/v1`: what the device SDK and the
/// cash desks talk to.
struct WhitelabelPayRoutes: Sendable {
    let directory: any PaymentDirectory
    let verifier: PaymentTokenVerifier
    let devices: DeviceAuthenticator
    let desks: DeskAuthenticator
    let hub: EventHub
    let configuration: ServerConfiguration
    let clock: @Sendable () -> Int64
    let logger: Logger
    /// Seconds between a stream's keep-alive comments (and store polls).
    let pollInterval: Duration

    func add(to router: Router<BasicRequestContext>) {
        let group = router.group("wlp/v1")
        group.post("devices") { request, _ in try await register(request) }
        group.post("enrolments") { request, _ in try await enrol(request) }
        group.get("devices/:subjectId") { request, context in try await status(request, context) }
        group.get("devices/:subjectId/events") { request, context in try await events(request, context) }
        group.get("devices/:subjectId/payment-means") { request, context in
            let device = try await device(request, context)
            return HTTPMessages.json(.ok, try meansBody(try await directory.means(of: device.subjectID)))
        }
        group.post("devices/:subjectId/payment-means/:meansId/deactivate") { request, context in try await setActive(request, context, false) }
        group.post("devices/:subjectId/payment-means/:meansId/reactivate") { request, context in try await setActive(request, context, true) }
        group.post("devices/:subjectId/unsigned-tokens") { request, context in try await unsignedToken(request, context) }
        group.post("devices/:subjectId/offline-grants") { request, context in try await grant(request, context) }
        group.post("payments") { request, _ in try await pay(request) }
        group.get("transactions") { request, _ in try await transactions(request) }
    }

    // MARK: Devices

    /// `POST /wlp/v1/devices`: a device registers its enrolment token
    /// (the SDK's `getEnrolmentToken()`), proving the key with its JWT.
    func register(_ request: Request) async throws(TokenMintError) -> Response {
        let token = try DeviceAuthenticator.bearer(request)
        let body = try await HTTPMessages.object(request, limit: configuration.maximumBodyBytes)
        let enrolment = try parseEnrolment(try HTTPMessages.string(body, "enrolmentToken", maximum: 256))
        try await devices.authenticate(token, enrolment: enrolment)
        let device = try await directory.registerDevice(enrolment.description, subjectID: enrolment.subjectID, referenceID: enrolment.referenceID, now: clock())
        guard device.enrolment == enrolment.description else {
            throw TokenMintError(.server.conflict, "another enrolment token is registered under this subject")
        }
        logger.info("device registered", metadata: ["subject": "\(device.subjectID)"])
        return HTTPMessages.json(.created, deviceBody(device))
    }

    func deviceBody(_ device: DirectoryDevice) -> JSONObject {
        JSONObject([("subjectId", .string(device.subjectID)), ("status", .string(device.enrolled ? "enrolled" : "pending")),
                    ("serverTime", .number(clock()))])
    }

    func parseEnrolment(_ text: String) throws(TokenMintError) -> EnrolmentToken {
        do { return try EnrolmentToken(parsing: text) } catch {
            throw TokenMintError(.server.badRequest, "enrolmentToken: \(error.reason)", underlying: error)
        }
    }

    /// The device a device route names, after its JWT verified.
    func device(_ request: Request, _ context: BasicRequestContext) async throws(TokenMintError) -> DirectoryDevice {
        let token = try DeviceAuthenticator.bearer(request)
        guard let subjectID = context.parameters.get("subjectId") else { throw TokenMintError(.server.notFound, "no subject") }
        return try await device(token: token, subjectID: subjectID)
    }

    func device(token: String, subjectID: String) async throws(TokenMintError) -> DirectoryDevice {
        // A subject the server does not know: the SDK wipes itself on this answer.
        guard let device = try await directory.device(subjectID) else { throw TokenMintError(.pay.invalidEnrolmentInstance, "the device is not registered") }
        try await devices.authenticate(token, enrolment: try parseEnrolment(device.enrolment))
        return device
    }

    /// The device, which must be enrolled at a desk.
    func enrolledDevice(_ request: Request, _ context: BasicRequestContext) async throws(TokenMintError) -> (DirectoryDevice, EnrolmentToken) {
        let device = try await device(request, context)
        guard device.enrolled else { throw TokenMintError(.pay.deviceNotEnrolled, "the device is not enrolled at a desk yet") }
        return (device, try parseEnrolment(device.enrolment))
    }

    /// `GET /wlp/v1/devices/{subjectId}`: what a device syncs before it acts.
    func status(_ request: Request, _ context: BasicRequestContext) async throws(TokenMintError) -> Response {
        let device = try await device(request, context)
        var body = deviceBody(device)
        body.set("paymentMeans", try meansBody(try await directory.means(of: device.subjectID))["paymentMeans"] ?? .array([]))
        return HTTPMessages.json(.ok, body)
    }

    func meansBody(_ means: [DirectoryMeans]) throws(TokenMintError) -> JSONObject {
        JSONObject([("paymentMeans", .array(means.map { .object(JSONObject([("id", .string($0.id)), ("active", .bool($0.active))])) }))])
    }

    func setActive(_ request: Request, _ context: BasicRequestContext, _ active: Bool) async throws(TokenMintError) -> Response {
        let device = try await device(request, context)
        guard let meansID = context.parameters.get("meansId"), PaymentMeans.isValidID(meansID) else {
            throw TokenMintError(.server.notFound, "no such payment means")
        }
        return HTTPMessages.json(.ok, try meansBody(try await directory.setActive(meansID, of: device.subjectID, active)))
    }

    /// `POST …/unsigned-tokens`: the online unsigned part for the active
    /// (or the named) payment means, single use, valid for one token lifetime.
    func unsignedToken(_ request: Request, _ context: BasicRequestContext) async throws(TokenMintError) -> Response {
        let (device, enrolment) = try await enrolledDevice(request, context)
        let named = try await optionalBody(request).flatMap { object throws(TokenMintError) in try HTTPMessages.optionalString(object, "paymentMeansId", maximum: 64) }
        let means = try await directory.means(of: device.subjectID)
        guard let chosen = named.map({ id in means.first { $0.id == id } }) ?? means.first(where: \.active) else {
            throw TokenMintError(.pay.failureToRetrievePaymentMeans, named == nil ? "the device has no active payment means" : "the device has no such payment means")
        }
        guard chosen.active else { throw TokenMintError(.pay.failureToRetrievePaymentMeans, "payment means \(chosen.id) is not active") }
        let part = try await verifier.issueOnlinePart(deviceID: PaymentTokenVerifier.deviceID(of: enrolment), paymentMeansID: chosen.id,
                                                     window: configuration.tokenLifetime)
        return HTTPMessages.json(.created, JSONObject([("unsignedToken", .string(part)), ("paymentMeansId", .string(chosen.id)), ("serverTime", .number(clock()))]))
    }

    /// An optional JSON body: none (or an empty one) is nil.
    func optionalBody(_ request: Request) async throws(TokenMintError) -> JSONObject? {
        if request.headers[.contentType] == nil, request.headers[.contentLength] == nil || request.headers[.contentLength] == "0" { return nil }
        return try await HTTPMessages.object(request, limit: configuration.maximumBodyBytes)
    }

    /// `POST …/offline-grants`: the next offline counter values of the device.
    func grant(_ request: Request, _ context: BasicRequestContext) async throws(TokenMintError) -> Response {
        let (_, enrolment) = try await enrolledDevice(request, context)
        var count = configuration.offlineGrantSize
        if let body = try await optionalBody(request), let value = body["count"] {
            // More than the server grants at a time gets what it grants.
            guard let asked = value.int64Value, asked >= 1 else { throw TokenMintError(.server.badRequest, "count is a number from 1") }
            count = min(asked, configuration.offlineGrantSize)
        }
        let grant = try await verifier.grantOfflineAllowance(deviceID: PaymentTokenVerifier.deviceID(of: enrolment), count: count,
                                                             window: configuration.offlineGrantWindow)
        return HTTPMessages.json(.created, JSONObject([
            ("first", .number(grant.first)), ("count", .number(grant.count)), ("notAfter", .number(grant.notAfter)), ("serverTime", .number(clock())),
        ]))
    }

    // MARK: Push

    /// `GET …/events`: server-sent events, one per push payload
    /// (`id:` its sequence number, `event:` its `yp-type`, `data:` the
    /// payload), starting after `Last-Event-ID` (or `?after=`), then live.
    func events(_ request: Request, _ context: BasicRequestContext) async throws(TokenMintError) -> Response {
        let device = try await device(request, context)
        let header = request.headers[HTTPField.Name("Last-Event-ID")!] ?? request.uri.queryParameters["after"].map(String.init)
        var after: Int64 = 0
        if let header {
            guard header.utf8.count <= 18, let value = Int64(header), value >= 0 else {
                throw TokenMintError(.server.badRequest, "Last-Event-ID is a sequence number")
            }
            after = value
        }
        let last = after
        let (directory, hub, logger, subjectID, interval) = (self.directory, self.hub, self.logger, device.subjectID, pollInterval)
        guard let (id, signals) = await hub.subscribe(subjectID, pollInterval: interval) else {
            throw TokenMintError(.server.unavailable, "the server holds as many event streams as it takes; try again later")
        }
        let body = ResponseBody { writer in
            var sent = last
            do {
                try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                sent = try await Self.flush(directory, subjectID, after: sent, writer: &writer)
                for await signal in signals.cancelOnGracefulShutdown() {
                    if signal == .tick { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) }
                    sent = try await Self.flush(directory, subjectID, after: sent, writer: &writer)
                }
            } catch {
                logger.debug("event stream ended", metadata: ["subject": "\(subjectID)"])
            }
            await hub.unsubscribe(subjectID, id)
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: body)
    }

    /// Writes the events after `sequence`; returns the last one sent.
    static func flush(_ directory: any PaymentDirectory, _ subjectID: String, after sequence: Int64, writer: inout any ResponseBodyWriter) async throws -> Int64 {
        var last = sequence
        while true {
            let events = try await directory.events(of: subjectID, after: last, limit: 64)
            for event in events {
                let type = event.type ?? "message"
                try await writer.write(ByteBuffer(string: "id: \(event.sequence)\nevent: \(type)\ndata: \(event.payload)\n\n"))
                last = event.sequence
            }
            if events.count < 64 { return last }
        }
    }

    func push(_ subjectID: String) async { await hub.notify(subjectID) }

    // MARK: Desks

    /// `POST /wlp/v1/enrolments`: a desk enrols a scanned enrolment token.
    func enrol(_ request: Request) async throws(TokenMintError) -> Response {
        let desk = try await desks.authenticate(request)
        let body = try await HTTPMessages.object(request, limit: configuration.maximumBodyBytes)
        let enrolment = try parseEnrolment(try HTTPMessages.string(body, "enrolmentToken", maximum: 256))
        let meansID = try HTTPMessages.optionalString(body, "paymentMeansId", maximum: 64)
        if let meansID, !PaymentMeans.isValidID(meansID) {
            throw TokenMintError(.server.badRequest, "paymentMeansId is 1 to 64 characters of [A-Za-z0-9-]")
        }
        let device = try await directory.registerDevice(enrolment.description, subjectID: enrolment.subjectID, referenceID: enrolment.referenceID, now: clock())
        guard device.enrolment == enrolment.description else {
            throw TokenMintError(.server.conflict, "another enrolment token is registered under this subject")
        }
        do { try await verifier.enrol(enrolment) } catch where error.code == .pay.enrollmentError {
            throw TokenMintError(.server.conflict, "the reference ID is enrolled with another device key", underlying: error)
        }
        let (means, _) = try await directory.completeEnrolment(device.subjectID, meansID: meansID, now: clock())
        await push(device.subjectID)
        logger.info("enrolled", metadata: ["subject": "\(device.subjectID)", "client_id": "\(desk)", "means": "\(means)"])
        return HTTPMessages.json(.created, JSONObject([
            ("subjectId", .string(device.subjectID)), ("status", .string("enrolled")), ("paymentMeansId", .string(means)),
        ]))
    }

    /// `POST /wlp/v1/payments`: a desk presents a scanned payment token.
    /// 200 accepted, 409 refused (with the reason); the same `attemptId`
    /// retried after a lost answer or a crash is accepted again.
    func pay(_ request: Request) async throws(TokenMintError) -> Response {
        let desk = try await desks.authenticate(request)
        let body = try await HTTPMessages.object(request, limit: configuration.maximumBodyBytes)
        let text = try HTTPMessages.string(body, "paymentToken", maximum: 512)
        let attempt = try HTTPMessages.string(body, "attemptId", maximum: 128)
        guard attempt.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw TokenMintError(.server.badRequest, "attemptId is visible ASCII") }
        guard let amount = body["amount"]?.objectValue, let value = amount["value"]?.int64Value, (1...99_999_999_999).contains(value),
            let currency = amount["currency"]?.stringValue, currency.utf8.count == 3, currency.utf8.allSatisfy({ (65...90).contains($0) })
        else { throw TokenMintError(.server.badRequest, "amount is {\"value\": minor units 1 to 99999999999, \"currency\": ISO 4217 code}") }

        let directory = self.directory
        let refused = { (error: TokenMintError, subject: String?) async throws(TokenMintError) -> Response in
            if HTTPMessages.status(for: error.code) == .internalServerError { throw error }
            if let subject {
                _ = try await directory.addEvent(subject, type: "payment-failed.v1", extra: ["reason": .string(error.code.name)], now: clock())
                await push(subject)
            }
            logger.info("payment refused", metadata: ["client_id": "\(desk)", "code": "\(error.code)", "attempt": "\(attempt.prefix(64))"])
            return HTTPMessages.json(.conflict, JSONObject([("status", .string("refused")), ("error", .string(error.code.name)), ("message", .string(error.reason))]))
        }
        let token: PaymentToken
        do { token = try PaymentToken(parsing: text) } catch { return try await refused(error, nil) }
        let tokenHash = HashFunction.sha256.hash(token.signedMessage)
        // A retry must be the same payment: token, amount, currency and desk.
        let samePayment = { (stored: RecordedPayment) in
            stored.tokenHash == tokenHash && stored.amount == value && stored.currency == currency && stored.clientID == desk
        }
        if let earlier = try await directory.payment(attempt: attempt) {
            guard samePayment(earlier) else { throw TokenMintError(.server.conflict, "attemptId \(attempt.prefix(64)) belongs to another payment") }
            return accepted(earlier)
        }
        let parts = token.unsignedPart.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, PaymentMeans.isValidID(parts[1]), let means = try await directory.means(id: String(parts[1])),
            let device = try await directory.device(means.subjectID)
        else { return try await refused(TokenMintError(.pay.deviceNotEnrolled, "the token names no payment means this server knows"), nil) }
        guard means.active else {
            return try await refused(TokenMintError(.pay.failureToRetrievePaymentMeans, "payment means \(means.id) is deactivated"), device.subjectID)
        }
        let enrolment = try parseEnrolment(device.enrolment)
        do { _ = try await verifier.verify(text, enrolment: enrolment, attempt: attempt) } catch {
            return try await refused(error, device.subjectID)
        }
        let record = RecordedPayment(
            id: UUIDText.random(), attemptID: attempt, tokenHash: tokenHash, subjectID: device.subjectID, meansID: means.id,
            amount: value, currency: currency, clientID: desk, createdAt: clock())
        let (stored, event) = try await directory.recordPayment(record)
        // Two requests raced with one attempt ID and different payments: the
        // second is not answered with the first's transaction.
        guard samePayment(stored) else { throw TokenMintError(.server.conflict, "attemptId \(attempt.prefix(64)) belongs to another payment") }
        if event != nil { await push(device.subjectID) }
        logger.info("payment accepted", metadata: ["client_id": "\(desk)", "transaction": "\(stored.id)", "subject": "\(device.subjectID)"])
        return accepted(stored)
    }

    func accepted(_ transaction: RecordedPayment) -> Response {
        var body = Self.transactionBody(transaction)
        body.set("status", .string("accepted"))
        return HTTPMessages.json(.ok, body)
    }

    static func transactionBody(_ transaction: RecordedPayment) -> JSONObject {
        JSONObject([
            ("transactionId", .string(transaction.id)), ("subjectId", .string(transaction.subjectID)),
            ("paymentMeansId", .string(transaction.meansID)),
            ("amount", .object(JSONObject([("value", .number(transaction.amount)), ("currency", .string(transaction.currency))]))),
            ("status", .string("accepted")), ("createdAt", .number(transaction.createdAt)),
        ])
    }

    /// `GET /wlp/v1/transactions`: a device sees its own payments, a desk all.
    func transactions(_ request: Request) async throws(TokenMintError) -> Response {
        let query = request.uri.queryParameters
        let page: TransactionQuery
        do {
            page = try TransactionQuery(page: query["page"].map(String.init), size: query["size"].map(String.init), sort: query[values: "sort"].map(String.init))
        } catch { throw TokenMintError(.server.badRequest, error.reason, underlying: error) }
        let token = try AccessTokenAuthenticator.credentials(request).1  // a device's Bearer JWT, or a desk's token under either scheme
        let subject: String?
        if token.split(separator: ".").count == 3, let claimed = try? DeviceAuthenticator.claimedSubject(token), try await directory.device(claimed) != nil {
            subject = try await device(token: token, subjectID: claimed).subjectID
        } else {
            _ = try await desks.authenticate(request)
            subject = nil
        }
        let (rows, total) = try await directory.payments(of: subject, query: page)
        let pages = total == 0 ? 0 : (total + Int64(page.size) - 1) / Int64(page.size)
        return HTTPMessages.json(.ok, JSONObject([
            ("content", .array(rows.map { .object(Self.transactionBody($0)) })),
            ("page", .number(page.page)), ("size", .number(page.size)),
            ("totalElements", .number(total)), ("totalPages", .number(pages)),
            ("sort", .array(page.sort.map { .string($0) })),
        ]))
    }
}

/// Random UUID strings (RFC 9562 version 4) from libsodium's generator.
enum UUIDText {
    static func random() -> String {
        var bytes = SecureRandom.bytes(count: 16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Array(Hex.encode(bytes))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }
}
#endif
