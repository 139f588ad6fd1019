#if Server
import TokenMintCore
import TokenMintCrypto
import TokenMintAuth
import Hummingbird
import HTTPTypes
import Logging

/// The authorization endpoint (RFC 6749 §4.1 with PKCE, RFC 7636, S256 only,
/// as RFC 9700 asks): `GET /oauth/authorize` checks the request and shows a
/// sign-in form, `POST /oauth/authorize` checks it again with the username
/// and password, or a passkey's assertion, and sends the browser back to
/// the client with a code.
///
/// No state is kept between the two: the form carries the request's
/// parameters and posts them back with the credentials. A request whose
/// client or redirect URI is wrong is refused to the user (400), never
/// redirected (§4.1.2.1); any other error goes back to the redirect URI.
extension OAuthRoutes {
    /// An authorization request whose every parameter checked out.
    struct AuthorizationRequest: Sendable {
        let client: ClientDirectory.Client
        /// As the request gave it (a registered loopback URI may differ in its port).
        let redirectURI: String
        let challenge: String
        let state: String?
        let scopes: [String]
    }

    /// What to do with an authorization request.
    enum AuthorizationCheck: Sendable {
        case valid(AuthorizationRequest)
        /// Shown to the user: status, OAuth error code, description.
        case refused(HTTPResponse.Status, String, String)
        /// Sent back to the client: the redirect URI and its parameters.
        case redirect(String, [(String, String?)])
    }

    /// The longest query taken at `GET /oauth/authorize`, in bytes.
    static let queryLimit = 4096

    /// `GET /oauth/authorize`: the sign-in form for a valid request.
    func authorizationPage(_ request: Request) -> Response {
        let query = request.uri.query ?? ""
        guard query.utf8.count <= Self.queryLimit, let form = try? FormBody(Array(query.utf8)) else {
            return errorPage(request, .badRequest, "invalid_request", "the query is malformed, longer than \(Self.queryLimit) bytes, or repeats a parameter")
        }
        switch check(form) {
        case .refused(let status, let error, let description): return errorPage(request, status, error, description)
        case .redirect(let uri, let parameters): return Self.redirect(uri, parameters)
        case .valid(let authorization): return signInPage(authorization, status: .ok)
        }
    }

    /// `POST /oauth/authorize`: the request again, with the credentials.
    func signIn(_ request: Request) async -> Response {
        let form: FormBody
        switch await Self.form(request) {
        case .success(let body): form = body
        case .failure(let error): return errorPage(request, HTTPMessages.status(for: error.code), "invalid_request", error.reason)
        }
        let authorization: AuthorizationRequest
        switch check(form) {
        case .refused(let status, let error, let description): return errorPage(request, status, error, description)
        case .redirect(let uri, let parameters): return Self.redirect(uri, parameters)
        case .valid(let valid): authorization = valid
        }
        if let passkey = form["passkey"], !passkey.isEmpty {
            return await passkeySignIn(request, authorization, passkey: passkey)
        }
        guard let username = form["username"], let password = form["password"] else {
            return signInPage(authorization, status: .unauthorized, message: "Enter your username and password.", username: form["username"])
        }
        let signedIn: Bool
        let accounts = self.accounts
        let secret = SecureBytes(Array(password.utf8))
        do { signedIn = try await PasswordWork.run { () throws(TokenMintError) -> Bool in try accounts.authenticate(username: username, password: secret) } } catch {
            if error.code == .server.tooManyRequests {
                return signInPage(authorization, status: .tooManyRequests, message: "Too many sign-in attempts right now; try again shortly.", username: username)
            }
            logger.error("sign-in failed", metadata: ["code": "\(error.code)"])
            return errorPage(request, .internalServerError, "server_error", "the server failed")
        }
        guard signedIn else {
            logger.info("sign-in refused", metadata: ["client_id": "\(authorization.client.id)", "username": "\(SafeText.escaped(username.prefix(64)))"])
            return signInPage(authorization, status: .unauthorized, message: "The username or password is wrong.", username: username)
        }
        return codeRedirect(request, authorization, username: username)
    }

