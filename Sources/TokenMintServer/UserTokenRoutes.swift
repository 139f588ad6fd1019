#if Server
import TokenMintCore
import TokenMintCrypto
import TokenMintStore
import TokenMintAuth
import TokenMintJOSE
import Hummingbird
import HTTPTypes
import Logging
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// IFTTT's user-token exchange in the shape of its service API: a partner
/// backend presents the service key in the `IFTTT-Service-Key` header and
/// a JSON body `{"user_id": …, "access_token": …}`, where the access token
/// is one this server's OAuth issuer gave for that user; the answer is
/// `{"type": "user_token", "user_token": …}`, an opaque token scoped to the
/// user (stored hashed in the server's store, revocable per user).
///
/// IFTTT's own documentation passes `user_id` and `access_token` as query
/// parameters; they are taken from the body only here, so no token ends up
/// in an access log or a proxy's URL history.
///
/// Without a configured service key (`--service-key-file`) the route
/// answers 404. The key, the access token and the user token are never
/// logged: refusals carry the code and a reason without either.
struct UserTokenRoutes: Sendable {
    /// The exchange, or nil when the server has no service key.
    let exchange: UserTokenExchange?
    let configuration: ServerConfiguration
    let logger: Logger

    /// The header that carries the service key (IFTTT's name).
    static let serviceKeyHeader = HTTPField.Name("IFTTT-Service-Key")!
    /// The longest user ID taken, in bytes (the exchange's own limit).
    static let maximumUserID = 128
    /// The longest access token taken, in bytes.
    static let maximumAccessToken = 4096

    func add(to router: Router<BasicRequestContext>) {
        router.post("v2/user_token") { request, _ in try await userToken(request) }
    }

    /// `POST /v2/user_token`.
    func userToken(_ request: Request) async throws(TokenMintError) -> Response {
        guard let exchange else {
            throw TokenMintError(.server.notFound, "the user-token exchange is not configured on this server (no service key)")
        }
        guard let presented = request.headers[Self.serviceKeyHeader] else {
            throw TokenMintError(.auth.serviceKeyInvalid, "no IFTTT-Service-Key header")
        }
        let body = try await HTTPMessages.object(request, limit: configuration.maximumBodyBytes)
        let userID = try HTTPMessages.string(body, "user_id", maximum: Self.maximumUserID)
        guard userID.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
            throw TokenMintError(.server.badRequest, "user_id has control characters")
        }
        let accessToken = try HTTPMessages.string(body, "access_token", maximum: Self.maximumAccessToken)
        let answer: String
        do {
            // The exchange compares the presented key with its own in constant time.
            answer = try await exchange.exchange(userID: userID, accessToken: accessToken, presentedServiceKey: Array(presented.utf8))
        } catch let error as TokenMintError {
            throw error
        } catch {
            throw TokenMintError(.server.internalFailure, "the user token could not be made", underlying: error)
        }
        let object: JSONObject?
        do { object = try JSONParser.parse(Array(answer.utf8)).objectValue } catch {
            throw TokenMintError(.server.internalFailure, "the exchange's answer is not JSON", underlying: error)
        }
        guard let token = object?["user_token"]?.stringValue else {
            throw TokenMintError(.server.internalFailure, "the exchange's answer holds no user token")
        }
        logger.info("user token issued", metadata: ["user": "\(SafeText.escaped(userID))"])
        return HTTPMessages.json(.ok, JSONObject([("type", .string("user_token")), ("user_token", .string(token))]))
    }

    /// The exchange of a server whose configuration names a service key
    /// (read beforehand with ``serviceKey(at:)``): user tokens go to
    /// `store`, access tokens are verified by `issuer`.
    static func makeExchange(serviceKey: ServiceKey, store: any KeyValueStore, issuer: LocalTokenIssuer) -> UserTokenExchange {
        UserTokenExchange(serviceKey: serviceKey, store: store) { token in try await subject(of: token, issuer: issuer) }
    }

    /// The user an access token of `issuer` is for. A client-credentials
    /// token (a cash desk's: its subject is its own client ID) names no
    /// user and is refused.
    static func subject(of token: String, issuer: LocalTokenIssuer) async throws(TokenMintError) -> String {
        let verified = try await issuer.verify(token)
        guard let subject = verified.claims.subject, !subject.isEmpty else {
            throw TokenMintError(.auth.accessTokenInvalid, "the access token names no user")
        }
        guard verified.claims.clientID != subject, !verified.claims.scopes.contains(DeskAuthenticator.scope) else {
            throw TokenMintError(.auth.accessTokenInvalid, "a client-credentials token names no user")
        }
        // A token bound to a key (RFC 9449) is worth nothing without a proof of
        // that key; the exchange's body carries none, so it never takes one.
        guard verified.claims.additional["cnf"] == nil else {
            throw TokenMintError(.auth.accessTokenInvalid, "a DPoP-bound access token cannot be exchanged for a user token")
        }
        return subject
    }

    /// Reads the service key file straight into secure memory, once, at
    /// start. One trailing line break is dropped.
    /// - Throws: `server.invalidConfiguration` for a file that is missing,
    ///   a symbolic link, not a regular file, readable or writable by group
    ///   or others, or that does not hold 32 to 256 visible ASCII characters
    ///   (the key travels in an HTTP header). The key is never in a message.
    static func serviceKey(at path: String) throws(TokenMintError) -> ServiceKey {
        let name = "--service-key-file \(path)"
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = errno == ELOOP ? "is a symbolic link; the key file must be a regular file" : "cannot be opened: " + String(cString: strerror(errno))
            throw TokenMintError(.server.invalidConfiguration, "\(name) \(reason)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
            throw TokenMintError(.server.invalidConfiguration, "\(name) is not a regular file")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw TokenMintError(.server.invalidConfiguration,
                                 "\(name) may be read or written by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        let size = Int(info.st_size)
        guard (32...258).contains(size) else {
            throw TokenMintError(.server.invalidConfiguration, "\(name) holds \(size) bytes; a service key is 32 to 256 characters")
        }
        let bytes = try SecureBytes(count: size) { (buffer: UnsafeMutableRawBufferPointer) throws(TokenMintError) in
            var done = 0
            while done < size {
                let n = read(fd, buffer.baseAddress! + done, size - done)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw TokenMintError(.server.invalidConfiguration, "\(name) could not be read whole") }
                done += n
            }
        }
        return try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(TokenMintError) -> ServiceKey in
            var end = raw.count
            if end > 0, raw[end - 1] == 0x0A {
                end -= 1
                if end > 0, raw[end - 1] == 0x0D { end -= 1 }
            }
            let key = UnsafeRawBufferPointer(rebasing: raw[0..<end])
            guard (32...256).contains(key.count) else {
                throw TokenMintError(.server.invalidConfiguration, "\(name) holds \(key.count) bytes; a service key is 32 to 256 characters")
            }
            guard key.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw TokenMintError(.server.invalidConfiguration, "\(name): a service key is visible ASCII characters (it travels in an HTTP header)")
            }
            do { return try ServiceKey(key) } catch {
                throw TokenMintError(.server.invalidConfiguration, "\(name) is not a usable service key", underlying: error)
            }
        }
    }
}
#endif
