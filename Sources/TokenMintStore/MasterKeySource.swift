public import TokenMintCrypto

/// Where the master key that seals the store's secrets comes from.
public enum MasterKeySource: Sendable {
    /// A 32-byte key file, mode 0600 (a file that group or others may read
    /// or write, or a symbolic link, is refused). Created (mode 0600 from
    /// the first byte, random key) when missing, `create` is true and the
    /// store is new: a store that exists never gets a new master key, so a
    /// deleted key file is an error, not a silent fresh start.
    case file(path: String, create: Bool = true)
    /// An environment variable holding the key as base64url (43 characters).
    case environment(variable: String)
    /// A passphrase, stretched with Argon2id; the salt is kept in the store.
    case passphrase(String, cost: PasswordKeyDerivation.Cost = .interactive)
    /// A key the host holds already.
    case key(SecureBytes)
}
