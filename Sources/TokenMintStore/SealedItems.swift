package import TokenMintCore
package import TokenMintCrypto

/// What every durable store does the same way: name and value limits, how a
/// secret is sealed under the master key (XChaCha20-Poly1305, bound to its
/// name) and the sealed check that tells a wrong master key at open.
package enum SealedItems {
    /// Names are at most 2 KiB: room for a prefix and the base64url of a
    /// 1,023-byte WebAuthn credential ID (1,364 characters).
    package static let maximumNameBytes = 2048
    /// Values are at most 1 MiB.
    package static let maximumValueBytes = 1 << 20

    /// Refuses an empty or over-long name, or one with a NUL (which
    /// PostgreSQL's text cannot hold: both stores refuse it alike).
    package static func checkName(_ name: String) throws(TokenMintError) {
        guard !name.isEmpty, name.utf8.count <= maximumNameBytes, !name.utf8.contains(0) else {
            throw TokenMintError(.store.invalidArgument, "names are 1 to \(maximumNameBytes) bytes without NUL")
        }
    }

    /// Refuses an over-long value.
    package static func checkValue(_ value: [UInt8]) throws(TokenMintError) {
        guard value.count <= maximumValueBytes else { throw TokenMintError(.store.invalidArgument, "values are at most 1 MiB") }
    }

    /// Refuses an over-long secret.
    package static func checkSecret(_ value: SecureBytes) throws(TokenMintError) {
        guard value.count <= maximumValueBytes else { throw TokenMintError(.store.invalidArgument, "secrets are at most 1 MiB") }
    }

    /// `value` sealed for the item `name`.
    package static func seal(_ value: SecureBytes, name: String, key: SecureBytes) throws(TokenMintError) -> [UInt8] {
        do {
            return try XChaCha20Poly1305.seal(value, key: key, associatedData: Array("item:\(name)".utf8))
        } catch {
            throw TokenMintError(.store.databaseFailure, "cannot seal \(name)", underlying: error)
        }
    }

    /// The secret `name` opened; `wrongMasterKey` when it does not open.
    package static func open(_ sealed: [UInt8], name: String, key: SecureBytes) throws(TokenMintError) -> SecureBytes {
        do {
            return try XChaCha20Poly1305.open(sealed, key: key, associatedData: Array("item:\(name)".utf8))
        } catch {
            throw TokenMintError(.store.wrongMasterKey, "the secret \(name) does not open with the master key", underlying: error)
        }
    }

    private static let checkPlaintext = Array("tokenmint-store-v1".utf8)
    private static let checkAssociatedData = Array("meta:check".utf8)

    /// A new key check: a known plaintext sealed under `key`, kept beside the
    /// items so that a store opened with another key is refused at once.
    package static func sealKeyCheck(_ key: SecureBytes) throws(TokenMintError) -> [UInt8] {
        do {
            return try XChaCha20Poly1305.seal(checkPlaintext, key: key, associatedData: checkAssociatedData)
        } catch {
            throw TokenMintError(.store.databaseFailure, "cannot seal the key check", underlying: error)
        }
    }

    /// Throws `wrongMasterKey` unless `sealed` is a key check made with `key`.
    package static func verifyKeyCheck(_ sealed: [UInt8], key: SecureBytes) throws(TokenMintError) {
        guard let opened = try? XChaCha20Poly1305.open(sealed, key: key, associatedData: checkAssociatedData),
            opened == SecureBytes(checkPlaintext)
        else { throw TokenMintError(.store.wrongMasterKey, "the master key does not open this store") }
    }
}

extension MasterKeySource {
    /// The master key this source names, for a store whose salt is `salt`
    /// (a passphrase is stretched with it; a key file is created only for a
    /// new store).
    package func resolve(salt: [UInt8], storeIsNew: Bool) throws(TokenMintError) -> SecureBytes {
        try SQLiteStore.resolve(self, salt: salt, storeIsNew: storeIsNew)
    }
}
