import TokenMintCore
import CBenchRaw
import Foundation

/// tokenmint-bench: TokenMint's signers and verifiers against the raw C calls
/// they wrap and against swift-crypto, interleaved in one process.
///
///     tokenmint-bench [--quick] [--filter TEXT] [--json FILE] [--svg FILE] [--no-scaling] [--postgres URL] [--durable]
///
/// `--postgres URL` adds the verifier scale-out table (PostgreSQL and SQLite
/// ledgers at 1, 4 and 16 concurrent verifiers, and a bare insert loop;
/// PostgreSQL offline grants, and the bare single-row grant statement; it
/// empties the ledger, so only a throwaway server on this machine is taken);
/// `--durable` the durable paths (quota, ledger, FIDO2 counters, refresh
/// rotation) at 1, 4 and 16 concurrent callers, SQLite next to memory.
struct Options {
    var quick = false
    var filter: String?
    var json: String?
    var svg: String?
    var scaling = true
    var postgres: String?
    var durable = false
    var instructions: Int?

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--quick": quick = true
            case "--filter": filter = iterator.next()
            case "--json": json = iterator.next()
            case "--svg": svg = iterator.next()
            case "--no-scaling": scaling = false
            case "--postgres": postgres = iterator.next()
            case "--durable": durable = true
            case "--instructions":
                guard let n = iterator.next().flatMap(Int.init), (1...100_000).contains(n) else { throw BenchError("--instructions takes a count, 1 to 100000") }
                instructions = n
            case "-h", "--help":
                print("usage: tokenmint-bench [--quick] [--filter TEXT] [--json FILE] [--svg FILE] [--no-scaling] [--postgres URL] [--durable] [--instructions N]")
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
    // The gate counts the same inputs on every run: libsodium's random bytes (seeds, nonces) from a fixed seed.
    if options.instructions != nil, CBenchRaw_deterministic_random() != 0 { throw BenchError("cannot fix libsodium's random bytes") }
    guard CBenchRaw_init() == 0 else { throw BenchError("libsodium or OpenSSL failed to initialise") }
    if let iterations = options.instructions {
        try InstructionGate.run(iterations: iterations, filter: options.filter)
        exit(0)
    }
    let rounds = options.quick ? 3 : 11
    let batch = options.quick ? 0.01 : 0.05
    var groups = try Suite.groups()
    if let filter = options.filter { groups = groups.filter { $0.name.localizedCaseInsensitiveContains(filter) } }

