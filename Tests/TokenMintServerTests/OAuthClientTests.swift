#if Server && HTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import TokenMintAuth
import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
import TokenMintStore
import TokenMintWebAuthn
@testable import TokenMintHTTP
@testable import TokenMintServer

/// `OAuthAuthorizationProvider`, the app's side of the code flow, against a
/// live server on loopback: a test browser reads the sign-in page, posts
/// the credentials and hands the redirect back; the token is refreshed,
/// restored by a new token manager, and revoked on logout. The iZettle
/// codes for a missing presenter, callback or client, a foreign redirect
/// and a forged `state`.
@Suite("OAuth client against a live server")
struct OAuthClientTests {
    static let issuer = "http://tokenmint.test"
    static let password = "correct horse battery staple"
    /// A loopback callback: registered without a port, used on any (RFC 8252 §7.3).
    static let callback = "http://127.0.0.1:9/callback"

    /// A live server with the public client `app` (redirect URI
    /// `http://127.0.0.1/callback`) and the account `alice`.
    static func withServer(_ body: @Sendable (TokenMintServer, any TestClientProtocol, String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-oauth-client-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration(port: 0, stateDirectory: directory)
        configuration.issuer = issuer
        let server = try TokenMintServer(configuration: configuration, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        try server.clientDirectory.add(id: "app", secret: nil, redirectURIs: ["http://127.0.0.1/callback"], grants: ["authorization_code", "refresh_token"])
        try server.accountDirectory.add(username: "alice", password: SecureBytes(Array(password.utf8)))
        let app = Application(router: server.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            try await body(server, client, "http://127.0.0.1:\(port)")
        }
    }

    /// Plays the browser: shows the sign-in page, posts the credentials,
    /// and gives the redirect to the provider, as an app's URL handler does.
    actor Browser {
        let client: any TestClientProtocol
        let forgedState: String?
        var provider: OAuthAuthorizationProvider?
        var presented: [URL] = []
        var handled: [Bool] = []

        init(client: any TestClientProtocol, forgedState: String? = nil) {
            self.client = client
            self.forgedState = forgedState
        }

        func attach(_ provider: OAuthAuthorizationProvider) { self.provider = provider }

        func open(_ url: URL) async throws {
            presented.append(url)
            let components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            let query = try #require(components.percentEncodedQuery)
            let page = try await ServerRouteTests.get(client, components.percentEncodedPath + "?" + query)
            #expect(page.status == .ok)
            let response = try await ServerRouteTests.post(client, "/oauth/authorize", query + "&username=alice&password=correct%20horse%20battery%20staple",
                                                           contentType: "application/x-www-form-urlencoded")
            #expect(response.status == .seeOther)
            var location = try #require(response.headers[.location])
            if let forgedState {
                var redirect = try #require(URLComponents(string: location))
                redirect.percentEncodedQueryItems = redirect.percentEncodedQueryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: forgedState) : $0 }
                location = try #require(redirect.string)
            }
            let redirect = try #require(URL(string: location))
            handled.append(provider?.handleRedirect(redirect) ?? false)
        }
    }

    static func provider(_ base: String, browser: Browser?, clientID: String = "app", callback: String? = OAuthClientTests.callback,
                         signInTimeout: Duration = .seconds(30),
                         assert: (@Sendable (StepUpRequest) async throws -> StepUpAssertion)? = nil) async -> OAuthAuthorizationProvider {
        var presenter: (@Sendable (URL) async throws -> Void)?
        if let browser { presenter = { url in try await browser.open(url) } }
        let provider = OAuthAuthorizationProvider(clientID: clientID, callbackURL: callback, server: base, issuer: issuer,
                                                  signInTimeout: signInTimeout, presenter: presenter, assert: assert)
        await browser?.attach(provider)
        return provider
    }

