public import TokenMintCore
import TokenMintCrypto

extension TokenMintError.Code {
    /// The codes `TokenMintStore` raises (domain `store`).
    public static var store: StoreCodes { StoreCodes() }

    /// The `store` domain's codes, reached as `.store.<name>`.
    public struct StoreCodes: Sendable {
        /// The store file cannot be opened or created.
        public var cannotOpen: TokenMintError.Code { .init(domain: "store", name: "cannotOpen") }
        /// The file is not a TokenMint store, or is damaged.
        public var corrupted: TokenMintError.Code { .init(domain: "store", name: "corrupted") }
        /// The master key does not open this store's secrets.
        public var wrongMasterKey: TokenMintError.Code { .init(domain: "store", name: "wrongMasterKey") }
        /// The master key is missing or malformed (file, variable or passphrase).
        public var masterKeyUnavailable: TokenMintError.Code { .init(domain: "store", name: "masterKeyUnavailable") }
        /// The disk is full: nothing was written.
        public var diskFull: TokenMintError.Code { .init(domain: "store", name: "diskFull") }
        /// The store is read-only: nothing was written.
        public var readOnly: TokenMintError.Code { .init(domain: "store", name: "readOnly") }
        /// Another process held the store too long.
        public var busy: TokenMintError.Code { .init(domain: "store", name: "busy") }
        /// Any other SQLite failure.
        public var databaseFailure: TokenMintError.Code { .init(domain: "store", name: "databaseFailure") }
        /// An argument is out of range (empty or over-long names, oversized values).
        public var invalidArgument: TokenMintError.Code { .init(domain: "store", name: "invalidArgument") }
        /// The change contradicts what is stored (another record for an enrolled device).
        public var conflict: TokenMintError.Code { .init(domain: "store", name: "conflict") }
        /// What the call needs is not stored (a device that is not enrolled).
        public var notFound: TokenMintError.Code { .init(domain: "store", name: "notFound") }
        /// The database server cannot be reached, or the connection broke; the
        /// call's change may or may not have committed only where the call says so.
        public var unavailable: TokenMintError.Code { .init(domain: "store", name: "unavailable") }
        /// The database server did not answer in time.
        public var timeout: TokenMintError.Code { .init(domain: "store", name: "timeout") }
    }
}
