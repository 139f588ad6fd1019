/// A strict RFC 8259 parser for JOSE headers, claims sets and keys.
///
/// It accepts exactly one JSON value with optional white space (space, tab,
/// line feed, carriage return) around it, and refuses everything the RFC does
/// not allow: leading zeros, `+1`, `.5`, `5.`, `NaN`, single quotes,
/// comments, trailing commas, raw control characters in strings, unknown
/// escapes, unpaired UTF-16 surrogates in `\u` escapes, and input that is not
/// well-formed UTF-8 (overlong forms, encoded surrogates, code points above
/// U+10FFFF, truncated sequences). A byte order mark is refused too.
///
/// Unlike Foundation's parser it refuses objects that repeat a member name
/// (compared after unescaping, code unit by code unit), as RFC 7515 §5.2 and
/// RFC 8725 §3.2 ask, so that no two readers of a token can disagree about
/// which value counts.
///
/// Numbers are kept as their source text (`JSONValue.number`).
public struct JSONParser: Sendable {
    /// Resource limits. Each error caused by a limit names it.
    public struct Limits: Hashable, Sendable {
        /// The largest input, in bytes.
        public var maximumBytes = 1 << 20
        /// The deepest nesting of arrays and objects; a top-level object or
        /// array is depth 1.
        public var maximumDepth = 32
        /// The longest string (member names included), counted in source bytes
        /// between the quotes, escapes as written.
        public var maximumStringBytes = 1 << 20
        /// The most members in one object, and the most elements in one array.
        public var maximumMembers = 4096

        /// The defaults: 1 MiB of input, depth 32, 1 MiB strings, 4096 members.
        public init() {}
    }

