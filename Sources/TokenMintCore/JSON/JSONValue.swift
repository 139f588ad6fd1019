/// A parsed JSON value (RFC 8259).
///
/// Numbers keep their source text, so nothing is lost to `Double` rounding and
/// integers wider than 53 bits (or 64 bits) survive a parse and re-encode
/// unchanged. Use ``int64Value`` or ``doubleValue`` to read them as numbers.
///
/// Equality is structural and order-sensitive for objects (see ``JSONObject``);
/// strings compare as Swift strings do (by canonical equivalence).
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its exact RFC 8259 §6 text, for example `"-12.5e3"`.
    ///
    /// Values made by ``JSONParser`` always hold valid number text. When you
    /// build one yourself, prefer the `number(_:)` functions that take an
    /// `Int64`, `Int` or `Double`; ``JSONWriter`` traps on text that is not a
    /// JSON number.
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object(JSONObject)
}

// MARK: - Number constructors

extension JSONValue {
    /// The number `value`, in decimal.
    public static func number(_ value: Int64) -> JSONValue {
        JSONValue.number(String(value))
    }

    /// The number `value`, in decimal.
    ///
    /// Present so that `JSONValue.number(5)` resolves without naming a type.
    public static func number(_ value: Int) -> JSONValue {
        JSONValue.number(String(value))
    }

    /// The number `value` as its shortest round-trip text (`"0.5"`, `"1.0"`,
    /// `"1e+20"`), or nil when `value` is NaN or infinite, which JSON cannot
    /// represent.
    public static func number(_ value: Double) -> JSONValue? {
        guard value.isFinite else { return nil }
        let text = value.description
        // Swift's shortest round-trip form is always valid JSON number text for
        // finite values; the check keeps that assumption from ever leaking out.
        guard JSONNumberSyntax.isValid(text) else { return nil }
        return JSONValue.number(text)
    }
}

// MARK: - Accessors

