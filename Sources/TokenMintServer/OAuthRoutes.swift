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
/// issuer, and the token endpoint. Its errors take RFC 6749's shape
/// (`error`, `error_description`) and carry `message` as every route does.
struct OAuthRoutes: Sendable {
    let issuer: LocalTokenIssuer
    let clients: ClientDirectory
    let configuration: ServerConfiguration
    let logger: Logger

    func add(to router: Router<BasicRequestContext>) {
        router.get(".well-known/oauth-authorization-server") { _, _ in metadata() }
        router.get("oauth/jwks") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/jwk-set+json"
            headers[.cacheControl] = "max-age=300"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: issuer.verificationKeys.json)))
        }
        router.post("oauth/token") { request, _ in await token(request) }
    }

    func metadata() -> Response {
        let base = configuration.effectiveIssuer
        return HTTPMessages.json(.ok, JSONObject([
            ("issuer", .string(base)),
            ("token_endpoint", .string(base + "/oauth/token")),
            ("jwks_uri", .string(base + "/oauth/jwks")),
            ("grant_types_supported", .array(["client_credentials"])),
            ("token_endpoint_auth_methods_supported", .array(["client_secret_basic", "client_secret_post"])),
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

    /// `POST /oauth/token`.
    func token(_ request: Request) async -> Response {
        let form: FormBody
        do {
            form = try FormBody(try await HTTPMessages.body(request, limit: 8192, contentType: "application/x-www-form-urlencoded"))
        } catch {
            let status = HTTPMessages.status(for: error.code)
            return Self.failure(status == .badRequest ? .badRequest : status, "invalid_request", error.reason)
        }
        guard let grant = form["grant_type"] else { return Self.failure(.badRequest, "invalid_request", "grant_type is missing") }
        let client: ClientDirectory.Client
        switch authenticateClient(request, form) {
        case .success(let authenticated): client = authenticated
        case .failure(let error): return Self.failure(.unauthorized, "invalid_client", error.reason)
        }
        guard client.grants.contains(grant) else {
            return Self.failure(.badRequest, ClientDirectory.knownGrants.contains(grant) ? "unauthorized_client" : "unsupported_grant_type",
                                "this client may not use the \(grant.prefix(64)) grant")
        }
        switch grant {
        case "client_credentials":
            let requested = form["scope"].map { $0.split(separator: " ").map(String.init) } ?? [DeskAuthenticator.scope]
            guard requested.allSatisfy({ $0 == DeskAuthenticator.scope }) else {
                return Self.failure(.badRequest, "invalid_scope", "a client may ask for \(DeskAuthenticator.scope) only")
            }
            do {
                let token = try await issuer.issueClientToken(clientID: client.id, scopes: [DeskAuthenticator.scope])
                logger.info("token issued", metadata: ["grant": "client_credentials", "client_id": "\(client.id)"])
                return tokenResponse(token, scope: DeskAuthenticator.scope)
            } catch {
                logger.error("token endpoint failed", metadata: ["code": "\(error.code)"])
                return Self.failure(.internalServerError, "server_error", "the server failed")
            }
        default:
            return Self.failure(.badRequest, "unsupported_grant_type", "grant \(grant.prefix(64)) is not supported")
        }
    }

    func tokenResponse(_ token: OAuthToken, scope: String) -> Response {
        var body = JSONObject([("access_token", .string(token.accessToken)), ("token_type", .string("Bearer")),
                               ("expires_in", .number(max(0, token.expiresAt - Int64(Date().timeIntervalSince1970)))),
                               ("scope", .string(scope))])
        if let refresh = token.refreshToken { body.set("refresh_token", .string(refresh)) }
        return HTTPMessages.json(.ok, body, headers: [HTTPField.Name("Pragma")!: "no-cache"])
    }

    /// RFC 6749 §2.3.1: HTTP Basic with the form-encoded ID and secret, or
    /// `client_id` and `client_secret` in the body — one of them, not both.
    func authenticateClient(_ request: Request, _ form: FormBody) -> Result<ClientDirectory.Client, TokenMintError> {
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
        guard let id, let secret else { return .failure(TokenMintError(.server.unauthorized, "no client credentials")) }
        do {
            guard let client = try clients.authenticate(id, secret: SecureBytes(Array(secret.utf8))) else {
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