    /// Parses `bytes` as one strict JSON value.
    ///
    /// Contiguous inputs (`[UInt8]`, `ArraySlice<UInt8>`, a native
    /// `String.UTF8View`) are read in place; others are copied once.
    public static func parse(_ bytes: some Collection<UInt8>, limits: Limits = Limits()) throws(TokenMintError) -> JSONValue {
        let outcome: Result<JSONValue, TokenMintError>
        if let contiguous = bytes.withContiguousStorageIfAvailable({ buffer in
            JSONParser.parseContiguous(buffer, limits: limits)
        }) {
            outcome = contiguous
        } else {
            let count = bytes.count
            guard count <= limits.maximumBytes else { throw JSONParser.tooLarge(count, limits) }
            outcome = Array(bytes).withUnsafeBufferPointer { buffer in
                JSONParser.parseContiguous(buffer, limits: limits)
            }
        }
        switch outcome {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }

    /// Parses `bytes` as one strict JSON value that must be an object (nil
    /// when the valid value is something else). Members whose names
    /// `recognise` maps to a number (0–63) are handed to `take`, in order,
    /// and kept out of the returned object, whose members are the others;
    /// every rule holds as for ``parse(_:limits:)``, a repeated name included.
    /// A name is recognised from its bytes after unescaping, so no `String`
    /// is made for it: the path a JWT's registered claims take.
    package static func parseObject(
        _ bytes: UnsafeRawBufferPointer, limits: Limits = Limits(),
        recognising recognise: (UnsafeBufferPointer<UInt8>) -> Int?, take: (Int, JSONValue) -> Void
    ) throws(TokenMintError) -> JSONObject? {
        guard bytes.count <= limits.maximumBytes else { throw tooLarge(bytes.count, limits) }
        var reader = JSONReader(bytes: bytes.assumingMemoryBound(to: UInt8.self), limits: limits)
        return try reader.parseDocumentObject(recognise: recognise, take: take)
    }

    private static func tooLarge(_ count: Int, _ limits: Limits) -> TokenMintError {
        TokenMintError(.json.tooLarge, "input is \(count) bytes, more than maximumBytes (\(limits.maximumBytes))",
                  offset: limits.maximumBytes)
    }

    private static func parseContiguous(_ buffer: UnsafeBufferPointer<UInt8>, limits: Limits) -> Result<JSONValue, TokenMintError> {
        guard buffer.count <= limits.maximumBytes else { return .failure(tooLarge(buffer.count, limits)) }
        var reader = JSONReader(bytes: buffer, limits: limits)
        do throws(TokenMintError) {
            return .success(try reader.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}

/// The byte-level reader behind ``JSONParser``. It lives only for the
/// duration of one `parse` call, inside the closure that lends the buffer.
private struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let end: Int
    let limits: JSONParser.Limits
    var index = 0
    var depth = 0

    /// While an object has fewer members than this, a repeated name is found
    /// by a linear scan; from then on, through a hash set.
    static let linearNameCheckLimit = 16

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONParser.Limits) {
        self.bytes = bytes
        self.end = bytes.count
        self.limits = limits
    }

    // MARK: Document and values

    mutating func parseDocument() throws(TokenMintError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard index == end else {
            throw TokenMintError(.json.malformed, "unexpected \(JSONReader.describe(bytes[index])) after the JSON value", offset: index)
        }
        return value
    }

    /// ``parseDocument()`` for a value that must be an object: the object, or
    /// nil when the (valid) value is something else.
    mutating func parseDocumentObject(
        recognise: (UnsafeBufferPointer<UInt8>) -> Int?, take: (Int, JSONValue) -> Void
    ) throws(TokenMintError) -> JSONObject? {
        skipWhitespace()
        guard index < end, bytes[index] == 0x7B else {
            _ = try parseDocument()
            return nil
        }
        let object = try parseObjectMembers(recognise: recognise, take: take)
        skipWhitespace()
        guard index == end else {
            throw TokenMintError(.json.malformed, "unexpected \(JSONReader.describe(bytes[index])) after the JSON value", offset: index)
        }
        return object
    }

    mutating func parseValue() throws(TokenMintError) -> JSONValue {
        skipWhitespace()
        guard index < end else { throw TokenMintError(.json.malformed, "unexpected end of input, expected a value", offset: index) }
        switch bytes[index] {
        case 0x7B:  // {
            return try parseObject()
        case 0x5B:  // [
            return try parseArray()
        case 0x22:  // "
            return .string(try parseString())
        case 0x74:  // t
            try expectLiteral("true")
            return .bool(true)
        case 0x66:  // f
            try expectLiteral("false")
            return .bool(false)
        case 0x6E:  // n
            try expectLiteral("null")
            return .null
        case 0x2D, 0x30...0x39:  // - 0-9
            return .number(try parseNumber())
        default:
            throw TokenMintError(.json.malformed, "unexpected \(JSONReader.describe(bytes[index])), expected a value", offset: index)
        }
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < end {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D:
                index += 1
            default:
                return
            }
        }
    }

    /// Consumes `literal` exactly (`true`, `false`, `null`).
    mutating func expectLiteral(_ literal: StaticString) throws(TokenMintError) {
        let count = literal.utf8CodeUnitCount
        let expected = literal.utf8Start
        for k in 0..<count {
            guard index + k < end else {
                throw TokenMintError(.json.malformed, "unexpected end of input in literal \"\(literal)\"", offset: index + k)
            }
            guard bytes[index + k] == expected[k] else {
                throw TokenMintError(.json.malformed, "invalid literal, expected \"\(literal)\"", offset: index + k)
            }
        }
        index += count
    }

    // MARK: Containers

    mutating func enterContainer() throws(TokenMintError) {
        depth += 1
        guard depth <= limits.maximumDepth else {
            throw TokenMintError(.json.tooLarge, "nesting deeper than maximumDepth (\(limits.maximumDepth))", offset: index)
        }
    }

    mutating func parseArray() throws(TokenMintError) -> JSONValue {
        try enterContainer()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < end && bytes[index] == 0x5D {  // ]
            index += 1
            depth -= 1
            return .array(elements)
        }
        var more = true
        while more {
            guard elements.count < limits.maximumMembers else {
                throw TokenMintError(.json.tooLarge, "array has more than maximumMembers (\(limits.maximumMembers)) elements", offset: index)
            }
            elements.append(try parseValue())
            more = try continues(closing: 0x5D)
        }
        depth -= 1
        return .array(elements)
    }

    mutating func parseObject() throws(TokenMintError) -> JSONValue {
        .object(try parseObjectMembers(recognise: { _ in nil }, take: { _, _ in }))
    }

    /// An object's members; those `recognise` knows go to `take` instead
    /// (see ``JSONParser/parseObject(_:limits:recognising:take:)``).
    mutating func parseObjectMembers(
        recognise: (UnsafeBufferPointer<UInt8>) -> Int?, take: (Int, JSONValue) -> Void
    ) throws(TokenMintError) -> JSONObject {
        try enterContainer()
        index += 1  // {
        var members: [JSONObject.Member] = []
        var seenNames = Set<String>()
        var seenBins: (UInt64, UInt64) = (0, 0)
        var taken: UInt64 = 0  // bit n: a member recognised as n was read
        var count = 0
        skipWhitespace()
        if index < end && bytes[index] == 0x7D {  // }
            index += 1
            depth -= 1
            return JSONObject()
        }
        var more = true
        while more {
            guard index < end else { throw TokenMintError(.json.malformed, "unexpected end of input in object", offset: index) }
            guard bytes[index] == 0x22 else {
                throw TokenMintError(.json.malformed, "unexpected \(JSONReader.describe(bytes[index])) in object, expected a member name string", offset: index)
            }
            guard count < limits.maximumMembers else {
                throw TokenMintError(.json.tooLarge, "object has more than maximumMembers (\(limits.maximumMembers)) members", offset: index)
            }
            count += 1
            let nameOffset = index
            let parsedName = try parseName()
            let recognised: Int?
            switch parsedName {
            case .raw(let range): recognised = recognise(UnsafeBufferPointer(rebasing: bytes[range]))
            case .decoded(let text): recognised = Array(text.utf8).withUnsafeBufferPointer(recognise)
            }
            var name = ""
            if let recognised {
                let bit = UInt64(1) << UInt64(recognised & 63)
                if taken & bit != 0 {
                    throw TokenMintError(.json.malformed, "duplicate member name\(JSONReader.quoted(string(parsedName)))", offset: nameOffset)
                }
                taken |= bit
            } else {
                name = string(parsedName)
                if members.isEmpty { members.reserveCapacity(8) }
                if isDuplicate(name, in: members, seenNames: &seenNames, seenBins: &seenBins) {
                    throw TokenMintError(.json.malformed, "duplicate member name\(JSONReader.quoted(name))", offset: nameOffset)
                }
            }

            skipWhitespace()
            guard index < end else { throw TokenMintError(.json.malformed, "unexpected end of input in object", offset: index) }
            guard bytes[index] == 0x3A else {  // :
                throw TokenMintError(.json.malformed, "unexpected \(JSONReader.describe(bytes[index])) after member name, expected ':'", offset: index)
            }
            index += 1
            let value = try parseValue()
            if let recognised {
                take(recognised, value)
            } else {
                members.append(JSONObject.Member(name: name, value: value))
            }
            more = try continues(closing: 0x7D)
        }
        depth -= 1
        return JSONObject(uniqueMembers: members)
    }

    /// After an element or a member: a `,` (more follows; a trailing comma
    /// is refused) or the container's closing bracket (`]` or `}`).
    @inline(__always)
    mutating func continues(closing: UInt8) throws(TokenMintError) -> Bool {
        skipWhitespace()
        if index < end {
            if bytes[index] == 0x2C {  // ,
                index += 1
                skipWhitespace()
                if index >= end || bytes[index] != closing { return true }
            } else if bytes[index] == closing {
                index += 1
                return false
            }
        }
        throw separatorError(closing: closing)
    }

    /// Why ``continues(closing:)`` refused what it found at `index`.
    func separatorError(closing: UInt8) -> TokenMintError {
        let container = closing == 0x5D ? "array" : "object"
        guard index < end else { return TokenMintError(.json.malformed, "unexpected end of input in \(container)", offset: index) }
        if bytes[index] == closing { return TokenMintError(.json.malformed, "trailing comma in \(container)", offset: index) }
        let bracket = closing == 0x5D ? "]" : "}"
        return TokenMintError(.json.malformed, "unexpected \(JSONReader.describe(bytes[index])) in \(container), expected ',' or '\(bracket)'", offset: index)
    }

    /// Whether `name` is already among `members`, compared exactly.
    ///
    /// Small objects keep a 128-bit set of name fingerprints (length, first
    /// and last byte): a name whose bit is clear is new, and only a name whose
    /// bit is set is looked for linearly. From ``linearNameCheckLimit``
    /// members on, a `Set<String>` keeps the check linear overall; because
    /// `String` hashing and `==` use canonical equivalence, a hit there is
    /// confirmed by an exact comparison.
    func isDuplicate(
        _ name: String, in members: [JSONObject.Member], seenNames: inout Set<String>, seenBins: inout (UInt64, UInt64)
    ) -> Bool {
        if members.count < JSONReader.linearNameCheckLimit {
            let utf8 = name.utf8
            var mix = UInt32(truncatingIfNeeded: utf8.count) &* 0x9E37_79B1
            if let first = utf8.first, let last = utf8.last {
                mix ^= UInt32(first) &* 0x85EB_CA6B ^ UInt32(last) &* 0xC2B2_AE35
            }
            let bin = mix >> 25  // 0..<128
            let bit = UInt64(1) << UInt64(bin & 63)
            let seen = bin < 64 ? seenBins.0 & bit != 0 : seenBins.1 & bit != 0
            if bin < 64 { seenBins.0 |= bit } else { seenBins.1 |= bit }
            return seen && members.contains { JSONObject.sameName($0.name, name) }
        }
        if seenNames.isEmpty {
            seenNames.reserveCapacity(members.count * 2)
            for member in members {
                seenNames.insert(member.name)
            }
        }
        if seenNames.insert(name).inserted {
            return false
        }
        return members.contains { JSONObject.sameName($0.name, name) }
    }

    // MARK: Numbers

    mutating func parseNumber() throws(TokenMintError) -> String {
        let start = index
        switch JSONNumberSyntax.scan(bytes, from: start) {
        case .valid(let numberEnd):
            index = numberEnd
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<numberEnd]), as: UTF8.self)
        case .invalid(let reason, let offset):
            throw TokenMintError(.json.malformed, reason, offset: offset)
        }
    }

    // MARK: Strings

    /// A string as read: the range of its bytes in the input when it holds
    /// no escape (no `String` made yet), or the unescaped text.
    enum ParsedString {
        case raw(Range<Int>)
        case decoded(String)
    }

    /// The text of a parsed string.
    func string(_ parsed: ParsedString) -> String {
        switch parsed {
        case .raw(let range): String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        case .decoded(let text): text
        }
    }

    /// Parses the string whose opening quote is at `index`.
    mutating func parseString() throws(TokenMintError) -> String {
        string(try parseName())
    }

    /// Parses the string whose opening quote is at `index`, leaving it in
    /// place when it has no escape.
    ///
    /// The fast path validates the bytes in place; the first backslash
    /// switches to ``parseEscapedString(quote:contentStart:)``.
    mutating func parseName() throws(TokenMintError) -> ParsedString {
        let quote = index
        index += 1
        let contentStart = index
        while index < end {
            let byte = bytes[index]
            if byte == 0x22 {  // "
                try checkStringLength(quote: quote, contentStart: contentStart)
                let range = contentStart..<index
                index += 1
                return .raw(range)
            } else if byte == 0x5C {  // \
                return .decoded(try parseEscapedString(quote: quote, contentStart: contentStart))
            } else if byte < 0x20 {
                throw TokenMintError(.json.malformed, "unescaped control character \(JSONReader.describe(byte)) in string", offset: index)
            } else if byte < 0x80 {
                index += 1
            } else {
                index += try utf8SequenceLength(at: index)
            }
        }
        throw TokenMintError(.json.malformed, "unterminated string", offset: quote)
    }

    /// Continues a string at its first backslash (`index`), decoding into a
    /// byte buffer.
    mutating func parseEscapedString(quote: Int, contentStart: Int) throws(TokenMintError) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(index - contentStart + 32)
        utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[contentStart..<index]))
        while index < end {
            let byte = bytes[index]
            switch byte {
            case 0x22:  // "
                try checkStringLength(quote: quote, contentStart: contentStart)
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            case 0x5C:  // \
                try parseEscape(into: &utf8)
            case 0x00..<0x20:
                throw TokenMintError(.json.malformed, "unescaped control character \(JSONReader.describe(byte)) in string", offset: index)
            case 0x20..<0x80:
                utf8.append(byte)
                index += 1
            default:
                let length = try utf8SequenceLength(at: index)
                utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + length)]))
                index += length
            }
        }
        throw TokenMintError(.json.malformed, "unterminated string", offset: quote)
    }

    func checkStringLength(quote: Int, contentStart: Int) throws(TokenMintError) {
        guard index - contentStart <= limits.maximumStringBytes else {
            throw TokenMintError(
                .json.tooLarge, "string is \(index - contentStart) bytes, more than maximumStringBytes (\(limits.maximumStringBytes))",
                offset: quote)
        }
    }

    /// Decodes the escape sequence whose backslash is at `index` and appends
    /// its UTF-8 to `utf8`.
    mutating func parseEscape(into utf8: inout [UInt8]) throws(TokenMintError) {
        let escapeStart = index
        guard index + 1 < end else { throw TokenMintError(.json.malformed, "unterminated escape sequence", offset: escapeStart) }
        let code = bytes[index + 1]
        index += 2
        switch code {
        case 0x22, 0x5C, 0x2F:  // " \ /
            utf8.append(code)
        case 0x62:  // b
            utf8.append(0x08)
        case 0x66:  // f
            utf8.append(0x0C)
        case 0x6E:  // n
            utf8.append(0x0A)
        case 0x72:  // r
            utf8.append(0x0D)
        case 0x74:  // t
            utf8.append(0x09)
        case 0x75:  // u
            let unit = try hex4(at: index)
            index += 4
            var scalar = unit
            if unit >= 0xD800 && unit <= 0xDBFF {
                guard index + 1 < end && bytes[index] == 0x5C && bytes[index + 1] == 0x75 else {
                    throw TokenMintError(.json.malformed, "high surrogate \\u\(JSONReader.hex(unit, digits: 4)) is not followed by a \\u low surrogate",
                                    offset: escapeStart)
                }
                let low = try hex4(at: index + 2)
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw TokenMintError(.json.malformed, "high surrogate \\u\(JSONReader.hex(unit, digits: 4)) is followed by \\u\(JSONReader.hex(low, digits: 4)), not a low surrogate",
                                    offset: index)
                }
                index += 6
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                throw TokenMintError(.json.malformed, "unpaired low surrogate \\u\(JSONReader.hex(unit, digits: 4))", offset: escapeStart)
            }
            JSONReader.appendUTF8(scalar, to: &utf8)
        default:
            throw TokenMintError(.json.malformed, "invalid escape sequence \\\(JSONReader.describeEscaped(code))", offset: escapeStart)
        }
    }

    /// The four hexadecimal digits at `position`, as a UTF-16 code unit.
    func hex4(at position: Int) throws(TokenMintError) -> UInt32 {
        guard position + 4 <= end else {
            throw TokenMintError(.json.malformed, "truncated \\u escape, expected four hexadecimal digits", offset: position)
        }
        var unit: UInt32 = 0
        for k in 0..<4 {
            let byte = bytes[position + k]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)  // 0-9
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)  // A-F
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)  // a-f
            default:
                throw TokenMintError(.json.malformed, "invalid \\u escape, \(JSONReader.describe(byte)) is not a hexadecimal digit", offset: position + k)
            }
            unit = unit << 4 | digit
        }
        return unit
    }

    /// Appends the UTF-8 form of the Unicode scalar `scalar` (never a surrogate).
    static func appendUTF8(_ scalar: UInt32, to utf8: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            utf8.append(UInt8(truncatingIfNeeded: scalar))
        case 0x80..<0x800:
            utf8.append(UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6))
            utf8.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            utf8.append(UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12))
            utf8.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            utf8.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        default:
            utf8.append(UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18))
            utf8.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F))
            utf8.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            utf8.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        }
    }

    /// Validates the multi-byte UTF-8 sequence whose lead byte (≥ 0x80) is at
    /// `position` and returns its length (``StrictUTF8``), with the reason
    /// in the error when it is ill-formed.
    func utf8SequenceLength(at position: Int) throws(TokenMintError) -> Int {
        switch StrictUTF8.sequenceLength(bytes, at: position) {
        case .success(let length):
            return length
        case .failure(.unexpectedContinuation):
            throw TokenMintError(.json.malformed, "invalid UTF-8: unexpected continuation byte \(JSONReader.describe(bytes[position]))", offset: position)
        case .failure(.invalidLead):
            throw TokenMintError(.json.malformed, "invalid UTF-8: \(JSONReader.describe(bytes[position])) cannot start a sequence", offset: position)
        case .failure(.truncated):
            throw TokenMintError(.json.malformed, "invalid UTF-8: truncated sequence", offset: position)
        case .failure(.invalidContinuation(offset: 1)):
            throw TokenMintError(.json.malformed, "invalid UTF-8: \(JSONReader.describe(bytes[position + 1])) cannot follow \(JSONReader.describe(bytes[position]))",
                            offset: position + 1)
        case .failure(.invalidContinuation(let offset)):
            throw TokenMintError(.json.malformed, "invalid UTF-8: truncated sequence before \(JSONReader.describe(bytes[position + offset]))", offset: position + offset)
        }
    }

    // MARK: Error text

    /// `'x'` for printable ASCII, `byte 0xNN` otherwise.
    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte <= 0x7E {
            return "'\(Character(Unicode.Scalar(byte)))'"
        }
        return "byte 0x\(hex(UInt32(byte), digits: 2))"
    }

    /// The character after a backslash, for an error message.
    static func describeEscaped(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte <= 0x7E {
            return String(Character(Unicode.Scalar(byte)))
        }
        return " followed by byte 0x\(hex(UInt32(byte), digits: 2))"
    }

    /// `value` in upper-case hexadecimal, zero-padded to `digits`.
    static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// ` "name"` for a short name, nothing for a long one (error text only).
    static func quoted(_ name: String) -> String {
        name.utf8.count <= 64 ? " \(name.debugDescription)" : ""
    }
}
