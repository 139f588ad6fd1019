import ArgumentParser
import Foundation
import TokenMint

struct AztecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aztec", abstract: "Draw an Aztec code (terminal, PNG, SVG or JSON).",
        subcommands: [Encode.self, Sweep.self], defaultSubcommand: Encode.self)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case png, svg, txt, json
    }

    struct SizeOptions: ParsableArguments {
        @Option(help: "Error-correction level 1–4 (>10/23/36/50 % + 3 codewords).") var level: Int = 2
        @Option(help: "Fixed layer count (compact 1–4 with --compact, full-range 1–32 otherwise).") var layers: Int?
        @Flag(help: "Compact symbols only.") var compact = false
        @Option(help: "ECI to announce (26 = UTF-8).") var eci: Int?

        func options() throws -> AztecOptions {
            guard let ecc = AztecOptions.ErrorCorrection(rawValue: level) else { throw ValidationError("--level must be 1 to 4") }
            let size: AztecOptions.Size
            switch (layers, compact) {
            case (nil, false): size = .automatic
            case (nil, true): size = .compactOnly
            case (let n?, true): size = .compact(layers: n)
            case (let n?, false): size = .full(layers: n)
            }
            return AztecOptions(errorCorrection: ecc, size: size, eci: eci)
        }
    }

    struct Encode: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Encode TEXT, --hex HEX or --in FILE.")

        @OptionGroup var size: SizeOptions
        @Option(help: "png, svg, txt (terminal, the default) or json.") var format: Format = .txt
        @Option(help: "Pixels per module (PNG, SVG).") var scale: Int = 4
        @Option(help: "Quiet zone in modules.") var quietZone: Int?
        @Option(help: "Write to FILE instead of stdout.") var out: String?
        @Flag(help: "With --out: write through a symbolic link.") var force = false
        @Option(help: "The payload as hex.") var hex: String?
        @Option(name: .customLong("in"), help: "Read the payload from FILE.") var input: String?
        @Argument(help: "The payload as text.") var text: String?

        func run() throws {
            let given = [text != nil, hex != nil, input != nil].filter { $0 }.count
            guard given == 1 else { throw ValidationError("give exactly one of TEXT, --hex or --in") }
            let payload: [UInt8]
            if let text { payload = Array(text.utf8) } else if let hex { payload = try Hex.decode(hex) } else {
                payload = [UInt8](try readFile(input ?? "", limit: 1 << 20))
            }
            let symbol = try AztecEncoder.encode(payload, options: try size.options())
            let data: Data
            switch format {
            case .png: data = Data(try symbol.png(scale: scale, quietZone: quietZone ?? 4))
            case .svg: data = Data(try symbol.svg(scale: scale, quietZone: quietZone ?? 4).utf8)
            case .json: data = Data((symbol.json + "\n").utf8)
            case .txt: data = Data(symbol.terminalText(quietZone: quietZone ?? 2).utf8)
            }
            if let out {
                try OutputFile.write([UInt8](data), to: out, kind: .data, force: force)
                FileHandle.standardError.write(Data("\(symbol.summary) → \(SafeText.escaped(out))\n".utf8))
            } else if format == .png {
                throw CLIError(message: "--format png needs --out FILE")
            } else {
                try Output.write([UInt8](data))
                if format == .txt { try Output.line(symbol.summary) }
            }
        }
    }

    /// Writes many symbols and a manifest, for checking with an independent decoder.
    struct Sweep: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a sweep of symbols (PNG) and manifest.json for independent decoding.")

        @Option(help: "Output directory (created).") var out: String
        @Option(help: "ECC levels, comma-separated.") var levels: String = "1,2,3,4"
        @Option(help: "Payload length step.") var step: Int = 1
        @Option(help: "Random seed.") var seed: UInt64 = 1

        func run() throws {
            guard step >= 1 else { throw ValidationError("--step must be at least 1") }
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            var generator = SplitMix(seed: seed)
            var entries: [String] = []
            func add(_ payload: [UInt8], kind: String, level: Int, size: AztecOptions.Size, tag: String) throws -> Bool {
                let options = AztecOptions(errorCorrection: AztecOptions.ErrorCorrection(rawValue: level) ?? .level2, size: size)
                let symbol: AztecSymbol
                do { symbol = try AztecEncoder.encode(payload, options: options) } catch {
                    if error.code == .aztec.tooLong { return false }
                    throw error
                }
                let name = "\(tag)-l\(level)-\(kind.prefix(1))-\(String(format: "%05d", payload.count)).png"
                try Data(try symbol.png(scale: 2, quietZone: 4)).write(to: URL(fileURLWithPath: out).appendingPathComponent(name))
                entries.append("{\"file\":\"\(name)\",\"payloadHex\":\"\(Hex.encode(payload))\",\"level\":\(level),\"kind\":\"\(kind)\","
                    + "\"compact\":\(symbol.isCompact),\"layers\":\(symbol.layers),\"size\":\(symbol.size),\"eccPercent\":\(symbol.eccPercent)}")
                return true
            }
            let text = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -_./:=+!?%&$#@".utf8)
            for level in levels.split(separator: ",").compactMap({ Int($0) }) where (1...4).contains(level) {
                for kind in ["binary", "text"] {
                    var length = 1
                    while true {
                        let payload = (0..<length).map { _ in
                            kind == "binary" ? UInt8(truncatingIfNeeded: generator.next()) : text[Int(generator.next() % UInt64(text.count))]
                        }
                        guard try add(payload, kind: kind, level: level, size: .automatic, tag: "auto") else { break }
                        length += step
                    }
                }
                // Every compact size and some full-range sizes, filled to their limit.
                let fixed: [AztecOptions.Size] = (1...4).map { .compact(layers: $0) } + [1, 2, 3, 5, 8, 12, 16, 23, 32].map { .full(layers: $0) }
                for size in fixed {
                    var length = 1
                    var last: Int? = nil
                    while try add((0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }, kind: "binary", level: level, size: size,
                                  tag: { if case .compact(let n) = size { return "c\(n)" } else if case .full(let n) = size { return "f\(n)" } else { return "x" } }()) {
                        last = length
                        length += max(1, length / 8)
                    }
                    _ = last
                }
            }
            let manifest = "{\"symbols\":[\n" + entries.joined(separator: ",\n") + "\n]}\n"
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: out).appendingPathComponent("manifest.json"))
            print("\(entries.count) symbols written to \(out)")
        }
    }
}

/// A small deterministic generator for test payloads (not for secrets).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
