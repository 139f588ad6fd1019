public import TokenMintCore
public import TokenMintCrypto
public import TokenMintStore
import TokenMintAuth

/// The accounts that sign in at the authorization endpoint
/// (`GET /oauth/authorize`), kept in the server's store: the username and
/// the password as an Argon2id hash with its own 16-byte salt.
public struct AccountDirectory: Sendable {
    let store: SQLiteStore
    /// The Argon2id work factor for passwords (the same for every account:
    /// a hash made with one cost does not verify with another).
    public let cost: PasswordKeyDerivation.Cost

    static let schema = SQLiteStore.Schema(
        name: "server.accounts",
        statements: """
            CREATE TABLE IF NOT EXISTS oauth_accounts (username TEXT PRIMARY KEY, salt BLOB NOT NULL, hash BLOB NOT NULL);
            """,
        clearedOnReset: [],
        migrate: { _ throws(TokenMintError) in })

    /// The accounts of the store `store`; `cost` is the Argon2id work factor
    /// for passwords (libsodium's interactive limits by default).
    public init(store: SQLiteStore, cost: PasswordKeyDerivation.Cost = .interactive) {
        self.store = store
        self.cost = cost
    }

    func tables<T>(transaction: Bool, _ body: (SQLiteStore.Connection) throws(TokenMintError) -> T) throws(TokenMintError) -> T {
        do { return try store.withTables(Self.schema, transaction: transaction, body) } catch {
            throw TokenMintError.wrap(error, as: .server.internalFailure, "the server's store failed")
        }
    }

    /// Whether `username` has the form of a username: 1 to 64 visible ASCII characters.
    static func isValid(username: String) -> Bool {
        (1...64).contains(username.utf8.count) && username.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    func derive(_ password: SecureBytes, salt: [UInt8]) throws(TokenMintError) -> SecureBytes {
        try password.withUnsafeBytes { bytes throws(TokenMintError) in
            try PasswordKeyDerivation.deriveKey(passphrase: bytes, salt: salt, cost: cost)
        }
    }

    /// Adds an account, or replaces the password of an existing one.
    /// - Throws: `server.badRequest` for a username that is not 1 to 64
    ///   visible ASCII characters or a password that is not 8 to 1024 bytes;
    ///   `server.conflict` for a name a passkey account has.
    public func add(username: String, password: SecureBytes) throws(TokenMintError) {
        guard Self.isValid(username: username) else {
            throw TokenMintError(.server.badRequest, "a username is 1 to 64 visible ASCII characters")
        }
        guard (8...1024).contains(password.count) else { throw TokenMintError(.server.badRequest, "a password is 8 to 1024 bytes") }
        // A name a passkey sign-up took stays that user's: a password for it
        // would hand the account to whoever holds that passkey, or the other way round.
        guard try !LocalTokenIssuer.hasPasskeys(account: username, in: store) else {
            throw TokenMintError(.server.conflict, "\(username) is a passkey account already")
        }
        let salt = SecureRandom.bytes(count: PasswordKeyDerivation.saltByteCount)
        let digest = try derive(password, salt: salt).withUnsafeBytes { Array($0) }
        try tables(transaction: true) { db throws(TokenMintError) in
            try db.run("INSERT OR REPLACE INTO oauth_accounts (username, salt, hash) VALUES (?, ?, ?)",
                       [.text(username), .blob(salt), .blob(digest)])
        }
    }

    /// Whether `username` has a password account.
    public func contains(username: String) throws(TokenMintError) -> Bool {
        guard Self.isValid(username: username) else { return false }
        return try tables(transaction: false) { db throws(TokenMintError) -> Bool in
            try !db.query("SELECT 1 FROM oauth_accounts WHERE username = ?", [.text(username)]).isEmpty
        }
    }

    /// Whether `password` is the password of `username` (compared in
    /// constant time on the Argon2id hashes). An unknown username costs the
    /// same hash as a known one, so the time taken does not tell whether
    /// the account exists.
    public func authenticate(username: String, password: SecureBytes) throws(TokenMintError) -> Bool {
        guard password.count <= 1024 else { return false }
        var stored: (salt: [UInt8], hash: [UInt8])?
        if Self.isValid(username: username) {
            stored = try tables(transaction: false) { db throws(TokenMintError) -> (salt: [UInt8], hash: [UInt8])? in
                guard let row = try db.query("SELECT salt, hash FROM oauth_accounts WHERE username = ?", [.text(username)]).first,
                    row.count == 2, let salt = row[0].bytes, let hash = row[1].bytes
                else { return nil }
                return (salt, hash)
            }
        }
        let salt = stored?.salt ?? [UInt8](repeating: 0, count: PasswordKeyDerivation.saltByteCount)
        guard salt.count == PasswordKeyDerivation.saltByteCount else { return false }
        let derived = try derive(password, salt: salt)
        guard let stored else { return false }
        return derived.withUnsafeBytes { mine in stored.hash.withUnsafeBytes { ConstantTime.equals(mine, $0) } }
    }
}
