#if Server
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TokenMintAuth
import TokenMintCore
import TokenMintCrypto
#if HTTPClient
import TokenMintHTTP
#endif
@testable import TokenMintServer

/// `POST /v2/user_token` in process (and, with the HTTP client, over
/// loopback with `UserTokenClient`): a partner backend with the service key
/// exchanges a user's access token for a user token; a missing or wrong
/// key, another user's, a forged or a desk's access token and bad bodies
/// are refused; without a key the route is not there; a key file others may
/// read is refused at start. No key or token ever reaches the log.
@Suite("User-token exchange")
struct UserTokenTests {
    static let key = "partner-service-key-0123456789-abcdefghijklmnop"

    /// Collects every log line (message and metadata) in memory.
    final class LogCapture: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        var lines: [String] { lock.withLock { stored } }
        func append(_ line: String) { lock.withLock { stored.append(line) } }

        var logger: Logger {
            var logger = Logger(label: "test") { _ in Handler(capture: self) }
            logger.logLevel = .trace
            return logger
        }

        struct Handler: LogHandler {
            let capture: LogCapture
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .trace
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                let all = metadata.merging(event.metadata ?? [:]) { _, b in b }
                capture.append("\(event.level) \(event.message) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            }
        }
    }

    /// A fresh folder for a state directory and a key file.
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-usertoken-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A key file in `folder` holding `key` and a line break, with `mode`.
    static func keyFile(in folder: String, key: String = UserTokenTests.key, mode: Int = 0o600) throws -> String {
        let path = folder + "/service.key"
        try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    /// A server on a fresh state directory, with the service key unless
    /// `keyed` is false, its router wrapped in an application.
    static func withServer<T: Sendable>(keyed: Bool = true, logger: Logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                                        _ body: @Sendable (TokenMintServer, any TestClientProtocol) async throws -> T) async throws -> T {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = ServerConfiguration(port: 8080, stateDirectory: folder + "/state")
        if keyed { configuration.serviceKeyPath = try keyFile(in: folder) }
        let server = try TokenMintServer(configuration: configuration, logger: logger)
        let app = Application(router: server.router(pollInterval: .milliseconds(50)))
        return try await app.test(.router) { client in try await body(server, client) }
    }

    /// `POST /v2/user_token` with `key` in the service-key header (none when nil).
    static func exchange(_ client: any TestClientProtocol, key: String? = UserTokenTests.key, body: String,
                         contentType: String = "application/json") async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let key { headers[UserTokenRoutes.serviceKeyHeader] = key }
        return try await client.execute(uri: "/v2/user_token", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    static func body(user: String, token: String) -> String {
        "{\"user_id\":\"\(user)\",\"access_token\":\"\(token)\"}"
    }

    /// Expects `body` to throw a `TokenMintError` with `code`.
    static func expectCode(_ code: TokenMintError.Code, sourceLocation: SourceLocation = #_sourceLocation,
                           _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code)", sourceLocation: sourceLocation)
        } catch let error as TokenMintError {
            if error.code != code { Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("a partner with the service key gets a user token for a valid access token; it resolves to the user")
    func exchangeSucceeds() async throws {
        let capture = LogCapture()
        try await Self.withServer(logger: capture.logger) { server, client in
            let access = try await server.issuer.issue(account: "alice", clientID: "partner-app").accessToken
            let response = try await Self.exchange(client, body: Self.body(user: "alice", token: access))
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            #expect(response.headers[.cacheControl] == "no-store")
            let object = try ServerRouteTests.json(response)
            #expect(object["type"]?.stringValue == "user_token")
            let token = try #require(object["user_token"]?.stringValue)
            #expect(token.utf8.count >= 32)
            let exchange = try #require(server.userTokens)
            #expect(try await exchange.user(for: UserToken(token)) == "alice")
            // A second exchange gives another token; both resolve.
            let again = try ServerRouteTests.json(try await Self.exchange(client, body: Self.body(user: "alice", token: access)))
            let second = try #require(again["user_token"]?.stringValue)
            #expect(second != token)
            #expect(try await exchange.user(for: UserToken(second)) == "alice")
            // A refusal too, so that the log holds a refusal line.
            let refused = try await Self.exchange(client, key: "x" + String(Self.key.dropFirst()), body: Self.body(user: "alice", token: access))
            #expect(refused.status == .unauthorized)
            let lines = capture.lines
            #expect(lines.contains(where: { $0.contains("user token issued") }))
            #expect(lines.contains(where: { $0.contains("serviceKeyInvalid") }))
            for secret in [Self.key, String(Self.key.dropFirst()), access, token, second] {
                #expect(!lines.contains(where: { $0.contains(secret) }), "a secret reached the log")
            }
        }
    }

    @Test("a missing or wrong service key: 401 serviceKeyInvalid")
    func serviceKeyRefused() async throws {
        try await Self.withServer { server, client in
            let access = try await server.issuer.issue(account: "alice", clientID: "partner-app").accessToken
            let keys: [String?] = [nil, "", "wrong", String(Self.key.dropLast()), Self.key + "x", String(Self.key.reversed()), Self.key.uppercased()]
            for key in keys {
                let response = try await Self.exchange(client, key: key, body: Self.body(user: "alice", token: access))
                #expect(response.status == .unauthorized, "key \(key.map { "\($0.utf8.count) bytes" } ?? "missing")")
                let object = try ServerRouteTests.json(response)
                #expect(object["error"]?.stringValue == "serviceKeyInvalid")
                let message = object["message"]?.stringValue ?? ""
                #expect(!message.contains(Self.key))
            }
        }
    }

    @Test("another user's, a forged, a malformed and a desk's access token: 401 accessTokenInvalid")
    func accessTokenRefused() async throws {
        try await Self.withServer { server, client in
            let bobs = try await server.issuer.issue(account: "bob", clientID: "partner-app").accessToken
            let alices = try await server.issuer.issue(account: "alice", clientID: "partner-app").accessToken
            let desk = try await server.issuer.issueClientToken(clientID: "desk-1", scopes: [DeskAuthenticator.scope]).accessToken
            let cases: [(String, String, String)] = [
                ("another user's token", "alice", bobs),
                ("a forged signature", "alice", String(alices.dropLast(4)) + "AAAA"),
                ("a token that is not a JWT", "alice", "not-a-jwt"),
                ("a desk's client-credentials token", "desk-1", desk),
            ]
            for (name, user, token) in cases {
                let response = try await Self.exchange(client, body: Self.body(user: user, token: token))
                #expect(response.status == .unauthorized, "\(name)")
                #expect(try ServerRouteTests.json(response)["error"]?.stringValue == "accessTokenInvalid", "\(name)")
            }
        }
    }

    @Test("bad bodies: 400, 413, 415 with a JSON error")
    func badBodies() async throws {
        try await Self.withServer { server, client in
            let access = try await server.issuer.issue(account: "alice", clientID: "partner-app").accessToken
            let cases: [(String, String, HTTPResponse.Status, String)] = [
                ("{\"user_id\": ", "application/json", .badRequest, "badRequest"),
                ("[]", "application/json", .badRequest, "badRequest"),
                ("{\"user_id\":\"alice\"}", "application/json", .badRequest, "badRequest"),
                ("{\"access_token\":\"\(access)\"}", "application/json", .badRequest, "badRequest"),
                ("{\"user_id\":\"\",\"access_token\":\"\(access)\"}", "application/json", .badRequest, "badRequest"),
                ("{\"user_id\":5,\"access_token\":\"\(access)\"}", "application/json", .badRequest, "badRequest"),
                ("{\"user_id\":\"al\\nice\",\"access_token\":\"\(access)\"}", "application/json", .badRequest, "badRequest"),
                ("{\"user_id\":\"\(String(repeating: "a", count: 129))\",\"access_token\":\"\(access)\"}", "application/json", .badRequest, "badRequest"),
                (Self.body(user: "alice", token: access), "text/plain", .unsupportedMediaType, "unsupportedMediaType"),
                ("{\"x\":\"" + String(repeating: "a", count: 70_000) + "\"}", "application/json", .contentTooLarge, "payloadTooLarge"),
            ]
            for (body, type, status, code) in cases {
                let response = try await Self.exchange(client, body: body, contentType: type)
                #expect(response.status == status, "\(body.prefix(40)) \(type)")
                #expect(try ServerRouteTests.json(response)["error"]?.stringValue == code, "\(body.prefix(40)) \(type)")
            }
        }
    }

    @Test("without a service key the route answers 404")
    func notConfigured() async throws {
        try await Self.withServer(keyed: false) { server, client in
            #expect(server.userTokens == nil)
            let access = try await server.issuer.issue(account: "alice", clientID: "partner-app").accessToken
            let response = try await Self.exchange(client, body: Self.body(user: "alice", token: access))
            #expect(response.status == .notFound)
            #expect(try ServerRouteTests.json(response)["error"]?.stringValue == "notFound")
        }
    }

    @Test("the OpenAPI document describes the route and its service-key scheme")
    func documented() async throws {
        try await Self.withServer(keyed: false) { _, client in
            let document = try ServerRouteTests.json(try await ServerRouteTests.get(client, "/openapi.json"))
            let operation = try #require(document["paths"]?.objectValue?["/v2/user_token"]?.objectValue?["post"]?.objectValue)
            #expect(operation["operationId"]?.stringValue == "userToken")
            let scheme = try #require(document["components"]?.objectValue?["securitySchemes"]?.objectValue?["serviceKey"]?.objectValue)
            #expect(scheme["type"]?.stringValue == "apiKey")
            #expect(scheme["in"]?.stringValue == "header")
            #expect(scheme["name"]?.stringValue == "IFTTT-Service-Key")
        }
    }

    @Test("a key file group or others may read, a short key, a missing file or a symbolic link: refused at start")
    func keyFileRefused() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func start(_ path: String) async {
            var configuration = ServerConfiguration(port: 8080, stateDirectory: folder + "/state")
            configuration.serviceKeyPath = path
            await Self.expectCode(.server.invalidConfiguration) {
                _ = try TokenMintServer(configuration: configuration, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            }
        }
        let readable = try Self.keyFile(in: folder, mode: 0o644)
        await start(readable)
        #expect(!FileManager.default.fileExists(atPath: folder + "/state"), "the state directory was created before the key was checked")
        await start(try Self.keyFile(in: folder, mode: 0o640))
        await start(try Self.keyFile(in: folder, key: String(repeating: "k", count: 31)))
        await start(try Self.keyFile(in: folder, key: String(repeating: "k", count: 16) + " " + String(repeating: "k", count: 16)))
        await start(folder + "/missing.key")
        let good = try Self.keyFile(in: folder)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.key", withDestinationPath: good)
        await start(folder + "/link.key")
        // The same file, mode 0600: the server starts.
        var configuration = ServerConfiguration(port: 8080, stateDirectory: folder + "/state")
        configuration.serviceKeyPath = good
        let server = try TokenMintServer(configuration: configuration, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        #expect(server.userTokens != nil)
        var empty = configuration
        empty.serviceKeyPath = ""
        #expect(throws: TokenMintError.self) { try empty.validate() }
    }

    #if HTTPClient
    @Test("UserTokenClient against a live server: a user token, a wrong key, another user's token, no server")
    func clientOverHTTP() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = ServerConfiguration(port: 0, stateDirectory: folder + "/state")
        configuration.serviceKeyPath = try Self.keyFile(in: folder)
        let server = try TokenMintServer(configuration: configuration, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let app = Application(router: server.router(pollInterval: .milliseconds(100)), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let base = "http://127.0.0.1:\(port)"
            let partner = try UserTokenClient(baseURL: base + "/", serviceKey: SecureBytes(Array(Self.key.utf8)))
            let access = try await server.issuer.issue(account: "alice", clientID: "partner-app").accessToken
            let token = try await partner.userToken(userID: "alice", accessToken: access)
            let exchange = try #require(server.userTokens)
            #expect(try await exchange.user(for: token) == "alice")

            let wrong = try UserTokenClient(baseURL: base, serviceKey: SecureBytes(Array(("y" + String(Self.key.dropFirst())).utf8)))
            await Self.expectCode(.auth.serviceKeyInvalid) { _ = try await wrong.userToken(userID: "alice", accessToken: access) }
            let bobs = try await server.issuer.issue(account: "bob", clientID: "partner-app").accessToken
            await Self.expectCode(.auth.accessTokenInvalid) { _ = try await partner.userToken(userID: "alice", accessToken: bobs) }
            await Self.expectCode(.auth.accessTokenInvalid) { _ = try await partner.userToken(userID: "alice", accessToken: "not-a-jwt") }
            await Self.expectCode(.auth.accessTokenInvalid) { _ = try await partner.userToken(userID: "alice", accessToken: "") }
            await Self.expectCode(.auth.accessTokenInvalid) { _ = try await partner.userToken(userID: "", accessToken: access) }
            // No server there: no answer.
            let nowhere = try UserTokenClient(baseURL: "http://127.0.0.1:1", serviceKey: SecureBytes(Array(Self.key.utf8)), timeout: .seconds(1))
            await Self.expectCode(.auth.serverUnreachable) { _ = try await nowhere.userToken(userID: "alice", accessToken: access) }
        }
        // Keys and URLs the client refuses before sending anything.
        await Self.expectCode(.auth.serviceKeyInvalid) { _ = try UserTokenClient(baseURL: "http://127.0.0.1:1", serviceKey: SecureBytes(Array("short".utf8))) }
        await Self.expectCode(.auth.serviceKeyInvalid) {
            _ = try UserTokenClient(baseURL: "http://127.0.0.1:1", serviceKey: SecureBytes(Array((Self.key + "\n").utf8)))
        }
        await Self.expectCode(.auth.serverUnreachable) { _ = try UserTokenClient(baseURL: "ftp://127.0.0.1", serviceKey: SecureBytes(Array(Self.key.utf8))) }
    }
    #endif
}
#endif
