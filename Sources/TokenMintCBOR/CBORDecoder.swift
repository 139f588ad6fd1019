public import TokenMintCore

/// A strict decoder for the CBOR subset CTAP2, COSE and WebAuthn use.
///
/// It always refuses:
/// - floating-point numbers, indefinite lengths, the "break" byte and the
///   reserved additional information values 28–30 (`.cbor.unsupported`);
/// - simple values other than 20–23 (`.cbor.invalidSimple`);
/// - text that is not well-formed UTF-8: overlong forms, encoded surrogates,
///   code points above U+10FFFF, truncated sequences (`.cbor.invalidUTF8`);
/// - lengths and counts that claim more than the rest of the input holds,
///   checked before anything is allocated (`.cbor.truncated`);
/// - maps that repeat a key, comparing keys by their canonical encoding, so
///   `1` and a non-shortest `1` are the same key (`.cbor.duplicateKey`);
/// - input beyond the ``Limits``.
///
/// With `requireCanonical` (the default) it also refuses anything
/// ``CBOREncoder`` would not have written: non-shortest integers, lengths and
/// tag numbers, and map keys out of CTAP2 canonical order. Every item it
/// accepts then re-encodes to the same bytes.
///
/// Tags are not interpreted: any tag number may tag any item.
public struct CBORDecoder: Sendable {
    /// Resource limits. Each error caused by a limit names it.
    public struct Limits: Hashable, Sendable {
        /// The largest input, in bytes. For ``CBORDecoder/decodePrefix(_:requireCanonical:limits:)``
        /// this bounds the whole slice given, not only the item.
        public var maximumBytes = 1 << 20
        /// The deepest nesting of arrays, maps and tags; a top-level array is
        /// depth 1, and a scalar inside it is not counted.
        public var maximumDepth = 16
        /// The most data items in the input, counting every array element,
        /// map key, map value and tagged item, and the top-level item.
        public var maximumItems = 100_000

        /// The defaults: 1 MiB of input, depth 16, 100 000 items.
        public init() {}
    }

    /// Decodes `bytes` as one CBOR item.
    ///
    /// - Parameters:
    ///   - bytes: The encoded item.
    ///   - requireCanonical: Refuse anything ``CBOREncoder`` would not produce
    ///     (non-shortest integers and lengths, unsorted map keys). Duplicate
    ///     map keys are refused either way.
    ///   - allowTrailingBytes: Ignore bytes after the item instead of
    ///     refusing them. Use ``decodePrefix(_:requireCanonical:limits:)`` to
    ///     learn where the item ends.
    ///   - limits: Resource limits.
    public static func decode(
        _ bytes: [UInt8], requireCanonical: Bool = true, allowTrailingBytes: Bool = false,
        limits: Limits = Limits()
    ) throws(TokenMintError) -> CBOR {
        let (item, byteCount) = try decodePrefix(bytes[...], requireCanonical: requireCanonical, limits: limits)
        if !allowTrailingBytes && byteCount != bytes.count {
            throw TokenMintError(
                .cbor.trailingBytes, "\(bytes.count - byteCount) bytes follow the item", offset: byteCount)
        }
        return item
    }

    /// Decodes the first CBOR item in `bytes` and returns it with the number
    /// of bytes it used; whatever follows is left alone.
    ///
    /// For authenticator data, where the credential public key (a COSE key)
    /// is followed by the extensions map. Error offsets count from
    /// `bytes.startIndex`, as does `byteCount`.
    ///
    /// - Parameters:
    ///   - bytes: The input; the item starts at its first byte.
    ///   - requireCanonical: As for ``decode(_:requireCanonical:allowTrailingBytes:limits:)``.
    ///   - limits: Resource limits; `maximumBytes` bounds the whole of `bytes`.
    public static func decodePrefix(
        _ bytes: ArraySlice<UInt8>, requireCanonical: Bool = true, limits: Limits = Limits()
    ) throws(TokenMintError) -> (item: CBOR, byteCount: Int) {
        guard bytes.count <= limits.maximumBytes else {
            throw TokenMintError(
                .cbor.tooLarge, "input is \(bytes.count) bytes, more than maximumBytes (\(limits.maximumBytes))",
                offset: limits.maximumBytes)
        }
        var reader = CBORReader(bytes: bytes, requireCanonical: requireCanonical, limits: limits)
        let item = try reader.readItem(depth: 0)
        return (item, reader.index - bytes.startIndex)
    }
}