    var results: [Measurement] = []
    var scaling: [Scaling] = []
    let progress: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8)) }
    for group in groups {
        let measured = Harness.measure(group, rounds: rounds, batchSeconds: batch, progress: progress)
        results += measured
        if options.scaling, let ours = measured.first(where: { $0.implementation == .tokenmint }),
            let row = Harness.scaling(group, opsPerSecond: ours.median, rounds: options.quick ? 1 : 5, batchSeconds: batch * 2, progress: progress)
        {
            scaling.append(row)
        }
    }
    var scaleOut: [VerifierScaleSuite.Row] = []
    if let url = options.postgres {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        scaleOut = try await VerifierScaleSuite.run(url: url, quick: options.quick, directory: directory, progress: progress)
    }
    var durable: [DurableSuite.Row] = []
    if options.durable {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        durable = try await DurableSuite.run(quick: options.quick, directory: directory, progress: progress)
    }
    FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))

    print("TokenMint benchmark — \(rounds) interleaved rounds, median ops/s (min–max); \(options.quick ? "quick" : "full") run")
    let info = machine()
    print("\(info["cpu"] ?? "?"), \(info["cores"] ?? "?") cores; libsodium \(info["libsodium"] ?? "?"); \(info["openssl"] ?? "?")\n")
    print(pad("operation", 34) + pad("implementation", 26) + pad("ops/s", 10, right: true) + pad("µs/op", 9, right: true)
        + "  " + pad("min–max", 19) + pad("allocs", 7, right: true) + pad("×raw", 7, right: true) + pad("×peer", 7, right: true) + "  goal")
    var previous = ""
    var missed: [String] = []
    for m in results {
        let name = m.group == previous ? "" : m.group
        previous = m.group
        var line = pad(name, 34) + pad(m.implementation.label, 26) + pad(format(m.median), 10, right: true)
            + pad(String(format: "%.2f", 1e6 / m.median), 9, right: true) + "  "
            + pad("\(format(m.minimum))–\(format(m.maximum))", 19)
        line += pad(m.allocations.map { String(format: $0 < 10 ? "%.1f" : "%.0f", $0) } ?? "", 7, right: true)
        line += pad(m.ratioToRaw.map { String(format: "%.2f", $0) } ?? "", 7, right: true)
        line += pad(m.ratioToPeer.map { String(format: "%.2f", $0) } ?? "", 7, right: true)
        if let goal = m.goal, let ratio = m.ratioToRaw {
            let met = ratio >= goal
            line += "  ≥\(goal) \(met ? "met" : "MISSED")"
            if !met { missed.append("\(m.group): \(String(format: "%.2f", ratio))× raw") }
        }
        print(line)
    }
    // Allocations (issue 20, item 3): EdDSA mint ≤ 2 and verify ≤ 4 per
    // token; ES256 and RS256 no more than the raw EVP call's own plus 2.
    // jwt-kit's count is shown next to them.
    var allocationLines: [String] = []
    for group in Set(results.map(\.group)).sorted() where group.hasPrefix("JWT ") {
        let rows = results.filter { $0.group == group }
        guard let ours = rows.first(where: { $0.implementation == .tokenmint })?.allocations,
            let peer = rows.first(where: { if case .peer = $0.implementation { true } else { false } })?.allocations
        else { continue }
        let raw = rows.first(where: { if case .raw = $0.implementation { true } else { false } })?.allocations
        let limit: Double? = switch group {
        case "JWT EdDSA mint": 2
        case "JWT EdDSA verify": 4
        case "JWT ES256 mint", "JWT ES256 verify", "JWT RS256 mint", "JWT RS256 verify": raw.map { $0 + 2 }
        default: nil
        }
        var line = pad(group, 34) + pad(String(format: "%.1f", ours), 10, right: true) + pad(raw.map { String(format: "%.1f", $0) } ?? "", 10, right: true)
            + pad(String(format: "%.1f", peer), 10, right: true)
        if let limit {
            let met = ours <= limit + 0.05
            line += "  ≤\(String(format: "%.0f", limit)) " + (met ? "met" : "MISSED")
            if !met { missed.append("\(group): \(String(format: "%.1f", ours)) allocations, goal ≤ \(String(format: "%.0f", limit))") }
        }
        allocationLines.append(line)
    }
    if !allocationLines.isEmpty {
        print("\nHeap allocations per operation (malloc family, all threads)")
        print(pad("operation", 34) + pad("TokenMint", 10, right: true) + pad("raw C", 10, right: true) + pad("jwt-kit", 10, right: true) + "  goal")
        allocationLines.forEach { print($0) }
    }
    if !scaling.isEmpty {
        print("\nScaling: TokenMint on 2 threads at once vs 1 thread (\(info["cores"] ?? "?") cores), median ops/s")
        print(pad("operation", 34) + pad("1 thread", 10, right: true) + pad("2 threads", 11, right: true) + pad("×1", 7, right: true)
            + pad("raw C ×1", 10, right: true) + "  goal")
        for row in scaling {
            var line = pad(row.group, 34) + pad(format(row.one), 10, right: true) + pad(format(row.two), 11, right: true)
                + pad(String(format: "%.2f", row.ratio), 7, right: true) + pad(row.rawRatio.map { String(format: "%.2f", $0) } ?? "", 10, right: true)
            if let goal = row.goal {
                line += "  ≥\(goal) " + (row.ratio >= goal ? "met" : "MISSED")
                if row.ratio < goal { missed.append("\(row.group): \(String(format: "%.2f", row.ratio))× on 2 threads") }
            }
            print(line)
        }
    }
    if !scaleOut.isEmpty {
        print("\nVerifier scale-out: the shared ledger (verifies, each on a fresh token, and inserts) and offline grants (\(scaleOut[0].operations) per row)")
        print(pad("row", 44) + pad("callers", 10, right: true) + pad("ops/s", 10, right: true) + pad("p50 µs", 10, right: true)
            + pad("p99 µs", 10, right: true) + pad("×bare", 8, right: true))
        for row in scaleOut {
            let bare = scaleOut.first { $0.backend.hasPrefix("bare") && $0.kind == row.kind && $0.concurrency == row.concurrency }
            print(pad(row.backend, 44) + pad(String(row.concurrency), 10, right: true) + pad(format(row.perSecond), 10, right: true)
                + pad(format(row.p50), 10, right: true) + pad(format(row.p99), 10, right: true)
                + pad(bare.map { String(format: "%.2f", row.perSecond / $0.perSecond) } ?? "", 8, right: true))
        }
    }
    if !durable.isEmpty {
        print("\nDurable paths: concurrent callers, each returning after its own write is durable (\(durable[0].row.operations) per row)")
        print(pad("path", 30) + pad("store", 8) + pad("callers", 9, right: true) + pad("ops/s", 10, right: true) + pad("p50 µs", 10, right: true)
            + pad("p99 µs", 10, right: true) + pad("×1 caller", 11, right: true) + pad("×memory 1", 11, right: true))
        for row in durable {
            let single = durable.first { $0.path == row.path && $0.store == row.store && $0.row.concurrency == 1 }
            let memory = durable.first { $0.path == row.path && $0.store == "memory" && $0.row.concurrency == 1 }
            print(pad(row.path, 30) + pad(row.store, 8) + pad(String(row.row.concurrency), 9, right: true) + pad(format(row.row.perSecond), 10, right: true)
                + pad(format(row.row.p50), 10, right: true) + pad(format(row.row.p99), 10, right: true)
                + pad(single.map { String(format: "%.2f", row.row.perSecond / $0.row.perSecond) } ?? "", 11, right: true)
                + pad(memory.map { String(format: "%.2f", row.row.perSecond / $0.row.perSecond) } ?? "", 11, right: true))
        }
    }
    print("\nGoals: signers and verifiers ≥ 0.95× their raw C call; JWT EdDSA/ES256 mint and every JWT verify ≥ 0.95× "
        + "(RS/PS mint ≥ 0.9×, HS256 mint ≥ 0.7×, HS256 verify ≥ 0.6×); pay verify ≥ 0.95×, FIDO2 getAssertion ≥ 0.9×, "
        + "Aztec token → matrix ≥ 0.95×; JWT allocations: EdDSA mint ≤ 2, verify ≤ 4, ES256/RS256 ≤ the raw call's + 2; "
        + "signers ≥ 1.8× on 2 threads. " + (missed.isEmpty ? "All met." : "Missed: " + missed.joined(separator: "; ")))

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
            if let a = m.allocations { row["allocations_per_op"] = a }
            return row
        }
        let scalingRows: [[String: Any]] = scaling.map { row in
            var object: [String: Any] = ["operation": row.group, "one_thread_ops_per_second": row.one, "two_threads_ops_per_second": row.two,
                                         "ratio": row.ratio]
            if let goal = row.goal { object["goal_ratio"] = goal }
            if let raw = row.rawRatio { object["raw_ratio"] = raw }
            return object
        }
        let document: [String: Any] = [
            "tool": "tokenmint-bench", "quick": options.quick, "rounds": rounds, "machine": info,
            "date": ISO8601DateFormatter().string(from: Date()), "results": rows, "scaling": scalingRows,
            "durable_paths": durable.map { row in
                ["path": row.path, "store": row.store, "callers": row.row.concurrency, "operations": row.row.operations,
                 "ops_per_second": row.row.perSecond, "p50_microseconds": row.row.p50, "p99_microseconds": row.row.p99] as [String: Any]
            },
            "verifier_scale_out": scaleOut.map { row in
                ["ledger": row.backend, "kind": row.kind, "verifiers": row.concurrency, "operations": row.operations, "ops_per_second": row.perSecond,
                 "p50_microseconds": row.p50, "p99_microseconds": row.p99] as [String: Any]
            },
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
        print("wrote \(path)")
    }
    if let path = options.svg {
        try Chart.svg(results, title: "TokenMint ÷ raw C call and ÷ Swift peer (median ops/s, \(rounds) rounds; \(info["cpu"] ?? "?"))")
            .write(toFile: path, atomically: true, encoding: .utf8)
        print("wrote \(path)")
    }
} catch {
    FileHandle.standardError.write(Data("tokenmint-bench: \(error)\n".utf8))
    exit(2)
}
