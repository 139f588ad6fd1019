#if HTTPClient
public import TokenMintCore
public import TokenMintPay
public import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// A `WhitelabelPayBackend` over the WhitelabelPay REST API (`/wlp/v1`, as
/// `tokenmint serve` serves it), on AsyncHTTPClient.
///
/// The environment names the base URL unless one is given; the HTTP
/// client's configuration (timeouts, TLS, proxy) plays the part of the
/// seed's `urlSessionConfiguration`. Every request carries the device's JWT
/// (`azp` from the SDK configuration, audience ``audience``). No answer (no
/// connection, a timeout, a 5xx) is `pay.backendUnreachable`, so the SDK
/// mints offline; a server that no longer knows the device answers
/// `invalidEnrolmentInstance`, and the SDK wipes itself.
public struct HTTPWhitelabelPayBackend: WhitelabelPayBackend {
    /// The server's base URL, without a trailing slash.
    public let baseURL: String
    /// The audience of the device JWTs (the server's issuer URL).
    public let audience: String
    let exchange: JSONExchange

    /// The base URL of an environment when none is given: development is a
    /// `tokenmint serve` on this machine; integration and production must
    /// be given (their placeholders are reserved names that never resolve).
    public static func defaultBaseURL(for environment: WhitelabelPayEnvironment) -> String {
        switch environment {
        case .development: "http://127.0.0.1:8080"
        case .integration: "https://wlp-integration.invalid"
        case .production: "https://wlp.invalid"
        }
    }

    /// A backend for `environment`, at `baseURL` when given.
    /// - Parameters:
    ///   - environment: The SDK's environment; it names the base URL when
    ///     none is given (``defaultBaseURL(for:)``).
    ///   - baseURL: The server's base URL, http or https.
    ///   - client: The HTTP client (its configuration sets timeouts, TLS and
    ///     proxy, and should follow no redirect); `HTTPClient.tokenMint` by default.
    ///   - timeout: Each request's deadline.
    ///   - audience: The server's issuer URL (default: the base URL).
    /// - Throws: `pay.invalidConfiguration` for a base URL that is not http(s).
    public init(environment: WhitelabelPayEnvironment, baseURL: String? = nil, audience: String? = nil, client: HTTPClient = .tokenMint,
                timeout: Duration = .seconds(10)) throws(TokenMintError) {
        var base = baseURL ?? Self.defaultBaseURL(for: environment)
        while base.hasSuffix("/") { base.removeLast() }
        guard base.hasPrefix("http://") || base.hasPrefix("https://"), base.utf8.count <= 512, !base.contains("?"), !base.contains("#") else {
            throw TokenMintError(.pay.invalidConfiguration, "the backend URL is an http(s) URL without query or fragment")
        }
        self.baseURL = base
        self.audience = audience ?? base
        self.exchange = JSONExchange(client: client, timeout: JSONExchange.timeAmount(timeout))
    }

    /// A server confirms the device's state.
    public var confirmsState: Bool { true }

    /// Sends a device request; maps the answer's failures to payment errors.
    func call(_ method: HTTPMethod, _ path: String, device: WhitelabelPayDevice, body: JSONObject? = nil,
              expect: Set<Int> = [200, 201]) async throws(TokenMintError) -> JSONObject {
        let token = try device.requestToken(audience: audience)
        let answer: (status: Int, object: JSONObject)
        do { answer = try await exchange.send(method, baseURL + path, bearer: token, body: body ?? (method == .POST ? JSONObject() : nil)) } catch {
            switch error {
            case .transport(let cause): throw TokenMintError(.pay.backendUnreachable, "no answer from \(baseURL): \(cause)", underlying: cause)
            case .malformed(let status):
                if status >= 500 { throw TokenMintError(.pay.backendUnreachable, "the server failed (\(status))") }
                throw TokenMintError(.pay.backendRefused, "the server's answer (\(status)) is not JSON")
            }
        }
        if expect.contains(answer.status) { return answer.object }
        let name = answer.object["error"]?.stringValue ?? "status \(answer.status)"
        let message = answer.object["message"]?.stringValue ?? ""
        if name == "invalidEnrolmentInstance" { throw TokenMintError(.pay.invalidEnrolmentInstance, message) }
        if answer.status >= 500 { throw TokenMintError(.pay.backendUnreachable, "the server failed (\(answer.status)): \(message.prefix(200))") }
        throw TokenMintError(.pay.backendRefused, "\(name): \(message.prefix(200))")
    }

    func devicePath(_ device: WhitelabelPayDevice) -> String { "/wlp/v1/devices/\(device.subjectID)" }

    static func integer(_ object: JSONObject, _ name: String) throws(TokenMintError) -> Int64 {
        guard let value = object[name]?.int64Value else { throw TokenMintError(.pay.backendRefused, "the server's answer lacks \(name)") }
        return value
    }

    static func string(_ object: JSONObject, _ name: String) throws(TokenMintError) -> String {
        guard let value = object[name]?.stringValue else { throw TokenMintError(.pay.backendRefused, "the server's answer lacks \(name)") }
        return value
    }

    /// `POST /wlp/v1/devices`: registers the enrolment token.
    public func enrol(_ token: EnrolmentToken, device: WhitelabelPayDevice) async throws -> Int64 {
        try Self.integer(try await call(.POST, "/wlp/v1/devices", device: device, body: JSONObject([("enrolmentToken", .string(token.description))])),
                         "serverTime")
    }

