public import TokenMintCore
public import TokenMintCrypto
public import TokenMintStore
import TokenMintAuth

/// The accounts that sign in at the authorization endpoint
/// (`GET /oauth/authorize`), kept in the server's store (one sealed record
/// per account, SQLite or PostgreSQL): the username and the password as an
/// Argon2id hash with its own 16-byte salt.
public struct AccountDirectory: Sendable {
    let store: any KeyValueStore
    /// The Argon2id work factor for passwords (the same for every account:
    /// a hash made with one cost does not verify with another).
    public let cost: PasswordKeyDerivation.Cost

    /// The accounts of the store `store`; `cost` is the Argon2id work factor
    /// for passwords (libsodium's interactive limits by default).
    public init(store: any KeyValueStore, cost: PasswordKeyDerivation.Cost = .interactive) {
        self.store = store
        self.cost = cost
    }

    static func name(_ username: String) -> String { "server.account." + username }

    /// The salt and hash of `username`'s password; nil for no password account.
    func stored(_ username: String) throws(TokenMintError) -> (salt: [UInt8], hash: [UInt8])? {
        guard Self.isValid(username: username),
            let record = try ServerState.transaction(store, { tx in try ServerState.record(Self.name(username), in: tx) }),
            let salt = ServerState.bytes(record, "salt"), let hash = ServerState.bytes(record, "hash")
        else { return nil }
        return (salt, hash)
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
        let record = JSONObject([("salt", ServerState.bytes(salt)), ("hash", ServerState.bytes(digest))])
        try ServerState.transaction(store) { tx in try ServerState.setRecord(Self.name(username), record, in: tx) }
    }

    /// Whether `username` has a password account.
    public func contains(username: String) throws(TokenMintError) -> Bool {
        try stored(username) != nil
    }

    /// Whether `password` is the password of `username` (compared in
    /// constant time on the Argon2id hashes). An unknown username costs the
    /// same hash as a known one, so the time taken does not tell whether
    /// the account exists.
    public func authenticate(username: String, password: SecureBytes) throws(TokenMintError) -> Bool {
        guard password.count <= 1024 else { return false }
        let stored = try self.stored(username)
        let salt = stored?.salt ?? [UInt8](repeating: 0, count: PasswordKeyDerivation.saltByteCount)
        guard salt.count == PasswordKeyDerivation.saltByteCount else { return false }
        let derived = try derive(password, salt: salt)
        guard let stored else { return false }
        return derived.withUnsafeBytes { mine in stored.hash.withUnsafeBytes { ConstantTime.equals(mine, $0) } }
    }
}