extension JSONValue {
    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The object, when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The number as an `Int64`, when it is written as an integer (no fraction,
    /// no exponent: `"123"`, `"-5"`) that fits in 64 bits.
    ///
    /// `"1.0"` and `"1e2"` give nil even though their values are integers:
    /// JOSE's NumericDate claims are compared as written.
    public var int64Value: Int64? {
        guard case .number(let text) = self else { return nil }
        return JSONNumberSyntax.integer(text)
    }

    /// The number as the nearest `Double`, or nil when this is not a number or
    /// its magnitude is too large for a finite `Double`.
    public var doubleValue: Double? {
        guard case .number(let text) = self, JSONNumberSyntax.isValid(text),
              let value = Double(text), value.isFinite
        else { return nil }
        return value
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member `name` of an object, or nil when this is not an object or
    /// has no such member.
    public subscript(name: String) -> JSONValue? {
        objectValue?[name]
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByStringLiteral {
    /// A string value from a string literal.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// A number value from an integer literal.
    public init(integerLiteral value: Int64) {
        self = .number(String(value))
    }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// A Boolean value from `true` or `false`.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array value from an array literal.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object value from a dictionary literal, members in literal order.
    /// A repeated name replaces the earlier value (see ``JSONObject/init(_:)``).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// `null` from `nil`.
    ///
    /// Where a `JSONValue?` is expected, `nil` still means "absent"
    /// (`Optional.none`), not `null`.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of the value. `.number` text is written as it
    /// is, even when it is not a valid JSON number (``JSONWriter`` would trap).
    public var description: String {
        var writer = JSONWriter()
        writer.checksNumbers = false
        writer.value(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

// MARK: - JSONObject

// JSONObject lives beside JSONValue, whose `.object` case it is: with the
// two in one file the release build parses a JWT claims set 5 % faster than
// with them apart (tokenmint-bench, "JWT part: decode + parse claims").

/// A JSON object: members in source (or insertion) order, names unique.
///
/// Names are compared exactly, code unit by code unit as RFC 8259 §8.3
/// describes, so `"é"` (U+00E9) and `"e\u{301}"` are two different names.
/// Lookups are linear, which is fastest for the small objects JOSE uses.
///
/// Equality (`==`) compares members in order: `{"a":1,"b":2}` and
/// `{"b":2,"a":1}` are different `JSONObject`s, as they are different bytes
/// once encoded.
public struct JSONObject: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// One member of an object.
    public struct Member: Hashable, Sendable {
        /// The member name.
        public let name: String
        /// The member value.
        public let value: JSONValue

        /// A member named `name` with `value`.
        public init(name: String, value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    /// The members, in order.
    public private(set) var members: [Member]

    /// An empty object.
    public init() {
        members = []
    }

    /// An object with `members`, in order.
    ///
    /// Never traps: when a name repeats, the later value replaces the earlier
    /// one, which keeps its original position (as ``set(_:_:)`` does).
    public init(_ members: [(String, JSONValue)]) {
        self.members = []
        self.members.reserveCapacity(members.count)
        for (name, value) in members {
            set(name, value)
        }
    }

    /// An object from a dictionary literal, members in literal order; a
    /// repeated name replaces the earlier value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// An object whose member names are already known to be unique (the parser
    /// checks them as it reads).
    package init(uniqueMembers: [Member]) {
        members = uniqueMembers
    }

    /// The members, handed over: a caller who owns the only copy of the
    /// object can edit them without copying the storage.
    package consuming func takeMembers() -> [Member] {
        members
    }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The member names, in order.
    public var names: [String] { members.map(\.name) }

    /// The value of the member `name`, or nil when there is none.
    public subscript(name: String) -> JSONValue? {
        for member in members where JSONObject.sameName(member.name, name) {
            return member.value
        }
        return nil
    }

    /// Sets the member `name` to `value`: replaced in place when the name is
    /// present, appended otherwise.
    public mutating func set(_ name: String, _ value: JSONValue) {
        let member = Member(name: name, value: value)
        if let index = members.firstIndex(where: { JSONObject.sameName($0.name, name) }) {
            members[index] = member
        } else {
            members.append(member)
        }
    }

    /// Removes the member `name`, if present, and returns its value.
    @discardableResult
    public mutating func remove(_ name: String) -> JSONValue? {
        guard let index = members.firstIndex(where: { JSONObject.sameName($0.name, name) }) else { return nil }
        return members.remove(at: index).value
    }

    /// An iterator over the members, in order.
    public func makeIterator() -> IndexingIterator<[Member]> {
        members.makeIterator()
    }

    /// The number of members.
    public var underestimatedCount: Int { members.count }

    /// Whether two member names are the same code unit for code unit (unlike
    /// `String.==`, which treats canonically equivalent strings as equal).
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in x.elementsEqual(y) } }
    }
}

// MARK: - Number grammar

/// The RFC 8259 §6 number grammar, shared by the parser, the accessors and
/// the writer:
///
///     number = [ "-" ] ( "0" / digit1-9 *DIGIT ) [ "." 1*DIGIT ] [ ( "e" / "E" ) [ "-" / "+" ] 1*DIGIT ]
enum JSONNumberSyntax {
    /// The value of `text` when it is a JSON integer (`-?(0|[1-9][0-9]*)`, no
    /// fraction or exponent) that fits in 64 bits; nil otherwise. One pass,
    /// accumulating negatively so that `Int64.min` fits.
    static func integer(_ text: String) -> Int64? {
        var iterator = text.utf8.makeIterator()
        guard var byte = iterator.next() else { return nil }
        let negative = byte == 0x2D  // -
        if negative {
            guard let next = iterator.next() else { return nil }
            byte = next
        }
        guard isDigit(byte) else { return nil }
        var value = -Int64(byte - 0x30)
        while let next = iterator.next() {
            guard isDigit(next), byte != 0x30 else { return nil }  // a leading zero is no JSON number
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.subtractingReportingOverflow(Int64(next - 0x30))
            guard !overflow, !overflow2 else { return nil }
            value = sum
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// The outcome of ``scan(_:from:)``.
    enum Scan {
        /// A number runs from the start up to `end` (exclusive).
        case valid(end: Int)
        /// No number starts here; `offset` is the first offending byte.
        case invalid(reason: String, offset: Int)
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= 0x30 && byte <= 0x39
    }

    /// Reads the longest number that starts at `start`. Bytes after it are not
    /// looked at, except that a digit right after a leading `0` is reported as
    /// a leading zero.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Scan {
        let end = bytes.count
        var i = start
        if i < end && bytes[i] == 0x2D {  // -
            i += 1
        }
        guard i < end else { return .invalid(reason: "expected a digit", offset: i) }
        let first = bytes[i]
        if first == 0x30 {  // 0
            i += 1
            if i < end && isDigit(bytes[i]) {
                return .invalid(reason: "leading zeros are not allowed in numbers", offset: i)
            }
        } else if isDigit(first) {
            i += 1
            while i < end && isDigit(bytes[i]) { i += 1 }
        } else {
            return .invalid(reason: "expected a digit", offset: i)
        }
        if i < end && bytes[i] == 0x2E {  // .
            i += 1
            guard i < end && isDigit(bytes[i]) else {
                return .invalid(reason: "expected a digit after the decimal point", offset: i)
            }
            while i < end && isDigit(bytes[i]) { i += 1 }
        }
        if i < end && (bytes[i] == 0x65 || bytes[i] == 0x45) {  // e E
            i += 1
            if i < end && (bytes[i] == 0x2B || bytes[i] == 0x2D) {  // + -
                i += 1
            }
            guard i < end && isDigit(bytes[i]) else {
                return .invalid(reason: "expected a digit in the exponent", offset: i)
            }
            while i < end && isDigit(bytes[i]) { i += 1 }
        }
        return .valid(end: i)
    }

    /// Whether `text` is exactly one JSON number and nothing else.
    static func isValid(_ text: String) -> Bool {
        let check = { (buffer: UnsafeBufferPointer<UInt8>) -> Bool in
            if case .valid(let end) = JSONNumberSyntax.scan(buffer, from: 0) {
                return end == buffer.count
            }
            return false
        }
        if let result = text.utf8.withContiguousStorageIfAvailable(check) {
            return result
        }
        return Array(text.utf8).withUnsafeBufferPointer(check)
    }
}
