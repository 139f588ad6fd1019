import Foundation
import Testing
import TokenMintCrypto

/// `Vectors/README.md` lists every file in `Vectors/` with its SHA-256 (the
/// "## Files" table: the path in backticks in the first column, relative to
/// `Vectors/`, the hex SHA-256 in the last). A vector file that changes,
/// disappears or appears without that list changing fails here.
@Suite("Vectors/README.md manifest")
struct VectorManifestTests {
    struct Entry {
        var path: String
        var sha256: String
    }

    /// The rows of the "## Files" table of Vectors/README.md.
    static func manifest() throws -> [Entry] {
        let readme = SharedVectors.ownVectors.appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let ticks = CharacterSet(charactersIn: "`")
        var entries: [Entry] = []
        var inFiles = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.hasPrefix("## ") {
                inFiles = line == "## Files"
                continue
            }
            guard inFiles, line.hasPrefix("| `") else { continue }
            // "| `path` | ... | `sha256` |" splits into ["", "`path`", ..., "`sha256`", ""].
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else {
                Issue.record("Vectors/README.md: a Files row with too few columns: \(line)")
                continue
            }
            entries.append(Entry(path: cells[1].trimmingCharacters(in: ticks),
                                 sha256: cells[cells.count - 2].trimmingCharacters(in: ticks)))
        }
        return entries
    }

    /// Every regular file under Vectors/ (relative paths), except the README itself.
    static func filesOnDisk() -> [String] {
        let root = SharedVectors.ownVectors.path
        let paths = FileManager.default.subpaths(atPath: root) ?? []
        return paths.filter { path in
            guard path != "README.md", (path as NSString).lastPathComponent != ".DS_Store" else { return false }
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory)
            return exists && !isDirectory.boolValue
        }.sorted()
    }

    @Test("every file listed in Vectors/README.md exists and has the listed SHA-256")
    func listedFilesMatch() throws {
        let entries = try Self.manifest()
        #expect(entries.count >= 6, "Vectors/README.md: no Files table found")
        let paths = entries.map(\.path)
        #expect(Set(paths).count == paths.count, "Vectors/README.md lists a file twice")
        let hexDigits = Set("0123456789abcdef")
        for entry in entries {
            #expect(entry.sha256.count == 64 && entry.sha256.allSatisfy { hexDigits.contains($0) },
                    "\(entry.path): \"\(entry.sha256)\" is not a lowercase hex SHA-256")
            let url = SharedVectors.ownVectors.appendingPathComponent(entry.path)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                Issue.record("\(entry.path) is listed in Vectors/README.md but is not in Vectors/")
                continue
            }
            let digest = Hex.encode(HashFunction.sha256.hash([UInt8](data)))
            #expect(digest == entry.sha256, "\(entry.path): SHA-256 is \(digest), Vectors/README.md says \(entry.sha256)")
        }
    }

    @Test("every file in Vectors/ is listed in Vectors/README.md")
    func everyFileIsListed() throws {
        let listed = Set(try Self.manifest().map(\.path))
        let onDisk = Self.filesOnDisk()
        #expect(!onDisk.isEmpty, "no files found under \(SharedVectors.ownVectors.path)")
        let unlisted = onDisk.filter { !listed.contains($0) }
        #expect(unlisted.isEmpty, "in Vectors/ but not listed in Vectors/README.md: \(unlisted)")
    }
}
