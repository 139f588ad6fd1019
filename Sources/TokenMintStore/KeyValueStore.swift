public import TokenMintCore

/// The durable state TokenMint keeps: typed values, sealed secrets and
/// counters, changed only in transactions. SQLite is the embedded default;
/// a server deployment may put the same protocol on another database.
public protocol KeyValueStore: Sendable {
    /// Runs `body` in one transaction: committed durably when it returns,
    /// rolled back entirely when it throws.
    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T
    /// Runs `body` as ``transaction(_:)`` does, with the same guarantee —
    /// durable when it returns, nothing written when `body` throws — but a
    /// store may commit it together with the transactions of other callers
    /// waiting at the same moment: one commit, one fsync, for the group
    /// (group commit). A single caller waits for nobody. `body` runs on the
    /// store's committing thread, after the bodies queued before it, whose
    /// writes it sees.
    nonisolated(nonsending) func groupedTransaction<T: Sendable>(
        _ body: @escaping @Sendable (any StoreTransaction) throws -> T
    ) async throws -> T
    /// Whether ``groupedTransaction(_:)`` gathers concurrent callers into
    /// shared commits (false: it is a plain transaction, and a caller gains
    /// nothing from overlapping its own work with other callers').
    var groupsCommits: Bool { get }
    /// Wipes every secret, value, counter and ledger entry.
    func reset() throws(TokenMintError)
    /// Random bytes that name this store and no other (made when it was
    /// created, kept across reset): state sealed in one store can be bound
    /// to it, so a copy moved into another store sealed with the same master
    /// key is recognised.
    var identity: [UInt8] { get throws(TokenMintError) }
}

extension KeyValueStore {
    /// A store without group commit runs the body in a transaction of its
    /// own, on the caller's executor (no hop off an actor and back).
    nonisolated(nonsending) public func groupedTransaction<T: Sendable>(
        _ body: @escaping @Sendable (any StoreTransaction) throws -> T
    ) async throws -> T {
        try transaction(body)
    }

    /// A store without group commit does not group.
    public var groupsCommits: Bool { false }
}
