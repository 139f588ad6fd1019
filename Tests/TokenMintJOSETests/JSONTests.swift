import TokenMintCore
import Testing
import TokenMintJOSE

/// The UTF-8 bytes of `text`.
private func utf8(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// Whether `text` contains `word` (byte-wise; keeps these tests free of Foundation).
private func mentions(_ text: String, _ word: String) -> Bool {
    let haystack = Array(text.utf8)
    let needle = Array(word.utf8)
    guard needle.count <= haystack.count else { return false }
    for start in 0...(haystack.count - needle.count)
    where haystack[start..<(start + needle.count)].elementsEqual(needle) {
        return true
    }
    return false
}

/// Whether `value` is absent (`Optional.none`, not `JSONValue.null`).
private func isNone<T>(_ value: T?) -> Bool {
    value == nil
}

/// Parses `input`; records an issue and returns nil when it is refused.
@discardableResult
private func accept(
    _ input: [UInt8], _ label: String, limits: JSONParser.Limits = JSONParser.Limits(),
    sourceLocation: SourceLocation = #_sourceLocation
) -> JSONValue? {
    do throws(TokenMintError) {
        return try JSONParser.parse(input, limits: limits)
    } catch {
        Issue.record("\(label): refused: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Parses the UTF-8 of `text`; records an issue and returns nil when it is refused.
@discardableResult
private func acceptText(
    _ text: String, limits: JSONParser.Limits = JSONParser.Limits(), sourceLocation: SourceLocation = #_sourceLocation
) -> JSONValue? {
    accept(utf8(text), text.debugDescription, limits: limits, sourceLocation: sourceLocation)
}

/// Parses `input`; records an issue when it is accepted, and returns the error.
@discardableResult
private func reject(
    _ input: [UInt8], _ label: String, limits: JSONParser.Limits = JSONParser.Limits(),
    sourceLocation: SourceLocation = #_sourceLocation
) -> TokenMintError? {
    do throws(TokenMintError) {
        let value = try JSONParser.parse(input, limits: limits)
        Issue.record("\(label): accepted as \(value)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// Parses the UTF-8 of `text`; records an issue when it is accepted, and returns the error.
@discardableResult
private func rejectText(
    _ text: String, limits: JSONParser.Limits = JSONParser.Limits(), sourceLocation: SourceLocation = #_sourceLocation
) -> TokenMintError? {
    reject(utf8(text), text.debugDescription, limits: limits, sourceLocation: sourceLocation)
}

@Suite("Strict JSON: parser, writer and values")
struct JSONTests {
    // MARK: - Refused input

    @Test("Refuses everything RFC 8259 does not allow (JSONTestSuite n_ style)")
    func rejectsInvalidJSON() {
        let tooDeep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        let cases: [(String, [UInt8])] = [
            // Document structure
            ("empty input", utf8("")),
            ("only white space", utf8(" \n\t\r ")),
            ("two values", utf8("1 2")),
            ("two objects", utf8("{}{}")),
            ("garbage after a value", utf8("[1]x")),
            ("NUL after a value", [0x5B, 0x31, 0x5D, 0x00]),
            ("line comment", utf8("[1] // comment")),
            ("block comment", utf8("/* comment */ [1]")),
            ("byte order mark", [0xEF, 0xBB, 0xBF, 0x7B, 0x7D]),
            ("form feed as white space", utf8("\u{0C}[1]")),
            ("no-break space as white space", [0xC2, 0xA0, 0x5B, 0x31, 0x5D]),
            ("lone closing bracket", utf8("]")),
            ("lone closing brace", utf8("}")),
            // Arrays and objects
            ("trailing comma in array", utf8("[1,]")),
            ("trailing comma in object", utf8(#"{"a":1,}"#)),
            ("trailing comma before white space", utf8("[1 , ]")),
            ("leading comma", utf8("[,1]")),
            ("double comma", utf8("[1,,2]")),
            ("missing comma", utf8("[1 2]")),
            ("missing colon", utf8(#"{"a" 1}"#)),
            ("missing member value", utf8(#"{"a":}"#)),
            ("unquoted member name", utf8("{a:1}")),
            ("number as member name", utf8("{1:1}")),
            ("unterminated array", utf8("[1")),
            ("unterminated object", utf8(#"{"a":1"#)),
            ("duplicate member names", utf8(#"{"a":1,"a":2}"#)),
            ("duplicate member names after unescaping", utf8(#"{"a":1,"\u0061":2}"#)),
            ("duplicate member names in a nested object", utf8(#"{"x":{"b":true,"b":true}}"#)),
            ("duplicate alg", utf8(#"{"alg":"none","alg":"HS256"}"#)),
            ("33 nested arrays", utf8(tooDeep)),
            // Literals
            ("truncated true", utf8("tru")),
            ("capitalised True", utf8("True")),
            ("null with a suffix", utf8("nullx")),
            ("single-quoted string", utf8("['a']")),
            // Numbers
            ("leading zero", utf8("01")),
            ("negative leading zero", utf8("-01")),
            ("double zero in array", utf8("[00]")),
            ("minus alone", utf8("-")),
            ("minus then space", utf8("- 1")),
            ("fraction without digits", utf8("1.")),
            ("fraction without integer part", utf8(".1")),
            ("negative fraction without integer part", utf8("-.5")),
            ("empty fraction before exponent", utf8("1.e5")),
            ("exponent without digits", utf8("1e")),
            ("exponent sign without digits", utf8("1e+")),
            ("plus sign", utf8("+1")),
            ("NaN", utf8("NaN")),
            ("Infinity", utf8("Infinity")),
            ("-Infinity", utf8("-Infinity")),
            ("hexadecimal number", utf8("0x10")),
            // Strings and escapes
            ("unterminated string", utf8(#""abc"#)),
            ("lone high surrogate", utf8(#"["\uD800"]"#)),
            ("lone low surrogate", utf8(#"["\uDC00"]"#)),
            ("reversed surrogate pair", utf8(#"["\uDC00\uD800"]"#)),
            ("high surrogate then a BMP escape", utf8(#"["\uD800\u0041"]"#)),
            ("high surrogate then text", utf8(#"["\uD83Dabc"]"#)),
            ("high surrogate at the end of a string", utf8(#""\uD83D""#)),
            ("truncated \\u escape", utf8(#"["\u12"]"#)),
            ("non-hexadecimal \\u escape", utf8(#"["\u12G4"]"#)),
            ("bad escape \\x", utf8(#"["\x41"]"#)),
            ("escaped single quote", utf8(#"["\'"]"#)),
            ("upper-case \\U escape", utf8(#"["\U0041"]"#)),
            ("backslash at the end of input", utf8(#""\"#)),
            ("raw control character in string", utf8("[\"a\u{01}b\"]")),
            ("unescaped tab in string", utf8("[\"a\tb\"]")),
            ("unescaped newline in string", utf8("[\"a\nb\"]")),
            ("raw NUL in string", [0x22, 0x00, 0x22]),
            // UTF-8
            ("overlong 2-byte UTF-8", [0x22, 0xC0, 0xAF, 0x22]),
            ("overlong 2-byte UTF-8 with C1", [0x22, 0xC1, 0xBF, 0x22]),
            ("overlong 3-byte UTF-8", [0x22, 0xE0, 0x80, 0xAF, 0x22]),
            ("overlong 4-byte UTF-8", [0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22]),
            ("UTF-8 encoded high surrogate", [0x22, 0xED, 0xA0, 0x80, 0x22]),
            ("UTF-8 encoded low surrogate", [0x22, 0xED, 0xBF, 0xBF, 0x22]),
            ("code point above U+10FFFF", [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]),
            ("lead byte 0xF5", [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22]),
            ("byte 0xFF", [0x22, 0xFF, 0x22]),
            ("stray continuation byte", [0x22, 0x80, 0x22]),
            ("truncated sequence before the quote", [0x22, 0xE2, 0x82, 0x22]),
            ("truncated sequence at the end of input", [0x22, 0xE2, 0x82]),
            ("lead byte then ASCII", [0x22, 0xC3, 0x41, 0x22]),
            ("UTF-8 outside a string", [0x5B, 0xC3, 0xA9, 0x5D]),
        ]
        #expect(cases.count >= 40)
        for (label, input) in cases {
            reject(input, label)
        }
    }

    @Test("Errors say where and why")
    func errorOffsetsAndReasons() {
        #expect(TokenMintError(.json.malformed, "bad", offset: 5).description == "json.malformed at byte 5: bad")

        let duplicate = rejectText(#"{"a":1,"a":2}"#)
        #expect(duplicate?.offset == 7)
        #expect(mentions(duplicate?.reason ?? "", "duplicate"))

        let unescaped = rejectText(#"{"a":1,"\u0061":2}"#)
        #expect(unescaped?.offset == 7)
        #expect(mentions(unescaped?.reason ?? "", "duplicate"))

        let trailing = rejectText("[1,]")
        #expect(trailing?.offset == 3)
        #expect(mentions(trailing?.reason ?? "", "trailing comma"))

        let leadingZero = rejectText("01")
        #expect(leadingZero?.offset == 1)
        #expect(mentions(leadingZero?.reason ?? "", "leading zero"))

        #expect(rejectText("[1]x")?.offset == 3)
        #expect(rejectText(#""\uD800""#)?.offset == 1)
        #expect(reject([0x22, 0xC0, 0xAF, 0x22], "overlong")?.offset == 1)
        #expect(rejectText("-")?.offset == 1)
        #expect(rejectText("")?.offset == 0)
    }

    // MARK: - Limits

    @Test("Depth, size, string and member limits are enforced and named")
    func limits() {
        // Depth: 32 nested containers pass at the defaults, 33 do not.
        acceptText(String(repeating: "[", count: 32) + String(repeating: "]", count: 32))
        let deepArrays = rejectText(String(repeating: "[", count: 33) + String(repeating: "]", count: 33))
        #expect(mentions(deepArrays?.reason ?? "", "maximumDepth"))
        let deepObjects = rejectText(String(repeating: #"{"a":"#, count: 33) + "1" + String(repeating: "}", count: 33))
        #expect(mentions(deepObjects?.reason ?? "", "maximumDepth"))
        var shallow = JSONParser.Limits()
        shallow.maximumDepth = 2
        acceptText(#"{"a":[1]}"#, limits: shallow)
        #expect(mentions(rejectText(#"{"a":[[1]]}"#, limits: shallow)?.reason ?? "", "maximumDepth"))

        // Size.
        var small = JSONParser.Limits()
        small.maximumBytes = 10
        acceptText("[1,2,3,45]", limits: small)
        let tooBig = rejectText("[1,2,3,456]", limits: small)
        #expect(mentions(tooBig?.reason ?? "", "maximumBytes"))
        do throws(TokenMintError) {
            let value = try JSONParser.parse(utf8("[1,2,3,456]").lazy.map { $0 }, limits: small)
            Issue.record("a non-contiguous input over maximumBytes was accepted as \(value)")
        } catch {
            #expect(mentions(error.reason, "maximumBytes"))
        }

        // String length, in source bytes (escapes as written), names included.
        var shortStrings = JSONParser.Limits()
        shortStrings.maximumStringBytes = 4
        acceptText(#"["abcd"]"#, limits: shortStrings)
        #expect(mentions(rejectText(#"["abcde"]"#, limits: shortStrings)?.reason ?? "", "maximumStringBytes"))
        #expect(mentions(rejectText(#"{"abcde":1}"#, limits: shortStrings)?.reason ?? "", "maximumStringBytes"))
        #expect(mentions(rejectText(#"["\u0041"]"#, limits: shortStrings)?.reason ?? "", "maximumStringBytes"))

        // Members per object and elements per array.
        var fewMembers = JSONParser.Limits()
        fewMembers.maximumMembers = 3
        acceptText(#"{"a":1,"b":2,"c":3}"#, limits: fewMembers)
        #expect(mentions(rejectText(#"{"a":1,"b":2,"c":3,"d":4}"#, limits: fewMembers)?.reason ?? "", "maximumMembers"))
        acceptText("[1,2,3]", limits: fewMembers)
        #expect(mentions(rejectText("[1,2,3,4]", limits: fewMembers)?.reason ?? "", "maximumMembers"))
    }

    // MARK: - Accepted input

    @Test("Accepts nested values, literals and white space")
    func acceptsValidJSON() {
        let nested = acceptText(#"{"a":[1,2,{"b":null}],"c":true,"d":false,"e":"x"}"#)
        let inner: JSONValue = ["b": nil]
        let array: JSONValue = [1, 2, inner]
        let expected: JSONValue = ["a": array, "c": true, "d": false, "e": "x"]
        #expect(nested == expected)

        let spaced = acceptText(" \t\n\r[ 1 ,\n2 ]\r\n ")
        let oneTwo: JSONValue = [1, 2]
        #expect(spaced == oneTwo)

        #expect(acceptText("1") == JSONValue.number("1"))
        #expect(acceptText(#""x""#) == JSONValue.string("x"))
        #expect(acceptText("true") == JSONValue.bool(true))
        #expect(acceptText("false") == JSONValue.bool(false))
        #expect(acceptText(" null ") == JSONValue.null)
        #expect(acceptText("{}") == JSONValue.object(JSONObject()))
        #expect(acceptText("[]") == JSONValue.array([]))
        #expect(acceptText("[[]]") == JSONValue.array([.array([])]))
        let emptyName = acceptText(#"{"":{}}"#)
        #expect(emptyName?.objectValue?.names == [""])
    }

    @Test("Numbers are kept as their source text")
    func numbersKeepTheirText() {
        let texts = ["-12.5e3", "0", "-0", "1E+2", "0.000001", "123456789012345678901234567890", "1e-7", "2.50", "-0.0e-0"]
        let parsed = acceptText("[" + texts.joined(separator: ",") + "]")
        #expect(parsed == JSONValue.array(texts.map { JSONValue.number($0) }))
        // Re-encoding gives the same text back.
        if let parsed {
            #expect(JSONWriter.encode(parsed) == utf8("[" + texts.joined(separator: ",") + "]"))
        }
    }

    @Test("Escapes and UTF-8 decode to the right String")
    func stringsDecode() {
        let escaped = acceptText(#""\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r\u0000\u00C9""#)
        #expect(escaped?.stringValue == "\u{E9}\u{1F600}\n\t\"\\/\u{08}\u{0C}\r\u{00}\u{C9}")

        let raw = acceptText("\"日本語 😀 é\"")
        #expect(raw?.stringValue == "日本語 😀 é")

        // Boundaries of well-formed UTF-8.
        let boundaries: [([UInt8], String)] = [
            ([0xC2, 0x80], "\u{80}"),
            ([0xDF, 0xBF], "\u{7FF}"),
            ([0xE0, 0xA0, 0x80], "\u{800}"),
            ([0xED, 0x9F, 0xBF], "\u{D7FF}"),
            ([0xEE, 0x80, 0x80], "\u{E000}"),
            ([0xEF, 0xBF, 0xBF], "\u{FFFF}"),
            ([0xF0, 0x90, 0x80, 0x80], "\u{10000}"),
            ([0xF4, 0x8F, 0xBF, 0xBF], "\u{10FFFF}"),
        ]
        for (bytes, expected) in boundaries {
            let value = accept([0x22] + bytes + [0x22], "UTF-8 \(bytes)")
            #expect(value?.stringValue == expected)
        }

        // A string with an escape after non-ASCII text takes the slow path.
        #expect(acceptText(#""é\n😀""#)?.stringValue == "é\n😀")
        // The surrogate pair for U+10FFFF.
        #expect(acceptText(#""\uDBFF\uDFFF""#)?.stringValue == "\u{10FFFF}")
    }

    @Test("Member names are compared exactly, and objects keep their order")
    func objectsKeepOrderAndCompareNamesExactly() {
        let ordered = acceptText(#"{"z":1,"a":2,"m":3}"#)?.objectValue
        #expect(ordered?.names == ["z", "a", "m"])
        #expect(ordered?.map(\.name) == ["z", "a", "m"])

        // "é" precomposed and decomposed are different names in JSON.
        let equivalent = acceptText(#"{"\u00e9":1,"e\u0301":2}"#)?.objectValue
        #expect(equivalent?.count == 2)
        #expect(equivalent?["\u{E9}"] == JSONValue.number("1"))
        #expect(equivalent?["e\u{301}"] == JSONValue.number("2"))

        // More than 16 members: the hashed duplicate check.
        var members: [String] = []
        for i in 0..<20 {
            members.append("\"k\(i)\":\(i)")
        }
        let large = "{" + members.joined(separator: ",") + "}"
        let names = (0..<20).map { "k\($0)" }
        #expect(acceptText(large)?.objectValue?.names == names)
        rejectText(String(large.dropLast()) + #","k3":0}"#)
        rejectText(String(large.dropLast()) + #","\u006b19":0}"#)
        let withEquivalents = acceptText(String(large.dropLast()) + #","\u00e9":1,"e\u0301":2}"#)
        #expect(withEquivalents?.objectValue?.count == 22)
        rejectText(String(large.dropLast()) + #","\u00e9":1,"e\u0301":2,"\u00e9":3}"#)
    }

    // MARK: - Values and objects

    @Test("JSONObject: set, remove, init and literals")
    func objectAPI() {
        var object = JSONObject()
        #expect(object.isEmpty)
        object.set("b", 1)
        object.set("a", "x")
        object.set("b", true)  // replaced in place
        #expect(object.names == ["b", "a"])
        #expect(object.count == 2)
        #expect(object["b"] == JSONValue.bool(true))
        let removed = object.remove("b")
        #expect(removed == JSONValue.bool(true))
        #expect(object.names == ["a"])
        #expect(isNone(object["b"]))
        let notThere = object.remove("missing")
        #expect(isNone(notThere))

        // Later duplicates replace earlier ones, which keep their position.
        let pairs = JSONObject([("x", 1), ("y", 2), ("x", 3)])
        #expect(pairs.names == ["x", "y"])
        #expect(pairs["x"] == JSONValue.number("3"))

        let literal: JSONObject = ["z": 1, "a": 2, "m": 3]
        #expect(literal.names == ["z", "a", "m"])
        #expect(JSONWriter.encode(.object(literal)) == utf8(#"{"z":1,"a":2,"m":3}"#))

        // Equality is order-sensitive.
        let ab: JSONValue = ["a": 1, "b": 2]
        let ba: JSONValue = ["b": 2, "a": 1]
        #expect(ab != ba)

        // JSONValue conveniences.
        let value: JSONValue = ["s": "text", "t": true, "n": nil, "list": [1]]
        #expect(value["s"]?.stringValue == "text")
        #expect(value["t"]?.boolValue == true)
        #expect(value["n"]?.isNull == true)
        #expect(value["list"]?.arrayValue?.count == 1)
        #expect(value.objectValue?.count == 4)
        #expect(isNone(value["missing"]))
        #expect(isNone(JSONValue.string("x").objectValue))
        #expect(!JSONValue.bool(false).isNull)
    }

    @Test("Number accessors and constructors")
    func numberAccessors() {
        #expect(JSONValue.number("123").int64Value == 123)
        #expect(JSONValue.number("-5").int64Value == -5)
        #expect(JSONValue.number("0").int64Value == 0)
        #expect(JSONValue.number("-0").int64Value == 0)
        #expect(JSONValue.number("9223372036854775807").int64Value == Int64.max)
        #expect(JSONValue.number("-9223372036854775808").int64Value == Int64.min)
        #expect(isNone(JSONValue.number("9223372036854775808").int64Value))
        #expect(isNone(JSONValue.number("1.0").int64Value))
        #expect(isNone(JSONValue.number("1e2").int64Value))
        #expect(isNone(JSONValue.number("01").int64Value))
        #expect(isNone(JSONValue.number("+1").int64Value))
        #expect(isNone(JSONValue.string("1").int64Value))

        #expect(JSONValue.number("-12.5e3").doubleValue == -12_500)
        #expect(JSONValue.number("0.5").doubleValue == 0.5)
        #expect(JSONValue.number("7").doubleValue == 7)
        #expect(isNone(JSONValue.number("1e400").doubleValue))
        #expect(isNone(JSONValue.number("NaN").doubleValue))
        #expect(isNone(JSONValue.number("0x10").doubleValue))
        #expect(isNone(JSONValue.bool(true).doubleValue))

        #expect(JSONValue.number(Int64.min) == JSONValue.number("-9223372036854775808"))
        #expect(JSONValue.number(Int64(42)) == JSONValue.number("42"))
        #expect(JSONValue.number(-7) == JSONValue.number("-7"))
        let fortyTwo: JSONValue = 42
        #expect(fortyTwo == JSONValue.number("42"))

        #expect(JSONValue.number(0.5) == JSONValue.number("0.5"))
        #expect(JSONValue.number(1.0) == JSONValue.number("1.0"))
        #expect(JSONValue.number(1e20) == JSONValue.number("1e+20"))
        #expect(JSONValue.number(0.1)?.doubleValue == 0.1)
        #expect(JSONValue.number(-0.0)?.doubleValue == 0)
        #expect(isNone(JSONValue.number(Double.nan)))
        #expect(isNone(JSONValue.number(Double.infinity)))
        #expect(isNone(JSONValue.number(-Double.infinity)))
        // Whatever Double prints must parse as strict JSON.
        for double in [1e20, 1e-7, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, -123.456, 1e16, 100.0] {
            guard let value = JSONValue.number(double) else {
                Issue.record("\(double) gave no JSON number")
                continue
            }
            #expect(accept(JSONWriter.encode(value), "\(double)") == value)
            #expect(value.doubleValue == double)
        }
    }

    // MARK: - Writer

    @Test("The writer places commas and colons and writes compact JSON")
    func writerStructure() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("alg", "ES256")
        writer.member("typ", "JWT")
        writer.member("exp", 1_700_000_000)
        writer.member("big", Int64.max)
        writer.member("admin", true)
        writer.member("aud", ["a", "b"] as JSONValue)
        writer.key("nested")
        writer.beginArray()
        writer.int(-1)
        writer.string("s")
        writer.null()
        writer.bool(false)
        writer.beginObject()
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.raw(utf8("[1,2]"))
        writer.value(["k": "v"])
        writer.endArray()
        writer.key("last")
        writer.value(.null)
        writer.endObject()
        let expected = #"{"alg":"ES256","typ":"JWT","exp":1700000000,"big":9223372036854775807,"admin":true,"aud":["a","b"],"nested":[-1,"s",null,false,{},[],[1,2],{"k":"v"}],"last":null}"#
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
        #expect(!isNone(accept(writer.bytes, "writer output")))

        #expect(JSONWriter.encode(.null) == utf8("null"))
        #expect(JSONWriter.encode(.bool(true)) == utf8("true"))
        #expect(JSONWriter.encode(.number("-1.5e-3")) == utf8("-1.5e-3"))
        #expect(JSONWriter.encode(.string("")) == utf8(#""""#))
        #expect(JSONWriter.encode(.array([])) == utf8("[]"))
        #expect(JSONWriter.encode(.object(JSONObject())) == utf8("{}"))
        var minimum = JSONWriter(capacity: 0)
        minimum.int(Int64.min)
        #expect(minimum.bytes == utf8("-9223372036854775808"))
    }

    @Test("The writer escapes quotes, backslashes and control characters only")
    func writerEscaping() {
        let text = "q\"b\\s/\u{08}\u{0C}\n\r\t\u{00}\u{01}\u{1F}\u{7F}é😀"
        let expected = #""q\"b\\s/\b\f\n\r\t\u0000\u0001\u001f"# + "\u{7F}é😀\""
        #expect(JSONWriter.encode(.string(text)) == utf8(expected))
        #expect(acceptText(expected)?.stringValue == text)

        // Non-ASCII is written as UTF-8, unescaped.
        let unicode = "日本語 😀 é \u{2028}"
        #expect(JSONWriter.encode(.string(unicode)) == [0x22] + utf8(unicode) + [0x22])

        // Every control character, plus the characters that need care, round-trip.
        var raw: [UInt8] = Array(0..<0x20)
        raw += [0x22, 0x5C, 0x2F, 0x7F, 0x41]
        let controls = String(decoding: raw, as: UTF8.self)
        let encoded = JSONWriter.encode(.string(controls))
        #expect(!encoded.contains(where: { $0 < 0x20 }))
        #expect(accept(encoded, "control characters")?.stringValue == controls)

        // Member names are escaped too.
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("a\"b\n", 1)
        writer.endObject()
        #expect(writer.bytes == utf8(#"{"a\"b\n":1}"#))
    }

    @Test("parse(write(v)) == v, and canonical text is written back unchanged")
    func writerRoundTrips() {
        let nested: JSONValue = ["deeper": ["x": [1, [2, [3]]]]]
        let audience: JSONValue = ["a", "b", [], [:]]
        let value: JSONValue = [
            "iss": "https://issuer.example/path",
            "sub": "user\u{0}\"quoted\"\n\t\\",
            "exp": 1_700_000_000,
            "nbf": .number("-12.5e3"),
            "huge": .number("123456789012345678901234567890"),
            "admin": false,
            "nothing": nil,
            "aud": audience,
            "nested": nested,
            "unicode": "日本語 😀 é",
            "": "empty name",
        ]
        let encoded = JSONWriter.encode(value)
        #expect(accept(encoded, "encoded value") == value)
        #expect(value.description == String(decoding: encoded, as: UTF8.self))
        // Writing the parsed value again gives the same bytes.
        if let reparsed = accept(encoded, "encoded value") {
            #expect(JSONWriter.encode(reparsed) == encoded)
        }

        let canonical = #"{"a":[1,-2.5e-3,true,null],"b":{"c":"d\n\u001f"},"e":"","f":[[],{}]}"#
        if let parsed = acceptText(canonical) {
            #expect(JSONWriter.encode(parsed) == utf8(canonical))
        }
    }
}