    /// The redirect back to the client with a code for `username`, who has signed in.
    func codeRedirect(_ request: Request, _ authorization: AuthorizationRequest, username: String) -> Response {
        let code: String
        do {
            code = try codes.issue(clientID: authorization.client.id, redirectURI: authorization.redirectURI, username: username,
                                   challenge: authorization.challenge, scopes: authorization.scopes, now: clock())
        } catch {
            logger.error("authorization code not stored", metadata: ["code": "\(error.code)"])
            return errorPage(request, .internalServerError, "server_error", "the server failed")
        }
        logger.info("authorization code issued", metadata: ["client_id": "\(authorization.client.id)", "account": "\(username)"])
        return Self.redirect(authorization.redirectURI, [("code", code), ("state", authorization.state), ("iss", configuration.effectiveIssuer)])
    }

    /// A sign-in with a passkey: the form's `passkey` field carries the
    /// assertion (`PublicKeyCredential.toJSON()`) over a challenge from
    /// `POST /webauthn/authentication/options`.
    func passkeySignIn(_ request: Request, _ authorization: AuthorizationRequest, passkey: String) async -> Response {
        let signIn: PasskeySignIn
        do throws(TokenMintError) {
            guard let credential = try? HTTPMessages.object(Array(passkey.utf8), limit: Self.formLimit) else {
                throw TokenMintError(.server.badRequest, "the passkey field is not a JSON object")
            }
            signIn = try await passkeys.verifySignIn(JSONObject([("credential", .object(credential))]))
        } catch {
            if HTTPMessages.status(for: error.code) == .internalServerError {
                logger.error("passkey sign-in failed", metadata: ["code": "\(error.code)"])
                return errorPage(request, .internalServerError, "server_error", "the server failed")
            }
            logger.info("passkey sign-in refused", metadata: ["client_id": "\(authorization.client.id)", "code": "\(error.code)"])
            return signInPage(authorization, status: .unauthorized, message: "The passkey sign-in did not verify (\(error.code.name)).")
        }
        return codeRedirect(request, authorization, username: signIn.account)
    }

