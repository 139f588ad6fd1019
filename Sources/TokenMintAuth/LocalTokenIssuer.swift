public import TokenMintCore
import TokenMintCrypto
public import TokenMintJOSE
public import TokenMintStore
public import TokenMintWebAuthn
public import Foundation
public import Logging

/// The server side: mints RFC 9068 access tokens, single-use rotating
/// refresh tokens (stored hashed, reuse revokes the family), and elevated
/// tokens after a FIDO2 assertion for the account verifies.
public actor LocalTokenIssuer {
    let store: any KeyValueStore
    let keyRing: JWTKeyRing
    /// When the previous signing key stops verifying (nil: there is none).
    var previousKeyUntil: Int64?
    /// The keys that verify this issuer's tokens: the signing key, and after
    /// a rotation the previous one until the tokens it signed have expired.
    public nonisolated var verificationKeys: JWKSet { keyRing.verificationKeys }
    /// `iss`.
    public let issuer: String
    /// `aud` of access tokens.
    public let audience: String
    let clock: @Sendable () -> Int64
    let accessLifetime: Int64
    let refreshLifetime: Int64
    let elevatedLifetime: Int64
    let relyingParty: RelyingPartyVerifier
    let logger: Logger

    /// An issuer whose signing key (EdDSA) is created once and sealed in `store`.
    ///
    /// `logger` receives one line per event (issued, rotated, reuse detected,
    /// elevated, refused) with the account, client and `jti` as metadata; no
    /// token, key or challenge is ever logged. By default nothing is logged.
    public init(
        store: any KeyValueStore, issuer: String, audience: String, relyingParty: RelyingPartyPolicy,
        accessLifetime: Int64 = 600, refreshLifetime: Int64 = 30 * 86_400, elevatedLifetime: Int64 = 300,
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
        logger: Logger = Logger(label: "tokenmint.auth", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(TokenMintError) {
        let seeds: (current: SecureBytes, previous: SecureBytes?, until: Int64?)
        let now = clock()
        do {
            seeds = try store.transaction { tx in
                let current: SecureBytes
                if let existing = try tx.secret(Self.signingKeyName) {
                    current = existing
                } else {
                    current = SecureBytes(randomCount: 32)
                    try tx.setSecret(Self.signingKeyName, current)
                }
                guard let previous = try tx.secret(Self.previousKeyName), let until = try tx.value(Self.previousKeyUntilName),
                    let time = Int64(String(decoding: until, as: UTF8.self)), time > now
                else { return (current, nil, nil) }
                return (current, previous, time)
            }
        } catch { throw TokenMintError(.auth.internalFailure, "cannot read the signing key: \(error)", underlying: error) }
        do {
            self.keyRing = try JWTKeyRing(signingKey: try Self.signingJWK(seeds.previous ?? seeds.current), type: "at+jwt")
            if seeds.previous != nil { try keyRing.rotate(to: try Self.signingJWK(seeds.current)) }
            self.previousKeyUntil = seeds.until
        } catch { throw TokenMintError(.auth.internalFailure, "cannot use the signing key: \(error)", underlying: error) }
        self.store = store
        self.issuer = issuer
        self.audience = audience
        self.clock = clock
        self.accessLifetime = accessLifetime
        self.refreshLifetime = refreshLifetime
        self.elevatedLifetime = elevatedLifetime
        self.relyingParty = RelyingPartyVerifier(policy: relyingParty)
        self.logger = logger
    }

    static let signingKeyName = "auth.signingKey"
    static let previousKeyName = "auth.signingKey.previous"
    static let previousKeyUntilName = "auth.signingKey.previous.until"

    static func signingJWK(_ seed: SecureBytes) throws -> JWK {
        var jwk = JWK(try Ed25519.PrivateKey(rawRepresentation: seed), algorithm: .EdDSA)
        jwk.keyID = jwk.thumbprint()
        return jwk
    }

    /// Replaces the signing key with a fresh one, sealed in the store. The
    /// previous key keeps verifying for one access-token lifetime (the
    /// tokens it signed expire by then); a key it replaced earlier is
    /// retired now. Other issuers on the same store pick the new key up
    /// when they are created.
    /// - Returns: The new key's `kid`.
    @discardableResult
    public func rotateSigningKey() throws(TokenMintError) -> String {
        let fresh = SecureBytes(randomCount: 32)
        let jwk: JWK
        do { jwk = try Self.signingJWK(fresh) } catch { throw TokenMintError(.auth.internalFailure, "cannot use the new signing key: \(error)", underlying: error) }
        let until = clock() + accessLifetime
        try transaction { tx in
            guard let current = try tx.secret(Self.signingKeyName) else { throw TokenMintError(.auth.internalFailure, "the signing key is gone") }
            try tx.setSecret(Self.previousKeyName, current)
            try tx.setValue(Self.previousKeyUntilName, Array(String(until).utf8))
            try tx.setSecret(Self.signingKeyName, fresh)
        }
        do { try keyRing.rotate(to: jwk) } catch { throw TokenMintError(.auth.internalFailure, "cannot rotate: \(error)", underlying: error) }
        retireVerificationKeys(keeping: 2)  // the new key and the one it replaced
        previousKeyUntil = until
        logger.info("signing key rotated", metadata: ["kid": "\(jwk.keyID ?? "")", "previous_until": "\(until)"])
        return jwk.keyID ?? ""
    }

    /// Retires every verification key after the first `kept` (the signing
    /// key comes first, then the key it replaced).
    func retireVerificationKeys(keeping kept: Int) {
        for keyID in keyRing.verificationKeys.keys.dropFirst(kept).compactMap(\.keyID) { _ = try? keyRing.retire(keyID: keyID) }
    }

    /// Logs a refusal and returns the error to throw.
    func refused(_ error: TokenMintError, _ metadata: Logger.Metadata = [:]) -> TokenMintError {
        logger.warning("refused", metadata: metadata.merging(["code": "\(error.code)", "reason": "\(error.reason)"]) { a, _ in a })
        return error
    }

    /// ``transaction(_:)`` through the store's group commit.
    func groupedTransaction<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T) async throws(TokenMintError) -> T {
        do { return try await store.groupedTransaction(body) } catch {
            throw TokenMintError.wrap(error, as: .auth.internalFailure, "the store failed: \(error)")
        }
    }

    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        do { return try store.transaction(body) } catch {
            throw TokenMintError.wrap(error, as: .auth.internalFailure, "the store failed: \(error)")
        }
    }

    static func hashName(_ token: String) -> String {
        "auth.refresh." + Base64URL.encode(HashFunction.sha256.hash(Array(token.utf8)))
    }

    struct RefreshRecord: Codable {
        var account: String
        var clientID: String
        var scopes: [String]
        var family: String
        var expiresAt: Int64
        var used: Bool
        /// The DPoP key thumbprint the family is bound to (RFC 9449 §5), if any.
        var jkt: String?
    }

    nonisolated func accessToken(
        account: String, clientID: String, scopes: [String], lifetime: Int64, extra: JSONObject = JSONObject(), jkt: String? = nil
    ) throws(TokenMintError) -> (String, Int64) {
        let now = clock()
        var claims = JWTClaims.accessToken(issuer: issuer, subject: account, audience: [audience], clientID: clientID, scopes: scopes,
                                           lifetime: lifetime, now: now, authorizedParty: clientID)
        for member in extra { claims.additional.set(member.name, member.value) }
        if let jkt { claims.additional.set("cnf", .object(["jkt": .string(jkt)])) }
        logger.info("access token", metadata: ["account": "\(account)", "client_id": "\(clientID)", "jti": "\(claims.jwtID ?? "")",
                                               "scope": "\(scopes.joined(separator: " "))", "exp": "\(now + lifetime)"])
        do { return (try keyRing.sign(claims), now + lifetime) } catch { throw TokenMintError(.auth.internalFailure, "signing failed: \(error.code)", underlying: error) }
    }

    /// Issues an account token for `account`: an access token and, when
    /// `refreshable` (the default), the first refresh token of a new family.
    /// With `dpopThumbprint` (the RFC 7638 thumbprint of the key a DPoP
    /// proof showed) the access token carries `cnf.jkt`, and, when
    /// `bindsRefreshToken` (a public client's, RFC 9449 §5), so does the
    /// refresh family: it then rotates only with a proof of that key. A
    /// confidential client authenticates at every refresh and may change keys.
    public func issue(
        account: String, clientID: String, scopes: [String] = [], refreshable: Bool = true, dpopThumbprint: String? = nil,
        bindsRefreshToken: Bool = true
    ) throws(TokenMintError) -> OAuthToken {
        guard !account.isEmpty, account.utf8.count <= 128 else { throw TokenMintError(.auth.notSignedIn, "no account") }
        guard !clientID.isEmpty, clientID.utf8.count <= 128, clientID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw TokenMintError(.auth.clientIdInvalid, "client IDs are 1 to 128 visible ASCII characters")
        }
        guard refreshable else {
            let (access, expiresAt) = try accessToken(account: account, clientID: clientID, scopes: scopes, lifetime: accessLifetime, jkt: dpopThumbprint)
            return OAuthToken(accessToken: access, refreshToken: nil, expiresAt: expiresAt, elevated: false, account: account)
        }
        return try newFamilyMember(
            account: account, clientID: clientID, scopes: scopes, family: Base64URL.encode(SecureRandom.bytes(count: 16)),
            jkt: bindsRefreshToken ? dpopThumbprint : nil, accessJKT: dpopThumbprint)
    }

    /// Issues an access token to a client acting for itself (the OAuth
    /// client-credentials grant): `sub` and `client_id` are the client ID,
    /// and there is no refresh token.
    public func issueClientToken(clientID: String, scopes: [String] = [], dpopThumbprint: String? = nil) throws(TokenMintError) -> OAuthToken {
        guard !clientID.isEmpty, clientID.utf8.count <= 128, clientID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw TokenMintError(.auth.clientIdInvalid, "client IDs are 1 to 128 visible ASCII characters")
        }
        let (access, expiresAt) = try accessToken(account: clientID, clientID: clientID, scopes: scopes, lifetime: accessLifetime, jkt: dpopThumbprint)
        return OAuthToken(accessToken: access, refreshToken: nil, expiresAt: expiresAt, elevated: false, account: clientID)
    }

    func newFamilyMember(
        account: String, clientID: String, scopes: [String], family: String, jkt: String? = nil, accessJKT: String? = nil
    ) throws(TokenMintError) -> OAuthToken {
        try transaction { tx in
            try newFamilyMember(account: account, clientID: clientID, scopes: scopes, family: family, jkt: jkt, accessJKT: accessJKT, in: tx)
        }
    }

    /// Signs an access token and writes a new refresh token of `family` in
    /// `tx`: the pair exists only if the transaction commits. It uses only
    /// the issuer's constants, so it also runs inside a grouped transaction,
    /// on the store's committing thread.
    nonisolated func newFamilyMember(
        account: String, clientID: String, scopes: [String], family: String, jkt: String? = nil, accessJKT: String? = nil, in tx: any StoreTransaction
    ) throws -> OAuthToken {
        let (access, expiresAt) = try accessToken(account: account, clientID: clientID, scopes: scopes, lifetime: accessLifetime, jkt: accessJKT ?? jkt)
        let refresh = Base64URL.encode(SecureRandom.bytes(count: 32))
        let record = RefreshRecord(
            account: account, clientID: clientID, scopes: scopes, family: family, expiresAt: clock() + refreshLifetime, used: false, jkt: jkt)
        guard let data = try? JSONEncoder().encode(record) else { throw TokenMintError(.auth.internalFailure, "cannot encode") }
        try tx.setValue(LocalTokenIssuer.hashName(refresh), Array(data))
        return OAuthToken(accessToken: access, refreshToken: refresh, expiresAt: expiresAt, elevated: false, account: account)
    }

    /// Rotates a refresh token: the presented one is spent and a new pair
    /// issued. Presenting a spent token revokes its whole family.
    public func refresh(_ refreshToken: String) async throws(TokenMintError) -> OAuthToken {
        try await rotate(refreshToken, clientID: nil)
    }

    /// Rotates a refresh token presented by the OAuth client `clientID`, as
    /// `refresh(_:)` does; a token issued to another client is refused
    /// (`refreshTokenInvalid`) and left as it was: neither spent nor its
    /// family revoked.
    public func refresh(_ refreshToken: String, clientID: String) async throws(TokenMintError) -> OAuthToken {
        try await rotate(refreshToken, clientID: clientID)
    }

    /// Rotates a refresh token presented with a DPoP proof whose key has
    /// thumbprint `dpopThumbprint` (or with none: nil). A family bound to
    /// a key is rotated only with a proof of that key (RFC 9449 §5);
    /// otherwise it is refused (`refreshTokenInvalid`) and left as it was.
    /// The new access token is bound to the proof's key when one was shown;
    /// with `bindsRefreshToken` (a public client) an unbound family shown a
    /// proof is bound from then on.
    public func refresh(
        _ refreshToken: String, clientID: String, dpopThumbprint: String?, bindsRefreshToken: Bool = true
    ) async throws(TokenMintError) -> OAuthToken {
        try await rotate(refreshToken, clientID: clientID, dpopThumbprint: dpopThumbprint, bindsRefreshToken: bindsRefreshToken)
    }

    /// Revokes the family of a refresh token issued to `clientID` (RFC 7009):
    /// the token and every other refresh token of its family stop working at
    /// once. An unknown token, or a token of another client, changes nothing.
    /// Access tokens are short-lived signed JWTs checked without the store:
    /// they cannot be revoked and stay valid until they expire.
    /// - Returns: Whether a family was revoked.
    @discardableResult
    public func revoke(refreshToken: String, clientID: String) throws(TokenMintError) -> Bool {
        let name = LocalTokenIssuer.hashName(refreshToken)
        let revoked: RefreshRecord? = try transaction { tx in
            guard let data = try tx.value(name), let record = try? JSONDecoder().decode(RefreshRecord.self, from: Data(data)),
                record.clientID.utf8.elementsEqual(clientID.utf8)
            else { return nil }
            try tx.setValue("auth.revoked." + record.family, [1])
            return record
        }
        guard let revoked else { return false }
        logger.notice("refresh token family revoked", metadata: ["account": "\(revoked.account)", "client_id": "\(revoked.clientID)", "family": "\(revoked.family)"])
        return true
    }

    func rotate(
        _ refreshToken: String, clientID: String?, dpopThumbprint: String? = nil, bindsRefreshToken: Bool = false
    ) async throws(TokenMintError) -> OAuthToken {
        let name = LocalTokenIssuer.hashName(refreshToken)
        let now = clock()
        enum Outcome: Sendable {
            case fresh(RefreshRecord, OAuthToken), reused(RefreshRecord), revoked(RefreshRecord), expired(RefreshRecord), otherClient(RefreshRecord)
            case otherKey(RefreshRecord), unknown
        }
        // One transaction decides and writes: spending the token together with
        // its successor (so a failed commit spends nothing), or revoking the
        // family on reuse, committed before the error is thrown. Rotations
        // running at the same moment share the commit (group commit).
        let outcome: Outcome = try await groupedTransaction { tx in
            guard let data = try tx.value(name), var record = try? JSONDecoder().decode(RefreshRecord.self, from: Data(data)) else {
                return .unknown
            }
            if let clientID, !record.clientID.utf8.elementsEqual(clientID.utf8) { return .otherClient(record) }
            if let bound = record.jkt {
                guard let shown = dpopThumbprint, ConstantTime.equals(Array(bound.utf8), Array(shown.utf8)) else { return .otherKey(record) }
            }
            if try tx.value("auth.revoked." + record.family) != nil { return .revoked(record) }
            if record.used {
                try tx.setValue("auth.revoked." + record.family, [1])
                return .reused(record)
            }
            guard record.expiresAt > now else { return .expired(record) }
            record.used = true
            try tx.setValue(name, [UInt8]((try? JSONEncoder().encode(record)) ?? Data()))
            let successor = try self.newFamilyMember(
                account: record.account, clientID: record.clientID, scopes: record.scopes, family: record.family,
                jkt: record.jkt ?? (bindsRefreshToken ? dpopThumbprint : nil), accessJKT: dpopThumbprint, in: tx)
            return .fresh(record, successor)
        }
        switch outcome {
        case .fresh(let record, let successor):
            logger.info("refresh token rotated", metadata: ["account": "\(record.account)", "family": "\(record.family)"])
            return successor
        case .reused(let r):
            throw refused(TokenMintError(.auth.refreshTokenReused, "a spent refresh token was presented again; its family is revoked"),
                          ["account": "\(r.account)", "client_id": "\(r.clientID)", "family": "\(r.family)"])
        case .revoked(let r):
            throw refused(TokenMintError(.auth.refreshTokenInvalid, "the token's family was revoked"), ["account": "\(r.account)", "family": "\(r.family)"])
        case .expired(let r): throw refused(TokenMintError(.auth.refreshTokenInvalid, "the refresh token expired"), ["account": "\(r.account)"])
        case .otherClient(let r):
            throw refused(TokenMintError(.auth.refreshTokenInvalid, "the refresh token was issued to another client"),
                          ["account": "\(r.account)", "client_id": "\(r.clientID)"])
        case .otherKey(let r):
            throw refused(TokenMintError(.auth.refreshTokenInvalid, "the refresh token is bound to a DPoP key this request did not prove"),
                          ["account": "\(r.account)", "client_id": "\(r.clientID)"])
        case .unknown: throw refused(TokenMintError(.auth.refreshTokenInvalid, "unknown refresh token"))
        }
    }

    /// Verifies an access token of this issuer (account or elevated).
    public func verify(_ accessToken: String) throws(TokenMintError) -> VerifiedJWT {
        if let until = previousKeyUntil, clock() >= until {
            retireVerificationKeys(keeping: 1)
            previousKeyUntil = nil
        }
        var validation = JWTValidation.accessToken(issuer: issuer, audience: audience)
        validation.clock = clock
        do { return try JWTVerifier(keys: keyRing.verificationKeys, validation: validation).verify(accessToken) } catch {
            throw TokenMintError(.auth.accessTokenInvalid, "\(error.code)", underlying: error)
        }
    }
}
