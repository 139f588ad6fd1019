import Foundation
import Testing

/// Locations of the reference data: the project's own `Vectors/` and the
/// public vectors in `../shared/vectors/` beside the checkout.
enum SharedVectors {
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let ownVectors = repositoryRoot.appendingPathComponent("Vectors")
    static let shared = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors")

    /// The shared folder, or a recorded issue that says clearly why the test cannot run.
    static func folder(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> URL? {
        let url = shared.appendingPathComponent(name)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            Issue.record(
                "\(url.path) is absent: the shared reference vectors must sit beside the checkout as ../shared/vectors",
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
