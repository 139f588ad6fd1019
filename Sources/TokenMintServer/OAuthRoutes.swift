#if Server
import TokenMintCore
import TokenMintCrypto
import TokenMintAuth
import TokenMintJOSE
import Hummingbird
import HTTPTypes
import Logging
import Foundation

/// The OAuth 2.0 authorization server: RFC 8414 metadata, the JWKS of the
/// issuer, the authorization endpoint (the code flow with PKCE, in
/// `AuthorizationEndpoint.swift`), the token endpoint (authorization code,
/// refresh token, client credentials) and RFC 7009 revocation. Its JSON
/// errors take RFC 6749's shape (`error`, `error_description`) and carry
/// `message` as every route does.
struct OAuthRoutes: Sendable {
    let issuer: LocalTokenIssuer
    /// Checks DPoP proofs (each once, in the replay ledger) and the tokens resource routes receive.
    let tokens: AccessTokenAuthenticator
    let clients: ClientDirectory
    let accounts: AccountDirectory
    let codes: AuthorizationCodes
    /// The passkey sign-in the authorization endpoint offers beside the password.
    let passkeys: PasskeyRoutes
    let configuration: ServerConfiguration
    let clock: @Sendable () -> Int64
    let logger: Logger

    /// The form bodies the OAuth endpoints take, in bytes.
    static let formLimit = 8192

