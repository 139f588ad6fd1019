import TokenMintCore
import Foundation
import Testing
import TokenMintAztec

@Suite("Aztec encoding through zint")
struct AztecTests {
    static let paymentToken =
        "02/5c2a8b0e-1d4f-4f8e-9a51-2b7c3d9e0f11/1763776800/"
        + "mF3Yk2Zp0qL8sX1vB7nR4tW9eU6cA5dH3gJ2kM8pQ1rS7uV0wY4zB6xE9fG2hI5jK8lN1oP4qR7sT0uV3wX6yA=="

    static func random(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    @Test("a payment token encodes at the default level with its promised ECC")
    func paymentToken() throws {
        let symbol = try AztecEncoder.encode(token: Self.paymentToken)
        #expect(symbol.rows == symbol.columns)
        #expect(symbol.eccCodewords >= (symbol.totalCodewords * 23 + 99) / 100 + 3)
        #expect(symbol.requestedLevel == 2)
        #expect(symbol.summary.contains("×"))
    }

    @Test("every symbol returned keeps its level, and never is a defective compact 27×27")
    func sweepLevelsAndSizes() throws {
        for level in AztecOptions.ErrorCorrection.allCases {
            var length = 1
            while length <= 1900 {
                let payload = Self.random(length, seed: UInt64(length))
                guard let symbol = try? AztecEncoder.encode(payload, options: AztecOptions(errorCorrection: level)) else { break }
                let minimum = (symbol.totalCodewords * level.percent + 99) / 100 + 3
                #expect(symbol.eccCodewords >= minimum, "\(length) bytes, level \(level.rawValue): \(symbol.summary)")
                #expect(!(symbol.isCompact && symbol.layers == 4 && symbol.dataCodewords > 64), "\(length) bytes: \(symbol.summary)")
                #expect(symbol.dataCodewords * symbol.codewordBits >= length * 8 - 8, "data codewords too few to hold \(length) bytes")
                length += length < 120 ? 1 : 37
            }
        }
    }

    @Test("the 45- and 48-byte payloads that zint 2.11 draws unreadably at level 1 are moved off compact 27×27")
    func knownCompactDefect() throws {
        for length in [45, 48] {
            let symbol = try AztecEncoder.encode(Self.random(length), options: AztecOptions(errorCorrection: .level1))
            #expect(!(symbol.isCompact && symbol.layers == 4 && symbol.dataCodewords > 64), "\(symbol.summary)")
        }
        let text = String(repeating: "AbC-_9", count: 12).prefix(68)
        let symbol = try AztecEncoder.encode(String(text), options: AztecOptions(errorCorrection: .level1))
        #expect(!(symbol.isCompact && symbol.layers == 4 && symbol.dataCodewords > 64), "\(symbol.summary)")
    }

    @Test("fixed sizes: honoured when the data fits, a typed error otherwise, never handed to zint to overflow")
    func fixedSizes() throws {
        let small = try AztecEncoder.encode(Array("hello".utf8), options: AztecOptions(size: .full(layers: 5)))
        #expect(!small.isCompact && small.layers == 5 && small.size == 37)
        let compact = try AztecEncoder.encode(Array("hello".utf8), options: AztecOptions(size: .compact(layers: 2)))
        #expect(compact.isCompact && compact.layers == 2 && compact.size == 19)
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(300), options: AztecOptions(size: .full(layers: 3))) }
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(300), options: AztecOptions(size: .compact(layers: 4))) }
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(10), options: AztecOptions(size: .compact(layers: 5))) }
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(10), options: AztecOptions(size: .full(layers: 0))) }
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(10), options: AztecOptions(size: .full(layers: 33))) }
        // Forcing a size never lowers the requested ECC.
        for layers in 1...4 {
            if let s = try? AztecEncoder.encode(Self.random(20), options: AztecOptions(errorCorrection: .level3, size: .compact(layers: layers))) {
                #expect(s.eccCodewords >= (s.totalCodewords * 36 + 99) / 100 + 3)
            }
        }
        let compactOnly = try AztecEncoder.encode(Self.random(30), options: AztecOptions(size: .compactOnly))
        #expect(compactOnly.isCompact)
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(200), options: AztecOptions(size: .compactOnly)) }
    }

    @Test("bad input: typed errors")
    func badInput() {
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode([UInt8]()) }
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(4000)) }
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(3000), options: AztecOptions(errorCorrection: .level4)) }
        #expect(throws: TokenMintError.self) { try AztecEncoder.encode(Self.random(5), options: AztecOptions(eci: -1)) }
        let s = try? AztecEncoder.encode("x")
        #expect(throws: TokenMintError.self) { try s?.png(scale: 0) }
        #expect(throws: TokenMintError.self) { try s?.png(scale: 65) }
        #expect(throws: TokenMintError.self) { try s?.svg(quietZone: -1) }
    }

    @Test("renderers: PNG header and size, SVG path, terminal blocks, JSON modules")
    func renderers() throws {
        let symbol = try AztecEncoder.encode(token: Self.paymentToken)
        let png = try symbol.png(scale: 3, quietZone: 4)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
        let side = (symbol.size + 8) * 3
        #expect(Array(png[16..<24]) == [0, 0, UInt8(side >> 8), UInt8(side & 0xff), 0, 0, UInt8(side >> 8), UInt8(side & 0xff)])
        #expect(png[24] == 1 && png[25] == 0)  // 1-bit grayscale
        let svg = try symbol.svg()
        #expect(svg.hasPrefix("<svg") && svg.contains("<path fill=\"#000\" d=\"M"))
        let text = symbol.terminalText(quietZone: 2)
        #expect(text.split(separator: "\n").count == (symbol.size + 4 + 1) / 2)
        #expect(text.contains("█"))
        let json = try JSONSerialization.jsonObject(with: Data(symbol.json.utf8)) as? [String: Any]
        let modules = try #require(json?["modules"] as? [String])
        #expect(modules.count == symbol.size && modules.allSatisfy { $0.count == symbol.size })
        for (r, line) in modules.enumerated() {
            for (c, ch) in line.enumerated() { #expect((ch == "1") == symbol[r, c]) }
        }
        #expect(json?["compact"] as? Bool == symbol.isCompact)
    }

    @Test("the bullseye is where the format puts it")
    func bullseye() throws {
        for payload in [Self.random(10), Self.random(500)] {
            let s = try AztecEncoder.encode(payload)
            let c = s.size / 2
            #expect(s[c, c])  // centre module dark
            #expect(!s[c, c + 1] && !s[c + 1, c])  // first ring light
            #expect(s[c, c + 2] && s[c + 2, c + 2])  // second ring dark
        }
    }

    @Test("concurrent encodes from many tasks give the same symbols as serial ones")
    func concurrency() async throws {
        let payloads = (1...40).map { Self.random($0 * 7, seed: UInt64($0)) }
        let serial = try payloads.map { try AztecEncoder.encode($0) }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var bad = 0
                    for (i, p) in payloads.enumerated() where (i + worker) % 2 == 0 {
                        if (try? AztecEncoder.encode(p)) != serial[i] { bad += 1 }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test("for the WhitelabelPay alphabet every zint input choice gives the same size; the default is never larger")
    func tokenInputChoice() throws {
        let tokens = [Self.paymentToken, "01/0b6d5b8e-8c1b-4a0a-9f5e-3c2d1e0f9a8b/q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJo=/7f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f"]
        for token in tokens {
            let chosen = try AztecEncoder.encode(token: token)
            let withECI = try AztecEncoder.encode(token, options: AztecOptions(eci: 26))
            #expect(chosen.size <= withECI.size)
        }
    }
}
