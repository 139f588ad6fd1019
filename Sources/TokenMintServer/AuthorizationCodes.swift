import TokenMintCore
import TokenMintCrypto
import TokenMintStore

/// The authorization codes given out at `POST /oauth/authorize` (RFC 6749
/// §4.1.2): 32 bytes — its expiry (8 bytes, big-endian) and 24 random
/// bytes — of which only the SHA-256 is stored, with what the code was
/// issued for, under a name that starts with the expiry so that expired
/// codes are dropped as one range. A code is taken (read and deleted) in one
/// transaction, so it is redeemed at most once.
struct AuthorizationCodes: Sendable {
    let store: any KeyValueStore
    /// Seconds a code stays redeemable.
    let lifetime: Int64

    /// What a code was issued for.
    struct Grant: Sendable, Equatable {
        let clientID: String
        let redirectURI: String
        let username: String
        /// The PKCE S256 challenge: BASE64URL(SHA-256(code_verifier)).
        let challenge: String
        let scopes: [String]
        let expiresAt: Int64
    }

    init(store: any KeyValueStore, lifetime: Int64 = 60) {
        self.store = store
        self.lifetime = lifetime
    }

    static let prefix = "server.code."

    /// The item name of a code expiring at `expiresAt`: the prefix, the
    /// expiry as 16 hexadecimal digits (so names sort by expiry), and the
    /// code's SHA-256.
    static func name(_ code: String, expiresAt: Int64) -> String {
        prefix + expiry(expiresAt) + "." + Base64URL.encode(HashFunction.sha256.hash(Array(code.utf8)))
    }

    static func expiry(_ time: Int64) -> String {
        let digits = String(UInt64(bitPattern: max(time, 0)), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// A fresh code for the client, redirect URI, account, PKCE challenge and
    /// scopes, redeemable until `lifetime` seconds after `now`. Expired codes
    /// are dropped in the same transaction.
    func issue(clientID: String, redirectURI: String, username: String, challenge: String, scopes: [String], now: Int64) throws(TokenMintError) -> String {
        let expiresAt = TimeArithmetic.adding(now, lifetime)
        var bytes = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: expiresAt) >> (56 - 8 * $0)) }
        bytes += SecureRandom.bytes(count: 24)
        let code = Base64URL.encode(bytes)
        let record = JSONObject([
            ("clientId", .string(clientID)), ("redirectUri", .string(redirectURI)), ("username", .string(username)),
            ("challenge", .string(challenge)), ("scopes", .array(scopes.map { .string($0) })), ("expiresAt", .number(expiresAt)),
        ])
        try ServerState.transaction(store) { tx in
            _ = try tx.removeValues(from: Self.prefix, upTo: Self.prefix + Self.expiry(TimeArithmetic.adding(now, 1)))
            try ServerState.setRecord(Self.name(code, expiresAt: expiresAt), record, in: tx)
        }
        return code
    }

    /// Takes the code `code`: what it was issued for, or nil when it is
    /// unknown, used or expired. The row is deleted in the transaction that
    /// reads it, whatever the caller decides next.
    func redeem(_ code: String, now: Int64) throws(TokenMintError) -> Grant? {
        guard code.utf8.count == 43, let bytes = try? Base64URL.decode(code), bytes.count == 32 else { return nil }
        let stamped = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard stamped <= UInt64(Int64.max) else { return nil }
        let name = Self.name(code, expiresAt: Int64(stamped))
        let record = try ServerState.transaction(store) { tx -> JSONObject? in
            guard let record = try ServerState.record(name, in: tx) else { return nil }
            try tx.remove(name)
            return record
        }
        guard let record, let expiresAt = record["expiresAt"]?.int64Value, expiresAt > now, expiresAt == Int64(stamped),
            let clientID = record["clientId"]?.stringValue, let redirectURI = record["redirectUri"]?.stringValue,
            let username = record["username"]?.stringValue, let challenge = record["challenge"]?.stringValue
        else { return nil }
        return Grant(clientID: clientID, redirectURI: redirectURI, username: username, challenge: challenge,
                     scopes: ServerState.strings(record, "scopes"), expiresAt: expiresAt)
    }
}