/// An index-based reader over the input. Recursion depth is bounded by
/// `limits.maximumDepth`.
struct CBORReader {
    let bytes: ArraySlice<UInt8>
    let requireCanonical: Bool
    let limits: CBORDecoder.Limits
    /// The index (in `bytes`' own indices) of the next byte to read.
    var index: Int
    /// How many items have been started so far.
    var itemCount = 0

    init(bytes: ArraySlice<UInt8>, requireCanonical: Bool, limits: CBORDecoder.Limits) {
        self.bytes = bytes
        self.requireCanonical = requireCanonical
        self.limits = limits
        self.index = bytes.startIndex
    }

    /// How many bytes are left to read.
    var remaining: Int { bytes.endIndex - index }

    /// An error at the index `position` (in `bytes`' own indices).
    func error(_ code: TokenMintError.Code, _ reason: String, at position: Int) -> TokenMintError {
        TokenMintError(code, reason, offset: position - bytes.startIndex)
    }

    /// Reads one item whose enclosing arrays, maps and tags number `depth`.
    mutating func readItem(depth: Int) throws(TokenMintError) -> CBOR {
        let start = index
        guard index < bytes.endIndex else {
            throw error(.cbor.truncated, "the input ends where a data item was expected", at: start)
        }
        itemCount += 1
        guard itemCount <= limits.maximumItems else {
            throw error(.cbor.tooLarge, "more than maximumItems (\(limits.maximumItems)) data items", at: start)
        }
        let initial = bytes[index]
        index += 1
        let major = initial >> 5
        let info = initial & 0x1f
        if major == 7 {
            return try readSimple(info, start: start)
        }
        let argument = try readArgument(info, major: major, start: start)
        switch major {
        case 0:
            return .unsigned(argument)
        case 1:
            return .negative(argument)
        case 2:
            let range = try contentRange(length: argument, kind: "byte string", start: start)
            return .bytes(Array(bytes[range]))
        case 3:
            let range = try contentRange(length: argument, kind: "text string", start: start)
            if let bad = StrictUTF8.firstInvalid(bytes[range]) {
                throw error(.cbor.invalidUTF8, "text string is not well-formed UTF-8", at: bad)
            }
            return .text(String(decoding: bytes[range], as: UTF8.self))
        case 4:
            return try readArray(count: argument, depth: depth, start: start)
        case 5:
            return try readMap(count: argument, depth: depth, start: start)
        default:  // 6
            try enterContainer(depth: depth, start: start)
            let content = try readItem(depth: depth + 1)
            return .tagged(argument, content)
        }
    }

    /// Reads the argument that follows an initial byte with additional
    /// information `info`, for major types 0–6.
    mutating func readArgument(_ info: UInt8, major: UInt8, start: Int) throws(TokenMintError) -> UInt64 {
        switch info {
        case 0..<24:
            return UInt64(info)
        case 24...27:
            let width = 1 << Int(info - 24)
            guard remaining >= width else {
                throw error(.cbor.truncated, "the input ends inside a \(width)-byte argument", at: start)
            }
            var value: UInt64 = 0
            for offset in 0..<width {
                value = value << 8 | UInt64(bytes[index + offset])
            }
            index += width
            if requireCanonical {
                let smallest: UInt64 = width == 1 ? 24 : 1 << UInt64(width * 4)
                if value < smallest {
                    throw error(.cbor.nonCanonical, "argument \(value) is not in its shortest form", at: start)
                }
            }
            return value
        case 28...30:
            throw error(.cbor.unsupported, "reserved additional information \(info)", at: start)
        default:  // 31
            if (2...5).contains(major) {
                throw error(.cbor.unsupported, "indefinite-length items are not supported", at: start)
            }
            throw error(.cbor.unsupported, "additional information 31 is not valid for major type \(major)", at: start)
        }
    }

