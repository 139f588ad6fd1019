/// Writes ``CBOR`` items in the CTAP2 canonical CBOR encoding form
/// (CTAP 2.1 §8).
///
/// - Integers, lengths and tag numbers use the shortest form.
/// - All lengths are definite.
/// - Map entries are written in canonical key order: a key of a lower major
///   type first; within a major type, a key with a shorter encoding first;
///   between encodings of the same length, the bytewise lower one first. This
///   is the length-first order of RFC 7049 §3.9 that CTAP2 mandates, which
///   differs from RFC 8949 §4.2.1's purely bytewise order only for keys such
///   as arrays or maps whose head does not give their encoded length.
///
/// The same rules apply at every depth, so the output is a pure function of
/// the item (map entries may be given in any order). The caller must not pass
/// a map with two equal keys: they are written as given (sorted, equal keys
/// then ordered by their values' encodings), and ``CBORDecoder`` refuses the
/// result.
public enum CBOREncoder {
    /// The canonical encoding of `item`.
    ///
    /// - Precondition: no ``CBOR/simple(_:)`` value in `item` is in 24...31,
    ///   which have no well-formed encoding.
    public static func encode(_ item: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        append(item, to: &out)
        return out
    }

    /// Appends the canonical encoding of `item` to `out`.
    static func append(_ item: CBOR, to out: inout [UInt8]) {
        switch item {
        case .unsigned(let value):
            appendHead(major: 0, argument: value, to: &out)
        case .negative(let value):
            appendHead(major: 1, argument: value, to: &out)
        case .bytes(let bytes):
            appendHead(major: 2, argument: UInt64(bytes.count), to: &out)
            out.append(contentsOf: bytes)
        case .text(let text):
            appendHead(major: 3, argument: UInt64(text.utf8.count), to: &out)
            out.append(contentsOf: text.utf8)
        case .array(let elements):
            appendHead(major: 4, argument: UInt64(elements.count), to: &out)
            for element in elements {
                append(element, to: &out)
            }
        case .map(let entries):
            appendHead(major: 5, argument: UInt64(entries.count), to: &out)
            let encoded = entries.map { (key: encode($0.key), value: encode($0.value)) }
            let sorted = encoded.sorted { a, b in
                if a.key != b.key { return keyPrecedes(a.key, b.key) }
                // Equal keys (a caller error): order by value so that the
                // output still does not depend on the input order.
                return a.value.lexicographicallyPrecedes(b.value)
            }
            for entry in sorted {
                out.append(contentsOf: entry.key)
                out.append(contentsOf: entry.value)
            }
        case .tagged(let tag, let content):
            appendHead(major: 6, argument: tag, to: &out)
            append(content, to: &out)
        case .simple(let value):
            precondition(value < 24 || value >= 32, "simple value \(value) has no well-formed CBOR encoding")
            appendHead(major: 7, argument: UInt64(value), to: &out)
        }
    }

    /// Appends the initial byte for `major` and the shortest encoding of
    /// `argument` (an integer value, a length, a count or a tag number).
    static func appendHead(major: UInt8, argument: UInt64, to out: inout [UInt8]) {
        let type = major << 5
        let width: Int
        switch argument {
        case 0..<24:
            out.append(type | UInt8(argument))
            return
        case 24...0xff:
            out.append(type | 24)
            width = 1
        case 0x100...0xffff:
            out.append(type | 25)
            width = 2
        case 0x1_0000...0xffff_ffff:
            out.append(type | 26)
            width = 4
        default:
            out.append(type | 27)
            width = 8
        }
        for index in stride(from: width - 1, through: 0, by: -1) {
            out.append(UInt8(truncatingIfNeeded: argument >> UInt64(index * 8)))
        }
    }

    /// Whether the encoded key `a` sorts before the encoded key `b` in CTAP2
    /// canonical order: lower major type first, then shorter encoding first,
    /// then bytewise lower first. Both must be complete encodings (never
    /// empty). Equal keys do not precede each other.
    static func keyPrecedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let majorA = a[0] >> 5
        let majorB = b[0] >> 5
        if majorA != majorB { return majorA < majorB }
        if a.count != b.count { return a.count < b.count }
        return a.lexicographicallyPrecedes(b)
    }
}
