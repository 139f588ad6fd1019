import TokenMintCore
import Foundation
import TokenMintAztec
import TokenMintCrypto

/// `tokenmint_aztec_golden_v1`: payloads and options with the module matrix
/// each must produce (made with libzint 2.11 and decoded by an independent
/// reader when the file was written). A different matrix means the encoder
/// or the zint underneath changed.
enum AztecGoldenRunner {
    struct File: Decodable {
        struct Test: Decodable {
            var tcId: Int
            var comment: String, payloadHex: String
            var options: [String]
            var modules: [String]
        }
        var tests: [Test]
    }

    static func options(_ arguments: [String]) throws -> AztecOptions {
        var options = AztecOptions()
        var compact = false
        var layers: Int?
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--level":
                index += 1
                guard index < arguments.count, let level = Int(arguments[index]), let ecc = AztecOptions.ErrorCorrection(rawValue: level) else {
                    throw TokenMintError(.vectors.invalidFile, "bad --level")
                }
                options.errorCorrection = ecc
            case "--layers":
                index += 1
                guard index < arguments.count, let n = Int(arguments[index]) else { throw TokenMintError(.vectors.invalidFile, "bad --layers") }
                layers = n
            case "--compact": compact = true
            default: throw TokenMintError(.vectors.invalidFile, "unknown option \(arguments[index])")
            }
            index += 1
        }
        switch (layers, compact) {
        case (nil, false): options.size = .automatic
        case (nil, true): options.size = .compactOnly
        case (let n?, true): options.size = .compact(layers: n)
        case (let n?, false): options.size = .full(layers: n)
        }
        return options
    }

    static func run(_ data: Data, into report: inout VectorReport) throws {
        for test in try JSONDecoder().decode(File.self, from: data).tests {
            let payload = try Hex.decode(test.payloadHex)
            var ok = false
            if let symbol = try? AztecEncoder.encode(payload, options: options(test.options)) {
                let modules = (0..<symbol.size).map { r in String((0..<symbol.size).map { symbol[r, $0] ? "1" : "0" }) }
                ok = modules == test.modules
            }
            report.record(test.tcId, expected: "valid", accepted: ok, comment: test.comment)
        }
    }
}