    /// Checks an authorization request: first the client and the redirect
    /// URI (refused to the user), then the rest (sent back to the client).
    func check(_ form: FormBody) -> AuthorizationCheck {
        guard let id = form["client_id"], id.utf8.count <= 128 else { return .refused(.badRequest, "invalid_request", "client_id is missing") }
        let found: ClientDirectory.Client?
        do { found = try clients.client(id) } catch {
            logger.error("authorization endpoint failed", metadata: ["code": "\(error.code)"])
            return .refused(.internalServerError, "server_error", "the server failed")
        }
        guard let client = found else { return .refused(.badRequest, "invalid_client", "unknown client") }
        guard let redirectURI = form["redirect_uri"] else { return .refused(.badRequest, "invalid_request", "redirect_uri is missing") }
        guard redirectURI.utf8.count <= 512, client.redirectURIs.contains(where: { Self.redirectMatches(redirectURI, registered: $0) }) else {
            logger.info("redirect URI refused", metadata: ["client_id": "\(client.id)", "redirect_uri": "\(SafeText.escaped(redirectURI.prefix(128)))"])
            return .refused(.badRequest, "invalid_request", "redirect_uri is not registered for this client")
        }
        // From here on the redirect URI is trusted: errors go back to it.
        let state = form["state"]
        guard state.map({ text in text.utf8.count <= 512 && text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) }) ?? true else {
            return .redirect(redirectURI, [("error", "invalid_request"), ("error_description", "state is at most 512 printable ASCII characters"),
                                           ("iss", configuration.effectiveIssuer)])
        }
        func fail(_ error: String, _ description: String) -> AuthorizationCheck {
            .redirect(redirectURI, [("error", error), ("error_description", description), ("state", state), ("iss", configuration.effectiveIssuer)])
        }
        guard let responseType = form["response_type"] else { return fail("invalid_request", "response_type is missing") }
        guard responseType == "code" else { return fail("unsupported_response_type", "only response_type=code is supported") }
        guard client.grants.contains("authorization_code") else { return fail("unauthorized_client", "this client may not use the code flow") }
        guard let challenge = form["code_challenge"] else { return fail("invalid_request", "PKCE is required: code_challenge and code_challenge_method=S256") }
        guard form["code_challenge_method"] == "S256" else { return fail("invalid_request", "code_challenge_method must be S256") }
        guard (43...128).contains(challenge.utf8.count), challenge.utf8.allSatisfy(Self.isBase64URL) else {
            return fail("invalid_request", "code_challenge is 43 to 128 base64url characters")
        }
        let scopes = form["scope"].map { $0.split(separator: " ", omittingEmptySubsequences: false).map(String.init) } ?? []
        guard scopes.count <= 16, scopes.allSatisfy({ (1...64).contains($0.utf8.count) && $0.utf8.allSatisfy(Self.isScopeCharacter) }) else {
            return fail("invalid_scope", "scope is at most 16 space-separated scope tokens")
        }
        // The desk scope goes with the client-credentials grant only: an
        // account's token must never pass for a desk's.
        guard !scopes.contains(DeskAuthenticator.scope) else { return fail("invalid_scope", "\(DeskAuthenticator.scope) is for cash desks only") }
        // The elevated scope comes from a FIDO2 step-up only, never from a sign-in.
        guard !scopes.contains("elevated") else { return fail("invalid_scope", "elevated is given by a FIDO2 step-up only") }
        return .valid(AuthorizationRequest(client: client, redirectURI: redirectURI, challenge: challenge, state: state, scopes: scopes))
    }

    /// Whether a requested redirect URI matches a registered one: byte for
    /// byte, or, for a registered loopback URI (`http://127.0.0.1` or
    /// `http://[::1]`), byte for byte but for the port (RFC 8252 §7.3).
    static func redirectMatches(_ requested: String, registered: String) -> Bool {
        if same(requested, registered) { return true }
        guard let requested = withoutLoopbackPort(requested), let registered = withoutLoopbackPort(registered) else { return false }
        return requested == registered
    }

    /// A loopback URI's bytes without its port; nil for any other URI.
    static func withoutLoopbackPort(_ uri: String) -> [UInt8]? {
        let bytes = Array(uri.utf8)
        for host in ["http://127.0.0.1", "http://[::1]"] {
            let prefix = Array(host.utf8)
            guard bytes.starts(with: prefix) else { continue }
            var rest = bytes[prefix.count...]
            if rest.first == UInt8(ascii: ":") {
                let digits = rest.dropFirst().prefix { (0x30...0x39).contains($0) }
                guard (1...5).contains(digits.count), let port = Int(String(decoding: digits, as: UTF8.self)), port <= 65535 else { return nil }
                rest = rest.dropFirst(1 + digits.count)
            }
            guard rest.isEmpty || rest.first == UInt8(ascii: "/") || rest.first == UInt8(ascii: "?") else { return nil }
            return prefix + rest
        }
        return nil
    }

    /// The base64url alphabet (a PKCE challenge).
    static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x5F: true
        default: false
        }
    }

    /// RFC 6749 §A.4 NQCHAR: `%x21 / %x23-5B / %x5D-7E`.
    static func isScopeCharacter(_ byte: UInt8) -> Bool { byte == 0x21 || (0x23...0x5B).contains(byte) || (0x5D...0x7E).contains(byte) }

    /// `303 See Other` to `uri` with `parameters` (those with a value)
    /// form-encoded into its query (after `&` when it has one already).
    static func redirect(_ uri: String, _ parameters: [(String, String?)]) -> Response {
        let query = parameters.compactMap { name, value in value.map { name + "=" + formEncode($0) } }.joined(separator: "&")
        let separator = !uri.contains("?") ? "?" : (uri.hasSuffix("?") || uri.hasSuffix("&") ? "" : "&")
        var headers = HTTPFields()
        headers[.location] = uri + separator + query
        headers[.cacheControl] = "no-store"
        headers[HTTPMessages.referrerPolicy] = "no-referrer"
        return Response(status: .seeOther, headers: headers)
    }

    /// Percent-encoding of everything but RFC 3986's unreserved characters
    /// (valid in a form-encoded query, whatever the reader).
    static func formEncode(_ text: String) -> String { PercentEncoding.encode(text) }

    /// An HTML page with the headers every page of this endpoint carries.
    static func page(_ status: HTTPResponse.Status, title: String, body: String, headers extra: HTTPFields = [:]) -> Response {
        var headers = HTTPMessages.browserHeaders(contentType: "text/html; charset=utf-8")
        for field in extra { headers[field.name] = field.value }
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTMLText.escape(title))</title>
            <script type="module" src="/passkeys/passkeys.js"></script>
            <style>body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;line-height:1.4}\
            label,input,button{display:block;width:100%;box-sizing:border-box}input{margin:.25rem 0 1rem;padding:.5rem}\
            button{padding:.6rem}.error{color:#b00020}code{word-break:break-all}</style></head>
            <body>
            \(body)
            </body></html>

            """
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// The sign-in form: the request's parameters in hidden fields, posted
    /// back to this endpoint with the username and password.
    func signInPage(_ authorization: AuthorizationRequest, status: HTTPResponse.Status, message: String? = nil, username: String? = nil) -> Response {
        let hidden: [(String, String?)] = [
            ("response_type", "code"), ("client_id", authorization.client.id), ("redirect_uri", authorization.redirectURI),
            ("code_challenge", authorization.challenge), ("code_challenge_method", "S256"), ("state", authorization.state),
            ("scope", authorization.scopes.isEmpty ? nil : authorization.scopes.joined(separator: " ")),
        ]
        let fields = hidden.compactMap { name, value in
            value.map { "<input type=\"hidden\" name=\"\(name)\" value=\"\(HTMLText.escape($0))\">" }
        }.joined(separator: "\n")
        let scope = authorization.scopes.isEmpty ? "" : " (scope <code>" + HTMLText.escape(authorization.scopes.joined(separator: " ")) + "</code>)"
        let alert = message.map { "<p class=\"error\" role=\"alert\">" + HTMLText.escape($0) + "</p>" } ?? ""
        let prefill = HTMLText.escape(username.map { $0.prefix(64) } ?? "")
        let body = """
            <h1>Sign in</h1>
            <p><code>\(HTMLText.escape(authorization.client.id))</code> asks to use your account\(scope).</p>
            \(alert)
            <form method="post" action="authorize" id="authorize">
            \(fields)
            <input type="hidden" name="passkey" value="">
            <label for="username">Username</label>
            <input id="username" name="username" autocomplete="username" required maxlength="64" value="\(prefill)">
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024">
            <button type="submit">Sign in</button>
            <p><button type="button" id="passkey-sign-in" hidden>Sign in with a passkey</button></p>
            <p class="error" id="passkey-error" role="alert"></p>
            </form>
            """
        var headers: HTTPFields = [:]
        if status == .unauthorized { headers[.wwwAuthenticate] = "Form realm=\"tokenmint\"" }
        return Self.page(status, title: "Sign in", body: body, headers: headers)
    }

    /// An error shown to the user, never redirected: an HTML page, or the
    /// RFC 6749 JSON error for a client that accepts JSON and not HTML.
    func errorPage(_ request: Request, _ status: HTTPResponse.Status, _ error: String, _ description: String) -> Response {
        let accept = request.headers[.accept]?.lowercased() ?? ""
        if accept.contains("application/json"), !accept.contains("text/html") { return Self.failure(status, error, description) }
        let body = """
            <h1>This request cannot be completed</h1>
            <p class="error" role="alert">\(HTMLText.escape(description))</p>
            <p>Error: <code>\(HTMLText.escape(error))</code>. Go back to the application and try again.</p>
            """
        return Self.page(status, title: "Error", body: body)
    }
}

#endif
