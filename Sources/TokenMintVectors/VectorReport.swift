import Foundation
import TokenMintCrypto

/// The outcome of running one vector file.
public struct VectorReport: Sendable {
    /// The file's name (or the label it was run under).
    public var file: String
    /// The schema the file declared.
    public var schema: String
    /// Cases that came out as the file says (acceptable cases included).
    public var passed = 0
    /// Cases that did not.
    public var failed = 0
    /// `acceptable` cases this implementation accepted.
    public var acceptableAccepted = 0
    /// `acceptable` cases this implementation rejected.
    public var acceptableRejected = 0
    /// Cases that came out against the file but are documented upstream
    /// defects: reported, counted as passed, listed in ``exceptions``.
    public var exceptions: [String] = []
    /// One line per failed case.
    public var failures: [String] = []

    /// Creates an empty report.
    public init(file: String, schema: String) {
        self.file = file
        self.schema = schema
    }

    mutating func record(_ id: Int, expected: String, accepted: Bool, comment: String, exception: String? = nil) {
        switch expected {
        case "acceptable":
            passed += 1
            if accepted { acceptableAccepted += 1 } else { acceptableRejected += 1 }
        case "valid" where accepted, "invalid" where !accepted:
            passed += 1
        default:
            if let exception {
                passed += 1
                exceptions.append("tcId \(id): \(exception)")
            } else {
                failed += 1
                failures.append("tcId \(id) (\(expected), \(comment)): \(accepted ? "accepted" : "rejected")")
            }
        }
    }

    /// One line: `file: schema, N passed, M failed (...)`.
    public var summary: String {
        var line = "\(file): \(schema), \(passed) passed, \(failed) failed"
        if acceptableAccepted + acceptableRejected > 0 {
            line += " (acceptable: \(acceptableAccepted) accepted, \(acceptableRejected) rejected)"
        }
        if !exceptions.isEmpty { line += " (\(exceptions.count) documented exceptions)" }
        return line
    }
}
