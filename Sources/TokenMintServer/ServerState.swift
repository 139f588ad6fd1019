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
