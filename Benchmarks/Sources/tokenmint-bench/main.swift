import CBenchRaw
import Foundation

/// tokenmint-bench: TokenMint's signers and verifiers against the raw C calls
/// they wrap and against swift-crypto, interleaved in one process.
///
///     tokenmint-bench [--quick] [--filter TEXT] [--json FILE]
struct Options {
    var quick = false
    var filter: String?
    var json: String?

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--quick": quick = true
            case "--filter": filter = iterator.next()
            case "--json": json = iterator.next()
            case "-h", "--help":
                print("usage: tokenmint-bench [--quick] [--filter TEXT] [--json FILE]")
                exit(0)
            default: throw BenchError("unknown argument \(argument)")
            }
        }
    }
}

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return right ? fill + text : text + fill
}

func format(_ value: Double) -> String {
    if value >= 100 { return String(Int(value.rounded())).reversed().enumerated()
        .map { $0.offset > 0 && $0.offset % 3 == 0 ? "\($0.element)," : "\($0.element)" }.reversed().joined() }
    return String(format: "%.1f", value)
}

func machine() -> [String: String] {
    var info: [String: String] = ["cores": String(ProcessInfo.processInfo.activeProcessorCount)]
    if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        .split(separator: "\n").first(where: { $0.hasPrefix("model name") })
    {
        info["cpu"] = cpu.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
    }
    info["os"] = ProcessInfo.processInfo.operatingSystemVersionString
    info["libsodium"] = String(cString: CBenchRaw_sodium_version())
    info["openssl"] = String(cString: CBenchRaw_openssl_version())
    return info
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    guard CBenchRaw_init() == 0 else { throw BenchError("libsodium or OpenSSL failed to initialise") }
    let rounds = options.quick ? 3 : 11
    let batch = options.quick ? 0.01 : 0.05
    var groups = try Suite.groups()
    if let filter = options.filter { groups = groups.filter { $0.name.localizedCaseInsensitiveContains(filter) } }

    var results: [Measurement] = []
    for group in groups {
        results += Harness.measure(group, rounds: rounds, batchSeconds: batch) { line in
            FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
        }
    }
    FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))

    print("TokenMint benchmark — \(rounds) interleaved rounds, median ops/s (min–max); \(options.quick ? "quick" : "full") run")
    let info = machine()
    print("\(info["cpu"] ?? "?"), \(info["cores"] ?? "?") cores; libsodium \(info["libsodium"] ?? "?"); \(info["openssl"] ?? "?")\n")
    print(pad("operation", 30) + pad("implementation", 26) + pad("ops/s", 10, right: true) + pad("µs/op", 9, right: true)
        + "  " + pad("min–max", 19) + pad("×raw", 7, right: true) + pad("×peer", 7, right: true) + "  goal")
    var previous = ""
    var missed: [String] = []
    for m in results {
        let name = m.group == previous ? "" : m.group
        previous = m.group
        var line = pad(name, 30) + pad(m.implementation.label, 26) + pad(format(m.median), 10, right: true)
            + pad(String(format: "%.2f", 1e6 / m.median), 9, right: true) + "  "
            + pad("\(format(m.minimum))–\(format(m.maximum))", 19)
        line += pad(m.ratioToRaw.map { String(format: "%.2f", $0) } ?? "", 7, right: true)
        line += pad(m.ratioToPeer.map { String(format: "%.2f", $0) } ?? "", 7, right: true)
        if let goal = m.goal, let ratio = m.ratioToRaw {
            let met = ratio >= goal
            line += "  ≥\(goal) \(met ? "met" : "MISSED")"
            if !met { missed.append("\(m.group): \(String(format: "%.2f", ratio))× raw") }
        }
        print(line)
    }
    print("\nGoals: signers and verifiers ≥ 0.95× their raw C call; JWT mint and verify ≥ 0.90× (HS256 mint ≥ 0.5×). " + (missed.isEmpty ? "All met." : "Missed: " + missed.joined(separator: "; ")))

    if let path = options.json {
        let rows: [[String: Any]] = results.map { m in
            var row: [String: Any] = [
                "operation": m.group, "implementation": m.implementation.label, "kind": m.implementation.kind,
                "ops_per_second": m.median, "min_ops_per_second": m.minimum, "max_ops_per_second": m.maximum,
                "microseconds_per_op": 1e6 / m.median,
            ]
            if let r = m.ratioToRaw { row["ratio_to_raw"] = r }
            if let r = m.ratioToPeer { row["ratio_to_peer"] = r }
            if let p = m.peerName { row["peer"] = p }
            if let g = m.goal { row["goal_ratio_to_raw"] = g }
            return row
        }
        let document: [String: Any] = [
            "tool": "tokenmint-bench", "quick": options.quick, "rounds": rounds, "machine": info,
            "date": ISO8601DateFormatter().string(from: Date()), "results": rows,
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
        print("wrote \(path)")
    }
} catch {
    FileHandle.standardError.write(Data("tokenmint-bench: \(error)\n".utf8))
    exit(2)
}
