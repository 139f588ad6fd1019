public import TokenMintCrypto
public import TokenMintStore
import Foundation

/// An OAuth authorization code (IFTTT ConnectSDK). A distinct type, so a code,
/// a user token and a service key cannot be mixed up.
public struct OAuthCode: Sendable, Hashable, Codable {
    /// The code.
    public let value: String
    /// A code.
    public init(_ value: String) { self.value = value }
}

/// A user token: scoped to one user, opaque.
public struct UserToken: Sendable, Hashable, Codable {
    /// The token.
    public let value: String
    /// A token.
    public init(_ value: String) { self.value = value }
}

/// An invite code.
public struct InviteCode: Sendable, Hashable, Codable {
    /// The code.
    public let value: String
    /// A code.
    public init(_ value: String) { self.value = value }
}

/// What a client app provides (IFTTT's credential provider). Client types are
/// `Codable` so that they can be shipped; ``ServiceKey`` is not, so no client
/// type can hold one.
public protocol CredentialProvider: Codable, Sendable {
    /// The OAuth code.
    var oauthCode: OAuthCode { get }
    /// The user token, once exchanged.
    var userToken: UserToken? { get }
    /// An invite code, if any.
    var inviteCode: InviteCode? { get }
}

/// The secret service key. Not `Codable`, not printable, compared in constant
/// time: it lives on the server only.
public struct ServiceKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let bytes: SecureBytes
    /// Wraps the key (at least 32 bytes).
    public init(_ key: some Collection<UInt8>) throws(AuthError) {
        guard key.count >= 32, key.count <= 256 else { throw AuthError(.serviceKeyInvalid, "service keys are 32 to 256 bytes") }
        bytes = SecureBytes(key)
    }
    /// Never shows the key.
    public var description: String { "ServiceKey(redacted)" }
    /// Never shows the key.
    public var debugDescription: String { description }
}

/// The server-side exchange: `(userId, accessToken)` presented with the
/// service key → `{"type":"user_token","user_token":…}`.
///
/// User tokens are opaque random strings stored hashed, not JWTs: revoking a
/// user's tokens then takes effect at once, with no deny-list to carry, and a
/// leaked token reveals nothing about the user.
public actor UserTokenExchange {
    let serviceKey: ServiceKey
    let store: any KeyValueStore
    let validateAccessToken: @Sendable (String) async throws -> String  // returns the token's subject

    /// An exchange; `validateAccessToken` verifies an access token and returns its subject.
    public init(serviceKey: ServiceKey, store: any KeyValueStore, validateAccessToken: @escaping @Sendable (String) async throws -> String) {
        self.serviceKey = serviceKey
        self.store = store
        self.validateAccessToken = validateAccessToken
    }

    static func name(_ token: String) -> String { "ifttt.user." + Base64URL.encode(HashFunction.sha256.hash(Array(token.utf8))) }

    /// Exchanges an access token for a user token scoped to `userID`.
    /// - Returns: the JSON `{"type":"user_token","user_token":"…"}`.
    public func exchange(userID: String, accessToken: String, presentedServiceKey: some Collection<UInt8>) async throws -> String {
        let presented = Array(presentedServiceKey)
        let matches = serviceKey.bytes.withUnsafeBytes { key in presented.withUnsafeBytes { ConstantTime.equals(key, $0) } }
        guard matches else { throw AuthError(.serviceKeyInvalid, "the service key is wrong") }
        guard !userID.isEmpty, userID.utf8.count <= 128 else { throw AuthError(.accessTokenInvalid, "bad user id") }
        let subject: String
        do { subject = try await validateAccessToken(accessToken) } catch { throw AuthError(.accessTokenInvalid, "the access token does not verify") }
        guard subject == userID else { throw AuthError(.accessTokenInvalid, "the access token belongs to another user") }
        let token = Base64URL.encode(SecureRandom.bytes(count: 32))
        do { try store.transaction { tx in try tx.setValue(UserTokenExchange.name(token), Array(userID.utf8)) } } catch {
            throw AuthError(.internalFailure, "the store failed")
        }
        let data = try JSONSerialization.data(withJSONObject: ["type": "user_token", "user_token": token], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// The user a token belongs to, or an error when it is unknown or revoked.
    public func user(for token: UserToken) throws -> String {
        let revokedAll: Bool
        let value = try store.transaction { tx in try tx.value(UserTokenExchange.name(token.value)) }
        guard let value else { throw AuthError(.userTokenInvalid, "unknown user token") }
        let user = String(decoding: value, as: UTF8.self)
        revokedAll = try store.transaction { tx in try tx.value("ifttt.revoked." + user) } != nil
        guard !revokedAll else { throw AuthError(.userTokenInvalid, "the user's tokens were revoked") }
        return user
    }

    /// Revokes every user token of `userID` issued so far.
    public func revoke(userID: String) throws {
        try store.transaction { tx in try tx.setValue("ifttt.revoked." + userID, [1]) }
    }
}
