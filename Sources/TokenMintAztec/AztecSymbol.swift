/// An Aztec symbol: its module matrix and what it holds.
///
/// Immutable and `Sendable`; the matrix is bit-packed row by row, so reading
/// it is cheap and copying a symbol copies a reference.
public struct AztecSymbol: Sendable, Hashable {
    /// Modules per side (Aztec symbols are square).
    public let size: Int
    /// Rows of modules (= ``size``).
    public var rows: Int { size }
    /// Columns of modules (= ``size``).
    public var columns: Int { size }
    /// Whether this is a compact symbol (1–4 layers) rather than full-range (1–32).
    public let isCompact: Bool
    /// The number of data layers.
    public let layers: Int
    /// Codewords carrying data (read back from the symbol's mode message).
    public let dataCodewords: Int
    /// All codewords in the data layers.
    public let totalCodewords: Int
    /// Bits per codeword at this layer count.
    public let codewordBits: Int
    /// The error-correction level that was asked for (1–4).
    public let requestedLevel: Int

    let rowWords: Int
    let bits: [UInt64]

    /// Error-correction codewords.
    public var eccCodewords: Int { totalCodewords - dataCodewords }

    /// The share of the symbol's codewords that is error correction, in percent.
    public var eccPercent: Double { Double(eccCodewords) * 100 / Double(totalCodewords) }

    /// Data codewords that could still be added at this size without
    /// dropping below the requested error-correction level.
    public var capacityLeftCodewords: Int {
        max(0, totalCodewords - AztecLayout.minimumECCCodewords(total: totalCodewords, level: requestedLevel) - dataCodewords)
    }

    /// Whether the module at (`row`, `column`) is dark; false outside the symbol.
    public subscript(row: Int, column: Int) -> Bool {
        guard row >= 0, row < size, column >= 0, column < size else { return false }
        return bits[row * rowWords + column >> 6] >> UInt64(column & 63) & 1 == 1
    }

    /// The matrix as rows of booleans (true = dark).
    public var matrix: [[Bool]] {
        (0..<size).map { r in (0..<size).map { c in self[r, c] } }
    }

    init(size: Int, isCompact: Bool, layers: Int, dataCodewords: Int, requestedLevel: Int, bits: [UInt64]) {
        self.size = size
        self.isCompact = isCompact
        self.layers = layers
        self.dataCodewords = dataCodewords
        self.totalCodewords = AztecLayout.totalCodewords(layers: layers, compact: isCompact)
        self.codewordBits = AztecLayout.codewordBits(layers: layers)
        self.requestedLevel = requestedLevel
        self.rowWords = (size + 63) / 64
        self.bits = bits
    }

    /// A short description: "compact 3 layers, 23×23, 41 % ECC".
    public var summary: String {
        let ecc = (eccPercent * 10).rounded() / 10
        return "\(isCompact ? "compact" : "full-range") \(layers) layer\(layers == 1 ? "" : "s"), \(size)×\(size), \(ecc) % ECC"
    }
}
