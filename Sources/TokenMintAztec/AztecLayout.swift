/// Facts of the Aztec format (ISO/IEC 24778) that TokenMint needs to check
/// what zint produced: symbol sizes, codeword sizes and counts per layer
/// count, and the mode message that every symbol carries around its bullseye.
enum AztecLayout {
    /// The side of a symbol in modules.
    static func side(layers: Int, compact: Bool) -> Int {
        if compact { return 11 + 4 * layers }
        let base = 14 + 4 * layers
        return base + 1 + 2 * ((base / 2 - 1) / 15)  // reference grid lines
    }

    /// Bits per codeword: 6 for 1–2 layers, 8 for 3–8, 10 for 9–22, 12 for 23–32.
    static func codewordBits(layers: Int) -> Int {
        switch layers {
        case ...2: 6
        case ...8: 8
        case ...22: 10
        default: 12
        }
    }

    /// Codewords in the data layers (data plus error correction).
    static func totalCodewords(layers: Int, compact: Bool) -> Int {
        let bits = ((compact ? 88 : 112) + 16 * layers) * layers
        return bits / codewordBits(layers: layers)
    }

    /// The fewest error-correction codewords an ECC level promises for a
    /// symbol of `total` codewords: more than the level's share, plus three.
    static func minimumECCCodewords(total: Int, level: Int) -> Int {
        let percent = [10, 23, 36, 50][max(1, min(level, 4)) - 1]
        return (total * percent + 99) / 100 + 3
    }

    /// Every symbol size in increasing side length (compact before full at equal sides).
    static let sizes: [(compact: Bool, layers: Int)] = {
        var all = (1...4).map { (compact: true, layers: $0) } + (1...32).map { (compact: false, layers: $0) }
        all.sort { (side(layers: $0.layers, compact: $0.compact), $0.compact ? 0 : 1) < (side(layers: $1.layers, compact: $1.compact), $1.compact ? 0 : 1) }
        return all
    }()

    /// The mode message of a symbol: layer count and number of data codewords.
    struct ModeMessage: Equatable {
        var layers: Int
        var dataCodewords: Int
    }

    /// Reads and checks the mode message (its Reed–Solomon check words over
    /// GF(16) must match). `isDark(row, column)`.
    static func readModeMessage(size: Int, compact: Bool, isDark: (Int, Int) -> Bool) -> ModeMessage? {
        let center = size / 2
        let count = compact ? 28 : 40
        // The message's bits, first read in the highest place: no array.
        var word: UInt64 = 0
        func read(_ index: Int, _ dark: Bool) {
            if dark { word |= 1 << UInt64(count - 1 - index) }
        }
        if compact {
            for i in 0..<7 {
                let offset = center - 3 + i
                read(i, isDark(center - 5, offset))
                read(i + 7, isDark(offset, center + 5))
                read(20 - i, isDark(center + 5, offset))
                read(27 - i, isDark(offset, center - 5))
            }
        } else {
            for i in 0..<10 {
                let offset = center - 5 + i + i / 5
                read(i, isDark(center - 7, offset))
                read(i + 10, isDark(offset, center + 7))
                read(29 - i, isDark(center + 7, offset))
                read(39 - i, isDark(offset, center - 7))
            }
        }
        let nibbleCount = count / 4
        let dataNibbles = compact ? 2 : 4
        let valid = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 10) { nibbles -> Bool in
            for k in 0..<nibbleCount {
                nibbles[k] = UInt8(truncatingIfNeeded: word >> UInt64(4 * (nibbleCount - 1 - k))) & 0x0F
            }
            return GF16.isCodeword(UnsafeBufferPointer(rebasing: nibbles[0..<nibbleCount]), dataCount: dataNibbles,
                                   generator: compact ? GF16.compactModeGenerator : GF16.fullModeGenerator)
        }
        guard valid else { return nil }
        let value = Int(word >> UInt64(count - 4 * dataNibbles))
        if compact {
            return ModeMessage(layers: (value >> 6) + 1, dataCodewords: (value & 0x3f) + 1)
        }
        return ModeMessage(layers: (value >> 11) + 1, dataCodewords: (value & 0x7ff) + 1)
    }
}

/// GF(16) with x⁴ + x + 1, the field of the Aztec mode message.
enum GF16 {
    static let exp: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 30)
        var x: UInt8 = 1
        for i in 0..<30 {
            table[i] = x
            x <<= 1
            if x & 0x10 != 0 { x ^= 0x13 }
        }
        return table
    }()

    static let log: [Int] = {
        var table = [Int](repeating: 0, count: 16)
        for i in 0..<15 { table[Int(exp[i])] = i }
        return table
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        guard a != 0, b != 0 else { return 0 }
        return exp[(log[Int(a)] + log[Int(b)]) % 15]
    }

    /// The Reed–Solomon generator g(x) = Π (x − αⁱ), i = 1…count,
    /// coefficients highest degree first.
    static func generator(count: Int) -> [UInt8] {
        var generator: [UInt8] = [1]
        for i in 1...count {
            var next = [UInt8](repeating: 0, count: generator.count + 1)
            for (j, coefficient) in generator.enumerated() {
                next[j] ^= coefficient
                next[j + 1] ^= multiply(coefficient, exp[i])
            }
            generator = next
        }
        return generator
    }

    /// The mode messages' generators: 5 check nibbles compact, 6 full-range.
    static let compactModeGenerator = generator(count: 5)
    static let fullModeGenerator = generator(count: 6)

    /// Whether `word` (at most 16 symbols) is its first `dataCount` symbols
    /// followed by their check symbols under `generator`; nothing allocated.
    static func isCodeword(_ word: UnsafeBufferPointer<UInt8>, dataCount: Int, generator: [UInt8]) -> Bool {
        guard word.count <= 16, generator.count == word.count - dataCount + 1 else { return false }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { remainder -> Bool in
            for i in 0..<word.count { remainder[i] = i < dataCount ? word[i] : 0 }
            for i in 0..<dataCount {
                let factor = remainder[i]
                guard factor != 0 else { continue }
                for (j, coefficient) in generator.enumerated() {
                    remainder[i + j] ^= multiply(coefficient, factor)
                }
            }
            for i in dataCount..<word.count where remainder[i] != word[i] { return false }
            return true
        }
    }
}
