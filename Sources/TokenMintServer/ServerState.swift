import TokenMintCore
import TokenMintCrypto
import TokenMintStore

/// How the server's own records (clients, accounts, codes) sit in its
/// `KeyValueStore`: one JSON object per item, sealed with the store's
/// master key, so the same code serves SQLite and PostgreSQL.
enum ServerState {
    /// Runs `body` in one transaction of `store`; a store failure is an
    /// `internalFailure` (never the caller's fault).
    static func transaction<T>(_ store: any KeyValueStore, _ body: (any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        do { return try store.transaction(body) } catch {
            throw TokenMintError.wrap(error, as: .server.internalFailure, "the server's store failed")
        }
    }

    /// The sealed record `name`, parsed; nil when there is none.
    static func record(_ name: String, in transaction: any StoreTransaction) throws(TokenMintError) -> JSONObject? {
        guard let sealed = try transaction.secret(name) else { return nil }
        let value = try sealed.withUnsafeBytes { bytes throws(TokenMintError) in try JSONParser.parse(bytes) }
        guard let object = value.objectValue else { throw TokenMintError(.server.internalFailure, "the record \(name) is not an object") }
        return object
    }

    /// Seals and stores `object` as `name`.
    static func setRecord(_ name: String, _ object: JSONObject, in transaction: any StoreTransaction) throws(TokenMintError) {
        try transaction.setSecret(name, SecureBytes(JSONWriter.encode(.object(object))))
    }

    /// `bytes` as a base64url JSON string.
    static func bytes(_ bytes: [UInt8]) -> JSONValue { .string(Base64URL.encode(bytes)) }

    /// The bytes of the base64url member `name`; nil when absent or malformed.
    static func bytes(_ object: JSONObject, _ name: String) -> [UInt8]? {
        object[name]?.stringValue.flatMap { try? Base64URL.decode($0) }
    }

    /// The strings of the array member `name`.
    static func strings(_ object: JSONObject, _ name: String) -> [String] {
        object[name]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}

extension ServerState {
    /// The tables of earlier versions, which kept clients and accounts in SQL.
    static let legacySchema = SQLiteStore.Schema(name: "server.legacy", statements: "", clearedOnReset: [])

    /// Moves the clients and accounts an earlier version kept in its own
    /// SQLite tables into sealed records, then drops those tables (codes
    /// lived a minute and are not moved). A crash midway moves them again on
    /// the next start: the records are written whole, the tables dropped last.
    static func importLegacyTables(of store: SQLiteStore) throws(TokenMintError) {
        let found = try store.withTables(legacySchema, transaction: false) { db throws(TokenMintError) in
            try Set(db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('oauth_clients', 'oauth_accounts', 'oauth_codes')", [])
                .compactMap { $0.first?.bytes.map { String(decoding: $0, as: UTF8.self) } })
        }
        guard !found.isEmpty else { return }
        var records: [(String, JSONObject)] = []
        try store.withTables(legacySchema, transaction: false) { db throws(TokenMintError) in
            let text = { (value: SQLiteStore.Value) in String(decoding: value.bytes ?? [], as: UTF8.self) }
            let words = { (value: SQLiteStore.Value) -> JSONValue in .array(text(value).split(separator: " ").map { .string(String($0)) }) }
            if found.contains("oauth_clients") {
                for row in try db.query("SELECT id, secret_salt, secret_hash, redirect_uris, grants FROM oauth_clients", []) where row.count == 5 {
                    var record = JSONObject([("redirectUris", words(row[3])), ("grants", words(row[4]))])
                    if let salt = row[1].bytes, let hash = row[2].bytes {
                        record.set("salt", bytes(salt))
                        record.set("hash", bytes(hash))
                    }
                    records.append((ClientDirectory.name(text(row[0])), record))
                }
            }
            if found.contains("oauth_accounts") {
                for row in try db.query("SELECT username, salt, hash FROM oauth_accounts", []) where row.count == 3 {
                    guard let salt = row[1].bytes, let hash = row[2].bytes else { continue }
                    records.append((AccountDirectory.name(text(row[0])), JSONObject([("salt", bytes(salt)), ("hash", bytes(hash))])))
                }
            }
        }
        let moving = records
        try transaction(store) { tx in
            for (name, record) in moving where try tx.secret(name) == nil { try setRecord(name, record, in: tx) }
        }
        try store.withTables(legacySchema, transaction: true) { db throws(TokenMintError) in
            for table in found.sorted() {
                try db.run("DROP TABLE \(table)", [])
                try db.run("DELETE FROM meta WHERE name = ?", [.text("reset:" + table)])
            }
        }
    }
}

extension ServerState {
    /// The name prefixes of the OAuth state: the issuer's (`auth.`), the
    /// user-token exchange's (`ifttt.`) and the server's own (`server.`).
    static let oauthPrefixes = ["auth.", "ifttt.", "server."]

    /// Moves the OAuth state a server kept in its state directory into
    /// `target` (PostgreSQL, shared with other servers) the first time it
    /// starts with one: when `target` has no signing key yet and the local
    /// store has one, every value, secret and counter under the OAuth
    /// prefixes is copied in one transaction of `target` (secrets opened
    /// and sealed again, so the two master keys may differ), then removed
    /// from the local store. Refresh tokens, passkeys, clients and accounts
    /// keep working across the move.
    /// - Returns: How many items and counters were moved.
    @discardableResult
    static func moveOAuthState(from local: SQLiteStore, to target: any KeyValueStore) throws(TokenMintError) -> Int {
        let key = "auth.signingKey"
        guard try transaction(target, { tx in try tx.secret(key) }) == nil,
            try transaction(local, { tx in try tx.secret(key) }) != nil
        else { return 0 }
        let ranges = oauthPrefixes.map { ($0, String($0.dropLast()) + "/") }  // "auth." ..< "auth/"
        let (items, counters) = try local.withTables(legacySchema, transaction: false) { db throws(TokenMintError) in
            var items: [(String, Bool)] = []
            var counters: [String] = []
            for (lower, upper) in ranges {
                for row in try db.query("SELECT name, sealed FROM items WHERE name >= ? AND name < ?", [.text(lower), .text(upper)]) where row.count == 2 {
                    items.append((String(decoding: row[0].bytes ?? [], as: UTF8.self), row[1].integer == 1))
                }
                for row in try db.query("SELECT name FROM counters WHERE name >= ? AND name < ?", [.text(lower), .text(upper)]) {
                    counters.append(String(decoding: row.first?.bytes ?? [], as: UTF8.self))
                }
            }
            return (items, counters)
        }
        try transaction(local) { source in
            try transaction(target) { destination in
                for (name, sealed) in items {
                    if sealed {
                        if let secret = try source.secret(name) { try destination.setSecret(name, secret) }
                    } else if let value = try source.value(name) {
                        try destination.setValue(name, value)
                    }
                }
                for name in counters { try destination.setCounter(name, try source.counter(name)) }
            }
        }
        try transaction(local) { tx in
            for (lower, upper) in ranges { _ = try tx.removeValues(from: lower, upTo: upper) }
            for name in counters { try tx.setCounter(name, 0) }
        }
        return items.count + counters.count
    }
}