    func add(to router: Router<BasicRequestContext>) {
        router.get(".well-known/oauth-authorization-server") { _, _ in metadata() }
        router.get("oauth/jwks") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/jwk-set+json"
            headers[.cacheControl] = "max-age=300"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: issuer.verificationKeys.json)))
        }
        router.get("oauth/authorize") { request, _ in authorizationPage(request) }
        router.post("oauth/authorize") { request, _ in await signIn(request) }
        router.post("oauth/token") { request, _ in await token(request) }
        router.post("oauth/revoke") { request, _ in await revoke(request) }
    }

    func metadata() -> Response {
        let base = configuration.effectiveIssuer
        return HTTPMessages.json(.ok, JSONObject([
            ("issuer", .string(base)),
            ("authorization_endpoint", .string(base + "/oauth/authorize")),
            ("token_endpoint", .string(base + "/oauth/token")),
            ("revocation_endpoint", .string(base + "/oauth/revoke")),
            ("jwks_uri", .string(base + "/oauth/jwks")),
            ("dpop_signing_alg_values_supported", .array(["ES256", "ES384", "ES512", "EdDSA", "Ed25519", "PS256", "RS256"])),
            ("response_types_supported", .array(["code"])),
            ("response_modes_supported", .array(["query"])),
            ("code_challenge_methods_supported", .array(["S256"])),
            ("grant_types_supported", .array(["authorization_code", "refresh_token", "client_credentials"])),
            ("token_endpoint_auth_methods_supported", .array(["client_secret_basic", "client_secret_post", "none"])),
            ("revocation_endpoint_auth_methods_supported", .array(["client_secret_basic", "client_secret_post", "none"])),
            ("authorization_response_iss_parameter_supported", .bool(true)),
            ("scopes_supported", .array([.string(DeskAuthenticator.scope)])),
        ]))
    }

    /// An RFC 6749 §5.2 error.
    static func failure(_ status: HTTPResponse.Status, _ error: String, _ description: String) -> Response {
        var headers = HTTPFields()
        if status == .unauthorized { headers[.wwwAuthenticate] = "Basic realm=\"tokenmint\"" }
        let text = SafeText.escaped(description)
        return HTTPMessages.json(status, JSONObject([("error", .string(error)), ("error_description", .string(text)), ("message", .string(text))]),
                                 headers: headers)
    }

    /// The form body of a request, or the RFC 6749 error answering it.
    static func form(_ request: Request) async -> Result<FormBody, TokenMintError> {
        do {
            return .success(try FormBody(try await HTTPMessages.body(request, limit: formLimit, contentType: "application/x-www-form-urlencoded")))
        } catch {
            return .failure(error)
        }
    }

    /// `POST /oauth/token`.
    func token(_ request: Request) async -> Response {
        let form: FormBody
        switch await Self.form(request) {
        case .success(let body): form = body
        case .failure(let error): return Self.failure(HTTPMessages.status(for: error.code), "invalid_request", error.reason)
        }
        guard let grant = form["grant_type"] else { return Self.failure(.badRequest, "invalid_request", "grant_type is missing") }
        let client: ClientDirectory.Client
        switch await authenticateClient(request, form) {
        case .success(let authenticated): client = authenticated
        case .failure(let error) where error.code == .server.tooManyRequests:
            return Self.failure(.tooManyRequests, "temporarily_unavailable", error.reason)
        case .failure(let error): return Self.failure(.unauthorized, "invalid_client", error.reason)
        }
        guard client.grants.contains(grant) else {
            return Self.failure(.badRequest, ClientDirectory.knownGrants.contains(grant) ? "unauthorized_client" : "unsupported_grant_type",
                                "this client may not use the \(grant.prefix(64)) grant")
        }
        // RFC 9449 §5: a proof at the token endpoint binds what is issued to its key.
        var dpop: String? = nil
        if request.headers[HTTPField.Name("DPoP")!] != nil {
            do {
                let proof = try AccessTokenAuthenticator.proof(request)
                dpop = try await tokens.dpopVerifier().verify(
                    proof, method: "POST", url: configuration.effectiveIssuer + "/oauth/token", replay: tokens.replay).thumbprint
            } catch {
                logger.info("DPoP proof refused", metadata: ["client_id": "\(client.id)", "code": "\(error.code)"])
                return Self.failure(.badRequest, "invalid_dpop_proof", error.reason)
            }
        }
        switch grant {
        case "client_credentials":
            let requested = form["scope"].map { $0.split(separator: " ").map(String.init) } ?? [DeskAuthenticator.scope]
            guard requested.allSatisfy({ $0 == DeskAuthenticator.scope }) else {
                return Self.failure(.badRequest, "invalid_scope", "a client may ask for \(DeskAuthenticator.scope) only")
            }
            do {
                let token = try await issuer.issueClientToken(clientID: client.id, scopes: [DeskAuthenticator.scope], dpopThumbprint: dpop)
                logger.info("token issued", metadata: ["grant": "client_credentials", "client_id": "\(client.id)", "dpop": "\(dpop != nil)"])
                return tokenResponse(token, scope: DeskAuthenticator.scope, dpop: dpop != nil)
            } catch {
                logger.error("token endpoint failed", metadata: ["code": "\(error.code)"])
                return Self.failure(.internalServerError, "server_error", "the server failed")
            }
        case "authorization_code":
            return await codeGrant(form, client, dpop: dpop)
        case "refresh_token":
            return await refreshGrant(form, client, dpop: dpop)
        default:
            return Self.failure(.badRequest, "unsupported_grant_type", "grant \(grant.prefix(64)) is not supported")
        }
    }

    /// RFC 6749 §4.1.3 with RFC 7636 §4.6: the code is taken (so a second
    /// use finds it gone), then checked against the client, the redirect URI
    /// and the PKCE verifier.
    func codeGrant(_ form: FormBody, _ client: ClientDirectory.Client, dpop: String?) async -> Response {
        guard let code = form["code"], let redirectURI = form["redirect_uri"], let verifier = form["code_verifier"] else {
            return Self.failure(.badRequest, "invalid_request", "code, redirect_uri and code_verifier are required")
        }
        guard (43...128).contains(verifier.utf8.count), verifier.utf8.allSatisfy(Self.isUnreserved) else {
            return Self.failure(.badRequest, "invalid_request", "code_verifier is 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
        }
        let grant: AuthorizationCodes.Grant?
        do { grant = try codes.redeem(code, now: clock()) } catch {
            logger.error("token endpoint failed", metadata: ["code": "\(error.code)"])
            return Self.failure(.internalServerError, "server_error", "the server failed")
        }
        guard let grant else { return Self.failure(.badRequest, "invalid_grant", "the code is unknown, used or expired") }
        guard Self.same(grant.clientID, client.id), Self.same(grant.redirectURI, redirectURI) else {
            logger.info("code refused", metadata: ["client_id": "\(client.id)", "reason": "another client or redirect URI"])
            return Self.failure(.badRequest, "invalid_grant", "the code was issued to another client or redirect URI")
        }
        let computed = Array(Base64URL.encode(HashFunction.sha256.hash(Array(verifier.utf8))).utf8)
        guard ConstantTime.equals(computed, Array(grant.challenge.utf8)) else {
            logger.info("code refused", metadata: ["client_id": "\(client.id)", "reason": "PKCE verifier mismatch"])
            return Self.failure(.badRequest, "invalid_grant", "code_verifier does not match the code_challenge")
        }
        do {
            let token = try await issuer.issue(account: grant.username, clientID: client.id, scopes: grant.scopes, dpopThumbprint: dpop,
                                               bindsRefreshToken: !client.isConfidential)
            logger.info("token issued", metadata: ["grant": "authorization_code", "client_id": "\(client.id)", "account": "\(grant.username)",
                                                   "dpop": "\(dpop != nil)"])
            return tokenResponse(token, scope: grant.scopes.joined(separator: " "), refresh: client.grants.contains("refresh_token"), dpop: dpop != nil)
        } catch {
            logger.error("token endpoint failed", metadata: ["code": "\(error.code)"])
            return Self.failure(.internalServerError, "server_error", "the server failed")
        }
    }

    /// RFC 6749 §6: the refresh token is rotated (single use; presenting a
    /// spent one revokes its family). The scope stays the one granted; a
    /// `scope` parameter is not used to narrow it.
    func refreshGrant(_ form: FormBody, _ client: ClientDirectory.Client, dpop: String?) async -> Response {
        guard let presented = form["refresh_token"], presented.utf8.count <= 512 else {
            return Self.failure(.badRequest, "invalid_request", "refresh_token is missing")
        }
        do {
            let token = try await issuer.refresh(presented, clientID: client.id, dpopThumbprint: dpop, bindsRefreshToken: !client.isConfidential)
            let scopes = (try? await issuer.verify(token.accessToken))?.claims.scopes ?? []
            logger.info("token refreshed", metadata: ["client_id": "\(client.id)", "account": "\(token.account)", "dpop": "\(dpop != nil)"])
            return tokenResponse(token, scope: scopes.joined(separator: " "), refresh: true, dpop: dpop != nil)
        } catch {
            guard error.code == .auth.refreshTokenInvalid || error.code == .auth.refreshTokenReused else {
                logger.error("token endpoint failed", metadata: ["code": "\(error.code)"])
                return Self.failure(.internalServerError, "server_error", "the server failed")
            }
            return Self.failure(.badRequest, "invalid_grant", error.reason)
        }
    }

    /// `POST /oauth/revoke` (RFC 7009): revoking a refresh token revokes its
    /// whole family. Access tokens are short-lived signed JWTs and are not
    /// revocable; presenting one, an unknown token or another client's token
    /// changes nothing. A well-formed request from an authenticated client
    /// is answered 200 with an empty body whatever the token was (§2.2).
    func revoke(_ request: Request) async -> Response {
        let form: FormBody
        switch await Self.form(request) {
        case .success(let body): form = body
        case .failure(let error): return Self.failure(HTTPMessages.status(for: error.code), "invalid_request", error.reason)
        }
        let client: ClientDirectory.Client
        switch await authenticateClient(request, form) {
        case .success(let authenticated): client = authenticated
        case .failure(let error) where error.code == .server.tooManyRequests:
            return Self.failure(.tooManyRequests, "temporarily_unavailable", error.reason)
        case .failure(let error): return Self.failure(.unauthorized, "invalid_client", error.reason)
        }
        guard let token = form["token"], token.utf8.count <= 4096 else { return Self.failure(.badRequest, "invalid_request", "token is missing") }
        do { try await issuer.revoke(refreshToken: token, clientID: client.id) } catch {
            logger.error("revocation failed", metadata: ["code": "\(error.code)"])
            return Self.failure(.internalServerError, "server_error", "the server failed")
        }
        return Response(status: .ok, headers: [.cacheControl: "no-store"])
    }

    /// The token response; `token_type` is DPoP for a token bound to a proof's key (RFC 9449 §5).
    func tokenResponse(_ token: OAuthToken, scope: String, refresh: Bool = false, dpop: Bool = false) -> Response {
        var body = JSONObject([("access_token", .string(token.accessToken)), ("token_type", .string(dpop ? "DPoP" : "Bearer")),
                               ("expires_in", .number(max(0, token.expiresAt - Int64(Date().timeIntervalSince1970))))])
        if !scope.isEmpty { body.set("scope", .string(scope)) }
        if refresh, let refreshToken = token.refreshToken { body.set("refresh_token", .string(refreshToken)) }
        return HTTPMessages.json(.ok, body, headers: [HTTPField.Name("Pragma")!: "no-cache"])
    }

    /// Byte-for-byte equality (`==` on strings compares canonical equivalents equal).
    static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// RFC 3986 unreserved: `A-Z a-z 0-9 - . _ ~` (the PKCE verifier's alphabet).
    static func isUnreserved(_ byte: UInt8) -> Bool { PercentEncoding.isUnreserved(byte) }

    /// RFC 6749 §2.3.1: HTTP Basic with the form-encoded ID and secret, or
    /// `client_id` and `client_secret` in the body — one of them, not both.
    /// A public client (§2.1, registered without a secret) names itself with
    /// `client_id` alone; a confidential client must authenticate.
    func authenticateClient(_ request: Request, _ form: FormBody) async -> Result<ClientDirectory.Client, TokenMintError> {
        var id = form["client_id"]
        var secret = form["client_secret"]
        if let header = request.headers[.authorization] {
            guard secret == nil, header.lowercased().hasPrefix("basic "),
                let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
                case let decoded = [UInt8](data),
                let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
                let user = FormBody.decode(decoded[..<colon]), let password = FormBody.decode(decoded[(colon + 1)...])
            else { return .failure(TokenMintError(.server.unauthorized, "the Authorization header is not client_secret_basic")) }
            if let id, id != user { return .failure(TokenMintError(.server.unauthorized, "two client IDs")) }
            id = user
            secret = password
        }
        guard let id else { return .failure(TokenMintError(.server.unauthorized, "no client credentials")) }
        guard let secret else {
            do {
                guard id.utf8.count <= 128, let client = try clients.client(id), !client.isConfidential else {
                    logger.info("client refused", metadata: ["client_id": "\(SafeText.escaped(id.prefix(64)))"])
                    return .failure(TokenMintError(.server.unauthorized, "unknown client, or a confidential client without its secret"))
                }
                return .success(client)
            } catch {
                return .failure(error)
            }
        }
        do {
            let (clients, presented) = (self.clients, SecureBytes(Array(secret.utf8)))
            let found = try await PasswordWork.run { () throws(TokenMintError) -> ClientDirectory.Client? in try clients.authenticate(id, secret: presented) }
            guard let client = found else {
                logger.info("client refused", metadata: ["client_id": "\(SafeText.escaped(id.prefix(64)))"])
                return .failure(TokenMintError(.server.unauthorized, "unknown client or wrong secret"))
            }
            return .success(client)
        } catch {
            return .failure(error)
        }
    }
}

/// An `application/x-www-form-urlencoded` body: each name at most once.
struct FormBody: Sendable {
    private var fields: [String: String] = [:]

    init(_ bytes: [UInt8]) throws(TokenMintError) {
        guard !bytes.isEmpty else { return }
        for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let name = Self.decode(parts[0]), let value = Self.decode(parts[1]) else {
                throw TokenMintError(.server.badRequest, "the form body is malformed")
            }
            guard fields.count < 32 else { throw TokenMintError(.server.badRequest, "too many form fields") }
            guard fields.updateValue(value, forKey: name) == nil else {
                throw TokenMintError(.server.badRequest, "\(name.prefix(64)) appears twice")
            }
        }
    }

    subscript(name: String) -> String? { fields[name].flatMap { $0.isEmpty ? nil : $0 } }

    /// Percent-decoding with `+` as a space; nil for a bad escape or bad UTF-8.
    static func decode(_ bytes: some Collection<UInt8>) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): output.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                output.append(high << 4 | low)
            default: output.append(byte)
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }
}
#endif
