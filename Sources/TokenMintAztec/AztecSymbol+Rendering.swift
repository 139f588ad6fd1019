public import TokenMintCore
internal import CZlib

extension AztecSymbol {
    /// The largest image side a renderer produces, in pixels.
    public static let maximumImageSide = 8192

    func checkedSide(scale: Int, quietZone: Int) throws(TokenMintError) -> Int {
        guard scale >= 1, scale <= 64 else { throw TokenMintError(.aztec.invalidRendering, "scale must be 1 to 64, not \(scale)") }
        guard quietZone >= 0, quietZone <= 64 else { throw TokenMintError(.aztec.invalidRendering, "quiet zone must be 0 to 64 modules, not \(quietZone)") }
        let side = (size + 2 * quietZone) * scale
        guard side <= AztecSymbol.maximumImageSide else {
            throw TokenMintError(.aztec.invalidRendering, "a \(side)-pixel image exceeds \(AztecSymbol.maximumImageSide) pixels")
        }
        return side
    }

    // MARK: PNG

    /// A 1-bit grayscale PNG, in memory: `scale` pixels per module and a quiet
    /// zone of `quietZone` modules. The PNG framing is TokenMint's; the
    /// deflate stream and CRCs are zlib's.
    public func png(scale: Int = 4, quietZone: Int = 4) throws(TokenMintError) -> [UInt8] {
        let side = try checkedSide(scale: scale, quietZone: quietZone)
        let rowBytes = (side + 7) / 8
        // Raw image: one filter byte (0) per row, then bits, 1 = white.
        var raw = [UInt8](repeating: 0, count: (rowBytes + 1) * side)
        var line = [UInt8](repeating: 0xff, count: rowBytes)
        raw.withUnsafeMutableBufferPointer { out in
            for moduleRow in -quietZone..<(size + quietZone) {
                // Build one pixel row for this module row.
                for i in 0..<rowBytes { line[i] = 0xff }
                if moduleRow >= 0 && moduleRow < size {
                    for column in 0..<size where self[moduleRow, column] {
                        let x0 = (column + quietZone) * scale
                        for x in x0..<(x0 + scale) { line[x >> 3] &= ~(0x80 >> UInt8(x & 7)) }
                    }
                }
                if side % 8 != 0 { line[rowBytes - 1] &= 0xff << UInt8(8 - side % 8) }  // padding bits: 0
                let y0 = (moduleRow + quietZone) * scale
                for y in y0..<(y0 + scale) {
                    let start = y * (rowBytes + 1)
                    out[start] = 0
                    for i in 0..<rowBytes { out[start + 1 + i] = line[i] }
                }
            }
        }
        var compressedLength = compressBound(UInt(raw.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedLength))
        let status = compress2(&compressed, &compressedLength, raw, UInt(raw.count), 1)
        guard status == Z_OK else { throw TokenMintError(.aztec.encoderFailure, "zlib compress2 failed (\(status))") }
        compressed.removeLast(compressed.count - Int(compressedLength))

        var png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
        func chunk(_ type: String, _ data: [UInt8]) {
            let typeBytes = Array(type.utf8)
            png += bigEndian(UInt32(data.count))
            png += typeBytes
            png += data
            var crc = crc32(0, typeBytes, 4)
            crc = data.withUnsafeBufferPointer { crc32(crc, $0.baseAddress, UInt32($0.count)) }
            png += bigEndian(UInt32(truncatingIfNeeded: crc))
        }
        chunk("IHDR", bigEndian(UInt32(side)) + bigEndian(UInt32(side)) + [1, 0, 0, 0, 0])  // 1-bit gray
        chunk("IDAT", compressed)
        chunk("IEND", [])
        return png
    }

    private func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    // MARK: SVG

    /// An SVG with one path of dark modules (each row's runs merged), crisp at any size.
    public func svg(scale: Int = 4, quietZone: Int = 4) throws(TokenMintError) -> String {
        let side = try checkedSide(scale: scale, quietZone: quietZone)
        let view = size + 2 * quietZone
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard self[row, column] else {
                    column += 1
                    continue
                }
                let start = column
                while column < size && self[row, column] { column += 1 }
                path += "M\(start + quietZone) \(row + quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(side)" height="\(side)" viewBox="0 0 \(view) \(view)" \
            shape-rendering="crispEdges"><rect width="\(view)" height="\(view)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>

            """
    }

    // MARK: Terminal

    /// The symbol in Unicode half blocks, two module rows per text line.
    ///
    /// By default the *light* modules are drawn (as blocks in the terminal's
    /// foreground colour), which makes the code scannable on the usual dark
    /// terminal background; `lightBackground` draws the dark modules instead.
    public func terminalText(quietZone: Int = 2, lightBackground: Bool = false) -> String {
        let q = max(0, min(quietZone, 16))
        let span = size + 2 * q
        func drawn(_ r: Int, _ c: Int) -> Bool {
            let dark = self[r - q, c - q]  // outside the symbol is light
            return lightBackground ? dark : !dark
        }
        var text = ""
        var row = 0
        while row < span {
            for column in 0..<span {
                let top = drawn(row, column)
                let bottom = row + 1 < span ? drawn(row + 1, column) : false
                text += top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " ")
            }
            text += "\n"
            row += 2
        }
        return text
    }

    // MARK: JSON

    /// `{"rows":…,"columns":…,"layers":…,"compact":…,"ecc":…,"modules":["0110…",…]}`,
    /// 1 = dark; `ecc` is the error-correction share reached, in percent.
    public var json: String {
        let ecc = (eccPercent * 10).rounded() / 10
        var text = "{\"rows\":\(size),\"columns\":\(size),\"layers\":\(layers),\"compact\":\(isCompact),"
        text += "\"ecc\":\(ecc),\"dataCodewords\":\(dataCodewords),\"totalCodewords\":\(totalCodewords),\"modules\":["
        for row in 0..<size {
            if row > 0 { text += "," }
            text += "\""
            for column in 0..<size { text += self[row, column] ? "1" : "0" }
            text += "\""
        }
        return text + "]}"
    }
}
