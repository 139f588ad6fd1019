public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The libsodium calls are in SecretBox_sodium.swift.

/// Argon2id key derivation (libsodium `crypto_pwhash`).
public enum PasswordKeyDerivation {
    /// The salt length in bytes.
    public static let saltByteCount = 16

    /// Work factors.
    public struct Cost: Sendable, Hashable {
        /// Passes over memory.
        public var operations: UInt64
        /// Memory in bytes.
        public var memory: Int
        /// libsodium's interactive limits (2 passes, 64 MiB): the default.
        public static let interactive = Cost(operations: 2, memory: 64 << 20)
        /// libsodium's moderate limits (3 passes, 256 MiB).
        public static let moderate = Cost(operations: 3, memory: 256 << 20)
        /// Minimum limits, for tests only.
        public static let minimum = Cost(operations: 1, memory: 8192)
        /// Work factors.
        public init(operations: UInt64, memory: Int) {
            self.operations = operations
            self.memory = memory
        }
    }

    /// A `length`-byte key from `passphrase` and `salt` with Argon2id.
    public static func deriveKey(
        passphrase: some DataProtocol, salt: some DataProtocol, length: Int = 32, cost: Cost = .interactive
    ) throws(TokenMintError) -> SecureBytes {
        try Sodium.ensure()
        let salt = Array(salt)
        guard salt.count == saltByteCount else { throw TokenMintError(.crypto.invalidParameter, "Argon2id salt must be \(saltByteCount) bytes") }
        guard (16...64).contains(length) else { throw TokenMintError(.crypto.invalidParameter, "derived keys are 16 to 64 bytes") }
        let secret = SecureBytes(passphrase)
        return try sodiumArgon2id(passphrase: secret, salt: salt, length: length, cost: cost)
    }
}
