import TokenMintStore
public import TokenMintCore

/// The checks every ``VerifierStore`` applies to its arguments.
public enum VerifierStoreLimits {
    /// Ledger identifiers and attempts are 1 to 64 bytes.
    public static func checkIdentifier(_ identifier: [UInt8], attempt: [UInt8]? = nil) throws(TokenMintError) {
        guard !identifier.isEmpty, identifier.count <= 64 else { throw TokenMintError(.store.invalidArgument, "ledger identifiers are 1 to 64 bytes") }
        if let attempt { guard !attempt.isEmpty, attempt.count <= 64 else { throw TokenMintError(.store.invalidArgument, "attempts are 1 to 64 bytes") } }
    }

    /// Device IDs are 1 to 128 bytes of UTF-8 without NUL; records at most 4 KiB.
    public static func checkDevice(_ deviceID: String, record: [UInt8]? = nil) throws(TokenMintError) {
        guard !deviceID.isEmpty, deviceID.utf8.count <= 128 else { throw TokenMintError(.store.invalidArgument, "device IDs are 1 to 128 bytes") }
        // PostgreSQL's text cannot hold NUL: refused on every backend, so that
        // one such ID fails its own call, not a batch of others' grants.
        guard !deviceID.utf8.contains(0) else { throw TokenMintError(.store.invalidArgument, "device IDs hold no NUL byte") }
        if let record { guard !record.isEmpty, record.count <= 4096 else { throw TokenMintError(.store.invalidArgument, "device records are 1 to 4096 bytes") } }
    }

    /// Slots are 1 to 64 bytes.
    public static func checkSlot(_ slot: [UInt8]?) throws(TokenMintError) {
        if let slot { guard !slot.isEmpty, slot.count <= 64 else { throw TokenMintError(.store.invalidArgument, "slots are 1 to 64 bytes") } }
    }

    /// Issued unsigned parts are 1 to 256 bytes.
    public static func checkPart(_ part: String) throws(TokenMintError) {
        guard !part.isEmpty, part.utf8.count <= 256 else { throw TokenMintError(.store.invalidArgument, "unsigned parts are 1 to 256 bytes") }
    }

    /// Grants hold 1 to 1,000,000 values.
    public static func checkGrant(count: Int64) throws(TokenMintError) {
        guard (1...1_000_000).contains(count) else { throw TokenMintError(.store.invalidArgument, "a grant holds 1 to 1,000,000 counter values") }
    }
}
