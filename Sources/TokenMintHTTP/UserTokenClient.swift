#if HTTPClient
public import TokenMintCore
public import TokenMintCrypto
public import TokenMintAuth
public import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// A partner backend's side of the user-token exchange (IFTTT's service
/// API shape): it presents its service key and a user's access token at
/// `POST /v2/user_token` and gets back a user token scoped to that user.
///
/// The service key stays in `SecureBytes` but for the request itself: the
/// `IFTTT-Service-Key` header is a `String` built from it for each call, a
/// short-lived copy in ordinary memory that HTTP needs. Call this from a
/// backend, never from an app: the service key speaks for every user.
public struct UserTokenClient: Sendable {
    /// The server's base URL.
    public let baseURL: String
    let serviceKey: SecureBytes
    let exchange: JSONExchange

    /// The longest user token accepted from the server, in bytes.
    static let maximumUserToken = 1024

    /// A client of the exchange at `baseURL`.
    /// - Throws: `auth.serverUnreachable` for a URL that is not http(s) or
    ///   has a query; `auth.serviceKeyInvalid` for a key that is not 32 to 256
    ///   visible ASCII characters (it travels in an HTTP header).
    public init(baseURL: String, serviceKey: SecureBytes, client: HTTPClient = .tokenMint, timeout: Duration = .seconds(10)) throws(TokenMintError) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        guard base.hasPrefix("http://") || base.hasPrefix("https://"), base.utf8.count <= 512, !base.contains("?"), !base.contains("#") else {
            throw TokenMintError(.auth.serverUnreachable, "the server URL is an http(s) URL without a query")
        }
        let visible = serviceKey.withUnsafeBytes { bytes in bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F } }
        guard (32...256).contains(serviceKey.count), visible else {
            throw TokenMintError(.auth.serviceKeyInvalid, "a service key is 32 to 256 visible ASCII characters")
        }
        self.baseURL = base
        self.serviceKey = serviceKey
        self.exchange = JSONExchange(client: client, timeout: JSONExchange.timeAmount(timeout))
    }

    /// Exchanges `accessToken`, an access token the server's OAuth issuer
    /// gave for `userID`, for a user token.
    /// - Throws: `auth.serviceKeyInvalid` when the server refuses the
    ///   service key; `auth.accessTokenInvalid` when the access token does
    ///   not verify or is another user's (or the user ID is not 1 to 128
    ///   bytes); `auth.serverUnreachable` when no usable answer comes (no
    ///   connection, a timeout, a 5xx, an answer that is not JSON);
    ///   `auth.internalFailure` when the server refuses for another reason
    ///   (no exchange configured, a bad request) or answers 200 without a
    ///   user token: the reason says which.
    public func userToken(userID: String, accessToken: String) async throws(TokenMintError) -> UserToken {
        guard (1...128).contains(userID.utf8.count) else { throw TokenMintError(.auth.accessTokenInvalid, "a user ID is 1 to 128 bytes") }
        guard !accessToken.isEmpty else { throw TokenMintError(.auth.accessTokenInvalid, "the access token is empty") }
        let body = JSONObject([("user_id", .string(userID)), ("access_token", .string(accessToken))])
        // The header value is a short-lived copy of the key (see the type's documentation).
        let header = serviceKey.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let answer: (status: Int, object: JSONObject)
        do {
            answer = try await exchange.send(.POST, baseURL + "/v2/user_token", bearer: nil, body: body, extraHeaders: [("IFTTT-Service-Key", header)])
        } catch {
            switch error {
            case .transport(let cause):
                throw TokenMintError(.auth.serverUnreachable, "no answer from the user-token exchange at \(baseURL): \(cause)", underlying: cause)
            case .malformed(let status):
                throw TokenMintError(.auth.serverUnreachable, "the user-token exchange's answer (\(status)) is not JSON")
            }
        }
        if answer.status == 200 {
            guard answer.object["type"]?.stringValue == "user_token", let token = answer.object["user_token"]?.stringValue,
                (1...Self.maximumUserToken).contains(token.utf8.count)
            else { throw TokenMintError(.auth.internalFailure, "the user-token exchange answered 200 without a user token") }
            return UserToken(token)
        }
        let code = answer.object["error"]?.stringValue
        let message = answer.object["message"]?.stringValue ?? ""
        switch (answer.status, code) {
        case (401, "serviceKeyInvalid"?):
            throw TokenMintError(.auth.serviceKeyInvalid, "the server refused the service key: \(message)")
        case (401, "accessTokenInvalid"?):
            throw TokenMintError(.auth.accessTokenInvalid, "the server refused the access token: \(message)")
        case (500..., _):
            throw TokenMintError(.auth.serverUnreachable, "the user-token exchange failed (\(answer.status)): \(message)")
        case (404, _):
            throw TokenMintError(.auth.internalFailure, "the server has no user-token exchange (404): \(message)")
        default:
            throw TokenMintError(.auth.internalFailure, "the user-token exchange refused (\(answer.status) \(code ?? "no error code")): \(message)")
        }
    }
}
#endif
