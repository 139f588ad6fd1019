#if Server
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
@testable import TokenMintPay
@testable import TokenMintServer

/// The routes in process (Hummingbird's router tester): every answer is
/// JSON, bad input gets its 4xx, and a payment goes from enrolment to a
/// listed transaction with replays and retries handled.
@Suite("Server routes")
struct ServerRouteTests {
    /// A server on a fresh state directory, its router wrapped in an application.
    static func withServer<T: Sendable>(configure: (inout ServerConfiguration) -> Void = { _ in },
                                        _ body: @Sendable (TokenMintServer, any TestClientProtocol) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-server-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration(port: 8080, stateDirectory: directory)
        configuration.authorizedParty = "tokenmint-tests"
        configure(&configuration)
        let server = try TokenMintServer(configuration: configuration, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let app = Application(router: server.router(pollInterval: .milliseconds(50)))
        return try await app.test(.router) { client in try await body(server, client) }
    }

    static func json(_ response: TestResponse) throws -> JSONObject {
        let object = try JSONParser.parse(Array(response.body.readableBytesView)).objectValue
        return try #require(object, "not a JSON object: \(String(buffer: response.body))")
    }

    static func post(_ client: any TestClientProtocol, _ uri: String, _ body: String, bearer: String? = nil,
                     contentType: String = "application/json") async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    static func get(_ client: any TestClientProtocol, _ uri: String, bearer: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        return try await client.execute(uri: uri, method: .get, headers: headers)
    }

    /// A desk's client-credentials token.
    static func deskToken(_ server: TokenMintServer, _ client: any TestClientProtocol) async throws -> String {
        try server.clientDirectory.add(id: "desk-1", secret: SecureBytes(Array("desk secret of 24 bytes!".utf8)), redirectURIs: [],
                                       grants: ["client_credentials"])
        let response = try await post(client, "/oauth/token", "grant_type=client_credentials&client_id=desk-1&client_secret=desk+secret+of+24+bytes%21",
                                      contentType: "application/x-www-form-urlencoded")
        #expect(response.status == .ok)
        return try #require(try json(response)["access_token"]?.stringValue)
    }

    /// A device: its key, enrolment token and a signer of its request JWTs.
    struct Device {
        let key = Ed25519.PrivateKey()
        var enrolment: EnrolmentToken {
            EnrolmentToken(tenant: "0f8fad5b-d9cb-469f-a165-70867728950e", publicKey: key.publicKey, referenceID: "7c9e6679-7425-40de-944b-e07fc1f90ae7")
        }

        func jwt(audience: String = "http://127.0.0.1:8080", azp: String = "tokenmint-tests", lifetime: Int64 = 60, jti: String = UUID().uuidString) throws -> String {
            let now = Int64(Date().timeIntervalSince1970)
            let claims = JWTClaims(subject: enrolment.subjectID, audience: [audience], expiration: now + lifetime, issuedAt: now, jwtID: jti, authorizedParty: azp)
            return try JWTSigner(key: JWK(key)).sign(claims)
        }

        func offlineToken(means: String, counter: Int64, at time: Int64 = Int64(Date().timeIntervalSince1970)) -> String {
            PaymentToken.sign("off.\(means).\(counter).bm9uY2U", at: time, with: key).description
        }
    }

    @Test("health, the OpenAPI document, and JSON errors for unknown routes")
    func basics() async throws {
        try await Self.withServer { _, client in
            let health = try await Self.get(client, "/healthz")
            #expect(health.status == .ok)
            #expect(try Self.json(health)["status"]?.stringValue == "ok")
            let document = try Self.json(try await Self.get(client, "/openapi.json"))
            #expect(document["openapi"]?.stringValue == "3.1.0")
            let paths = try #require(document["paths"]?.objectValue)
            for path in ["/wlp/v1/payments", "/wlp/v1/enrolments", "/wlp/v1/transactions", "/oauth/token", "/healthz"] {
                #expect(paths[path] != nil, "\(path) is not documented")
            }
            let missing = try await Self.get(client, "/nowhere")
            #expect(missing.status == .notFound)
            #expect(try Self.json(missing)["error"]?.stringValue == "notFound")
        }
    }

    @Test("bad bodies, content types, sizes and credentials get a specific 4xx with a JSON error")
    func badInput() async throws {
        try await Self.withServer { server, client in
            let desk = try await Self.deskToken(server, client)
            let cases: [(String, String, String, HTTPResponse.Status, String)] = [
                ("/wlp/v1/payments", "{\"paymentToken\": ", "application/json", .badRequest, "badRequest"),
                ("/wlp/v1/payments", "[]", "application/json", .badRequest, "badRequest"),
                ("/wlp/v1/payments", "{\"a\":1,\"a\":2}", "application/json", .badRequest, "badRequest"),
                ("/wlp/v1/payments", "{}", "text/plain", .unsupportedMediaType, "unsupportedMediaType"),
                // A media type of nothing at all (once a trap in the header split).
                ("/wlp/v1/payments", "{}", ";", .unsupportedMediaType, "unsupportedMediaType"),
                ("/wlp/v1/payments", "{}", ";;", .unsupportedMediaType, "unsupportedMediaType"),
                ("/wlp/v1/payments", "{}", "", .unsupportedMediaType, "unsupportedMediaType"),
                ("/oauth/token", "grant_type=client_credentials", ";", .unsupportedMediaType, "invalid_request"),
                ("/wlp/v1/payments", "{\"x\":\"" + String(repeating: "a", count: 70_000) + "\"}", "application/json", .contentTooLarge, "payloadTooLarge"),
                ("/wlp/v1/payments", "{\"paymentToken\":\"02/a/1/b\",\"attemptId\":\"a1\",\"amount\":{\"value\":0,\"currency\":\"EUR\"}}", "application/json", .badRequest, "badRequest"),
                ("/wlp/v1/payments", "{\"paymentToken\":\"02/a/1/b\",\"attemptId\":\"a1\",\"amount\":{\"value\":5,\"currency\":\"eur\"}}", "application/json", .badRequest, "badRequest"),
                ("/wlp/v1/enrolments", "{\"enrolmentToken\":\"01/nope\"}", "application/json", .badRequest, "badRequest"),
            ]
            for (uri, body, type, status, code) in cases {
                let response = try await Self.post(client, uri, body, bearer: desk, contentType: type)
                #expect(response.status == status, "\(uri) \(body.prefix(40)) \(type)")
                #expect(try Self.json(response)["error"]?.stringValue == code)
            }
            let unauthenticated = try await Self.post(client, "/wlp/v1/payments", "{}")
            #expect(unauthenticated.status == .unauthorized)
            #expect(unauthenticated.headers[.wwwAuthenticate] == "Bearer")
            let forged = try await Self.post(client, "/wlp/v1/payments", "{}", bearer: desk.dropLast(4) + "AAAA")
            #expect(forged.status == .unauthorized)
            let wrongSecret = try await Self.post(client, "/oauth/token", "grant_type=client_credentials&client_id=desk-1&client_secret=wrong+secret+wrong+secret",
                                                  contentType: "application/x-www-form-urlencoded")
            #expect(wrongSecret.status == .unauthorized)
            #expect(try Self.json(wrongSecret)["error"]?.stringValue == "invalid_client")
            let badGrant = try await Self.post(client, "/oauth/token", "grant_type=password&client_id=desk-1&client_secret=desk+secret+of+24+bytes%21",
                                               contentType: "application/x-www-form-urlencoded")
            #expect(try Self.json(badGrant)["error"]?.stringValue == "unsupported_grant_type")
        }
    }

    @Test("enrol at a desk, sync, grant, pay offline, retry, replay, list; device JWTs are single use")
    func paymentFlow() async throws {
        try await Self.withServer { server, client in
            let desk = try await Self.deskToken(server, client)
            let device = Device()
            // The device registers itself, then a desk enrols it.
            let registered = try await Self.post(client, "/wlp/v1/devices", "{\"enrolmentToken\":\"\(device.enrolment)\"}", bearer: try device.jwt())
            #expect(registered.status == .created)
            #expect(try Self.json(registered)["status"]?.stringValue == "pending")
            let enrolled = try await Self.post(client, "/wlp/v1/enrolments", "{\"enrolmentToken\":\"\(device.enrolment)\",\"paymentMeansId\":\"card-1\"}", bearer: desk)
            #expect(enrolled.status == .created)
            #expect(try Self.json(enrolled)["subjectId"]?.stringValue == device.enrolment.subjectID)
            // The push for the device is queued.
            let events = try await server.directory.events(of: device.enrolment.subjectID, after: 0, limit: 100)
            #expect(events.map(\.type) == ["enrolment-succeeded.v1"])

            let base = "/wlp/v1/devices/\(device.enrolment.subjectID)"
            let jwt = try device.jwt()
            let status = try await Self.get(client, base, bearer: jwt)
            #expect(status.status == .ok)
            #expect(try Self.json(status)["status"]?.stringValue == "enrolled")
            // The same device JWT twice: refused.
            #expect(try await Self.get(client, base, bearer: jwt).status == .unauthorized)
            // Wrong audience, wrong azp, too long a lifetime: refused.
            #expect(try await Self.get(client, base, bearer: try device.jwt(audience: "https://elsewhere")).status == .unauthorized)
            #expect(try await Self.get(client, base, bearer: try device.jwt(azp: "other-app")).status == .unauthorized)
            #expect(try await Self.get(client, base, bearer: try device.jwt(lifetime: 3600)).status == .unauthorized)

            // Over the grant before any grant: refused.
            let early = try await Self.post(client, "/wlp/v1/payments",
                "{\"paymentToken\":\"\(device.offlineToken(means: "card-1", counter: 1))\",\"amount\":{\"value\":1250,\"currency\":\"EUR\"},\"attemptId\":\"t-0\"}", bearer: desk)
            #expect(early.status == .conflict)
            #expect(try Self.json(early)["error"]?.stringValue == "offlineTokenLimitReached")

            let grant = try await Self.post(client, base + "/offline-grants", "{\"count\":3}", bearer: try device.jwt())
            #expect(grant.status == .created)
            #expect(try Self.json(grant)["first"]?.int64Value == 1)
            #expect(try Self.json(grant)["count"]?.int64Value == 3)

            let token = device.offlineToken(means: "card-1", counter: 2)
            let body = "{\"paymentToken\":\"\(token)\",\"amount\":{\"value\":1250,\"currency\":\"EUR\"},\"attemptId\":\"t-1\"}"
            let paid = try await Self.post(client, "/wlp/v1/payments", body, bearer: desk)
            #expect(paid.status == .ok)
            let transaction = try #require(try Self.json(paid)["transactionId"]?.stringValue)
            #expect(try Self.json(paid)["status"]?.stringValue == "accepted")
            // The same attempt again (a lost answer): the same transaction.
            let retried = try await Self.post(client, "/wlp/v1/payments", body, bearer: desk)
            #expect(try Self.json(retried)["transactionId"]?.stringValue == transaction)
            // Another attempt with the same token: replayed.
            let replay = try await Self.post(client, "/wlp/v1/payments", body.replacingOccurrences(of: "t-1", with: "t-2"), bearer: desk)
            #expect(replay.status == .conflict)
            #expect(try Self.json(replay)["error"]?.stringValue == "replayedToken")
            // Another token for the same counter: replayed too.
            let twin = device.offlineToken(means: "card-1", counter: 2, at: Int64(Date().timeIntervalSince1970) - 1)
            let second = try await Self.post(client, "/wlp/v1/payments",
                "{\"paymentToken\":\"\(twin)\",\"amount\":{\"value\":1,\"currency\":\"EUR\"},\"attemptId\":\"t-3\"}", bearer: desk)
            #expect(try Self.json(second)["error"]?.stringValue == "replayedToken")
            // Past the grant: refused.
            let over = try await Self.post(client, "/wlp/v1/payments",
                "{\"paymentToken\":\"\(device.offlineToken(means: "card-1", counter: 4))\",\"amount\":{\"value\":1,\"currency\":\"EUR\"},\"attemptId\":\"t-4\"}", bearer: desk)
            #expect(try Self.json(over)["error"]?.stringValue == "offlineTokenLimitReached")
            // An attempt ID of another payment: a conflict, not a second acceptance.
            let stolen = try await Self.post(client, "/wlp/v1/payments",
                "{\"paymentToken\":\"\(device.offlineToken(means: "card-1", counter: 3))\",\"amount\":{\"value\":1,\"currency\":\"EUR\"},\"attemptId\":\"t-1\"}", bearer: desk)
            #expect(stolen.status == .conflict)
            #expect(try Self.json(stolen)["error"]?.stringValue == "conflict")

            // The transaction is listed for the device and for the desk.
            for bearer in [try device.jwt(), desk] {
                let page = try Self.json(try await Self.get(client, "/wlp/v1/transactions?page=1&size=5&sort=createdAt,desc&sort=amount", bearer: bearer))
                #expect(page["totalElements"]?.int64Value == 1)
                #expect(page["content"]?.arrayValue?.first?["transactionId"]?.stringValue == transaction)
                #expect(page["sort"]?.arrayValue?.compactMap(\.stringValue) == ["createdAt,desc", "amount,asc"])
            }
            let badSort = try await Self.get(client, "/wlp/v1/transactions?sort=secret,desc", bearer: desk)
            #expect(badSort.status == .badRequest)
            // Deactivated means: refused.
            _ = try await Self.post(client, base + "/payment-means/card-1/deactivate", "", bearer: try device.jwt())
            let inactive = try await Self.post(client, "/wlp/v1/payments",
                "{\"paymentToken\":\"\(device.offlineToken(means: "card-1", counter: 3))\",\"amount\":{\"value\":1,\"currency\":\"EUR\"},\"attemptId\":\"t-5\"}", bearer: desk)
            #expect(try Self.json(inactive)["error"]?.stringValue == "failureToRetrievePaymentMeans")
            let types = try await server.directory.events(of: device.enrolment.subjectID, after: 0, limit: 100).compactMap(\.type)
            #expect(types.first == "enrolment-succeeded.v1")
            #expect(types.filter { $0 == "payment-succeeded.v1" }.count == 1)
            #expect(types.contains("payment-failed.v1"))
        }
    }

    @Test("the transactions query: page from 1, size 1 to 100, repeatable sort keys")
    func transactionQuery() throws {
        let page = try TransactionQuery(page: "2", size: "50", sort: ["amount,desc", "createdAt"])
        #expect(page.page == 2 && page.size == 50)
        #expect(page.sort == ["amount,desc", "createdAt,asc"])
        #expect(try TransactionQuery(page: nil, size: nil, sort: []).sort == ["createdAt,desc"])
        for (p, s, sort) in [("0", nil, []), ("-1", nil, []), (nil, "101", []), (nil, "0", []), (nil, nil, ["amount,up"]),
                             (nil, nil, ["amount", "amount,desc"]), (nil, nil, ["id;DROP"]), ("99999999", nil, [])] as [(String?, String?, [String])] {
            #expect(throws: TokenMintError.self) { try TransactionQuery(page: p, size: s, sort: sort) }
        }
    }

    @Test("form bodies: percent and plus decoding, a repeated field refused")
    func formBodies() throws {
        let form = try FormBody(Array("a=b+c%21&d=".utf8))
        #expect(form["a"] == "b c!")
        #expect(form["d"] == nil)
        #expect(throws: TokenMintError.self) { try FormBody(Array("a=1&a=2".utf8)) }
        #expect(throws: TokenMintError.self) { try FormBody(Array("a=%zz".utf8)) }
        #expect(throws: TokenMintError.self) { try FormBody(Array("a".utf8)) }
        #expect(FormBody.decode(Array("%ff".utf8)) == nil)
    }
}
#endif
