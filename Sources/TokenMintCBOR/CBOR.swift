/// A CBOR data item (RFC 8949), restricted to the subset CTAP2, COSE and
/// WebAuthn use.
///
/// There are no floating-point numbers and no indefinite-length items:
/// ``CBORDecoder`` refuses both, and ``CBOREncoder`` always writes the CTAP2
/// canonical form.
///
/// Equality is structural and exact: text compares by its UTF-8 bytes (not by
/// Unicode canonical equivalence, as `String` does), and maps compare entry by
/// entry in their stored order. Two items are therefore equal exactly when
/// they are built the same way; use ``CBOREncoder/encode(_:)`` to compare maps
/// regardless of entry order.
public indirect enum CBOR: Hashable, Sendable {
    /// Major type 0: an unsigned integer.
    case unsigned(UInt64)
    /// Major type 1: a negative integer whose value is `-1 - n`.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a UTF-8 text string.
    case text(String)
    /// Major type 4: an array of items.
    case array([CBOR])
    /// Major type 5: a map, with its entries in the order given.
    ///
    /// The encoder writes the entries in canonical key order whatever their
    /// order here; the decoder keeps the order of the input. Keys must be
    /// distinct: the decoder refuses duplicates, and the encoder does not check.
    case map([CBORMapEntry])
    /// Major type 6: a tag number and the item it tags.
    case tagged(UInt64, CBOR)
    /// Major type 7: a simple value (`false` 20, `true` 21, `null` 22,
    /// `undefined` 23).
    ///
    /// Only 20–23 are accepted by the decoder; values 24–31 have no
    /// well-formed encoding and the encoder traps on them.
    case simple(UInt8)
}

/// One key–value pair of a ``CBOR/map(_:)``.
public struct CBORMapEntry: Hashable, Sendable {
    /// The key, which may be any item.
    public let key: CBOR
    /// The value stored under ``key``.
    public let value: CBOR

    /// An entry mapping `key` to `value`.
    public init(key: CBOR, value: CBOR) {
        self.key = key
        self.value = value
    }

    /// An entry mapping `key` to `value`.
    public init(_ key: CBOR, _ value: CBOR) {
        self.key = key
        self.value = value
    }
}

// MARK: - Equality

extension CBOR {
    /// Structural equality; text compares by UTF-8 bytes, maps in stored order.
    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case let (.unsigned(a), .unsigned(b)): return a == b
        case let (.negative(a), .negative(b)): return a == b
        case let (.bytes(a), .bytes(b)): return a == b
        case let (.text(a), .text(b)): return a.utf8.elementsEqual(b.utf8)
        case let (.array(a), .array(b)): return a == b
        case let (.map(a), .map(b)): return a == b
        case let (.tagged(t, a), .tagged(u, b)): return t == u && a == b
        case let (.simple(a), .simple(b)): return a == b
        default: return false
        }
    }

    /// Hashes the major type and the content, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        func combine(_ majorType: UInt8, _ content: some Hashable) {
            hasher.combine(majorType)
            hasher.combine(content)
        }
        switch self {
        case .unsigned(let value): combine(0, value)
        case .negative(let value): combine(1, value)
        case .bytes(let bytes): combine(2, bytes)
        case .text(let text):
            hasher.combine(3 as UInt8)
            hasher.combine(text.utf8.count)
            for byte in text.utf8 { hasher.combine(byte) }
        case .array(let elements): combine(4, elements)
        case .map(let entries): combine(5, entries)
        case .tagged(let tag, let content):
            combine(6, tag)
            hasher.combine(content)
        case .simple(let value): combine(7, value)
        }
    }
}

// MARK: - Convenience

extension CBOR {
    /// The simple value `false` (20).
    public static let cborFalse = CBOR.simple(20)
    /// The simple value `true` (21).
    public static let cborTrue = CBOR.simple(21)
    /// The simple value `null` (22).
    public static let cborNull = CBOR.simple(22)
    /// The simple value `undefined` (23).
    public static let cborUndefined = CBOR.simple(23)

    /// `value` as ``unsigned(_:)`` when it is zero or more, else as ``negative(_:)``.
    public static func int(_ value: Int64) -> CBOR {
        // For negative values, ~value == -1 - value, which is never negative.
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(~value))
    }

    /// ``cborTrue`` or ``cborFalse``.
    public static func bool(_ value: Bool) -> CBOR {
        // Made here rather than read from the statics: a static of this
        // indirect enum is a box LeakSanitizer cannot see through.
        .simple(value ? 21 : 20)
    }

    /// A map from key–value `pairs`, in the order given.
    public static func map(pairs: [(CBOR, CBOR)]) -> CBOR {
        .map(pairs.map { CBORMapEntry(key: $0.0, value: $0.1) })
    }

    /// The integer, when this is an integer that fits in `Int64`.
    public var intValue: Int64? {
        switch self {
        case .unsigned(let n):
            return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n):
            // -1 - n == ~n, which fits exactly when n fits.
            return n <= UInt64(Int64.max) ? ~Int64(n) : nil
        default:
            return nil
        }
    }

    /// The bytes, when this is a byte string.
    public var bytesValue: [UInt8]? { if case .bytes(let bytes) = self { bytes } else { nil } }

    /// The text, when this is a text string.
    public var textValue: String? { if case .text(let text) = self { text } else { nil } }

    /// The elements, when this is an array.
    public var arrayValue: [CBOR]? { if case .array(let elements) = self { elements } else { nil } }

    /// The entries in their stored order, when this is a map.
    public var mapValue: [CBORMapEntry]? { if case .map(let entries) = self { entries } else { nil } }

    /// The Boolean, when this is ``cborTrue`` or ``cborFalse``.
    public var boolValue: Bool? {
        switch self {
        case .simple(20): return false
        case .simple(21): return true
        default: return nil
        }
    }

    /// Whether this is ``cborNull``.
    public var isNull: Bool {
        if case .simple(22) = self { return true }
        return false
    }

    /// The value stored under `key` (the first such entry), when this is a
    /// map; `nil` when the key is absent or this is not a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        for entry in entries where entry.key == key {
            return entry.value
        }
        return nil
    }
}

// MARK: - Diagnostic notation

extension CBOR: CustomStringConvertible {
    /// The item in RFC 8949 §8 diagnostic notation, for messages and logs:
    /// `{1: 2, 3: -7, "a": h'0102', 1(0), [true, null]}`.
    public var description: String {
        switch self {
        case .unsigned(let n):
            return String(n)
        case .negative(let n):
            return n == UInt64.max ? "-18446744073709551616" : "-" + String(n + 1)
        case .bytes(let bytes):
            return "h'" + CBOR.hex(bytes) + "'"
        case .text(let text):
            return CBOR.quoted(text)
        case .array(let elements):
            return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .map(let entries):
            return "{" + entries.map { $0.key.description + ": " + $0.value.description }
                .joined(separator: ", ") + "}"
        case .tagged(let tag, let content):
            return String(tag) + "(" + content.description + ")"
        case .simple(20): return "false"
        case .simple(21): return "true"
        case .simple(22): return "null"
        case .simple(23): return "undefined"
        case .simple(let value):
            return "simple(" + String(value) + ")"
        }
    }

    /// Lower-case hexadecimal digits of `bytes`.
    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` in double quotes, with `"`, `\` and control characters escaped.
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
