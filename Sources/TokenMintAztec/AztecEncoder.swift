public import TokenMintCore
internal import CZint

/// Encodes Aztec symbols with libzint, and returns only symbols that are
/// readable and keep their promised error correction.
///
/// zint 2.11 has three defects this encoder designs around (all fixed in
/// zint 2.13+): compact 4-layer (27×27) symbols with more than 64 data
/// codewords are unreadable; a fixed size that the data overflows writes out
/// of bounds; and its size tables occasionally leave one error-correction
/// codeword fewer than the level promises. Every symbol zint returns is read
/// back here (its mode message: layers and data codewords, with its
/// Reed–Solomon check); a defective one is re-encoded one size up, and a
/// fixed size is only handed to zint once the data is known to fit.
public enum AztecEncoder {
    /// The largest payload accepted, in bytes (a 32-layer symbol holds at most 3,832).
    public static let maximumPayloadBytes = 3832

    /// Encodes bytes.
    public static func encode(_ payload: some Collection<UInt8>, options: AztecOptions = AztecOptions()) throws(TokenMintError) -> AztecSymbol {
        let bytes = Array(payload)
        guard !bytes.isEmpty else { throw TokenMintError(.aztec.emptyPayload, "nothing to encode") }
        guard bytes.count <= maximumPayloadBytes else {
            throw TokenMintError(.aztec.tooLong, "\(bytes.count) bytes exceed the \(maximumPayloadBytes)-byte Aztec maximum")
        }
        if let eci = options.eci, !(0...999_999).contains(eci) { throw TokenMintError(.aztec.invalidOption, "ECI \(eci) is out of range") }
        return try select(bytes, options: options)
    }

    /// Encodes the UTF-8 bytes of `text`.
    public static func encode(_ text: String, options: AztecOptions = AztecOptions()) throws(TokenMintError) -> AztecSymbol {
        try encode(Array(text.utf8), options: options)
    }

    /// Encodes a token's string form (WhitelabelPay tokens, compact JWS) with
    /// the defaults: its characters go in as bytes, which for these ASCII
    /// alphabets gives the same symbol as every other zint input mode
    /// (measured in the tests), with more than 23 % error correction.
    public static func encode(token: String) throws(TokenMintError) -> AztecSymbol {
        try encode(Array(token.utf8))
    }

    // MARK: - Size selection

    private static func select(_ bytes: [UInt8], options: AztecOptions) throws(TokenMintError) -> AztecSymbol {
        let level = options.errorCorrection.rawValue
        let eci = options.eci ?? 0
        // zint's own choice first: it also tells how many data bits the payload needs.
        let first = try zint(bytes, level: level, option2: 0, eci: eci)
        // zint 2.11 defect 1: a compact 4-layer symbol with 65 data codewords.
        // Its mode message has 6 bits for the count, so 65 wraps round to 1 and
        // no reader can decode the symbol. Every encoding spends at least 4 bits
        // a byte, so a count too small for the payload gives the wrap away.
        let wrapped = first.isCompact && first.layers == 4 && first.dataCodewords * first.codewordBits < 4 * bytes.count
        let bitsNeeded = (wrapped ? 65 : first.dataCodewords) * first.codewordBits

        func acceptable(_ s: AztecSymbol, compact: Bool? = nil, layers: Int? = nil) -> Bool {
            if let compact, s.isCompact != compact { return false }
            if let layers, s.layers != layers { return false }
            if s.isCompact && s.layers == 4 && (s.dataCodewords > 64 || s.dataCodewords * s.codewordBits < 4 * bytes.count) {
                return false
            }
            return s.eccCodewords >= AztecLayout.minimumECCCodewords(total: s.totalCodewords, level: level)
        }
        /// Whether the payload surely fits a size at the level: even if every
        /// codeword needed a stuffed bit, and never into a defective compact 4.
        func fits(compact: Bool, layers: Int) -> Bool {
            let total = AztecLayout.totalCodewords(layers: layers, compact: compact)
            let width = AztecLayout.codewordBits(layers: layers)
            let words = (bitsNeeded + width - 2) / (width - 1)
            if compact && layers == 4 && words > 64 { return false }
            return words + AztecLayout.minimumECCCodewords(total: total, level: level) <= total
        }
        func forced(compact: Bool, layers: Int) throws(TokenMintError) -> AztecSymbol {
            try zint(bytes, level: level, option2: compact ? layers : layers + 4, eci: eci)
        }

        switch options.size {
        case .automatic:
            if acceptable(first) { return first }
            for candidate in AztecLayout.sizes
            where AztecLayout.side(layers: candidate.layers, compact: candidate.compact) >= first.size
                && !(candidate.compact == first.isCompact && candidate.layers == first.layers)
                && fits(compact: candidate.compact, layers: candidate.layers)
            {
                let symbol = try forced(compact: candidate.compact, layers: candidate.layers)
                if acceptable(symbol, compact: candidate.compact, layers: candidate.layers) { return symbol }
            }
            throw TokenMintError(.aztec.tooLong, "no symbol holds \(bytes.count) bytes at ECC level \(level)")
        case .compactOnly:
            if first.isCompact && acceptable(first) { return first }
            for layers in 1...4 where fits(compact: true, layers: layers) {
                let symbol = try forced(compact: true, layers: layers)
                if acceptable(symbol, compact: true, layers: layers) { return symbol }
            }
            throw TokenMintError(.aztec.tooLong, "\(bytes.count) bytes do not fit a compact symbol at ECC level \(level)")
        case .compact(let layers), .full(let layers):
            let compact: Bool
            if case .compact = options.size { compact = true } else { compact = false }
            guard (1...(compact ? 4 : 32)).contains(layers) else {
                throw TokenMintError(.aztec.invalidOption, "\(compact ? "compact" : "full-range") symbols have 1 to \(compact ? 4 : 32) layers, not \(layers)")
            }
            if first.isCompact == compact && first.layers == layers && acceptable(first) { return first }
            guard fits(compact: compact, layers: layers) else {
                throw TokenMintError(.aztec.tooLong, "\(bytes.count) bytes do not fit \(compact ? "compact" : "full-range") \(layers) layers at ECC level \(level)")
            }
            let symbol = try forced(compact: compact, layers: layers)
            guard acceptable(symbol, compact: compact, layers: layers) else {
                throw TokenMintError(.aztec.tooLong, "at \(compact ? "compact" : "full-range") \(layers) layers the error correction falls below level \(level)")
            }
            return symbol
        }
    }

