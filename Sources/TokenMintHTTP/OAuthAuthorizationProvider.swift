#if HTTPClient
public import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
public import TokenMintAuth
public import AsyncHTTPClient
import NIOCore
import NIOHTTP1
public import Foundation

/// The iZettle SDK 3.0 `iZettleSDKAuthorization` on the OAuth 2.0 code flow:
/// an `AuthorizationProvider` that signs an account in at an
/// authorization server such as `tokenmint serve`.
///
/// ``authorizeAccount()`` builds an authorization request with PKCE (S256,
/// RFC 7636) and a random `state`, hands its URL to the host's presenter
/// (which opens it in a browser), waits for the browser to come back to the
/// callback URL — the host passes that redirect to ``handleRedirect(_:)``,
/// the seed's `applicationDidOpen(with:)` — and exchanges the code at
/// `/oauth/token`. The access token (RFC 9068) is verified with the
/// server's `/oauth/jwks` before its `sub` is taken as the account.
///
/// Before anything is presented the request is shown to the server once
/// (a `GET` of the authorization URL asking for JSON), so that an unknown
/// client ID or an unregistered callback URL fails at once with its
/// iZettle code instead of as an error page the app never sees. When the
/// server sends that request back to the callback with an error (a client
/// without the code flow), the HTTP client follows the redirect, as a
/// browser would, before the error is read.
///
/// The provider is a public client (RFC 6749 §2.1): it holds no secret and
/// names itself with `client_id`. It keeps no token: `TokenManager` stores
/// what it returns. Its methods may be called from any thread; one sign-in
/// waits for its redirect at a time.
///
/// Errors (`TokenMintError`, `.auth`): `callbackURLMissing` (−203),
/// `callbackURLInvalid` (−202), `clientIdInvalid` (−300),
/// `presentationNotPossible` (−501), `authorizationDenied` (−640),
/// `redirectMismatch` (−641), `serverUnreachable` (−642), `signInTimedOut`
/// (−643), `refreshTokenInvalid` (−610), `accessTokenInvalid` (−632),
/// `stepUpUnavailable` (−644), and for the step-up `notSignedIn` (−600),
/// `assertionInvalid` (−620), `challengeInvalid` (−621), `wrongAccount` (−622).
///
/// The FIDO2 step-up (``verifyAccount(uuid:accountToken:)``, which
/// `TokenManager.elevate(account:)` calls) runs against the server's
/// `/webauthn/step-up/` routes with the account's token, through the
/// host's `assert` function: the authenticator the host holds (a security
/// key, a platform authenticator, TokenMint's software one) signs the
/// server's challenge.
public final class OAuthAuthorizationProvider: AuthorizationProvider, @unchecked Sendable {
    /// The OAuth client ID (a public client).
    public let clientID: String
    /// Where the authorization server sends the browser back: registered
    /// for the client, matched exactly, or for a loopback `http://127.0.0.1`
    /// or `http://[::1]` URL on any port (RFC 8252 §7.3).
    public let callbackURL: String?
    /// The authorization server's base URL, without a trailing slash; its
    /// endpoints are `/oauth/authorize`, `/oauth/token`, `/oauth/revoke`
    /// and `/oauth/jwks` under it.
    public let server: String
    /// The issuer the server names in the redirect's `iss` (RFC 9207) and in
    /// the access tokens' `iss`.
    public let issuer: String
    /// The scopes asked for (none by default).
    public let scopes: [String]
    /// How long ``authorizeAccount()`` waits for the redirect.
    public let signInTimeout: Duration
    let presenter: (@Sendable (URL) async throws -> Void)?
    let assert: (@Sendable (StepUpRequest) async throws -> StepUpAssertion)?
    let client: HTTPClient
    let requestTimeout: TimeAmount
    let exchange: JSONExchange
    let clock: @Sendable () -> Int64
    private let lock = Lock()
    /// The sign-in waiting for its redirect (guarded by `lock`).
    private var pending: Pending?
    /// The server's keys, as last fetched (guarded by `lock`).
    private var keys: JWKSet?