    static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    static func expectCode(_ code: TokenMintError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code)", sourceLocation: sourceLocation)
        } catch let error as TokenMintError {
            if error.code != code { Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation) }
        } catch {
            Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("sign in through the browser, refresh, restore in a new manager, log out: the family is revoked at the server")
    func signInRefreshRestoreLogout() async throws {
        try await Self.withServer { server, client, base in
            let browser = Browser(client: client)
            let provider = await Self.provider(base, browser: browser)
            let store = InMemoryStore()
            let manager = TokenManager(provider: provider, store: store)
            let token = try await manager.signIn()
            #expect(token.account == "alice" && token.refreshToken != nil && !token.elevated)
            #expect(token.expiresAt > Int64(Date().timeIntervalSince1970))
            #expect(await browser.handled == [true])
            let presented = try #require(await browser.presented.first)
            let query = try #require(OAuthAuthorizationProvider.queryFields(presented))
            #expect(query["code_challenge_method"] == "S256" && query["client_id"] == "app" && query["redirect_uri"] == Self.callback)
            #expect(query["code_challenge"]?.utf8.count == 43 && (query["state"]?.utf8.count ?? 0) >= 22)
            let claims = try await server.issuer.verify(token.accessToken).claims
            #expect(claims.subject == "alice" && claims.clientID == "app")

            // A new manager over the same store starts authorized; its token
            // is refreshed through the server (the margin exceeds the lifetime).
            let restored = TokenManager(provider: provider, store: store, refreshMargin: 100_000)
            #expect(await restored.state == .authorized(account: "alice"))
            let refreshed = try await restored.accountToken()
            #expect(refreshed.account == "alice" && refreshed.refreshToken != token.refreshToken && refreshed.accessToken != token.accessToken)

            // Logout revokes the family at the server, then wipes the tokens.
            #expect(try await restored.logout())
            #expect(await restored.state == .signedOut)
            #expect(await TokenManager(provider: provider, store: store).state == .signedOut)
            await Self.expectCode(.auth.refreshTokenInvalid) { _ = try await provider.refresh(refreshed) }
            await Self.expectCode(.auth.notSignedIn) { _ = try await restored.accountToken() }
            // A step-up at the server needs the account token the manager holds.
            await Self.expectCode(.auth.notSignedIn) { _ = try await provider.verifyAccount(uuid: UUID()) }
        }
    }

    /// A passkey for `account` on `authenticator`, registered through the
    /// issuer's own ceremony (the origin is the issuer's URL).
    static func registerPasskey(_ server: TokenMintServer, _ authenticator: SoftwareAuthenticator, account: String) async throws {
        let ceremony = try await server.issuer.registrationCeremony(account: account, signUp: false)
        let clientData = CollectedClientData(type: "webauthn.create", challenge: ceremony.challenge, origin: issuer).json
        let made = try await authenticator.makeCredential(
            clientDataHash: HashFunction.sha256.hash(clientData), rp: ("tokenmint.test", nil), user: (ceremony.userHandle ?? [], account, nil),
            pubKeyCredParams: [.es256], options: .init(residentKey: true, userVerification: true))
        _ = try await server.issuer.registerPasskey(account: account, clientDataJSON: clientData, attestationObject: made.attestationObject.bytes,
                                                    credentialID: made.credentialID)
    }

    @Test("the FIDO2 step-up over HTTP: the manager's account token and a passkey give an elevated token; refusals")
    func stepUp() async throws {
        try await Self.withServer { server, client, base in
            let authenticator = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)
            let tamper = Mutex(false)
            let assert: @Sendable (StepUpRequest) async throws -> StepUpAssertion = { request in
                let clientData = CollectedClientData(type: "webauthn.get", challenge: request.challenge, origin: OAuthClientTests.issuer).json
                let made = try await authenticator.getAssertion(clientDataHash: HashFunction.sha256.hash(clientData), rpID: request.relyingPartyID,
                                                                allowList: request.credentialIDs, options: .init(userVerification: true))
                var signature = made.signature
                if tamper.withLock({ $0 }) { signature[signature.count - 1] ^= 1 }
                return StepUpAssertion(credentialID: made.credentialID, clientDataJSON: clientData, authenticatorData: made.authenticatorData.bytes,
                                       signature: signature)
            }
            let browser = Browser(client: client)
            let provider = await Self.provider(base, browser: browser, assert: assert)
            let manager = TokenManager(provider: provider, store: InMemoryStore())
            let account = UUID()
            await Self.expectCode(.auth.notSignedIn) { _ = try await manager.elevate(account: account) }
            _ = try await manager.signIn()
            // alice has no passkey yet: the server says so.
            await Self.expectCode(.auth.wrongAccount) { _ = try await manager.elevate(account: account) }
            try await Self.registerPasskey(server, authenticator, account: "alice")
            tamper.withLock { $0 = true }
            await Self.expectCode(.auth.assertionInvalid) { _ = try await manager.elevate(account: account) }
            tamper.withLock { $0 = false }
            let elevated = try await manager.elevate(account: account)
            #expect(elevated.elevated && elevated.refreshToken == nil && elevated.account == "alice")
            let claims = try await server.issuer.verify(elevated.accessToken).claims
            #expect(claims.scopes == ["elevated"] && claims.clientID == "app" && claims["acr"]?.stringValue == "urn:tokenmint:acr:fido2")
            #expect(try await manager.elevatedToken()?.accessToken == elevated.accessToken)
            if case .elevated(let who, _) = await manager.state { #expect(who == "alice") } else { Issue.record("not elevated") }
            // No authenticator configured: −644.
            let bare = await Self.provider(base, browser: nil)
            await Self.expectCode(.auth.stepUpUnavailable) {
                _ = try await bare.verifyAccount(uuid: account, accountToken: try await manager.accountToken())
            }
        }
    }

    @Test("no presenter: −501; a missing or malformed callback: −203, −202; a bad or unknown client ID: −300")
    func configurationErrors() async throws {
        try await Self.withServer { _, client, base in
            await Self.expectCode(.auth.presentationNotPossible) { _ = try await Self.provider(base, browser: nil).authorizeAccount() }
            #expect(TokenMintError.Code.auth.presentationNotPossible.number == -501)
            for missing in [nil, ""] as [String?] {
                await Self.expectCode(.auth.callbackURLMissing) {
                    _ = try await Self.provider(base, browser: Browser(client: client), callback: missing).authorizeAccount()
                }
            }
            for invalid in ["/callback", "callback", "http://127.0.0.1:9/callback#fragment", "http://127.0.0.1:9/call back"] {
                await Self.expectCode(.auth.callbackURLInvalid) {
                    _ = try await Self.provider(base, browser: Browser(client: client), callback: invalid).authorizeAccount()
                }
            }
            #expect(TokenMintError.Code.auth.callbackURLMissing.number == -203 && TokenMintError.Code.auth.callbackURLInvalid.number == -202)

            // Refused by the server before anything is presented.
            let unregistered = Browser(client: client)
            await Self.expectCode(.auth.callbackURLInvalid) {
                _ = try await Self.provider(base, browser: unregistered, callback: "http://127.0.0.1:9/elsewhere").authorizeAccount()
            }
            let unknown = Browser(client: client)
            await Self.expectCode(.auth.clientIdInvalid) { _ = try await Self.provider(base, browser: unknown, clientID: "no-such-app").authorizeAccount() }
            let shown = await unregistered.presented + unknown.presented
            #expect(shown.isEmpty)
            await Self.expectCode(.auth.clientIdInvalid) { _ = try await Self.provider(base, browser: Browser(client: client), clientID: "bad client").authorizeAccount() }
            #expect(TokenMintError.Code.auth.clientIdInvalid.number == -300)
            // No server there.
            await Self.expectCode(.auth.serverUnreachable) {
                _ = try await OAuthAuthorizationProvider(clientID: "app", callbackURL: Self.callback, server: "http://127.0.0.1:1", timeout: .seconds(1),
                                                         presenter: { _ in }).authorizeAccount()
            }
        }
    }

    @Test("a foreign URL is not taken; a forged state fails the sign-in; no redirect in time fails it too")
    func redirects() async throws {
        try await Self.withServer { _, client, base in
            let provider = await Self.provider(base, browser: nil)
            let redirect1 = try Self.url("https://attacker.example/callback?code=x&state=y")
            #expect(provider.handleRedirect(redirect1) == false)
            let redirect2 = try Self.url("http://127.0.0.1:9/other?code=x&state=y")
            #expect(provider.handleRedirect(redirect2) == false)
            let redirect3 = try Self.url("https://127.0.0.1:9/callback?code=x&state=y")
            #expect(provider.handleRedirect(redirect3) == false)
            // The callback itself, with no sign-in waiting, is not taken either.
            let redirect4 = try Self.url("http://127.0.0.1:9/callback?code=x&state=y")
            #expect(provider.handleRedirect(redirect4) == false)
            let custom = OAuthAuthorizationProvider(clientID: "app", callbackURL: "myapp://oauth/done", server: base)
            let redirect5 = try Self.url("myapp://oauth/other?code=x")
            #expect(custom.handleRedirect(redirect5) == false)
            let redirect6 = try Self.url("otherapp://oauth/done?code=x")
            #expect(custom.handleRedirect(redirect6) == false)

            let forger = Browser(client: client, forgedState: "forged-state-from-another-tab")
            let forged = await Self.provider(base, browser: forger)
            await Self.expectCode(.auth.redirectMismatch) { _ = try await forged.authorizeAccount() }
            #expect(await forger.handled == [true])
            // The code was never exchanged: the manager stays signed out.
            let manager = TokenManager(provider: forged, store: InMemoryStore())
            #expect(await manager.state == .signedOut)

            let silent = OAuthAuthorizationProvider(clientID: "app", callbackURL: Self.callback, server: base, issuer: Self.issuer,
                                                    signInTimeout: .milliseconds(300), presenter: { _ in })
            await Self.expectCode(.auth.signInTimedOut) { _ = try await silent.authorizeAccount() }
            // The next sign-in works.
            let browser = Browser(client: client)
            let again = await Self.provider(base, browser: browser)
            #expect(try await again.authorizeAccount().account == "alice")
        }
    }
}
#endif
