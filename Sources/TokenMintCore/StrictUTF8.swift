/// The one strict UTF-8 validator the parsers share (JSON text, CBOR text
/// strings): the well-formed byte sequences of Unicode §3.9, Table 3-7 —
/// no overlong forms, no surrogates, nothing above U+10FFFF, no truncation.
package enum StrictUTF8 {
    /// Why a multi-byte sequence is ill-formed.
    package enum Problem: Error, Sendable, Hashable {
        /// The lead byte is a continuation byte (0x80–0xBF).
        case unexpectedContinuation
        /// The lead byte can start no sequence (C0, C1, F5–FF).
        case invalidLead
        /// The input ends inside the sequence.
        case truncated
        /// The byte `offset` bytes after the lead cannot stand there.
        case invalidContinuation(offset: Int)
    }

    /// The length (2 to 4) of the well-formed sequence whose lead byte (at
    /// least 0x80) is at `position`, or why it is ill-formed.
    @inlinable
    package static func sequenceLength<Bytes: RandomAccessCollection<UInt8>>(
        _ bytes: Bytes, at position: Int
    ) -> Result<Int, Problem> where Bytes.Index == Int {
        let end = bytes.endIndex
        let lead = bytes[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF:
            length = 2
        case 0xE0:
            length = 3
            lower = 0xA0  // no overlong 3-byte forms
        case 0xE1...0xEC, 0xEE...0xEF:
            length = 3
        case 0xED:
            length = 3
            upper = 0x9F  // no UTF-16 surrogates
        case 0xF0:
            length = 4
            lower = 0x90  // no overlong 4-byte forms
        case 0xF1...0xF3:
            length = 4
        case 0xF4:
            length = 4
            upper = 0x8F  // nothing above U+10FFFF
        case 0x80...0xBF:
            return .failure(.unexpectedContinuation)
        default:  // C0, C1 (overlong 2-byte forms), F5...FF
            return .failure(.invalidLead)
        }
        guard position + 1 < end else { return .failure(.truncated) }
        let second = bytes[position + 1]
        guard second >= lower && second <= upper else { return .failure(.invalidContinuation(offset: 1)) }
        var k = 2
        while k < length {
            guard position + k < end else { return .failure(.truncated) }
            guard bytes[position + k] & 0xC0 == 0x80 else { return .failure(.invalidContinuation(offset: k)) }
            k += 1
        }
        return .success(length)
    }

    /// The index of the first byte of the first ill-formed sequence in
    /// `bytes`, or nil when all of it is well-formed.
    @inlinable
    package static func firstInvalid<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Int? where Bytes.Index == Int {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] < 0x80 {
                i += 1
                continue
            }
            switch sequenceLength(bytes, at: i) {
            case .success(let length): i += length
            case .failure: return i
            }
        }
        return nil
    }
}