    struct Pending: Sendable {
        let id: UUID
        let continuation: AsyncStream<URL>.Continuation
    }

    /// The longest redirect URL taken, in bytes.
    static let maximumRedirectBytes = 8192
    /// The longest token taken from the server, in bytes.
    static let maximumTokenBytes = 16384

    /// A provider for the public client `clientID` of the authorization
    /// server at `server`. Nothing is checked here: ``authorizeAccount()``
    /// reports a missing or malformed configuration with its iZettle code.
    /// - Parameters:
    ///   - clientID: The client ID registered at the server.
    ///   - callbackURL: The redirect URI registered for the client.
    ///   - server: The server's base URL (http or https, no query).
    ///   - issuer: The server's issuer URL when it is not `server` (a server
    ///     behind a proxy, or one configured with another `--issuer`).
    ///   - scopes: The scopes to ask for.
    ///   - client: The HTTP client (its configuration sets TLS and proxy);
    ///     `HTTPClient.tokenMint` (no redirects) by default.
    ///   - timeout: Each request's deadline.
    ///   - signInTimeout: How long a sign-in waits for its redirect.
    ///   - clock: Seconds since the epoch, for the tokens' expiry.
    ///   - presenter: Opens the authorization URL in a browser (or a web
    ///     view); without one ``authorizeAccount()`` fails with
    ///     `presentationNotPossible` (−501). It may return at once: the
    ///     sign-in completes when ``handleRedirect(_:)`` is called.
    ///   - assert: Signs a step-up's challenge with one of the account's
    ///     passkeys; without one the step-up fails with `stepUpUnavailable`.
    public init(clientID: String, callbackURL: String?, server: String, issuer: String? = nil, scopes: [String] = [],
                client: HTTPClient = .tokenMint, timeout: Duration = .seconds(10), signInTimeout: Duration = .seconds(300),
                clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
                presenter: (@Sendable (URL) async throws -> Void)? = nil,
                assert: (@Sendable (StepUpRequest) async throws -> StepUpAssertion)? = nil) {
        self.assert = assert
        var base = server
        while base.hasSuffix("/") { base.removeLast() }
        self.clientID = clientID
        self.callbackURL = callbackURL
        self.server = base
        self.issuer = issuer ?? base
        self.scopes = scopes
        self.signInTimeout = signInTimeout
        self.presenter = presenter
        self.client = client
        self.requestTimeout = JSONExchange.timeAmount(timeout)
        self.exchange = JSONExchange(client: client, timeout: JSONExchange.timeAmount(timeout))
        self.clock = clock
    }

    // MARK: - Sign-in

