import Foundation
import Testing

/// Locations of the reference data, all in the repository's `Vectors/`: the
/// project's own files at its top, the third-party vectors (Wycheproof, the
/// JOSE cookbook, the W3C WebAuthn vectors) in one folder per source.
enum SharedVectors {
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let ownVectors = repositoryRoot.appendingPathComponent("Vectors")

    /// `Vectors/<name>`, or a recorded issue that says clearly why the test cannot run.
    static func folder(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> URL? {
        let url = ownVectors.appendingPathComponent(name)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            Issue.record(
                "\(url.path) is absent: the repository ships Vectors/\(name)/ (see Vectors/README.md)",
                sourceLocation: sourceLocation)
            return nil
        }
        return url
    }

    static func files(in folder: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { folder.appendingPathComponent($0) }
    }
}
