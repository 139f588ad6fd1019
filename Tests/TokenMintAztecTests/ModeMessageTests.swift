import Testing
@testable import TokenMintAztec

/// The mode message's Reed–Solomon check, now computed on the stack, against
/// the textbook polynomial division it replaced (kept here as the reference).
@Suite("Aztec mode message check")
struct ModeMessageTests {
    /// The `count` check symbols of `data` (ISO/IEC 24778 §7.2.2: GF(16), roots α¹…αⁿ).
    static func referenceCheck(_ data: [UInt8], count: Int) -> [UInt8] {
        let generator = GF16.generator(count: count)
        var remainder = data + [UInt8](repeating: 0, count: count)
        for i in 0..<data.count where remainder[i] != 0 {
            let factor = remainder[i]
            for (j, coefficient) in generator.enumerated() { remainder[i + j] ^= GF16.multiply(coefficient, factor) }
        }
        return Array(remainder[data.count...])
    }

    static func isCodeword(_ word: [UInt8], compact: Bool) -> Bool {
        word.withUnsafeBufferPointer {
            GF16.isCodeword($0, dataCount: compact ? 2 : 4, generator: compact ? GF16.compactModeGenerator : GF16.fullModeGenerator)
        }
    }

    @Test("every compact and full-range mode message is a codeword; every one-nibble change of it is not")
    func everyMessage() {
        var checked = 0
        for (compact, dataCount, total) in [(true, 2, 7), (false, 4, 10)] {
            let messages = compact ? 256 : 65_536
            for value in stride(from: 0, to: messages, by: compact ? 1 : 97) {
                let data = (0..<dataCount).map { UInt8(truncatingIfNeeded: value >> (4 * (dataCount - 1 - $0))) & 0x0F }
                let word = data + Self.referenceCheck(data, count: total - dataCount)
                #expect(Self.isCodeword(word, compact: compact), "\(word)")
                for position in 0..<total {
                    for delta in 1...15 {
                        var changed = word
                        changed[position] ^= UInt8(delta)
                        if Self.isCodeword(changed, compact: compact) { Issue.record("\(changed) passed as a codeword") }
                    }
                }
                checked += 1
            }
        }
        #expect(checked == 256 + 676)
    }
}
