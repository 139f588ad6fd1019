import TokenMintCore
import TokenMintCrypto

/// The error every `TokenMintStore` operation throws. Never carries a secret.
public struct StoreError: Error, Hashable, CustomStringConvertible, Sendable {
    /// The kind of failure.
    public let code: Code
    /// What went wrong (SQLite's message where it came from SQLite).
    public let reason: String
    /// The source file that raised the error.
    public let file: String
    /// The source line that raised the error.
    public let line: UInt

    /// Creates an error.
    public init(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = SafeText.escaped(reason)
        self.file = file
        self.line = line
    }

    /// `StoreError.<code>: <reason>`.
    public var description: String { "StoreError.\(code): \(reason)" }

    /// Equal when code and reason are.
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code && lhs.reason == rhs.reason }
    /// Hashes code and reason.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(reason)
    }

    /// A stable identifier of the kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// The store file cannot be opened or created.
        public static let cannotOpen = Code("cannotOpen")
        /// The file is not a TokenMint store, or is damaged.
        public static let corrupted = Code("corrupted")
        /// The master key does not open this store's secrets.
        public static let wrongMasterKey = Code("wrongMasterKey")
        /// The master key is missing or malformed (file, variable or passphrase).
        public static let masterKeyUnavailable = Code("masterKeyUnavailable")
        /// The disk is full: nothing was written.
        public static let diskFull = Code("diskFull")
        /// The store is read-only: nothing was written.
        public static let readOnly = Code("readOnly")
        /// Another process held the store too long.
        public static let busy = Code("busy")
        /// Any other SQLite failure.
        public static let databaseFailure = Code("databaseFailure")
        /// An argument is out of range (empty or over-long names, oversized values).
        public static let invalidArgument = Code("invalidArgument")
        /// The change contradicts what is stored (another record for an enrolled device).
        public static let conflict = Code("conflict")
        /// What the call needs is not stored (a device that is not enrolled).
        public static let notFound = Code("notFound")
        /// The database server cannot be reached, or the connection broke; the
        /// call's change may or may not have committed only where the call says so.
        public static let unavailable = Code("unavailable")
        /// The database server did not answer in time.
        public static let timeout = Code("timeout")
    }
}
