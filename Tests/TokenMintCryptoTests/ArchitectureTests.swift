import Foundation
import Testing

/// ARCHITECTURE.md is the map a new maintainer reads first: its module table
/// must say what Package.swift says.
@Suite("Architecture")
struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The TokenMint modules each library target of Package.swift depends on,
    /// by short name (`Core`, `Crypto`, …); the umbrella `TokenMint` is left out.
    static func manifestDependencies() throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var result: [String: Set<String>] = [:]
        // Each library target is declared as `.target(` and a new line (a dependency on a
        // target is written inline), and runs to the next declaration.
        let declarations = manifest.components(separatedBy: ".target(\n").dropFirst()
        for declaration in declarations {
            let body = declaration.components(separatedBy: ".testTarget(")[0].components(separatedBy: ".executableTarget(")[0]
            guard let name = body.firstMatch(of: try Regex(#"name: "TokenMint(\w+)""#))?.output[1].substring else { continue }
            let modules = body.matches(of: try Regex(#""TokenMint(\w+)""#)).compactMap { $0.output[1].substring.map(String.init) }
            result["TokenMint" + name] = Set(modules).subtracting([String(name)])
        }
        return result
    }

    /// The "depends on" column of ARCHITECTURE.md's module table, TokenMint modules only.
    static func documentedDependencies() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let known: Set<String> = ["Core", "Crypto", "JOSE", "MLDSA", "CBOR", "Aztec", "Store", "Pay", "WebAuthn", "FIDO", "Auth", "Postgres", "Server", "HTTP", "Vectors"]
        var result: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| TokenMint") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, cells[0] != "TokenMint" else { continue }
            let words = cells[cells.count - 1].split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
            result[cells[0]] = Set(words.filter(known.contains))
        }
        return result
    }

    @Test("the module table of ARCHITECTURE.md matches Package.swift")
    func tableMatchesManifest() throws {
        let manifest = try Self.manifestDependencies()
        let documented = try Self.documentedDependencies()
        #expect(manifest.count >= 11, "the manifest's targets were not found")
        #expect(Set(manifest.keys) == Set(documented.keys), "modules: Package.swift \(manifest.keys.sorted()), ARCHITECTURE.md \(documented.keys.sorted())")
        for (module, dependencies) in manifest {
            #expect(documented[module] == dependencies, "\(module): Package.swift \(dependencies.sorted()), ARCHITECTURE.md \(documented[module]?.sorted() ?? [])")
        }
    }
}
