#if Server
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TokenMintCore
import TokenMintCrypto
import TokenMintAuth
import TokenMintJOSE
@testable import TokenMintServer

/// The authorization-code flow in process: the sign-in form, the code with
/// PKCE, the token endpoint's code and refresh grants, revocation, and the
/// refusals (what is shown to the user, what goes back to the client).
@Suite("OAuth code flow")
struct OAuthFlowTests {
    /// RFC 7636 Appendix B.
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    static let callback = "http://127.0.0.1:9000/callback"
    static let password = "correct horse battery staple"
    static let formType = "application/x-www-form-urlencoded"

    /// Form encoding written independently of the server's.
    static func encode(_ pairs: [(String, String)]) -> String {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return pairs.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")" }.joined(separator: "&")
    }

    /// An authorization request of the client `app` with PKCE S256 and
    /// `state=xyz`; `extra` adds or replaces parameters, `without` drops some.
    static func authorization(client: String = "app", redirect: String = OAuthFlowTests.callback, state: String? = "xyz",
                              extra: [(String, String)] = [], without: Set<String> = []) -> [(String, String)] {
        var pairs: [(String, String)] = [("response_type", "code"), ("client_id", client), ("redirect_uri", redirect),
                                         ("code_challenge", challenge), ("code_challenge_method", "S256")]
        if let state { pairs.append(("state", state)) }
        for (name, value) in extra {
            if let index = pairs.firstIndex(where: { $0.0 == name }) { pairs[index].1 = value } else { pairs.append((name, value)) }
        }
        return pairs.filter { !without.contains($0.0) }
    }

    /// The public client `app` and the account `alice`.
    static func register(_ server: TokenMintServer) throws {
        try server.clientDirectory.add(id: "app", secret: nil, redirectURIs: [callback, "https://app.example/cb?tenant=1"],
                                       grants: ["authorization_code", "refresh_token"])
        try server.accountDirectory.add(username: "alice", password: SecureBytes(Array(password.utf8)))
    }

    static func authorize(_ client: any TestClientProtocol, _ pairs: [(String, String)]) async throws -> TestResponse {
        try await ServerRouteTests.get(client, "/oauth/authorize?" + encode(pairs))
    }

    static func signIn(_ client: any TestClientProtocol, _ pairs: [(String, String)], username: String = "alice",
                       password: String = OAuthFlowTests.password) async throws -> TestResponse {
        try await ServerRouteTests.post(client, "/oauth/authorize", encode(pairs + [("username", username), ("password", password)]), contentType: formType)
    }

    /// The query parameters of the Location header.
    static func parameters(_ response: TestResponse) throws -> FormBody {
        let location = try #require(response.headers[.location])
        let parts = location.split(separator: "?", maxSplits: 1)
        try #require(parts.count == 2, "no query in \(location)")
        return try FormBody(Array(parts[1].utf8))
    }

    /// A code for alice.
    static func code(_ client: any TestClientProtocol, _ pairs: [(String, String)] = OAuthFlowTests.authorization()) async throws -> String {
        let response = try await signIn(client, pairs)
        #expect(response.status == .seeOther)
        return try #require(try parameters(response)["code"])
    }

    static func exchange(_ client: any TestClientProtocol, code: String, verifier: String = OAuthFlowTests.verifier,
                         redirect: String = OAuthFlowTests.callback, clientID: String = "app") async throws -> TestResponse {
        try await ServerRouteTests.post(client, "/oauth/token", encode([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
                                                                       ("code_verifier", verifier), ("client_id", clientID)]), contentType: formType)
    }

    static func refresh(_ client: any TestClientProtocol, _ token: String, clientID: String = "app") async throws -> TestResponse {
        try await ServerRouteTests.post(client, "/oauth/token", encode([("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", clientID)]),
                                        contentType: formType)
    }

    static func revoke(_ client: any TestClientProtocol, _ token: String, clientID: String = "app") async throws -> TestResponse {
        try await ServerRouteTests.post(client, "/oauth/revoke", encode([("token", token), ("token_type_hint", "refresh_token"), ("client_id", clientID)]),
                                        contentType: formType)
    }

    static func error(_ response: TestResponse) throws -> String? { try ServerRouteTests.json(response)["error"]?.stringValue }

    @Test("code with PKCE, token, refresh rotation, reuse revokes the family, revocation")
    func codeFlow() async throws {
        try await ServerRouteTests.withServer { server, client in
            try Self.register(server)
            let metadata = try ServerRouteTests.json(try await ServerRouteTests.get(client, "/.well-known/oauth-authorization-server"))
            #expect(metadata["authorization_endpoint"]?.stringValue == "http://127.0.0.1:8080/oauth/authorize")
            #expect(metadata["revocation_endpoint"]?.stringValue == "http://127.0.0.1:8080/oauth/revoke")
            #expect(metadata["code_challenge_methods_supported"]?.arrayValue?.compactMap(\.stringValue) == ["S256"])
            #expect(metadata["token_endpoint_auth_methods_supported"]?.arrayValue?.compactMap(\.stringValue).contains("none") == true)

            let request = Self.authorization(extra: [("scope", "profile email")])
            let page = try await Self.authorize(client, request)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy] == "default-src 'none'; script-src 'self'; connect-src 'self'; form-action 'self'; style-src 'unsafe-inline'")
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.headers[.cacheControl] == "no-store")
            let html = String(buffer: page.body)
            #expect(html.contains("name=\"password\"") && html.contains("value=\"\(Self.challenge)\"") && html.contains("value=\"profile email\""))

            let signedIn = try await Self.signIn(client, request)
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location]?.hasPrefix(Self.callback + "?code=") == true)
            let parameters = try Self.parameters(signedIn)
            #expect(parameters["state"] == "xyz")
            #expect(parameters["iss"] == "http://127.0.0.1:8080")
            let code = try #require(parameters["code"])
            #expect(code.utf8.count == 43)

            let exchanged = try await Self.exchange(client, code: code)
            #expect(exchanged.status == .ok)
            let tokens = try ServerRouteTests.json(exchanged)
            #expect(tokens["token_type"]?.stringValue == "Bearer")
            #expect(tokens["scope"]?.stringValue == "profile email")
            #expect((tokens["expires_in"]?.int64Value ?? 0) > 0)
            let access = try #require(tokens["access_token"]?.stringValue)
            let first = try #require(tokens["refresh_token"]?.stringValue)
            let verified = try await server.issuer.verify(access)
            #expect(verified.claims.subject == "alice")
            #expect(verified.claims.clientID == "app")
            #expect(verified.claims.scopes == ["profile", "email"])
            // The code a second time: gone.
            let again = try await Self.exchange(client, code: code)
            #expect(again.status == .badRequest)
            #expect(try Self.error(again) == "invalid_grant")

            // Rotation: a new refresh token, the same scope.
            let rotated = try await Self.refresh(client, first)
            #expect(rotated.status == .ok)
            let second = try #require(try ServerRouteTests.json(rotated)["refresh_token"]?.stringValue)
            #expect(second != first)
            #expect(try ServerRouteTests.json(rotated)["scope"]?.stringValue == "profile email")
            // The spent token again: refused, and its whole family revoked.
            let reused = try await Self.refresh(client, first)
            #expect(reused.status == .badRequest)
            #expect(try Self.error(reused) == "invalid_grant")
            let family = try await Self.refresh(client, second)
            #expect(family.status == .badRequest)
            #expect(try Self.error(family) == "invalid_grant")

            // A redirect URI with a query: the code is appended with &.
            let withQuery = try await Self.signIn(client, Self.authorization(redirect: "https://app.example/cb?tenant=1"))
            #expect(withQuery.headers[.location]?.hasPrefix("https://app.example/cb?tenant=1&code=") == true)

            // Revocation: the family stops working; other tokens answer 200 too.
            let fresh = try ServerRouteTests.json(try await Self.exchange(client, code: try await Self.code(client)))
            let third = try #require(fresh["refresh_token"]?.stringValue)
            let revoked = try await Self.revoke(client, third)
            #expect(revoked.status == .ok)
            #expect(revoked.body.readableBytes == 0)
            #expect(try Self.error(try await Self.refresh(client, third)) == "invalid_grant")
            for token in ["not-a-token", access, third] {
                #expect(try await Self.revoke(client, token).status == .ok)
            }
            let anonymous = try await ServerRouteTests.post(client, "/oauth/revoke", "token=x", contentType: Self.formType)
            #expect(anonymous.status == .unauthorized)
            #expect(try Self.error(anonymous) == "invalid_client")
        }
    }

    @Test("refusals: a bad client or redirect URI is shown, not redirected; PKCE, response type, password, client binding")
    func refusals() async throws {
        try await ServerRouteTests.withServer { server, client in
            try Self.register(server)
            try server.clientDirectory.add(id: "other", secret: nil, redirectURIs: ["https://other.example/cb"], grants: ["authorization_code", "refresh_token"])
            try server.clientDirectory.add(id: "code-only", secret: nil, redirectURIs: [Self.callback], grants: ["authorization_code"])
            try server.clientDirectory.add(id: "refresh-only", secret: nil, redirectURIs: [Self.callback], grants: ["refresh_token"])
            try server.clientDirectory.add(id: "confidential", secret: SecureBytes(Array("a confidential secret".utf8)), redirectURIs: ["https://c.example/cb"],
                                           grants: ["authorization_code"])
            // Shown to the user, never redirected (RFC 6749 §4.1.2.1).
            let shown: [[(String, String)]] = [
                Self.authorization(redirect: "http://127.0.0.1:9000/elsewhere"), Self.authorization(redirect: "https://evil.example/callback"),
                Self.authorization(redirect: Self.callback + "/"), Self.authorization(redirect: "http://127.0.0.1.evil.example:9000/callback"),
                Self.authorization(redirect: "http://127.0.0.1@evil.example/callback"), Self.authorization(redirect: "HTTP://127.0.0.1:9000/callback"),
                Self.authorization(without: ["redirect_uri"]), Self.authorization(client: "nobody"), Self.authorization(without: ["client_id"]),
            ]
            for pairs in shown {
                for response in [try await Self.authorize(client, pairs), try await Self.signIn(client, pairs)] {
                    #expect(response.status == .badRequest, "\(pairs)")
                    #expect(response.headers[.location] == nil)
                    #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                }
            }
            // The same as RFC 6749 JSON for a client that asks for JSON only.
            let json = try await client.execute(uri: "/oauth/authorize?" + Self.encode(Self.authorization(client: "nobody")), method: .get,
                                                headers: [.accept: "application/json"])
            #expect(json.status == .badRequest)
            #expect(try Self.error(json) == "invalid_client")
            // A repeated parameter: refused to the user.
            let repeated = try await ServerRouteTests.get(client, "/oauth/authorize?" + Self.encode(Self.authorization()) + "&client_id=other")
            #expect(repeated.status == .badRequest)
            #expect(repeated.headers[.location] == nil)
            // A registered loopback URI with another port: accepted (RFC 8252 §7.3).
            #expect(try await Self.authorize(client, Self.authorization(redirect: "http://127.0.0.1:51234/callback")).status == .ok)

            // Anything else goes back to the client, with the state.
            let sentBack: [([(String, String)], String)] = [
                (Self.authorization(without: ["code_challenge", "code_challenge_method"]), "invalid_request"),
                (Self.authorization(extra: [("code_challenge_method", "plain")]), "invalid_request"),
                (Self.authorization(without: ["code_challenge_method"]), "invalid_request"),
                (Self.authorization(extra: [("code_challenge", "too-short")]), "invalid_request"),
                (Self.authorization(extra: [("response_type", "token")]), "unsupported_response_type"),
                (Self.authorization(without: ["response_type"]), "invalid_request"),
                (Self.authorization(extra: [("scope", "wlp.desk")]), "invalid_scope"),
                (Self.authorization(client: "refresh-only"), "unauthorized_client"),
            ]
            for (pairs, error) in sentBack {
                for response in [try await Self.authorize(client, pairs), try await Self.signIn(client, pairs)] {
                    #expect(response.status == .seeOther, "\(pairs)")
                    #expect(response.headers[.location]?.hasPrefix(Self.callback + "?") == true)
                    let parameters = try Self.parameters(response)
                    #expect(parameters["error"] == error, "\(pairs)")
                    #expect(parameters["state"] == "xyz")
                    #expect(parameters["code"] == nil)
                }
            }

            // A wrong password or an unknown account: the form again, 401, no code.
            for (username, password) in [("alice", "not the password"), ("mallory", Self.password), ("alice", "")] {
                let response = try await Self.signIn(client, Self.authorization(), username: username, password: password)
                #expect(response.status == .unauthorized)
                #expect(response.headers[.location] == nil)
                let html = String(buffer: response.body)
                #expect(html.contains("name=\"password\""))
                #expect(html.contains(password.isEmpty ? "Enter your username and password." : "The username or password is wrong."))
            }

            // A PKCE mismatch: invalid_grant, and the code is spent.
            let code = try await Self.code(client)
            let mismatch = try await Self.exchange(client, code: code, verifier: String(repeating: "a", count: 43))
            #expect(mismatch.status == .badRequest)
            #expect(try Self.error(mismatch) == "invalid_grant")
            #expect(try Self.error(try await Self.exchange(client, code: code)) == "invalid_grant")
            // A malformed verifier: invalid_request.
            #expect(try Self.error(try await Self.exchange(client, code: try await Self.code(client), verifier: "short")) == "invalid_request")
            // Another redirect URI, or another client, at the token endpoint: invalid_grant.
            #expect(try Self.error(try await Self.exchange(client, code: try await Self.code(client), redirect: "http://127.0.0.1:9001/callback")) == "invalid_grant")
            #expect(try Self.error(try await Self.exchange(client, code: try await Self.code(client), clientID: "other")) == "invalid_grant")
            // A confidential client that does not authenticate; an unknown client.
            for id in ["confidential", "nobody"] {
                let response = try await Self.exchange(client, code: "x", clientID: id)
                #expect(response.status == .unauthorized)
                #expect(try Self.error(response) == "invalid_client")
            }

            // A refresh token is bound to its client.
            let tokens = try ServerRouteTests.json(try await Self.exchange(client, code: try await Self.code(client)))
            let refresh = try #require(tokens["refresh_token"]?.stringValue)
            #expect(try Self.error(try await Self.refresh(client, refresh, clientID: "other")) == "invalid_grant")
            #expect(try await Self.revoke(client, refresh, clientID: "other").status == .ok)
            let rotated = try await Self.refresh(client, refresh)
            #expect(rotated.status == .ok, "another client's refusal or revocation must leave the token alone")
            // A client without the refresh grant gets no refresh token and may not refresh.
            let codeOnly = Self.authorization(client: "code-only")
            let codeOnlyTokens = try ServerRouteTests.json(try await Self.exchange(client, code: try await Self.code(client, codeOnly), clientID: "code-only"))
            #expect(codeOnlyTokens["access_token"] != nil)
            #expect(codeOnlyTokens["refresh_token"] == nil)
            #expect(try Self.error(try await Self.refresh(client, "anything", clientID: "code-only")) == "unauthorized_client")
        }
    }

    @Test("reflected values are escaped in HTML and form-encoded in the redirect")
    func escaping() async throws {
        try await ServerRouteTests.withServer { server, client in
            try Self.register(server)
            let state = "\"><script>alert(1)</script>'"
            let page = try await Self.authorize(client, Self.authorization(state: state))
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(!html.contains("<script>"))
            #expect(html.contains("value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;\""))
            let again = try await Self.signIn(client, Self.authorization(state: state), username: "<b>eve</b>", password: "wrong password")
            #expect(again.status == .unauthorized)
            let form = String(buffer: again.body)
            #expect(!form.contains("<script>") && !form.contains("<b>"))
            #expect(form.contains("&lt;b&gt;eve&lt;/b&gt;"))
            let redirected = try await Self.signIn(client, Self.authorization(state: state))
            #expect(redirected.status == .seeOther)
            #expect(try Self.parameters(redirected)["state"] == state)
            #expect(redirected.headers[.location]?.contains("<") == false)
            #expect(HTMLText.escape("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e&#39;f")
        }
    }

    /// A clock the test moves.
    final class ManualClock: @unchecked Sendable {
        private let lock = NSLock()
        private var value = Int64(Date().timeIntervalSince1970)

        var now: Int64 {
            lock.lock()
            defer { lock.unlock() }
            return value
        }

        func advance(_ seconds: Int64) {
            lock.lock()
            defer { lock.unlock() }
            value += seconds
        }
    }

    @Test("a code is redeemable for 60 seconds")
    func expiry() async throws {
        try await ServerRouteTests.withServer { server, _ in
            try Self.register(server)
            let clock = ManualClock()
            let router = Router(context: BasicRequestContext.self)
            router.add(middleware: ErrorMiddleware(logger: server.logger))
            let tokens = AccessTokenAuthenticator(issuer: server.issuer, ledger: server.ledger, baseURL: server.configuration.effectiveIssuer,
                                                  clock: { clock.now })
            let passkeys = PasskeyRoutes(issuer: server.issuer, tokens: tokens, accounts: server.accounts, configuration: server.configuration,
                                         relyingPartyID: server.relyingPartyID, clock: { clock.now }, logger: server.logger)
            OAuthRoutes(issuer: server.issuer, tokens: tokens, clients: server.clients, accounts: server.accounts, codes: AuthorizationCodes(store: server.state),
                        passkeys: passkeys, configuration: server.configuration, clock: { clock.now }, logger: server.logger).add(to: router)
            try await Application(router: router).test(.router) { client in
                let early = try await Self.code(client)
                clock.advance(59)
                #expect(try await Self.exchange(client, code: early).status == .ok)
                let late = try await Self.code(client)
                clock.advance(60)
                let expired = try await Self.exchange(client, code: late)
                #expect(expired.status == .badRequest)
                #expect(try Self.error(expired) == "invalid_grant")
            }
        }
    }

    @Test("accounts: Argon2id hashes, replaced passwords, bounds")
    func accounts() async throws {
        try await ServerRouteTests.withServer { server, _ in
            let accounts = server.accountDirectory
            let first = SecureBytes(Array("first password".utf8))
            let second = SecureBytes(Array("second password".utf8))
            try accounts.add(username: "bob", password: first)
            #expect(try accounts.authenticate(username: "bob", password: first))
            #expect(try accounts.authenticate(username: "bob", password: SecureBytes(Array("first passworD".utf8))) == false)
            #expect(try accounts.authenticate(username: "nobody", password: first) == false)
            try accounts.add(username: "bob", password: second)
            #expect(try accounts.authenticate(username: "bob", password: first) == false)
            #expect(try accounts.authenticate(username: "bob", password: second))
            let bad: [(String, String)] = [("", "long enough"), ("has space", "long enough"), (String(repeating: "a", count: 65), "long enough"),
                                           ("bob", "short"), ("bob", String(repeating: "x", count: 1025)), ("caf\u{E9}", "long enough")]
            for (username, password) in bad {
                #expect(throws: TokenMintError.self) { try accounts.add(username: username, password: SecureBytes(Array(password.utf8))) }
            }
        }
    }

    @Test("redirect URIs: byte for byte, loopback with any port")
    func redirectMatching() {
        let cases: [(String, String, Bool)] = [
            ("https://app.example/cb", "https://app.example/cb", true),
            ("https://app.example/cb/", "https://app.example/cb", false),
            ("https://app.example:8443/cb", "https://app.example/cb", false),
            ("http://127.0.0.1:8000/cb", "http://127.0.0.1/cb", true),
            ("http://127.0.0.1/cb", "http://127.0.0.1:9000/cb", true),
            ("http://[::1]:8000/cb?x=1", "http://[::1]/cb?x=1", true),
            ("http://127.0.0.1:8000/other", "http://127.0.0.1/cb", false),
            ("http://127.0.0.1:99999/cb", "http://127.0.0.1/cb", false),
            ("http://127.0.0.1.evil.example/cb", "http://127.0.0.1/cb", false),
            ("https://127.0.0.1:8000/cb", "https://127.0.0.1/cb", false),
            ("http://localhost:8000/cb", "http://localhost/cb", false),
        ]
        for (requested, registered, expected) in cases {
            #expect(OAuthRoutes.redirectMatches(requested, registered: registered) == expected, "\(requested) against \(registered)")
        }
    }
}
#endif