    // MARK: - zint

    /// One zint encode: create, encode, read the matrix and its mode message, delete.
    static func zint(_ bytes: [UInt8], level: Int, option2: Int, eci: Int) throws(TokenMintError) -> AztecSymbol {
        guard let symbol = ZBarcode_Create() else { throw TokenMintError(.aztec.encoderFailure, "ZBarcode_Create failed") }
        defer { ZBarcode_Delete(symbol) }
        symbol.pointee.symbology = BARCODE_AZTEC
        symbol.pointee.input_mode = DATA_MODE
        symbol.pointee.option_1 = option2 == 0 ? Int32(level) : -1
        symbol.pointee.option_2 = Int32(option2)
        symbol.pointee.eci = Int32(eci)
        let status = bytes.withUnsafeBufferPointer { buffer in
            ZBarcode_Encode(symbol, buffer.baseAddress, Int32(buffer.count))
        }
        if status >= ZINT_ERROR {
            let message = withUnsafeBytes(of: symbol.pointee.errtxt) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let code: TokenMintError.Code = status == ZINT_ERROR_TOO_LONG ? .aztec.tooLong : status == ZINT_ERROR_INVALID_OPTION ? .aztec.invalidOption : .aztec.encoderFailure
            throw TokenMintError(code, "zint: \(message) (\(status))")
        }
        let size = Int(symbol.pointee.rows)
        guard size == Int(symbol.pointee.width), size >= 15, size <= 151,
            let offset = MemoryLayout<zint_symbol>.offset(of: \zint_symbol.encoded_data)
        else { throw TokenMintError(.aztec.encoderFailure, "zint returned a \(symbol.pointee.rows)×\(symbol.pointee.width) matrix") }
        let data = UnsafeRawPointer(symbol).advanced(by: offset).assumingMemoryBound(to: UInt8.self)
        let stride = 144  // encoded_data[200][144]
        let rowWords = (size + 63) / 64
        var bits = [UInt64](repeating: 0, count: rowWords * size)
        // zint packs a row least-significant bit first, as TokenMint does: a row's
        // 64-module words are little-endian reads of its bytes, masked to the side.
        bits.withUnsafeMutableBufferPointer { out in
            for row in 0..<size {
                let line = data + row * stride
                for word in 0..<rowWords {
                    var value: UInt64 = 0
                    let first = word * 8
                    for byte in 0..<min(8, (size + 7) / 8 - first) {
                        value |= UInt64(line[first + byte]) << UInt64(8 * byte)
                    }
                    let used = min(64, size - word * 64)
                    out[row * rowWords + word] = used == 64 ? value : value & ((1 << UInt64(used)) - 1)
                }
            }
        }
        let isDark = { (r: Int, c: Int) -> Bool in bits[r * rowWords + c >> 6] >> UInt64(c & 63) & 1 == 1 }
        // The side tells compact or not (27 is both compact 4 and full 3: the mode message decides).
        for compact in [true, false] {
            guard let layers = (1...(compact ? 4 : 32)).first(where: { AztecLayout.side(layers: $0, compact: compact) == size }),
                let mode = AztecLayout.readModeMessage(size: size, compact: compact, isDark: isDark), mode.layers == layers
            else { continue }
            return AztecSymbol(size: size, isCompact: compact, layers: layers, dataCodewords: mode.dataCodewords,
                               requestedLevel: level, bits: bits)
        }
        throw TokenMintError(.aztec.encoderFailure, "zint's \(size)×\(size) symbol carries no valid mode message")
    }
}