    /// Signs an account in with the code flow (see the type's overview).
    /// - Throws: `callbackURLMissing`, `callbackURLInvalid` or
    ///   `clientIdInvalid` for the configuration (checked first, then by the
    ///   server); `presentationNotPossible` without a presenter, when the
    ///   presenter fails, or while another sign-in waits; `redirectMismatch`
    ///   for a redirect with another `state` or issuer; `authorizationDenied`
    ///   when the user or the server refuses; `signInTimedOut` when no
    ///   redirect comes within ``signInTimeout``; `serverUnreachable`;
    ///   `accessTokenInvalid` for an access token that does not verify.
    ///   `CancellationError` when the task is cancelled.
    public func authorizeAccount() async throws -> OAuthToken {
        let callback = try Self.callback(callbackURL)
        try checkClientID()
        try checkServer()
        guard let presenter else {
            throw TokenMintError(.auth.presentationNotPossible, "no presenter is configured to open the sign-in page")
        }
        let verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
        let challenge = Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8)))
        let state = Base64URL.encode(SecureRandom.bytes(count: 16))
        var query: [(String, String)] = [("response_type", "code"), ("client_id", clientID), ("redirect_uri", callback.text),
                                         ("code_challenge", challenge), ("code_challenge_method", "S256"), ("state", state)]
        if !scopes.isEmpty { query.append(("scope", scopes.joined(separator: " "))) }
        let address = server + "/oauth/authorize?" + Self.formEncoded(query)
        guard let url = URL(string: address) else { throw TokenMintError(.auth.serverUnreachable, "the authorization URL is malformed") }

        // The wait is registered before the URL leaves this function, so a
        // redirect that comes back at once is not lost.
        let (redirects, continuation) = AsyncStream<URL>.makeStream(bufferingPolicy: .bufferingOldest(1))
        let id = UUID()
        let registered = lock.withLock { () -> Bool in
            guard pending == nil else { return false }
            pending = Pending(id: id, continuation: continuation)
            return true
        }
        guard registered else { throw TokenMintError(.auth.presentationNotPossible, "another sign-in is waiting for its redirect") }
        defer {
            lock.withLock { if pending?.id == id { pending = nil } }
            continuation.finish()
        }

        try await preflight(address)
        do { try await presenter(url) } catch let error as CancellationError { throw error } catch {
            throw TokenMintError(.auth.presentationNotPossible, "the sign-in page could not be presented", underlying: error)
        }

        let timeout = signInTimeout
        let redirect: URL? = await withTaskGroup(of: URL?.self) { group in
            group.addTask {
                for await url in redirects { return url }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let redirect else {
            if Task.isCancelled { throw CancellationError() }
            throw TokenMintError(.auth.signInTimedOut, "the browser did not come back to the callback URL within \(timeout)")
        }
        let code = try authorizationCode(from: redirect, state: state)
        let answer = try await post("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", callback.text),
                                                     ("code_verifier", verifier), ("client_id", clientID)])
        guard answer.status == 200 else { throw tokenFailure(answer, refreshing: false) }
        return try await token(from: answer.object, previousRefreshToken: nil)
    }

    /// Completes the sign-in waiting for `url`, the redirect that brought
    /// the browser back (the seed's `applicationDidOpen(with:)`). Callable
    /// from any thread.
    ///
    /// The URL is this provider's when its scheme, host, port and path are
    /// the callback URL's (for a loopback `http` callback, any port). Its
    /// `state`, issuer, error and code are checked by the waiting sign-in: a
    /// redirect with another `state` ends that sign-in with
    /// `redirectMismatch`.
    /// - Returns: Whether the URL was taken: false for a URL that is not this
    ///   provider's callback, or when no sign-in is waiting.
    @discardableResult
    public func handleRedirect(_ url: URL) -> Bool {
        guard url.absoluteString.utf8.count <= Self.maximumRedirectBytes, let callback = try? Self.callback(callbackURL),
            callback.matches(url)
        else { return false }
        let waiting: Pending? = lock.withLock {
            let current = pending
            pending = nil
            return current
        }
        guard let waiting else { return false }
        waiting.continuation.yield(url)
        waiting.continuation.finish()
        return true
    }

    /// A step-up needs the account's token: `TokenManager` passes it to
    /// ``verifyAccount(uuid:accountToken:)``.
    /// - Throws: `auth.notSignedIn` (−600), always.
    public func verifyAccount(uuid: UUID) async throws -> OAuthToken {
        throw TokenMintError(.auth.notSignedIn, "a step-up at the server needs the signed-in account's token")
    }

    /// The FIDO2 step-up at the server: its step-up options for the
    /// account of `accountToken`, the host's `assert` function signs the
    /// challenge, and the server answers the assertion with an elevated
    /// token (never refreshed), verified with the server's keys.
    /// - Throws: `stepUpUnavailable` without an `assert` function;
    ///   `notSignedIn` without an account token (or with an elevated one,
    ///   or one of another account than `uuid` names); `wrongAccount` when
    ///   the account has no passkey or the passkey is not the account's;
    ///   `challengeInvalid`, `assertionInvalid` as the server says;
    ///   `serverUnreachable`; `accessTokenInvalid`; and what `assert` throws.
    public func verifyAccount(uuid: UUID, accountToken: OAuthToken?) async throws -> OAuthToken {
        guard let assert else { throw TokenMintError(.auth.stepUpUnavailable, "no authenticator is configured for the step-up (assert)") }
        guard let accountToken, !accountToken.elevated else { throw TokenMintError(.auth.notSignedIn, "no account is signed in") }
        if let named = UUID(uuidString: accountToken.account), named != uuid {
            throw TokenMintError(.auth.notSignedIn, "the signed-in account is not \(uuid.uuidString.lowercased())")
        }
        try checkServer()
        let options = try await stepUpCall("/webauthn/step-up/options", JSONObject(), bearer: accountToken.accessToken)
        guard let challengeText = options["challenge"]?.stringValue, let challenge = try? Base64URL.decode(challengeText), challenge.count >= 16,
            let rpID = options["rpId"]?.stringValue
        else { throw TokenMintError(.auth.serverUnreachable, "the server's step-up options are malformed") }
        let allowed = (options["allowCredentials"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }.compactMap { try? Base64URL.decode($0) }
        let assertion = try await assert(StepUpRequest(challenge: challenge, relyingPartyID: rpID, credentialIDs: allowed))
        let id = Base64URL.encode(assertion.credentialID)
        let credential = JSONObject([
            ("id", .string(id)), ("rawId", .string(id)), ("type", "public-key"), ("clientExtensionResults", .object(JSONObject())),
            ("response", .object(JSONObject([
                ("clientDataJSON", .string(Base64URL.encode(assertion.clientDataJSON))),
                ("authenticatorData", .string(Base64URL.encode(assertion.authenticatorData))),
                ("signature", .string(Base64URL.encode(assertion.signature))),
            ]))),
        ])
        let answer = try await stepUpCall("/webauthn/step-up/verify", JSONObject([("credential", .object(credential))]), bearer: accountToken.accessToken)
        guard let access = answer["accessToken"]?.stringValue, (1...Self.maximumTokenBytes).contains(access.utf8.count), answer["elevated"]?.boolValue == true
        else { throw TokenMintError(.auth.serverUnreachable, "the server's step-up answer is not an elevated token") }
        let verified = try await verifiedClaims(access)
        guard let expiresAt = answer["expiresAt"]?.int64Value ?? verified.expiration else {
            throw TokenMintError(.auth.accessTokenInvalid, "the elevated token has no lifetime")
        }
        return OAuthToken(accessToken: access, refreshToken: nil, expiresAt: expiresAt, elevated: true, account: verified.subject)
    }

    /// A JSON `POST` of the step-up with the account's bearer token; a
    /// refusal becomes the auth error the server names.
    func stepUpCall(_ path: String, _ body: JSONObject, bearer: String) async throws(TokenMintError) -> JSONObject {
        let answer: (status: Int, object: JSONObject)
        do { answer = try await exchange.send(.POST, server + path, bearer: bearer, body: body) } catch { throw failure(error) }
        switch answer.status {
        case 200: return answer.object
        case 400..<500:
            let name = answer.object["error"]?.stringValue ?? ""
            let message = String((answer.object["message"]?.stringValue ?? "status \(answer.status)").prefix(200))
            switch name {
            case "challengeInvalid": throw TokenMintError(.auth.challengeInvalid, "the server refuses the step-up: \(message)")
            case "assertionInvalid": throw TokenMintError(.auth.assertionInvalid, "the server refuses the step-up: \(message)")
            case "wrongAccount", "forbidden": throw TokenMintError(.auth.wrongAccount, "the server refuses the step-up: \(message)")
            case "unauthorized": throw TokenMintError(.auth.notSignedIn, "the server refuses the account token: \(message)")
            default: throw TokenMintError(.auth.serverUnreachable, "the server refuses the step-up (\(answer.status)): \(message)")
            }
        default: throw TokenMintError(.auth.serverUnreachable, "the server's step-up failed (\(answer.status))")
        }
    }

    /// The refresh-token grant (RFC 6749 §6): the server rotates the refresh
    /// token; a server that answers without one keeps the old one valid.
    /// - Throws: `refreshTokenInvalid` for an elevated token or a refresh
    ///   token the server refuses (spent, revoked, expired); `clientIdInvalid`;
    ///   `serverUnreachable`; `accessTokenInvalid` for an access token that
    ///   does not verify or names another account.
    public func refresh(_ token: OAuthToken) async throws -> OAuthToken {
        guard let refreshToken = token.refreshToken else { throw TokenMintError(.auth.refreshTokenInvalid, "elevated tokens are not refreshed") }
        try checkClientID()
        try checkServer()
        let answer = try await post("/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)])
        guard answer.status == 200 else { throw tokenFailure(answer, refreshing: true) }
        let fresh = try await self.token(from: answer.object, previousRefreshToken: refreshToken)
        guard fresh.account.utf8.elementsEqual(token.account.utf8) else {
            throw TokenMintError(.auth.accessTokenInvalid, "the refreshed access token is another account's")
        }
        return fresh
    }

    /// Revokes `token`'s refresh token, and its family, at the server; a
    /// token without one (elevated) needs nothing.
    public func revoke(_ token: OAuthToken) async throws {
        guard let refreshToken = token.refreshToken else { return }
        try await revoke(refreshToken: refreshToken)
    }

    /// RFC 7009 revocation of a refresh token at `/oauth/revoke`: the token
    /// and every refresh token rotated from the same sign-in stop working.
    /// The server answers an unknown token as it answers a known one.
    /// - Throws: `clientIdInvalid` when the server refuses the client;
    ///   `serverUnreachable` when no answer comes; `authorizationDenied`
    ///   for another refusal.
    public func revoke(refreshToken: String) async throws(TokenMintError) {
        try checkClientID()
        try checkServer()
        let answer = try await post("/oauth/revoke", [("token", refreshToken), ("token_type_hint", "refresh_token"), ("client_id", clientID)])
        guard answer.status != 200 else { return }
        throw tokenFailure(answer, refreshing: false)
    }

    // MARK: - Configuration

    /// A parsed callback URL.
    struct Callback: Sendable {
        let text: String
        let scheme: String
        let host: String?
        let port: Int?
        let path: String
        /// `http://127.0.0.1` or `http://[::1]`: any port matches (RFC 8252 §7.3).
        let isLoopback: Bool

        /// Whether `url` comes back to this callback.
        func matches(_ url: URL) -> Bool {
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme else { return false }
            guard scheme.lowercased() == self.scheme, Callback.normalHost(components.host) == host,
                components.percentEncodedPath == path
            else { return false }
            return isLoopback || components.port == port
        }

        static func normalHost(_ host: String?) -> String? {
            guard var host = host?.lowercased() else { return nil }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            return host.isEmpty ? nil : host
        }
    }

    /// The callback URL checked: present, absolute with a scheme, without a
    /// fragment, visible ASCII only, at most 512 bytes.
    static func callback(_ text: String?) throws(TokenMintError) -> Callback {
        guard let text, !text.isEmpty else { throw TokenMintError(.auth.callbackURLMissing, "no callback URL is configured") }
        guard text.utf8.count <= 512, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !text.contains("#"),
            let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), !scheme.isEmpty,
            components.fragment == nil
        else {
            throw TokenMintError(.auth.callbackURLInvalid, "the callback URL is not an absolute URL with a scheme and without a fragment")
        }
        let host = Callback.normalHost(components.host)
        let loopback = scheme == "http" && (host == "127.0.0.1" || host == "::1")
        return Callback(text: text, scheme: scheme, host: host, port: components.port, path: components.percentEncodedPath, isLoopback: loopback)
    }

    func checkClientID() throws(TokenMintError) {
        guard (1...128).contains(clientID.utf8.count), clientID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw TokenMintError(.auth.clientIdInvalid, "a client ID is 1 to 128 visible ASCII characters")
        }
    }

    func checkServer() throws(TokenMintError) {
        guard server.hasPrefix("http://") || server.hasPrefix("https://"), server.utf8.count <= 512, !server.contains("?"), !server.contains("#"),
            server.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw TokenMintError(.auth.serverUnreachable, "the server URL is not an http(s) URL without query or fragment") }
    }

    // MARK: - The exchanges

    /// `name=value&…`, every value percent-encoded but RFC 3986's unreserved characters.
    static func formEncoded(_ fields: [(String, String)]) -> String {
        fields.map { $0.0 + "=" + $0.1.addingPercentEncodingForQuery() }.joined(separator: "&")
    }

    /// A form `POST` to the server; the status and the JSON answered.
    func post(_ path: String, _ fields: [(String, String)]) async throws(TokenMintError) -> (status: Int, object: JSONObject) {
        do {
            return try await exchange.send(.POST, server + path, bearer: nil, body: nil, contentType: "application/x-www-form-urlencoded",
                                           rawBody: Array(Self.formEncoded(fields).utf8))
        } catch { throw failure(error) }
    }

    func failure(_ error: JSONExchange.Failure) -> TokenMintError {
        switch error {
        case .transport(let cause): TokenMintError(.auth.serverUnreachable, "no answer from \(server): \(cause)", underlying: cause)
        case .malformed(let status): TokenMintError(.auth.serverUnreachable, "the server's answer (\(status)) is not JSON")
        }
    }

    /// An RFC 6749 §5.2 error answered by the token or revocation endpoint.
    func tokenFailure(_ answer: (status: Int, object: JSONObject), refreshing: Bool) -> TokenMintError {
        let error = answer.object["error"]?.stringValue.map { String($0.prefix(64)) } ?? "status \(answer.status)"
        let description = String((answer.object["error_description"]?.stringValue ?? "").prefix(200))
        if answer.status >= 500 { return TokenMintError(.auth.serverUnreachable, "the server failed (\(answer.status)): \(description)") }
        switch error {
        case "invalid_client", "unauthorized_client":
            return TokenMintError(.auth.clientIdInvalid, "the server refuses the client ID: \(error): \(description)")
        case "invalid_grant" where refreshing:
            return TokenMintError(.auth.refreshTokenInvalid, "the server refuses the refresh token: \(description)")
        default:
            return TokenMintError(.auth.authorizationDenied, "the server refuses: \(error): \(description)")
        }
    }

    /// Shows the authorization request to the server before the browser
    /// gets it: an unknown client or an unregistered callback is refused
    /// here (the server answers JSON when asked for it), a valid request
    /// gets the sign-in page, which is not read.
    func preflight(_ address: String) async throws(TokenMintError) {
        var request = HTTPClientRequest(url: address)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/json")
        let response: HTTPClientResponse
        do { response = try await client.execute(request, timeout: requestTimeout) } catch {
            throw TokenMintError(.auth.serverUnreachable, "no answer from \(server): \(error)", underlying: error)
        }
        // The server's own answer is the first of the history; a redirect
        // to the callback may have been followed after it.
        let head = response.history.first?.responseHead
        let status = Int(head?.status.code ?? response.status.code)
        let headers = head?.headers ?? response.headers
        let followed = response.history.count > 1
        let body = (try? await response.body.collect(upTo: 1 << 16)).map { Array(buffer: $0) } ?? []
        switch status {
        case 200..<300:
            return
        case 300..<400:
            guard let location = headers.first(name: "Location"), let url = URL(string: location), let fields = Self.queryFields(url) else {
                throw TokenMintError(.auth.serverUnreachable, "the authorization endpoint redirects without an error")
            }
            throw Self.redirectFailure(fields["error"] ?? "a redirect", fields["error_description"])
        case 400..<500:
            var limits = JSONParser.Limits()
            limits.maximumBytes = 1 << 16
            limits.maximumDepth = 4
            let object = followed ? nil : (try? JSONParser.parse(body, limits: limits))?.objectValue
            let error = object?["error"]?.stringValue.map { String($0.prefix(64)) } ?? "status \(status)"
            let description = String((object?["error_description"]?.stringValue ?? "").prefix(200))
            switch error {
            case "invalid_client", "unauthorized_client":
                throw TokenMintError(.auth.clientIdInvalid, "the server does not know the client ID: \(description)")
            case "invalid_request":
                throw TokenMintError(.auth.callbackURLInvalid, "the server refuses the authorization request: \(description)")
            default:
                throw TokenMintError(.auth.authorizationDenied, "the server refuses the authorization request: \(error): \(description)")
            }
        default:
            throw TokenMintError(.auth.serverUnreachable, "the authorization endpoint failed (\(status))")
        }
    }

    /// The error a redirect carries, as the provider's error.
    static func redirectFailure(_ error: String, _ description: String?) -> TokenMintError {
        let name = String(error.prefix(64))
        let text = String((description ?? "").prefix(200))
        switch name {
        case "access_denied": return TokenMintError(.auth.authorizationDenied, "the sign-in was denied: \(text)")
        case "invalid_client", "unauthorized_client": return TokenMintError(.auth.clientIdInvalid, "the server refuses the client: \(name): \(text)")
        case "server_error", "temporarily_unavailable": return TokenMintError(.auth.serverUnreachable, "the server could not sign in: \(name): \(text)")
        default: return TokenMintError(.auth.authorizationDenied, "the server refuses the sign-in: \(name): \(text)")
        }
    }

    /// The code of a redirect, after its state, issuer and error are checked.
    func authorizationCode(from redirect: URL, state: String) throws(TokenMintError) -> String {
        guard let fields = Self.queryFields(redirect) else {
            throw TokenMintError(.auth.redirectMismatch, "the redirect's query is malformed or repeats a parameter")
        }
        guard let returned = fields["state"], ConstantTime.equals(Array(returned.utf8), Array(state.utf8)) else {
            throw TokenMintError(.auth.redirectMismatch, "the redirect's state is not this sign-in's")
        }
        if let iss = fields["iss"], !iss.utf8.elementsEqual(issuer.utf8) {
            throw TokenMintError(.auth.redirectMismatch, "the redirect names another issuer (RFC 9207)")
        }
        if let error = fields["error"] { throw Self.redirectFailure(error, fields["error_description"]) }
        guard let code = fields["code"], (1...1024).contains(code.utf8.count) else {
            throw TokenMintError(.auth.authorizationDenied, "the redirect carries neither a code nor an error")
        }
        return code
    }

    /// The form-decoded query of `url`; nil when it is malformed or repeats a name.
    static func queryFields(_ url: URL) -> [String: String]? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        guard let query = components.percentEncodedQuery, !query.isEmpty else { return [:] }
        guard query.utf8.count <= maximumRedirectBytes else { return nil }
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? { text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = parts.count == 2 ? decode(parts[1]) : "" else { return nil }
            guard fields.updateValue(value, forKey: name) == nil else { return nil }
        }
        return fields
    }

    /// An `OAuthToken` from the token endpoint's answer, its access token
    /// verified with the server's keys.
    func token(from object: JSONObject, previousRefreshToken: String?) async throws(TokenMintError) -> OAuthToken {
        guard let access = object["access_token"]?.stringValue, (1...Self.maximumTokenBytes).contains(access.utf8.count),
            object["token_type"]?.stringValue?.lowercased() == "bearer"
        else { throw TokenMintError(.auth.serverUnreachable, "the token endpoint's answer is not a bearer token") }
        let refreshToken = object["refresh_token"]?.stringValue ?? previousRefreshToken
        if let refreshToken, !(1...Self.maximumTokenBytes).contains(refreshToken.utf8.count) {
            throw TokenMintError(.auth.serverUnreachable, "the token endpoint's refresh token is empty or too long")
        }
        let verified = try await verifiedClaims(access)
        let now = clock()
        let expiresAt: Int64
        if let seconds = object["expires_in"]?.int64Value, seconds > 0 {
            expiresAt = TimeArithmetic.adding(now, seconds)
        } else if let exp = verified.expiration {
            expiresAt = exp
        } else {
            throw TokenMintError(.auth.accessTokenInvalid, "the access token has no lifetime")
        }
        return OAuthToken(accessToken: access, refreshToken: refreshToken, expiresAt: expiresAt, elevated: false, account: verified.subject)
    }

    // MARK: - Verifying access tokens

    /// What the client takes from a verified access token.
    struct AccessClaims: Sendable {
        let subject: String
        let expiration: Int64?
    }

    /// The access token's claims once it verifies with the server's keys
    /// (fetched again once when the cached ones do not verify it: the
    /// server may have rotated its key).
    func verifiedClaims(_ accessToken: String) async throws(TokenMintError) -> AccessClaims {
        let cached: JWKSet? = lock.withLock { keys }
        if let cached, let claims = try? Self.claims(of: accessToken, keys: cached, issuer: issuer, clientID: clientID) { return claims }
        let fresh = try await fetchKeys()
        lock.withLock { keys = fresh }
        return try Self.claims(of: accessToken, keys: fresh, issuer: issuer, clientID: clientID)
    }

    func fetchKeys() async throws(TokenMintError) -> JWKSet {
        let answer: (status: Int, object: JSONObject)
        do { answer = try await exchange.send(.GET, server + "/oauth/jwks", bearer: nil, body: nil) } catch { throw failure(error) }
        guard answer.status == 200 else { throw TokenMintError(.auth.serverUnreachable, "the server's JWKS is not available (\(answer.status))") }
        do { return try JWKSet(json: String(decoding: JSONWriter.encode(.object(answer.object)), as: UTF8.self)) } catch {
            throw TokenMintError(.auth.serverUnreachable, "the server's JWKS is malformed", underlying: error)
        }
    }

    /// The client's checks of an RFC 9068 access token: the signature by a
    /// key of the issuer, `typ` at+jwt, `iss`, `client_id` and `sub`. The
    /// audience and the expiry are the resource server's to check; the
    /// client keeps the lifetime the token endpoint gave.
    static func claims(of accessToken: String, keys: JWKSet, issuer: String, clientID: String) throws(TokenMintError) -> AccessClaims {
        var policy = JWSPolicy()
        policy.allowsUnencodedPayload = false
        let jws: VerifiedJWS
        do { jws = try JWSVerifier(keys: keys, policy: policy).verify(compact: accessToken) } catch {
            throw TokenMintError(.auth.accessTokenInvalid, "the access token does not verify with the server's keys: \(error.code)", underlying: error)
        }
        let claims: JWTClaims
        do {
            guard let object = try JSONParser.parse(jws.payload, limits: policy.claimsLimits).objectValue else {
                throw TokenMintError(.auth.accessTokenInvalid, "the access token's payload is not a JSON object")
            }
            claims = try JWTClaims(object: object)
        } catch { throw TokenMintError.wrap(error, as: .auth.accessTokenInvalid, "the access token's claims are malformed") }
        let type = jws.header.type?.lowercased()
        guard type == "at+jwt" || type == "application/at+jwt" else { throw TokenMintError(.auth.accessTokenInvalid, "the access token's typ is not at+jwt") }
        guard claims.issuer.map({ $0.utf8.elementsEqual(issuer.utf8) }) == true else {
            throw TokenMintError(.auth.accessTokenInvalid, "the access token's iss is not the server's issuer")
        }
        guard claims.clientID.map({ $0.utf8.elementsEqual(clientID.utf8) }) == true else {
            throw TokenMintError(.auth.accessTokenInvalid, "the access token was issued to another client")
        }
        guard let subject = claims.subject, (1...255).contains(subject.utf8.count) else {
            throw TokenMintError(.auth.accessTokenInvalid, "the access token names no account (sub)")
        }
        return AccessClaims(subject: subject, expiration: claims.expiration)
    }
}
#endif