    /// Reads major type 7 with additional information `info`.
    mutating func readSimple(_ info: UInt8, start: Int) throws(TokenMintError) -> CBOR {
        switch info {
        case 20...23:
            return .simple(info)
        case 0..<20:
            throw error(.cbor.invalidSimple, "unassigned simple value \(info)", at: start)
        case 24:
            guard index < bytes.endIndex else {
                throw error(.cbor.truncated, "the input ends inside a two-byte simple value", at: start)
            }
            let value = bytes[index]
            index += 1
            if value < 32 {
                throw error(.cbor.invalidSimple, "two-byte encoding of simple value \(value), which is not well-formed",
                            at: start)
            }
            throw error(.cbor.invalidSimple, "unassigned simple value \(value)", at: start)
        case 25...27:
            throw error(.cbor.unsupported, "floating-point numbers are not supported", at: start)
        case 28...30:
            throw error(.cbor.unsupported, "reserved additional information \(info)", at: start)
        default:  // 31
            throw error(.cbor.unsupported, "unexpected break byte (indefinite-length items are not supported)", at: start)
        }
    }

    /// Checks that `length` content bytes remain, then consumes them and
    /// returns their range. Nothing is allocated before the check.
    mutating func contentRange(length: UInt64, kind: String, start: Int) throws(TokenMintError) -> Range<Int> {
        guard length <= UInt64(remaining) else {
            throw error(.cbor.truncated, "\(kind) of length \(length) runs past the end of the input (\(remaining) bytes left)",
                        at: start)
        }
        let range = index..<(index + Int(length))
        index = range.upperBound
        return range
    }

    /// Refuses a container that would nest deeper than the limit.
    func enterContainer(depth: Int, start: Int) throws(TokenMintError) {
        guard depth < limits.maximumDepth else {
            throw error(.cbor.tooDeep, "nesting deeper than maximumDepth (\(limits.maximumDepth))", at: start)
        }
    }

    /// Reads `count` array elements.
    mutating func readArray(count: UInt64, depth: Int, start: Int) throws(TokenMintError) -> CBOR {
        try enterContainer(depth: depth, start: start)
        // Every element takes at least one byte.
        guard count <= UInt64(remaining) else {
            throw error(.cbor.truncated, "array of \(count) elements runs past the end of the input (\(remaining) bytes left)",
                        at: start)
        }
        var elements: [CBOR] = []
        elements.reserveCapacity(Int(count))
        for _ in 0..<Int(count) {
            elements.append(try readItem(depth: depth + 1))
        }
        return .array(elements)
    }

    /// Reads `count` map entries, refusing duplicate keys and, when canonical
    /// form is required, keys out of order.
    mutating func readMap(count: UInt64, depth: Int, start: Int) throws(TokenMintError) -> CBOR {
        try enterContainer(depth: depth, start: start)
        // Every entry takes at least two bytes.
        guard count <= UInt64(remaining) / 2 else {
            throw error(.cbor.truncated, "map of \(count) entries runs past the end of the input (\(remaining) bytes left)",
                        at: start)
        }
        var entries: [CBORMapEntry] = []
        entries.reserveCapacity(Int(count))
        var seen = Set<[UInt8]>()
        var previous: [UInt8]? = nil
        for _ in 0..<Int(count) {
            let keyStart = index
            let key = try readItem(depth: depth + 1)
            // Keys are compared by their canonical encoding, so that keys
            // written differently but meaning the same are duplicates too.
            let encodedKey = CBOREncoder.encode(key)
            guard seen.insert(encodedKey).inserted else {
                throw error(.cbor.duplicateKey, "duplicate map key \(CBORReader.brief(key))", at: keyStart)
            }
            if requireCanonical, let previous, !CBOREncoder.keyPrecedes(previous, encodedKey) {
                throw error(.cbor.nonCanonical, "map key \(CBORReader.brief(key)) is out of canonical order", at: keyStart)
            }
            previous = encodedKey
            let value = try readItem(depth: depth + 1)
            entries.append(CBORMapEntry(key: key, value: value))
        }
        return .map(entries)
    }

    /// `item` in diagnostic notation, cut short for error messages.
    static func brief(_ item: CBOR) -> String {
        let text = item.description
        return text.count <= 64 ? text : String(text.prefix(61)) + "..."
    }
}
