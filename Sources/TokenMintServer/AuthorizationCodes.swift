import TokenMintCore
import TokenMintCrypto
import TokenMintStore

/// The authorization codes given out at `POST /oauth/authorize` (RFC 6749
/// §4.1.2): 32 random bytes, of which only the SHA-256 is stored, with what
/// the code was issued for. A code is taken (read and deleted) in one
/// transaction, so it is redeemed at most once.
struct AuthorizationCodes: Sendable {
    let store: SQLiteStore
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

    static let schema = SQLiteStore.Schema(
        name: "server.codes",
        statements: """
            CREATE TABLE IF NOT EXISTS oauth_codes (hash BLOB PRIMARY KEY, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL,
                username TEXT NOT NULL, challenge TEXT NOT NULL, scope TEXT NOT NULL, expires_at INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS oauth_codes_expiry ON oauth_codes (expires_at);
            """,
        clearedOnReset: ["oauth_codes"],
        migrate: { _ throws(TokenMintError) in })

    init(store: SQLiteStore, lifetime: Int64 = 60) {
        self.store = store
        self.lifetime = lifetime
    }

    func tables<T>(transaction: Bool, _ body: (SQLiteStore.Connection) throws(TokenMintError) -> T) throws(TokenMintError) -> T {
        do { return try store.withTables(Self.schema, transaction: transaction, body) } catch {
            throw TokenMintError.wrap(error, as: .server.internalFailure, "the server's store failed")
        }
    }

    static func hash(_ code: String) -> [UInt8] { HashFunction.sha256.hash(Array(code.utf8)) }

    /// A fresh code for the client, redirect URI, account, PKCE challenge and
    /// scopes, redeemable until `lifetime` seconds after `now`. Expired codes
    /// are dropped in the same transaction.
    func issue(clientID: String, redirectURI: String, username: String, challenge: String, scopes: [String], now: Int64) throws(TokenMintError) -> String {
        let code = Base64URL.encode(SecureRandom.bytes(count: 32))
        let expiresAt = TimeArithmetic.adding(now, lifetime)
        try tables(transaction: true) { db throws(TokenMintError) in
            try db.run("DELETE FROM oauth_codes WHERE expires_at <= ?", [.integer(now)])
            try db.run("INSERT INTO oauth_codes (hash, client_id, redirect_uri, username, challenge, scope, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [.blob(Self.hash(code)), .text(clientID), .text(redirectURI), .text(username), .text(challenge),
                        .text(scopes.joined(separator: " ")), .integer(expiresAt)])
        }
        return code
    }

    /// Takes the code `code`: what it was issued for, or nil when it is
    /// unknown, used or expired. The row is deleted in the transaction that
    /// reads it, whatever the caller decides next.
    func redeem(_ code: String, now: Int64) throws(TokenMintError) -> Grant? {
        guard (1...256).contains(code.utf8.count) else { return nil }
        let hash = Self.hash(code)
        return try tables(transaction: true) { db throws(TokenMintError) -> Grant? in
            let rows = try db.query("SELECT client_id, redirect_uri, username, challenge, scope, expires_at FROM oauth_codes WHERE hash = ?",
                                    [.blob(hash)])
            guard let row = rows.first, row.count == 6 else { return nil }
            try db.run("DELETE FROM oauth_codes WHERE hash = ?", [.blob(hash)])
            guard let expiresAt = row[5].integer, expiresAt > now else { return nil }
            let text = { (value: SQLiteStore.Value) in String(decoding: value.bytes ?? [], as: UTF8.self) }
            return Grant(clientID: text(row[0]), redirectURI: text(row[1]), username: text(row[2]), challenge: text(row[3]),
                         scopes: text(row[4]).split(separator: " ").map(String.init), expiresAt: expiresAt)
        }
    }
}
