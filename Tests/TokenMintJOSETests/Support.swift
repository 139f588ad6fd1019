import TokenMintCore
import Foundation
import Testing
import TokenMintJOSE

enum Paths {
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let vectors = repositoryRoot.appendingPathComponent("Vectors")

    /// A file under the repository's Vectors/, or a recorded issue saying clearly that it is absent.
    static func vector(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) -> URL? {
        let url = vectors.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path) else {
            Issue.record("\(url.path) is absent: the repository ships it as Vectors/\(path) (see Vectors/README.md)",
                         sourceLocation: sourceLocation)
            return nil
        }
        return url
    }

    static func json(_ url: URL) throws -> JSONObject {
        let value = try JSONParser.parse(Array(try Data(contentsOf: url)), limits: {
            var l = JSONParser.Limits()
            l.maximumBytes = 16 << 20
            l.maximumDepth = 64
            l.maximumMembers = 100_000
            return l
        }())
        return try #require(value.objectValue)
    }
}

/// Expects `body` to throw a `TokenMintError` with `code`.
func expectJOSE(_ code: TokenMintError.Code, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
                _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected TokenMintError.\(code), nothing was thrown \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
    } catch let error as TokenMintError {
        if error.code != code {
            Issue.record("expected TokenMintError.\(code), got \(error) \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected TokenMintError.\(code), got \(error)", sourceLocation: sourceLocation)
    }
}

extension JSONObject {
    func string(_ name: String) throws -> String { try #require(self[name]?.stringValue, "missing \(name)") }
    func object(_ name: String) throws -> JSONObject { try #require(self[name]?.objectValue, "missing \(name)") }
}

/// Base64url without padding, by hand, for building hostile tokens.
func b64(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}
func b64(_ text: String) -> String { b64(Array(text.utf8)) }