    /// `POST …/unsigned-tokens`.
    public func issueUnsignedToken(paymentMeansID: String, device: WhitelabelPayDevice) async throws -> (unsigned: String, serverTime: Int64) {
        let object = try await call(.POST, devicePath(device) + "/unsigned-tokens", device: device,
                                    body: JSONObject([("paymentMeansId", .string(paymentMeansID))]))
        return (try Self.string(object, "unsignedToken"), try Self.integer(object, "serverTime"))
    }

    /// `POST …/payment-means/{id}/deactivate`.
    public func deactivate(paymentMeansID: String, device: WhitelabelPayDevice) async throws {
        _ = try await call(.POST, devicePath(device) + "/payment-means/\(paymentMeansID)/deactivate", device: device)
    }

    /// `POST …/payment-means/{id}/reactivate`.
    public func reactivate(paymentMeansID: String, device: WhitelabelPayDevice) async throws {
        _ = try await call(.POST, devicePath(device) + "/payment-means/\(paymentMeansID)/reactivate", device: device)
    }

    /// `GET /wlp/v1/devices/{subjectId}`.
    public func sync(device: WhitelabelPayDevice) async throws -> WhitelabelPaySync? {
        let object = try await call(.GET, devicePath(device), device: device)
        let means = (object["paymentMeans"]?.arrayValue ?? []).compactMap { item -> PaymentMeans? in
            guard let id = item["id"]?.stringValue, PaymentMeans.isValidID(id), let active = item["active"]?.boolValue else { return nil }
            return PaymentMeans(id: id, isActive: active)
        }
        return WhitelabelPaySync(enrolled: object["status"]?.stringValue == "enrolled", paymentMeans: means,
                                 serverTime: try Self.integer(object, "serverTime"))
    }

    /// `POST …/offline-grants`.
    public func offlineGrant(count: Int64, device: WhitelabelPayDevice) async throws -> WhitelabelPayGrant? {
        let object = try await call(.POST, devicePath(device) + "/offline-grants", device: device, body: JSONObject([("count", .number(count))]))
        return WhitelabelPayGrant(first: try Self.integer(object, "first"), count: try Self.integer(object, "count"),
                                  notAfter: try Self.integer(object, "notAfter"), serverTime: try Self.integer(object, "serverTime"))
    }

    /// `GET /wlp/v1/transactions?page=&size=&sort=`.
    public func transactions(_ query: TransactionQuery, device: WhitelabelPayDevice) async throws -> TransactionResponse {
        var path = "/wlp/v1/transactions?page=\(query.page)&size=\(query.size)"
        for key in query.sort { path += "&sort=" + (key.addingPercentEncodingForQuery()) }
        let object = try await call(.GET, path, device: device)
        let rows = (object["content"]?.arrayValue ?? []).compactMap { item -> PaymentTransaction? in
            guard let id = item["transactionId"]?.stringValue, let means = item["paymentMeansId"]?.stringValue,
                let value = item["amount"]?["value"]?.int64Value, let currency = item["amount"]?["currency"]?.stringValue,
                let status = item["status"]?.stringValue, let created = item["createdAt"]?.int64Value
            else { return nil }
            return PaymentTransaction(id: id, paymentMeansID: means, amount: value, currency: currency, status: status, createdAt: created)
        }
        return TransactionResponse(transactions: rows, page: Int(try Self.integer(object, "page")), size: Int(try Self.integer(object, "size")),
                                   totalElements: try Self.integer(object, "totalElements"), totalPages: try Self.integer(object, "totalPages"),
                                   sort: (object["sort"]?.arrayValue ?? []).compactMap(\.stringValue))
    }

    /// `GET …/events`: the server-sent events after `after`, parsed.
    public func events(after: Int64, device: WhitelabelPayDevice) -> AsyncThrowingStream<WhitelabelPayEvent, any Error>? {
        let (client, url, audience) = (exchange.client, baseURL + devicePath(device) + "/events", self.audience)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var request = HTTPClientRequest(url: url)
                    request.headers.add(name: "Accept", value: "text/event-stream")
                    request.headers.add(name: "Authorization", value: "Bearer \(try device.requestToken(audience: audience))")
                    request.headers.add(name: "Last-Event-ID", value: String(after))
                    let response = try await client.execute(request, timeout: .hours(24))
                    guard response.status == .ok else {
                        let body = Array(buffer: try await response.body.collect(upTo: 1 << 16))
                        let name = (try? JSONParser.parse(body))?.objectValue?["error"]?.stringValue
                        throw name == "invalidEnrolmentInstance"
                            ? TokenMintError(.pay.invalidEnrolmentInstance, "the server does not know this device")
                            : TokenMintError(.pay.backendRefused, "the event stream answered \(response.status.code)")
                    }
                    var parser = ServerSentEvents()
                    for try await buffer in response.body {
                        for event in try parser.feed(Array(buffer: buffer)) { continuation.yield(event) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension String {
    /// Percent-encodes everything but unreserved characters (RFC 3986).
    func addingPercentEncodingForQuery() -> String { PercentEncoding.encode(self) }
}
#endif
