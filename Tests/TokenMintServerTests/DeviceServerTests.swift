#if Server && HTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TokenMintCore
import TokenMintCrypto
@testable import TokenMintHTTP
import TokenMintPay
import TokenMintStore
@testable import TokenMintServer

/// The device SDK (`WhitelabelPay` over `HTTPWhitelabelPayBackend`) and a
/// desk against a live server on loopback: registration, the push that
/// activates the device, online mints, the offline fallback when the
/// server cannot be reached, the quota and the grant, and the reset of the
/// quota only when the server has confirmed the device is back.
@Suite("Device and server over HTTP")
struct DeviceServerTests {
    static let issuer = "http://tokenmint.test"

    static func sdk(store: InMemoryStore, port: Int, limit: Int = 3, timeout: Int64 = 5) throws -> WhitelabelPay {
        let configuration = try WhitelabelPayConfiguration(
            tenantID: "0b6d5b8e-8c1b-4a0a-9f5e-3c2d1e0f9a8b", referenceID: "7f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f",
            environment: .development, authorizedParty: "tokenmint-tests", offlineTokenLimit: limit)
        let backend = try HTTPWhitelabelPayBackend(environment: .development, baseURL: "http://127.0.0.1:\(port)", audience: issuer, timeout: .seconds(timeout))
        return try WhitelabelPay(configuration: configuration, store: store, backend: backend)
    }

    static func pay(_ client: any TestClientProtocol, desk: String, token: PaymentToken, attempt: String) async throws -> JSONObject {
        let body = "{\"paymentToken\":\"\(token.stringRepresentation)\",\"amount\":{\"value\":700,\"currency\":\"EUR\"},\"attemptId\":\"\(attempt)\"}"
        return try ServerRouteTests.json(try await ServerRouteTests.post(client, "/wlp/v1/payments", body, bearer: desk))
    }

    @Test("register, push, online and offline mints, the fallback, the quota, the confirmed reconnect")
    func deviceAgainstServer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-device-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration(port: 0, stateDirectory: directory)
        configuration.issuer = Self.issuer
        configuration.authorizedParty = "tokenmint-tests"
        let server = try TokenMintServer(configuration: configuration, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let app = Application(router: server.router(pollInterval: .milliseconds(100)), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let desk = try await ServerRouteTests.deskToken(server, client)
            let store = InMemoryStore()
            let sdk = try Self.sdk(store: store, port: port)

            // The device registers itself and listens for pushes.
            let enrolment = try await sdk.getEnrolmentToken()
            #expect(try await sdk.state == .activating)
            #expect(try await sdk.subjectId == enrolment.subjectID)
            _ = await sdk.startMonitoringUpdates(refreshInterval: 3600) { _ in try await Task.sleep(nanoseconds: 3_600_000_000_000) }
            try await Task.sleep(nanoseconds: 300_000_000)
            let enrolled = try await ServerRouteTests.post(client, "/wlp/v1/enrolments", "{\"enrolmentToken\":\"\(enrolment.stringRepresentation)\"}", bearer: desk)
            #expect(enrolled.status == .created)
            // The push activates the device; the sync that follows brings the means.
            for _ in 0..<400 {
                let active = try await sdk.state == .active
                let known = try await sdk.paymentMeans()
                if active && !known.isEmpty { break }
                try await Task.sleep(nanoseconds: 50_000_000)
            }
            #expect(try await sdk.state == .active)
            let means = try #require(try await sdk.activePaymentMeans())
            await sdk.stopMonitoringUpdates()

            // Online: the server issues the unsigned part; the desk accepts the token once.
            let online = try await sdk.getPaymentToken()
            #expect(online.unsignedPart.hasPrefix("on.\(means.id)."))
            #expect(try await Self.pay(client, desk: desk, token: online, attempt: "o-1")["status"]?.stringValue == "accepted")
            #expect(try await Self.pay(client, desk: desk, token: online, attempt: "o-2")["error"]?.stringValue == "replayedToken")
            // The markOnline shortcut is gone with a server: only a sync resets the quota.
            await #expect(throws: TokenMintError(.pay.invalidConfiguration, "")) { try await sdk.markOnline() }

            // The server is unreachable: the same device mints offline within its quota and grant.
            // (AsyncHTTPClient retries a refused connection until the deadline: 1 s here.)
            let cutOff = try Self.sdk(store: store, port: 1, timeout: 1)
            var offline: [PaymentToken] = []
            for _ in 0..<3 { offline.append(try await cutOff.getPaymentToken()) }
            #expect(offline.allSatisfy { $0.unsignedPart.hasPrefix("off.\(means.id).") })
            #expect(try await cutOff.isOnline == false)
            await #expect(throws: TokenMintError(.pay.offlineTokenLimitReached, "")) { try await cutOff.getPaymentToken() }
            await #expect(throws: TokenMintError(.pay.backendUnreachable, "")) { try await cutOff.sync() }
            // The desk (online) accepts each offline token once.
            for (index, token) in offline.enumerated() {
                #expect(try await Self.pay(client, desk: desk, token: token, attempt: "f-\(index)")["status"]?.stringValue == "accepted")
                #expect(try await Self.pay(client, desk: desk, token: token, attempt: "g-\(index)")["error"]?.stringValue == "replayedToken")
            }

            // Back in reach: the sync is the server's confirmation; the quota resets with a new grant.
            let back = try Self.sdk(store: store, port: port)
            #expect(try await back.offlineMintedTokenCount == 3)
            _ = try await back.sync()
            #expect(try await back.offlineMintedTokenCount == 0)
            #expect(try await back.isOnline)
            let again = try await back.getPaymentToken(offline: true)
            #expect(try await Self.pay(client, desk: desk, token: again, attempt: "r-1")["status"]?.stringValue == "accepted")

            // The device lists its payments: five, newest first.
            let page = try await back.fetchTransactions(page: 1, size: 10, sort: ["createdAt,desc"])
            #expect(page.totalElements == 5)
            #expect(page.transactions.allSatisfy { $0.paymentMeansID == means.id && $0.amount == 700 })
            let means2 = try await back.getPaymentMeans(fetchMode: .network)
            #expect(means2.map(\.id) == [means.id])
            try await back.deactivatePaymentMeans(means.id)
            #expect(try await back.getPaymentMeans(fetchMode: .network).first?.isActive == false)
            try await back.reactivatePaymentMeans(means.id)
            #expect(try await back.getPaymentMeans(fetchMode: .network).first?.isActive == true)
        }
    }

    @Test("an event stream parses across chunk boundaries, with CRLF, comments and multi-line data")
    func serverSentEvents() throws {
        var parser = ServerSentEvents()
        let text = "retry: 2000\r\n\r\n: keep-alive\n\nid: 7\nevent: payment-succeeded.v1\ndata: {\"a\":\ndata: 1}\n\nid: 8\ndata: x\n\n"
        var events: [(Int64, String)] = []
        for chunk in Array(text.utf8).chunked(5) { events += try parser.feed(chunk).map { ($0.id, String(decoding: $0.payload, as: UTF8.self)) } }
        #expect(events.map(\.0) == [7, 8])
        #expect(events.map(\.1) == ["{\"a\":\n1}", "x"])
    }
}

extension Array {
    func chunked(_ size: Int) -> [[Element]] { stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) } }
}
#endif
