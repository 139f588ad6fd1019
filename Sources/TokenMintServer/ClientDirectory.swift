public import TokenMintCore
public import TokenMintCrypto
public import TokenMintStore

/// The OAuth clients a server knows (cash desks, apps), kept in its store
/// (one sealed record per client, SQLite or PostgreSQL): the ID, the secret
/// as an Argon2id hash with its own salt (confidential clients), the
/// redirect URIs matched exactly, and the grants allowed.
public struct ClientDirectory: Sendable {
    let store: any KeyValueStore
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

    /// The clients of the store `store`; `cost` is the Argon2id work factor
    /// for secrets (libsodium's interactive limits by default).
    public init(store: any KeyValueStore, cost: PasswordKeyDerivation.Cost = .interactive) {
        self.store = store
        self.cost = cost
    }

    static func name(_ id: String) -> String { "server.client." + id }

    /// Whether `id` has the form of a client ID: 1 to 128 visible ASCII characters.
    static func isValid(id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Registers (or replaces) a client.
    /// - Throws: `server.badRequest` for an ID that is not 1 to 128 visible
    ///   ASCII characters, a redirect URI that is not an absolute http(s) URI
    ///   without a fragment, an unknown grant, or a secret shorter than 16 bytes.
    public func add(id: String, secret: SecureBytes?, redirectURIs: [String], grants: [String]) throws(TokenMintError) {
        guard Self.isValid(id: id) else {
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
        var record = JSONObject([("redirectUris", .array(redirectURIs.map { .string($0) })), ("grants", .array(grants.map { .string($0) }))])
        if let salt, let hash {
            record.set("salt", ServerState.bytes(salt))
            record.set("hash", ServerState.bytes(hash))
        }
        let finished = record
        try ServerState.transaction(store) { tx in try ServerState.setRecord(Self.name(id), finished, in: tx) }
    }

    /// The client `id`, if registered.
    public func client(_ id: String) throws(TokenMintError) -> Client? {
        try stored(id).map(\.client)
    }

    /// The record of client `id` and its secret's salt and hash (nil for a public client).
    func stored(_ id: String) throws(TokenMintError) -> (client: Client, secret: (salt: [UInt8], hash: [UInt8])?)? {
        guard Self.isValid(id: id) else { return nil }
        guard let record = try ServerState.transaction(store, { tx in try ServerState.record(Self.name(id), in: tx) }) else { return nil }
        var secret: (salt: [UInt8], hash: [UInt8])?
        if let salt = ServerState.bytes(record, "salt"), let hash = ServerState.bytes(record, "hash") { secret = (salt, hash) }
        let client = Client(id: id, isConfidential: secret != nil, redirectURIs: ServerState.strings(record, "redirectUris"),
                            grants: ServerState.strings(record, "grants"))
        return (client, secret)
    }

    /// The client `id` when `secret` is its secret (compared in constant
    /// time on the Argon2id hashes); nil for an unknown client, a public
    /// client or a wrong secret.
    public func authenticate(_ id: String, secret: SecureBytes) throws(TokenMintError) -> Client? {
        let found = try self.stored(id)
        let stored = found?.secret
        // An unknown client costs the same hash as a known one.
        let salt = stored?.salt ?? [UInt8](repeating: 0, count: PasswordKeyDerivation.saltByteCount)
        guard salt.count == PasswordKeyDerivation.saltByteCount else { return nil }
        let derived = try secret.withUnsafeBytes { bytes throws(TokenMintError) in
            try PasswordKeyDerivation.deriveKey(passphrase: bytes, salt: salt, cost: cost)
        }
        guard let stored else { return nil }
        let equal = derived.withUnsafeBytes { mine in stored.hash.withUnsafeBytes { ConstantTime.equals(mine, $0) } }
        return equal ? found?.client : nil
    }
}
