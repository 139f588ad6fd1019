public import TokenMintCore

/// The durable state TokenMint keeps: typed values, sealed secrets and
/// counters, changed only in transactions. SQLite is the embedded default;
/// a server deployment may put the same protocol on another database.
public protocol KeyValueStore: Sendable {
    /// Runs `body` in one transaction: committed durably when it returns,
    /// rolled back entirely when it throws.
    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// Wipes every secret, value, counter and ledger entry.
    func reset() throws(TokenMintError)
    /// Random bytes that name this store and no other (made when it was
    /// created, kept across reset): state sealed in one store can be bound
    /// to it, so a copy moved into another store sealed with the same master
    /// key is recognised.
    var identity: [UInt8] { get throws(TokenMintError) }
}
