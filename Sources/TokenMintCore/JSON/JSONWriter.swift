/// Writes compact JSON (no white space) straight into a byte buffer.
///
/// This is the minting fast path: claims and headers are written member by
/// member without building a ``JSONValue`` first.
///
///     var writer = JSONWriter()
///     writer.beginObject()
///     writer.member("alg", "ES256")
///     writer.member("exp", 1_700_000_000)
///     writer.endObject()
///     // writer.bytes == Array(#"{"alg":"ES256","exp":1700000000}"#.utf8)
///
/// Commas and colons are placed automatically. Misuse that would produce
/// invalid JSON (a value in an object without a `key(_:)`, a `key(_:)`
/// outside an object, unbalanced `end…` calls) traps. Writing two top-level
/// values, or the same name twice in one object, is not checked: both are
/// the caller's responsibility.
///
/// Strings are escaped per RFC 8259 §7: `"` and `\` always, control
/// characters below U+0020 as `\b` `\f` `\n` `\r` `\t` or `\u00xx` (lower-case
/// hex, as RFC 8785 does). `/` and non-ASCII characters are written as they
/// are, in UTF-8.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public var bytes: [UInt8]

    /// One open array or object.
    private struct Level: Sendable {
        /// Whether this is an object (else an array).
        var isObject: Bool
        /// Whether nothing has been written in it yet (no comma needed).
        var isEmpty: Bool
    }

    /// How many containers are open.
    private var depth = 0
    /// Bit i: whether open container i (outermost 0) is an object. Only the
    /// first 64 levels live in the bit sets; deeper ones in ``deeperLevels``,
    /// so that writing a token allocates nothing but its bytes.
    private var objectBits: UInt64 = 0
    /// Bit i: whether open container i holds something (a comma is due).
    private var filledBits: UInt64 = 0
    /// The open containers from level 64 on, innermost last.
    private var deeperLevels: [Level] = []
    /// Whether a member name has been written and its value is due.
    private var expectingValue = false
    /// Whether `value(_:)` traps on `.number` text that is not a JSON number.
    /// Only `JSONValue.description` turns this off, so printing a malformed
    /// value never crashes.
    var checksNumbers = true

    /// An empty writer whose buffer can hold `capacity` bytes before growing.
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The compact JSON text of `value`.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }

    // MARK: Structure

    /// Writes `{`.
    public mutating func beginObject() { begin(0x7B, isObject: true) }

    /// Writes `[`.
    public mutating func beginArray() { begin(0x5B, isObject: false) }

    mutating func begin(_ bracket: UInt8, isObject: Bool) {
        beforeValue()
        bytes.append(bracket)
        if depth < 64 {
            let bit = UInt64(1) << UInt64(depth)
            if isObject { objectBits |= bit } else { objectBits &= ~bit }
            filledBits &= ~bit
        } else {
            deeperLevels.append(Level(isObject: isObject, isEmpty: true))
        }
        depth += 1
    }

    /// Whether the innermost open container is an object; nil at the top level.
    private var innermostIsObject: Bool? {
        guard depth > 0 else { return nil }
        guard depth <= 64 else { return deeperLevels[deeperLevels.count - 1].isObject }
        return objectBits & (UInt64(1) << UInt64(depth - 1)) != 0
    }

    private mutating func end() {
        depth -= 1
        if depth >= 64 { deeperLevels.removeLast() }
    }

    /// Writes `}`, closing the innermost container, which must be an object
    /// with no member name left waiting for its value.
    public mutating func endObject() {
        precondition(innermostIsObject == true, "JSONWriter.endObject() without a matching beginObject()")
        precondition(!expectingValue, "JSONWriter.endObject() after key(_:) without a value")
        end()
        bytes.append(0x7D)
    }

    /// Writes `]`, closing the innermost container, which must be an array.
    public mutating func endArray() {
        precondition(innermostIsObject == false, "JSONWriter.endArray() without a matching beginArray()")
        end()
        bytes.append(0x5D)
    }

    /// Writes a member name and `:` inside an object (with a comma first when
    /// needed). The next value written is that member's value.
    public mutating func key(_ name: String) {
        precondition(innermostIsObject == true, "JSONWriter.key(_:) outside an object")
        precondition(!expectingValue, "JSONWriter.key(_:) right after another key(_:)")
        separate()
        appendQuoted(name)
        bytes.append(0x3A)
        expectingValue = true
    }

    // MARK: Values

    /// Writes a string value.
    public mutating func string(_ value: String) {
        beforeValue()
        appendQuoted(value)
    }

    /// Writes an integer value.
    public mutating func int(_ value: Int64) {
        beforeValue()
        if value < 0 { bytes.append(0x2D) }  // -
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = 0x30 + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Writes an integer value. Present so that integer literals resolve
    /// without naming a type.
    public mutating func int(_ value: Int) {
        int(Int64(value))
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        beforeValue()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65] as [UInt8])  // true
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65] as [UInt8])  // false
        }
    }

    /// Writes `null`.
    public mutating func null() {
        beforeValue()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C] as [UInt8])  // null
    }

    /// Writes pre-encoded JSON text as one value, unchanged.
    ///
    /// `jsonText` must be exactly one valid, compact-or-not JSON value; it is
    /// not checked.
    public mutating func raw(_ jsonText: [UInt8]) {
        beforeValue()
        bytes.append(contentsOf: jsonText)
    }

    /// Writes `value` and everything inside it.
    ///
    /// Traps when a `.number` holds text that is not an RFC 8259 number
    /// (numbers from ``JSONParser`` and the `JSONValue.number(_:)` functions
    /// always are).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null:
            null()
        case .bool(let flag):
            bool(flag)
        case .number(let text):
            if checksNumbers {
                precondition(JSONNumberSyntax.isValid(text), "JSONWriter: \(text.debugDescription) is not a JSON number")
            }
            beforeValue()
            bytes.append(contentsOf: text.utf8)
        case .string(let text):
            string(text)
        case .array(let elements):
            beginArray()
            for element in elements {
                self.value(element)
            }
            endArray()
        case .object(let object):
            beginObject()
            for member in object {
                key(member.name)
                self.value(member.value)
            }
            endObject()
        }
    }

    // MARK: Members

    /// Writes the member `name` with a string value.
    public mutating func member(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    /// Writes the member `name` with an integer value.
    public mutating func member(_ name: String, _ value: Int64) {
        key(name)
        int(value)
    }

    /// Writes the member `name` with an integer value. Present so that
    /// integer literals resolve without naming a type.
    public mutating func member(_ name: String, _ value: Int) {
        key(name)
        int(Int64(value))
    }

    /// Writes the member `name` with a Boolean value.
    public mutating func member(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// Writes the member `name` with any value.
    public mutating func member(_ name: String, _ value: JSONValue) {
        key(name)
        self.value(value)
    }

    // MARK: Internals

    /// Writes the comma a value needs, or nothing right after a `key(_:)`.
    private mutating func beforeValue() {
        if expectingValue {
            expectingValue = false
            return
        }
        guard depth > 0 else { return }  // a top-level value
        precondition(innermostIsObject == false, "JSONWriter: a value inside an object needs key(_:) first")
        separate()
    }

    /// Writes a comma unless the innermost container is still empty.
    private mutating func separate() {
        let filled: Bool
        if depth <= 64 {
            let bit = UInt64(1) << UInt64(depth - 1)
            filled = filledBits & bit != 0
            filledBits |= bit
        } else {
            let last = deeperLevels.count - 1
            filled = !deeperLevels[last].isEmpty
            deeperLevels[last].isEmpty = false
        }
        if filled { bytes.append(0x2C) }
    }

    /// Whether `byte` must be escaped inside a JSON string.
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x22 || byte == 0x5C
    }

    /// Appends `text` as a quoted, escaped JSON string.
    private mutating func appendQuoted(_ text: String) {
        bytes.append(0x22)
        let utf8 = text.utf8
        // Native strings (every string but a bridged one) are contiguous: one
        // scan over the bytes, then one copy.
        let plain = utf8.withContiguousStorageIfAvailable { buffer -> Bool in
            for byte in buffer where JSONWriter.needsEscape(byte) { return false }
            bytes.append(contentsOf: buffer)
            return true
        }
        if plain == true {
            // written
        } else if plain == nil, !utf8.contains(where: JSONWriter.needsEscape) {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                if !JSONWriter.needsEscape(byte) {
                    bytes.append(byte)
                    continue
                }
                bytes.append(0x5C)  // \
                switch byte {
                case 0x22: bytes.append(0x22)  // \"
                case 0x5C: bytes.append(0x5C)  // \\
                case 0x08: bytes.append(0x62)  // \b
                case 0x0C: bytes.append(0x66)  // \f
                case 0x0A: bytes.append(0x6E)  // \n
                case 0x0D: bytes.append(0x72)  // \r
                case 0x09: bytes.append(0x74)  // \t
                default:  // \u00xx
                    bytes.append(0x75)
                    bytes.append(0x30)
                    bytes.append(0x30)
                    bytes.append(JSONWriter.hexDigit(byte >> 4))
                    bytes.append(JSONWriter.hexDigit(byte & 0x0F))
                }
            }
        }
        bytes.append(0x22)
    }

    /// The lower-case hexadecimal digit for `nibble` (0...15).
    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10
    }
}
