/// The error every `TokenMintAztec` operation throws: a stable ``Code``, a
/// reason (zint's own message where zint refused), and the place it was raised.
public struct AztecError: Error, Hashable, CustomStringConvertible, Sendable {
    /// The kind of failure.
    public let code: Code
    /// What went wrong.
    public let reason: String
    /// The source file that raised the error.
    public let file: String
    /// The source line that raised the error.
    public let line: UInt

    /// Creates an error.
    public init(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// `AztecError.<code>: <reason>`.
    public var description: String { "AztecError.\(code): \(reason)" }

    /// Equal when code and reason are.
    public static func == (lhs: AztecError, rhs: AztecError) -> Bool { lhs.code == rhs.code && lhs.reason == rhs.reason }
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

        /// The payload is empty.
        public static let emptyPayload = Code("emptyPayload")
        /// The payload does not fit the largest symbol, or the requested size, at the requested ECC.
        public static let tooLong = Code("tooLong")
        /// An option is out of range or options contradict each other.
        public static let invalidOption = Code("invalidOption")
        /// zint refused the data or failed.
        public static let encoderFailure = Code("encoderFailure")
        /// A rendering option is out of range (scale, quiet zone, image size).
        public static let invalidRendering = Code("invalidRendering")
    }
}
