import TokenMintCore
import TokenMintCrypto
public import TokenMintStore
import Foundation
public import Logging

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
    let logger: Logger

    /// An exchange; `validateAccessToken` verifies an access token and returns its subject.
    /// `logger` gets one line per exchange, refusal and revocation, with the
    /// user id only; by default nothing is logged.
    public init(serviceKey: ServiceKey, store: any KeyValueStore,
                logger: Logger = Logger(label: "tokenmint.auth.exchange", factory: { _ in SwiftLogNoOpLogHandler() }),
                validateAccessToken: @escaping @Sendable (String) async throws -> String) {
        self.serviceKey = serviceKey
        self.store = store
        self.logger = logger
        self.validateAccessToken = validateAccessToken
    }

    func refused(_ error: TokenMintError, user: String) -> TokenMintError {
        logger.warning("exchange refused", metadata: ["user": "\(user.prefix(128))", "code": "\(error.code)", "reason": "\(error.reason)"])
        return error
    }

    /// The user's revocation generation: tokens carry the one current when
    /// they were issued, and `revoke` moves it on.
    static func generation(_ tx: any StoreTransaction, _ user: String) throws -> Int {
        try tx.value("ifttt.generation." + user).flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
    }

    static func name(_ token: String) -> String { "ifttt.user." + Base64URL.encode(HashFunction.sha256.hash(Array(token.utf8))) }

    /// Exchanges an access token for a user token scoped to `userID`.
    /// - Returns: the JSON `{"type":"user_token","user_token":"…"}`.
    public func exchange(userID: String, accessToken: String, presentedServiceKey: some Collection<UInt8>) async throws -> String {
        let presented = Array(presentedServiceKey)
        let matches = serviceKey.bytes.withUnsafeBytes { key in presented.withUnsafeBytes { ConstantTime.equals(key, $0) } }
        guard matches else { throw refused(TokenMintError(.auth.serviceKeyInvalid, "the service key is wrong"), user: userID) }
        guard !userID.isEmpty, userID.utf8.count <= 128 else { throw refused(TokenMintError(.auth.accessTokenInvalid, "bad user id"), user: userID) }
        let subject: String
        do { subject = try await validateAccessToken(accessToken) } catch {
            throw refused(TokenMintError(.auth.accessTokenInvalid, "the access token does not verify"), user: userID)
        }
        guard subject == userID else { throw refused(TokenMintError(.auth.accessTokenInvalid, "the access token belongs to another user"), user: userID) }
        let token = Base64URL.encode(SecureRandom.bytes(count: 32))
        do {
            try store.transaction { tx in
                let generation = try UserTokenExchange.generation(tx, userID)
                try tx.setValue(UserTokenExchange.name(token), Array("\(generation)|\(userID)".utf8))
            }
        } catch {
            throw TokenMintError(.auth.internalFailure, "the store failed", underlying: error)
        }
        logger.info("user token issued", metadata: ["user": "\(userID)"])
        let data = try JSONSerialization.data(withJSONObject: ["type": "user_token", "user_token": token], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// The user a token belongs to, or an error when it is unknown or revoked.
    public func user(for token: UserToken) throws -> String {
        let found: (user: String, current: Bool)? = try store.transaction { tx in
            guard let value = try tx.value(UserTokenExchange.name(token.value)) else { return nil }
            let text = String(decoding: value, as: UTF8.self)
            guard let bar = text.firstIndex(of: "|"), let generation = Int(text[..<bar]) else { return nil }
            let user = String(text[text.index(after: bar)...])
            return (user, generation == (try UserTokenExchange.generation(tx, user)))
        }
        guard let found else { throw TokenMintError(.auth.userTokenInvalid, "unknown user token") }
        guard found.current else { throw TokenMintError(.auth.userTokenInvalid, "the user's tokens were revoked") }
        return found.user
    }

    /// Revokes every user token of `userID` issued so far; later exchanges
    /// give working tokens again.
    public func revoke(userID: String) throws {
        try store.transaction { tx in
            try tx.setValue("ifttt.generation." + userID, Array("\(try UserTokenExchange.generation(tx, userID) + 1)".utf8))
        }
        logger.notice("user tokens revoked", metadata: ["user": "\(userID)"])
    }
}
