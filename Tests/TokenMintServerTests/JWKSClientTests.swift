#if Server && HTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TokenMintCore
import TokenMintCrypto
@testable import TokenMintHTTP
import TokenMintJOSE

/// The JWKS client against a live issuer on loopback whose key set, cache
/// headers and failures the test controls.
@Suite("JWKS client: discovery, caching, ETag, unknown kid, a failing issuer, limits")
struct JWKSClientTests {
    /// The issuer's state, changed by the test between requests.
    actor Issuer {
        var keys: [JWK] = []
        var maxAge = 60
        var failing = false
        var padding = 0
        var wrongIssuer = false
        var extraKeys: [JWK] = []
        var delay: Duration = .zero
        var served = 0, notModified = 0
        var base = ""

        func set(keys: [JWK]) { self.keys = keys }
        func set(maxAge: Int) { self.maxAge = maxAge }
        func set(failing: Bool) { self.failing = failing }
        func set(padding: Int) { self.padding = padding }
        func set(wrongIssuer: Bool) { self.wrongIssuer = wrongIssuer }
        func set(base: String) { self.base = base }
        func set(extraKeys: [JWK]) { self.extraKeys = extraKeys }
        func set(delay: Duration) { self.delay = delay }

        var body: String {
            // extraKeys go out as they are (an oct key with its secret, as a careless issuer might publish it).
            let objects = keys.compactMap(\.publicKey).map { $0.jsonObject(includingPrivate: false) } + extraKeys.map { $0.jsonObject(includingPrivate: true) }
            let set = String(decoding: JSONWriter.encode(.object(JSONObject([("keys", .array(objects.map { .object($0) }))]))), as: UTF8.self)
            return padding == 0 ? set : String(set.dropLast()) + ",\"padding\":\"" + String(repeating: "x", count: padding) + "\"}"
        }

        func jwks(_ request: Request) async -> Response {
            if delay > .zero { try? await Task.sleep(for: delay) }
            if failing { return Response(status: .internalServerError) }
            let tag = "\"\(HashFunction.sha256.hash(Array(body.utf8)).prefix(8).map { String($0) }.joined())\""
            var headers = HTTPFields()
            headers[.cacheControl] = "max-age=\(maxAge)"
            headers[.eTag] = tag
            if request.headers[.ifNoneMatch] == tag {
                notModified += 1
                return Response(status: .notModified, headers: headers)
            }
            served += 1
            headers[.contentType] = "application/jwk-set+json"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }

        func metadata() -> Response {
            let issuer = wrongIssuer ? "https://elsewhere.example" : base
            let json = "{\"issuer\":\"\(issuer)\",\"jwks_uri\":\"\(base)/jwks\"}"
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: json)))
        }
    }

    static func token(_ key: JWK, issuer: String) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let claims = "{\"iss\":\"\(issuer)\",\"aud\":\"api\",\"sub\":\"u1\",\"iat\":\(now),\"exp\":\(now + 300)}"
        return try JWTSigner(key: key, keyID: key.keyID).sign(claimsJSON: Array(claims.utf8))
    }

    @Test("RFC 8414 §3.1: the well-known segment goes before an issuer's path; OpenID Connect Discovery appends it")
    func metadataLocations() {
        #expect(JWKSClient.metadataURLs(issuer: "https://login.example.com") == [
            "https://login.example.com/.well-known/oauth-authorization-server", "https://login.example.com/.well-known/openid-configuration"])
        #expect(JWKSClient.metadataURLs(issuer: "https://example.com/tenant/a/") == [
            "https://example.com/.well-known/oauth-authorization-server/tenant/a", "https://example.com/tenant/a/.well-known/openid-configuration"])
        #expect(JWKSClient.metadataURLs(issuer: "http://127.0.0.1:8080/issuer1")[0] == "http://127.0.0.1:8080/.well-known/oauth-authorization-server/issuer1")
    }

    @Test("discovered from RFC 8414 metadata; cached; rotated keys found once; a failing issuer's last good set serves; limits hold")
    func lifecycle() async throws {
        let issuer = Issuer()
        let k1 = try JWK.generate(for: .ES256, keyID: "k1"), k2 = try JWK.generate(for: .EdDSA, keyID: "k2")
        await issuer.set(keys: [k1])
        let router = Router()
        router.get(".well-known/oauth-authorization-server") { _, _ in await issuer.metadata() }
        router.get("jwks") { request, _ in await issuer.jwks(request) }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            await issuer.set(base: base)
            var options = JWKSClient.Options()
            options.minimumRefreshInterval = .milliseconds(300)
            let keys = try await JWKSClient.discover(issuer: base, options: options)
            #expect(await keys.url == base + "/jwks")
            var validation = JWTValidation()
            validation.issuer = base
            validation.audience = "api"

            // Fetched once, then cached (max-age 60).
            #expect(try await keys.verify(try Self.token(k1, issuer: base), validation: validation).claims.subject == "u1")
            _ = try await keys.verify(try Self.token(k1, issuer: base), validation: validation)
            let served = await issuer.served
            #expect(await keys.requests == 1 && served == 1)

            // A new key: its kid is unknown, so the set is fetched again, once.
            await issuer.set(keys: [k1, k2])
            try await Task.sleep(for: .milliseconds(350))
            _ = try await keys.verify(try Self.token(k2, issuer: base), validation: validation)
            #expect(await keys.requests == 2)
            // An unknown kid right after: no request (the minimum interval), unknownKeyID.
            let stranger = try JWK.generate(for: .ES256, keyID: "k9")
            await #expect(throws: TokenMintError.self) { _ = try await keys.verify(try Self.token(stranger, issuer: base), validation: validation) }
            #expect(await keys.requests == 2)

            // The unknown kid once the interval has passed: one request, revalidated
            // with the ETag (304, the set unchanged), now with max-age 0 (lifetime: the
            // minimum interval); once that passes, the next use revalidates again.
            await issuer.set(maxAge: 0)
            try await Task.sleep(for: .milliseconds(350))
            await #expect(throws: TokenMintError.self) { _ = try await keys.verify(try Self.token(stranger, issuer: base), validation: validation) }
            try await Task.sleep(for: .milliseconds(350))
            _ = try await keys.keySet()
            let (served2, notModified) = (await issuer.served, await issuer.notModified)
            #expect(await keys.requests == 4 && served2 == 2 && notModified == 2)

            // The issuer fails: the last good set serves on.
            await issuer.set(failing: true)
            try await Task.sleep(for: .milliseconds(350))
            #expect(try await keys.verify(try Self.token(k2, issuer: base), validation: validation).claims.subject == "u1")
            await issuer.set(failing: false)

            // ... but not for ever: past its lifetime plus maximumStaleness the last
            // good set is dropped, and tokens fail until the issuer answers again.
            var bounded = options
            bounded.maximumStaleness = .milliseconds(1_500)
            let staling = try JWKSClient(url: base + "/jwks", options: bounded)
            // max-age is 0 here: a set's lifetime is the minimum interval (300 ms),
            // so it may serve until 1.8 s after its fetch.
            _ = try await staling.verify(try Self.token(k1, issuer: base), validation: validation)
            await issuer.set(failing: true)
            try await Task.sleep(for: .milliseconds(350))
            #expect(try await staling.verify(try Self.token(k1, issuer: base), validation: validation).claims.subject == "u1")
            try await Task.sleep(for: .milliseconds(1_600))
            do {
                _ = try await staling.verify(try Self.token(k1, issuer: base), validation: validation)
                Issue.record("a key set past its staleness bound still verified")
            } catch let error as TokenMintError {
                #expect(error.code == .jose.keySetUnavailable, "\(error)")
            }
            await issuer.set(failing: false)
            try await Task.sleep(for: .milliseconds(350))
            #expect(try await staling.verify(try Self.token(k1, issuer: base), validation: validation).claims.subject == "u1")
            var forever = options
            forever.maximumStaleness = .seconds(400 * 86_400)
            #expect(throws: TokenMintError.self) { _ = try JWKSClient(url: base + "/jwks", options: forever) }

            // A fresh client with nothing cached: a failing issuer, a set too large, too many keys, another issuer's metadata.
            await issuer.set(failing: true)
            await #expect(throws: TokenMintError.self) { _ = try await JWKSClient(url: base + "/jwks", options: options).keySet() }
            await issuer.set(failing: false)
            await issuer.set(padding: 300_000)
            await #expect(throws: TokenMintError.self) { _ = try await JWKSClient(url: base + "/jwks", options: options).keySet() }
            await issuer.set(padding: 0)
            var few = options
            few.maximumKeys = 1
            await #expect(throws: TokenMintError.self) { _ = try await JWKSClient(url: base + "/jwks", options: few).keySet() }
            #expect(try await JWKSClient(url: base + "/jwks", options: options).keySet().keys.count == 2)
            await issuer.set(wrongIssuer: true)
            await #expect(throws: TokenMintError.self) { _ = try await JWKSClient.discover(issuer: base, options: options) }
            #expect(throws: TokenMintError.self) { _ = try JWKSClient(url: "http://example.com/jwks") }
            await issuer.set(wrongIssuer: false)

            // A cold start under load: twenty callers at once share one fetch.
            await issuer.set(delay: .milliseconds(150))
            let cold = try JWKSClient(url: base + "/jwks", options: options)
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await cold.keySet().keys.count } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sizes == Array(repeating: 2, count: 20))
            #expect(await cold.requests == 1)
            await issuer.set(delay: .zero)

            // A set of oct keys alone (mixed with public keys, JWKSet refuses it outright):
            // the keys are dropped, and HS256 tokens are refused before any fetch.
            let hmac = try JWK.generate(for: .HS256, keyID: "h1")
            await issuer.set(keys: [])
            await issuer.set(extraKeys: [hmac])
            let careful = try JWKSClient(url: base + "/jwks", options: options)
            #expect(try await careful.keySet().keys.isEmpty)
            let requestsBefore = await careful.requests
            let forged = try JWTSigner(key: hmac, keyID: "h1").sign(claimsJSON: Array("{\"iss\":\"\(base)\",\"aud\":\"api\",\"exp\":\(Int64(Date().timeIntervalSince1970) + 60)}".utf8))
            do {
                _ = try await careful.verify(forged, validation: validation)
                Issue.record("an HS256 token verified with a published oct key")
            } catch let error as TokenMintError {
                #expect(error.code == .jose.algorithmNotAllowed)
            }
            #expect(await careful.requests == requestsBefore, "refused before any fetch")
            await issuer.set(extraKeys: [])
        }
    }
}
#endif
