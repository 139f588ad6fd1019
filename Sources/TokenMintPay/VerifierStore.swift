public import TokenMintCore

/// What a payment-token verifier keeps, shared by every verifier that sees
/// the same devices: the single-use replay ledger, the enrolled devices'
/// keys, and the offline allowances granted to them.
///
/// `SQLiteStore` and `InMemoryStore` implement it for one machine (their
/// adapters live beside this protocol); `TokenMintPostgres` implements it
/// on a PostgreSQL server for many.
/// Every method either commits its change or throws and changes nothing.
public protocol VerifierStore: Sendable {
    /// Records `identifier` and returns true, or returns false when it was
    /// recorded before (and has not been pruned).
    ///
    /// `attempt` makes a retry safe: when the identifier was recorded by the
    /// same attempt (a payment transaction's ID, retried after a crash or a
    /// lost answer), the call returns true again. Another attempt, or none,
    /// gets false.
    ///
    /// `slot` is what the token uses up for good, beyond its own identifier:
    /// one offline counter value, or one server-issued unsigned part, of one
    /// device. It is spent in the same transaction as the identifier is
    /// recorded, belongs to that identifier from then on and is never pruned,
    /// so a second token for the same slot returns false, however long after
    /// and whichever verifier sees it.
    func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]?, spending slot: [UInt8]?) async throws(TokenMintError) -> Bool
    /// Drops ledger entries that expired before `time`; returns how many.
    /// Spent slots stay.
    func prune(expiredBefore time: Int64) async throws(TokenMintError) -> Int
    /// Enrols a device: its record (for WhitelabelPay, the enrolment token)
    /// under `deviceID`. Enrolling the same record again is a no-op; a
    /// different record for a known device throws `conflict`.
    func enrolDevice(_ deviceID: String, record: [UInt8]) async throws(TokenMintError)
    /// The record of an enrolled device, or nil.
    func deviceRecord(_ deviceID: String) async throws(TokenMintError) -> [UInt8]?
    /// Grants the device the next `count` offline counter values, usable
    /// until `notAfter`. Each value is granted once, whichever verifier asks.
    /// - Throws: `notFound` for a device that is not enrolled.
    func grantOfflineAllowance(_ deviceID: String, count: Int64, notAfter: Int64) async throws(TokenMintError) -> OfflineGrant
    /// The grant of `deviceID` that contains counter value `counter`, or nil.
    func offlineGrant(_ deviceID: String, containing counter: Int64) async throws(TokenMintError) -> OfflineGrant?
    /// Records that the server issued the unsigned part `part` to the device,
    /// for a token dated up to `notAfter`.
    /// - Throws: `notFound` for a device that is not enrolled, `conflict` when
    ///   the part was issued before.
    func issueOnlinePart(_ deviceID: String, part: String, notAfter: Int64) async throws(TokenMintError)
    /// The `notAfter` of the unsigned part `part` issued to the device, or nil
    /// when it was never issued to it.
    func onlinePart(_ deviceID: String, part: String) async throws(TokenMintError) -> Int64?
}

extension VerifierStore {
    /// Records `identifier` once, with no attempt and no slot.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64) async throws(TokenMintError) -> Bool {
        try await recordOnce(identifier, expiresAt: expiresAt, attempt: nil, spending: nil)
    }

    /// Records `identifier` once for `attempt`, spending no slot.
    public func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]?) async throws(TokenMintError) -> Bool {
        try await recordOnce(identifier, expiresAt: expiresAt, attempt: attempt, spending: nil)
    }
}
