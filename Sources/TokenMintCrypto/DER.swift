import TokenMintCore

/// The two DER structures TokenMint writes itself: the ECDSA signature
/// SEQUENCE. Parsing is strict DER (X.690 §10).
enum DER {
    static func encodeSignature(r: [UInt8], s: [UInt8]) -> [UInt8] {
        // Each INTEGER holds its value without leading zero bytes (one 0 byte
        // for zero), after a 0 byte when the first one has its high bit set.
        func content(_ value: [UInt8]) -> (start: Int, count: Int) {
            var start = 0
            while start < value.count, value[start] == 0 { start += 1 }
            guard start < value.count else { return (start, 1) }
            return (start, value.count - start + (value[start] & 0x80 != 0 ? 1 : 0))
        }
        func lengthSize(_ n: Int) -> Int { n < 0x80 ? 1 : n <= 0xff ? 2 : 3 }
        func appendLength(_ n: Int, to out: inout [UInt8]) {
            if n >= 0x100 { out += [0x82, UInt8(truncatingIfNeeded: n >> 8)] } else if n >= 0x80 { out.append(0x81) }
            out.append(UInt8(truncatingIfNeeded: n))
        }
        func appendInteger(_ value: [UInt8], _ span: (start: Int, count: Int), to out: inout [UInt8]) {
            out.append(0x02)
            appendLength(span.count, to: &out)
            if span.count > value.count - span.start { out.append(0) }  // zero, or a set high bit
            out.append(contentsOf: value[span.start...])
        }
        let a = content(r)
        let b = content(s)
        let body = 2 + lengthSize(a.count) + a.count + lengthSize(b.count) + b.count
        var out: [UInt8] = []
        out.reserveCapacity(1 + lengthSize(body) + body)
        out.append(0x30)
        appendLength(body, to: &out)
        appendInteger(r, a, to: &out)
        appendInteger(s, b, to: &out)
        return out
    }

    /// Parses `SEQUENCE { INTEGER r, INTEGER s }` and returns r and s padded
    /// to `scalarByteCount`.
    static func decodeSignature(_ der: [UInt8], scalarByteCount: Int) throws(TokenMintError) -> ([UInt8], [UInt8]) {
        var index = 0
        func fail(_ why: String) -> TokenMintError { TokenMintError(.crypto.invalidSignature, "DER signature: \(why)") }
        func readLength() throws(TokenMintError) -> Int {
            guard index < der.count else { throw fail("truncated length") }
            let first = der[index]
            index += 1
            if first < 0x80 { return Int(first) }
            let count = Int(first & 0x7f)
            guard count >= 1, count <= 2, index + count <= der.count else { throw fail("bad length") }
            var value = 0
            for _ in 0..<count {
                value = value << 8 | Int(der[index])
                index += 1
            }
            guard value >= 0x80, count == 1 || value > 0xff else { throw fail("non-minimal length") }
            return value
        }
        func readInteger() throws(TokenMintError) -> [UInt8] {
            guard index < der.count, der[index] == 0x02 else { throw fail("expected INTEGER") }
            index += 1
            let n = try readLength()
            guard n >= 1, index + n <= der.count else { throw fail("truncated INTEGER") }
            let bytes = Array(der[index..<index + n])
            index += n
            guard bytes[0] & 0x80 == 0 else { throw fail("negative INTEGER") }
            if n > 1, bytes[0] == 0, bytes[1] & 0x80 == 0 { throw fail("non-minimal INTEGER") }
            let magnitude = Array(bytes.drop(while: { $0 == 0 }))
            guard magnitude.count <= scalarByteCount else { throw fail("INTEGER larger than the group order") }
            return [UInt8](repeating: 0, count: scalarByteCount - magnitude.count) + magnitude
        }
        guard der.count >= 8, der.count <= 2 * scalarByteCount + 16, der[0] == 0x30 else {
            throw fail("expected a SEQUENCE of plausible size")
        }
        index = 1
        let bodyLength = try readLength()
        guard index + bodyLength == der.count else { throw fail("length does not match the data (trailing or missing bytes)") }
        let r = try readInteger()
        let s = try readInteger()
        guard index == der.count else { throw fail("extra data inside the SEQUENCE") }
        return (r, s)
    }
}
