public import TokenMintCore
public import TokenMintCrypto

/// The operations a transaction offers; all of them commit or roll back together.
public protocol StoreTransaction {
    /// A plain value.
    func value(_ name: String) throws(TokenMintError) -> [UInt8]?
    /// Stores a plain value.
    func setValue(_ name: String, _ value: [UInt8]) throws(TokenMintError)
    /// A secret, opened with the master key.
    func secret(_ name: String) throws(TokenMintError) -> SecureBytes?
    /// Seals and stores a secret.
    func setSecret(_ name: String, _ value: SecureBytes) throws(TokenMintError)
    /// Removes a value or secret.
    func remove(_ name: String) throws(TokenMintError)
    /// Removes every value and secret whose name sorts (bytewise, UTF-8)
    /// from `lower` up to but not including `upper`; returns how many.
    func removeValues(from lower: String, upTo upper: String) throws(TokenMintError) -> Int
    /// A counter's value (0 when never set).
    func counter(_ name: String) throws(TokenMintError) -> Int64
    /// Sets a counter.
    func setCounter(_ name: String, _ value: Int64) throws(TokenMintError)
    /// Adds `delta` to a counter and returns the new value.
    func increment(_ name: String, by delta: Int64) throws(TokenMintError) -> Int64
}
