import TokenMintCore

/// The two DER structures TokenMint writes itself: the ECDSA signature
/// SEQUENCE. Parsing is strict DER (X.690 §10).
enum DER {
    static func encodeSignature(r: [UInt8], s: [UInt8]) -> [UInt8] {
        let body = integer(r) + integer(s)
        return [0x30] + length(body.count) + body
    }

    private static func integer(_ value: [UInt8]) -> [UInt8] {
        var bytes = Array(value.drop(while: { $0 == 0 }))
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return [0x02] + length(bytes.count) + bytes
    }

    private static func length(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        if n <= 0xff { return [0x81, UInt8(n)] }
        return [0x82, UInt8(n >> 8), UInt8(n & 0xff)]
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
