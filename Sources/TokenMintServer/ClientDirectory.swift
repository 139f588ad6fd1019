public import TokenMintCore
public import TokenMintCrypto
public import TokenMintStore

/// The OAuth clients a server knows (cash desks, apps), kept in its store:
/// the ID, the secret as an Argon2id hash with its own salt (confidential
/// clients), the redirect URIs matched exactly, and the grants allowed.
public struct ClientDirectory: Sendable {
    let store: SQLiteStore
    let cost: PasswordKeyDerivation.Cost

    /// A registered client.
    public struct Client: Sendable, Equatable {
        /// The client ID.
        public let id: String
        /// Whether it authenticates with a secret (a confidential client).
        public let isConfidential: Bool
        /// Its redirect URIs, each matched exactly.
        public let redirectURIs: [String]
        /// The grant types it may use (`authorization_code`, `refresh_token`, `client_credentials`).
        public let grants: [String]
    }

    /// The grant types a client may be given.
    public static let knownGrants: Set<String> = ["authorization_code", "refresh_token", "client_credentials"]

    static let schema = SQLiteStore.Schema(
        name: "server.oauth",
        statements: """
            CREATE TABLE IF NOT EXISTS oauth_clients (id TEXT PRIMARY KEY, secret_salt BLOB, secret_hash BLOB,
                redirect_uris TEXT NOT NULL, grants TEXT NOT NULL);
            """,
        clearedOnReset: [],
        migrate: { _ throws(TokenMintError) in })

    /// The clients of the store `store`; `cost` is the Argon2id work factor
    /// for secrets (libsodium's interactive limits by default).
    public init(store: SQLiteStore, cost: PasswordKeyDerivation.Cost = .interactive) {
        self.store = store
        self.cost = cost
    }

    func tables<T>(transaction: Bool, _ body: (SQLiteStore.Connection) throws(TokenMintError) -> T) throws(TokenMintError) -> T {
        do { return try store.withTables(Self.schema, transaction: transaction, body) } catch {
            throw TokenMintError.wrap(error, as: .server.internalFailure, "the server's store failed")
        }
    }

    /// Registers (or replaces) a client.
    /// - Throws: `server.badRequest` for an ID that is not 1 to 128 visible
    ///   ASCII characters, a redirect URI that is not an absolute http(s) URI
    ///   without a fragment, an unknown grant, or a secret shorter than 16 bytes.
    public func add(id: String, secret: SecureBytes?, redirectURIs: [String], grants: [String]) throws(TokenMintError) {
        guard (1...128).contains(id.utf8.count), id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw TokenMintError(.server.badRequest, "a client ID is 1 to 128 visible ASCII characters")
        }
        for uri in redirectURIs {
            guard uri.hasPrefix("https://") || uri.hasPrefix("http://"), !uri.contains("#"), uri.utf8.count <= 512,
                uri.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            else { throw TokenMintError(.server.badRequest, "a redirect URI is an absolute http(s) URI without a fragment: \(uri.prefix(128))") }
        }
        guard !grants.isEmpty, grants.allSatisfy(Self.knownGrants.contains) else {
            throw TokenMintError(.server.badRequest, "grants are " + Self.knownGrants.sorted().joined(separator: ", "))
        }
        if grants.contains("client_credentials"), secret == nil {
            throw TokenMintError(.server.badRequest, "the client_credentials grant needs a client secret")
        }
        if grants.contains("authorization_code"), redirectURIs.isEmpty {
            throw TokenMintError(.server.badRequest, "the authorization_code grant needs a redirect URI")
        }
        var salt: [UInt8]?
        var hash: [UInt8]?
        if let secret {
            guard secret.count >= 16 else { throw TokenMintError(.server.badRequest, "a client secret is at least 16 bytes") }
            let fresh = SecureRandom.bytes(count: PasswordKeyDerivation.saltByteCount)
            salt = fresh
            hash = try secret.withUnsafeBytes { bytes throws(TokenMintError) in
                try PasswordKeyDerivation.deriveKey(passphrase: bytes, salt: fresh, cost: cost).withUnsafeBytes { Array($0) }
            }
        }
        try tables(transaction: true) { db throws(TokenMintError) in
            try db.run("INSERT OR REPLACE INTO oauth_clients (id, secret_salt, secret_hash, redirect_uris, grants) VALUES (?, ?, ?, ?, ?)",
                       [.text(id), salt.map { .blob($0) } ?? .null, hash.map { .blob($0) } ?? .null,
                        .text(redirectURIs.joined(separator: " ")), .text(grants.joined(separator: " "))])
        }
    }

    /// The client `id`, if registered.
    public func client(_ id: String) throws(TokenMintError) -> Client? {
        try tables(transaction: false) { db throws(TokenMintError) in
            guard let row = try db.query("SELECT secret_hash, redirect_uris, grants FROM oauth_clients WHERE id = ?", [.text(id)]).first else { return nil }
            let words = { (value: SQLiteStore.Value) in
                String(decoding: value.bytes ?? [], as: UTF8.self).split(separator: " ").map(String.init)
            }
            return Client(id: id, isConfidential: row[0].bytes != nil, redirectURIs: words(row[1]), grants: words(row[2]))
        }
    }

    /// The client `id` when `secret` is its secret (compared in constant
    /// time on the Argon2id hashes); nil for an unknown client, a public
    /// client or a wrong secret.
    public func authenticate(_ id: String, secret: SecureBytes) throws(TokenMintError) -> Client? {
        let stored: (salt: [UInt8], hash: [UInt8])? = try tables(transaction: false) { db throws(TokenMintError) in
            guard let row = try db.query("SELECT secret_salt, secret_hash FROM oauth_clients WHERE id = ?", [.text(id)]).first,
                let salt = row[0].bytes, let hash = row[1].bytes
            else { return nil }
            return (salt, hash)
        }
        // An unknown client costs the same hash as a known one.
        let salt = stored?.salt ?? [UInt8](repeating: 0, count: PasswordKeyDerivation.saltByteCount)
        guard salt.count == PasswordKeyDerivation.saltByteCount else { return nil }
        let derived = try secret.withUnsafeBytes { bytes throws(TokenMintError) in
            try PasswordKeyDerivation.deriveKey(passphrase: bytes, salt: salt, cost: cost)
        }
        guard let stored else { return nil }
        let equal = derived.withUnsafeBytes { mine in stored.hash.withUnsafeBytes { ConstantTime.equals(mine, $0) } }
        return equal ? try client(id) : nil
    }
}
