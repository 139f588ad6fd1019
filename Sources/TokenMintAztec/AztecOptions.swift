import TokenMintCore
internal import CZint

/// How to encode.
public struct AztecOptions: Sendable, Hashable {
    /// zint's error-correction levels: the share of the symbol's codewords
    /// kept for error correction, plus three codewords.
    public enum ErrorCorrection: Int, Sendable, Hashable, CaseIterable {
        /// More than 10 % (+3 codewords).
        case level1 = 1
        /// More than 23 % (+3 codewords); the default.
        case level2 = 2
        /// More than 36 % (+3 codewords).
        case level3 = 3
        /// More than 50 % (+3 codewords).
        case level4 = 4

        /// The promised share, in percent.
        public var percent: Int { [10, 23, 36, 50][rawValue - 1] }
    }

    /// The symbol size.
    public enum Size: Sendable, Hashable {
        /// The smallest symbol that holds the data at the requested level.
        case automatic
        /// The smallest compact symbol (1–4 layers) that holds it.
        case compactOnly
        /// Exactly this compact size (1–4 layers).
        case compact(layers: Int)
        /// Exactly this full-range size (1–32 layers).
        case full(layers: Int)
    }

    /// The error-correction level (at least; a larger symbol may give more).
    public var errorCorrection: ErrorCorrection
    /// The size policy.
    public var size: Size
    /// An Extended Channel Interpretation to announce (26 = UTF-8), or nil for
    /// none; the bytes are encoded unchanged either way.
    public var eci: Int?

    /// Options; the defaults give the smallest symbol with more than 23 % error correction.
    public init(errorCorrection: ErrorCorrection = .level2, size: Size = .automatic, eci: Int? = nil) {
        self.errorCorrection = errorCorrection
        self.size = size
        self.eci = eci
    }
}
