import TokenMintCore
import Testing
import TokenMintCBOR

// MARK: - Helpers

/// The bytes written in hexadecimal in `text`; spaces are ignored.
private func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8).filter { $0 != 0x20 }
    precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
    func nibble(_ digit: UInt8) -> UInt8 {
        switch digit {
        case 0x30...0x39: return digit - 0x30
        case 0x61...0x66: return digit - 0x61 + 10
        case 0x41...0x46: return digit - 0x41 + 10
        default: preconditionFailure("not a hex digit in \(text)")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}

/// `bytes` as lower-case hexadecimal, for messages.
private func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}

/// An integer item.
private func n(_ value: Int64) -> CBOR { CBOR.int(value) }
/// A text item.
private func text(_ value: String) -> CBOR { CBOR.text(value) }
/// A byte string item.
private func bytes(_ value: [UInt8]) -> CBOR { CBOR.bytes(value) }
/// An array item.
private func array(_ elements: CBOR...) -> CBOR { CBOR.array(elements) }
/// A map item with its entries in the order given.
private func map(_ pairs: (CBOR, CBOR)...) -> CBOR { CBOR.map(pairs: pairs) }

/// Decodes `input`, or returns nil when it is refused.
private func accepted(
    _ input: [UInt8], requireCanonical: Bool = true, allowTrailingBytes: Bool = false,
    limits: CBORDecoder.Limits = CBORDecoder.Limits()
) -> CBOR? {
    try? CBORDecoder.decode(
        input, requireCanonical: requireCanonical, allowTrailingBytes: allowTrailingBytes, limits: limits)
}

/// Records an issue unless decoding `input` fails with `code` (at `offset`, when given).
private func expectRefusal(
    _ input: [UInt8], _ code: TokenMintError.Code, at offset: Int? = nil, requireCanonical: Bool = true,
    limits: CBORDecoder.Limits = CBORDecoder.Limits(), sourceLocation: SourceLocation = #_sourceLocation
) {
    let label = hexString(input)
    do throws(TokenMintError) {
        let item = try CBORDecoder.decode(input, requireCanonical: requireCanonical, limits: limits)
        Issue.record("\(label): accepted as \(item), expected \(code)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == code, "\(label): \(error)", sourceLocation: sourceLocation)
        if let offset {
            #expect(error.offset == offset, "\(label): \(error)", sourceLocation: sourceLocation)
        }
    }
}

/// Every ordering of `items`.
private func permutations<T>(_ items: [T]) -> [[T]] {
    guard items.count > 1 else { return [items] }
    var result: [[T]] = []
    for position in items.indices {
        var rest = items
        let first = rest.remove(at: position)
        for tail in permutations(rest) {
            result.append([first] + tail)
        }
    }
    return result
}

// MARK: - Examples

/// The RFC 8949 Appendix A examples within the supported subset (no floats,
/// no indefinite lengths), all of which are also CTAP2 canonical.
private let appendixA: [(hex: String, item: CBOR)] = [
    ("00", n(0)),
    ("01", n(1)),
    ("0a", n(10)),
    ("17", n(23)),
    ("1818", n(24)),
    ("1819", n(25)),
    ("1864", n(100)),
    ("1903e8", n(1000)),
    ("1a000f4240", n(1_000_000)),
    ("1b000000e8d4a51000", n(1_000_000_000_000)),
    ("1bffffffffffffffff", CBOR.unsigned(UInt64.max)),
    ("3bffffffffffffffff", CBOR.negative(UInt64.max)),
    ("20", n(-1)),
    ("29", n(-10)),
    ("3863", n(-100)),
    ("3903e7", n(-1000)),
    ("40", bytes([])),
    ("4401020304", bytes([1, 2, 3, 4])),
    ("60", text("")),
    ("6161", text("a")),
    ("6449455446", text("IETF")),
    ("62225c", text("\"\\")),
    ("62c3bc", text("\u{00FC}")),
    ("63e6b0b4", text("\u{6C34}")),
    ("64f0908591", text("\u{10151}")),
    ("80", array()),
    ("83010203", array(n(1), n(2), n(3))),
    ("8301820203820405", array(n(1), array(n(2), n(3)), array(n(4), n(5)))),
    ("98190102030405060708090a0b0c0d0e0f101112131415161718181819",
     CBOR.array((1...25).map { n(Int64($0)) })),
    ("a0", map()),
    ("a201020304", map((n(1), n(2)), (n(3), n(4)))),
    ("a26161016162820203", map((text("a"), n(1)), (text("b"), array(n(2), n(3))))),
    ("826161a161626163", array(text("a"), map((text("b"), text("c"))))),
    ("a56161614161626142616361436164614461656145",
     map((text("a"), text("A")), (text("b"), text("B")), (text("c"), text("C")),
         (text("d"), text("D")), (text("e"), text("E")))),
    ("f4", CBOR.cborFalse),
    ("f5", CBOR.cborTrue),
    ("f6", CBOR.cborNull),
    ("f7", CBOR.cborUndefined),
    ("c074323031332d30332d32315432303a30343a30305a", CBOR.tagged(0, text("2013-03-21T20:04:00Z"))),
    ("c11a514b67b0", CBOR.tagged(1, n(1_363_896_240))),
    ("c249010000000000000000", CBOR.tagged(2, bytes([1, 0, 0, 0, 0, 0, 0, 0, 0]))),
    ("d74401020304", CBOR.tagged(23, bytes([1, 2, 3, 4]))),
    ("d818456449455446", CBOR.tagged(24, bytes([0x64, 0x49, 0x45, 0x54, 0x46]))),
    ("d82076687474703a2f2f7777772e6578616d706c652e636f6d", CBOR.tagged(32, text("http://www.example.com"))),
]

/// A COSE_Key x coordinate.
private let coseX = [UInt8](repeating: 0x11, count: 32)
/// A COSE_Key y coordinate.
private let coseY = [UInt8](repeating: 0x22, count: 32)
/// The ES256 COSE_Key `{1: 2, 3: -7, -1: 1, -2: x, -3: y}` in canonical form.
private let coseKeyEncoding = hex("a5 01 02 03 26 20 01 21 5820") + coseX + hex("22 5820") + coseY

/// Canonical maps whose keys exercise each sorting rule.
private let canonicalMaps: [(hex: String, item: CBOR)] = [
    // Major type first: unsigned, negative, bytes, text.
    ("a4 01 00 20 00 41 00 00 61 61 00",
     map((text("a"), n(0)), (n(-1), n(0)), (bytes([0]), n(0)), (n(1), n(0)))),
    // Within integers: shorter encoding first, then bytewise.
    ("a5 00 00 0a 00 1818 00 1864 00 20 00",
     map((n(100), n(0)), (n(-1), n(0)), (n(24), n(0)), (n(0), n(0)), (n(10), n(0)))),
    // Within text: shorter first ("b" before "aa"), then bytewise ("a" before "b").
    ("a3 6161 01 6162 02 626161 03",
     map((text("aa"), n(3)), (text("b"), n(2)), (text("a"), n(1)))),
    // Length first even where bytewise order differs: [1, 1] (3 bytes, 82…)
    // sorts before [1000] (4 bytes, 81…).
    ("a2 820101 02 811903e8 01",
     map((array(n(1000)), n(1)), (array(n(1), n(1)), n(2)))),
]

// MARK: - Tests

@Suite("CBOR: the RFC 8949 subset CTAP2 and COSE use")
struct CBORTests {
    @Test("RFC 8949 Appendix A examples encode byte for byte")
    func appendixAEncodes() {
        for example in appendixA {
            #expect(hexString(CBOREncoder.encode(example.item)) == example.hex, "\(example.item)")
        }
    }

    @Test("RFC 8949 Appendix A examples decode, canonical or not")
    func appendixADecodes() {
        for example in appendixA {
            let input = hex(example.hex)
            #expect(accepted(input) == example.item, "\(example.hex)")
            #expect(accepted(input, requireCanonical: false) == example.item, "\(example.hex)")
        }
    }

    @Test("an ES256 COSE key encodes with keys 1, 3, -1, -2, -3 whatever the input order")
    func coseKeyOrder() throws {
        let entries: [(CBOR, CBOR)] = [
            (n(1), n(2)), (n(3), n(-7)), (n(-1), n(1)), (n(-2), bytes(coseX)), (n(-3), bytes(coseY)),
        ]
        let orders = permutations(entries)
        #expect(orders.count == 120)
        for order in orders {
            #expect(CBOREncoder.encode(CBOR.map(pairs: order)) == coseKeyEncoding)
        }

        let key = try #require(accepted(coseKeyEncoding))
        let keys = try #require(key.mapValue).map(\.key)
        #expect(keys == [n(1), n(3), n(-1), n(-2), n(-3)])
        #expect(key[n(1)]?.intValue == 2)
        #expect(key[n(3)]?.intValue == -7)
        #expect(key[n(-1)]?.intValue == 1)
        #expect(key[n(-2)]?.bytesValue == coseX)
        #expect(key[n(-3)]?.bytesValue == coseY)
        #expect(key[n(-4)] == nil)
    }

    @Test("canonical maps encode in key order and decode in that order")
    func canonicalMapOrder() throws {
        for example in canonicalMaps {
            let encoding = hex(example.hex)
            #expect(CBOREncoder.encode(example.item) == encoding, "\(example.item)")
            let decoded = try #require(accepted(encoding), "\(example.hex)")
            #expect(CBOREncoder.encode(decoded) == encoding)
        }
    }

    @Test("unsorted map keys are refused when canonical form is required, kept in order otherwise")
    func unsortedKeys() throws {
        // {"b": 1, "a": 1}
        let unsorted = hex("a2 6162 01 6161 01")
        expectRefusal(unsorted, .cbor.nonCanonical, at: 4)
        let decoded = try #require(accepted(unsorted, requireCanonical: false))
        #expect(decoded == map((text("b"), n(1)), (text("a"), n(1))))
        #expect(CBOREncoder.encode(decoded) == hex("a2 6161 01 6162 01"))

        // {"aa": 1, "b": 2}: bytewise order, but "b" is shorter.
        expectRefusal(hex("a2 626161 01 6162 02"), .cbor.nonCanonical, at: 5)
        #expect(accepted(hex("a2 626161 01 6162 02"), requireCanonical: false) != nil)
        // {[1000]: 1, [1, 1]: 2}: RFC 8949 §4.2.1 bytewise order, not CTAP2's length-first order.
        expectRefusal(hex("a2 811903e8 01 820101 02"), .cbor.nonCanonical, at: 6)
        // {-1: 0, 1: 0}: major type 1 before 0.
        expectRefusal(hex("a2 20 00 01 00"), .cbor.nonCanonical, at: 3)
        // {"a": 0, 1: 0}: text before an integer.
        expectRefusal(hex("a2 6161 00 01 00"), .cbor.nonCanonical, at: 4)
        // Nested maps are checked too.
        expectRefusal(hex("81 a2 02 00 01 00"), .cbor.nonCanonical, at: 4)
    }

    @Test("non-shortest integers, lengths and tags are refused when canonical form is required")
    func nonShortestForms() {
        let cases: [(hex: String, canonical: String)] = [
            ("1800", "00"),
            ("1817", "17"),
            ("190017", "17"),
            ("1900ff", "18ff"),
            ("1a0000ffff", "19ffff"),
            ("1b00000000ffffffff", "1affffffff"),
            ("3800", "20"),
            ("580141", "4141"),
            ("790001" + "61", "6161"),
            ("9800", "80"),
            ("b800", "a0"),
            ("d80100", "c100"),
            ("811800", "8100"),
        ]
        for example in cases {
            let input = hex(example.hex)
            expectRefusal(input, .cbor.nonCanonical)
            let decoded = accepted(input, requireCanonical: false)
            #expect(decoded.map { hexString(CBOREncoder.encode($0)) } == example.canonical, "\(example.hex)")
        }
        expectRefusal(hex("83 01 02 1803"), .cbor.nonCanonical, at: 3)
    }

    @Test("indefinite lengths, floats and reserved additional information are unsupported")
    func unsupportedFeatures() {
        for input in [
            "9fff", "9f01ff", "5f4101ff", "5fff", "7f6161ff", "bfff", "ff", "1f", "3f", "df00",
            "f93c00", "fa47c35000", "fb3ff199999999999a", "f9",
            "1c", "1d", "1e", "3c", "5d", "7e", "9c", "bd", "de", "fc", "fd", "fe",
        ] {
            expectRefusal(hex(input), .cbor.unsupported, at: 0)
            expectRefusal(hex(input), .cbor.unsupported, at: 0, requireCanonical: false)
        }
        expectRefusal(hex("82 01 f93c00"), .cbor.unsupported, at: 2)
    }

    @Test("truncated input and lengths beyond the input are refused without allocating")
    func truncation() {
        expectRefusal([], .cbor.truncated, at: 0)
        expectRefusal(hex("1901"), .cbor.truncated, at: 0)
        expectRefusal(hex("1b 00000000000000"), .cbor.truncated, at: 0)
        // Counts are checked against the bytes left before any element is read.
        expectRefusal(hex("830102"), .cbor.truncated, at: 0)
        expectRefusal(hex("a101"), .cbor.truncated, at: 0)
        expectRefusal(hex("6261"), .cbor.truncated, at: 0)
        // The input ends inside an element.
        expectRefusal(hex("82 01 19"), .cbor.truncated, at: 2)
        expectRefusal(hex("a1 01 19 01"), .cbor.truncated, at: 2)
        expectRefusal(hex("81 62 61"), .cbor.truncated, at: 1)
        expectRefusal(hex("f8"), .cbor.truncated, at: 0)
        // A byte string claiming 2^32 bytes with three present.
        expectRefusal(hex("5b 0000000100000000 010203"), .cbor.truncated, at: 0)
        expectRefusal(hex("5b 0000000100000000 010203"), .cbor.truncated, at: 0, requireCanonical: false)
        // Counts and lengths up to 2^64 - 1.
        expectRefusal(hex("5b ffffffffffffffff 00"), .cbor.truncated, at: 0)
        expectRefusal(hex("7b ffffffffffffffff 00"), .cbor.truncated, at: 0)
        expectRefusal(hex("9b ffffffffffffffff 00"), .cbor.truncated, at: 0)
        expectRefusal(hex("bb ffffffffffffffff 00"), .cbor.truncated, at: 0)
        expectRefusal(hex("9a ffffffff 00"), .cbor.truncated, at: 0)
        // Two map entries need at least four bytes.
        expectRefusal(hex("a2 0101"), .cbor.truncated, at: 0)
    }

    @Test("duplicate map keys are refused, canonical form required or not")
    func duplicateKeys() {
        expectRefusal(hex("a2 01 01 01 02"), .cbor.duplicateKey, at: 3)
        expectRefusal(hex("a2 01 01 01 02"), .cbor.duplicateKey, at: 3, requireCanonical: false)
        // Keys are compared by canonical encoding: 1 and a non-shortest 1 are the same key.
        expectRefusal(hex("a2 01 01 1801 02"), .cbor.duplicateKey, at: 3, requireCanonical: false)
        expectRefusal(hex("a3 6161 01 01 02 6161 03"), .cbor.duplicateKey, at: 6, requireCanonical: false)
        expectRefusal(hex("a2 820102 00 820102 01"), .cbor.duplicateKey, at: 5)
        // The encoder does not check; its output is refused.
        let duplicate = CBOREncoder.encode(map((n(1), n(2)), (n(1), n(1))))
        #expect(duplicate == hex("a2 0101 0102"))
        expectRefusal(duplicate, .cbor.duplicateKey, at: 3)
    }

    @Test("text that is not well-formed UTF-8 is refused")
    func invalidUTF8() {
        expectRefusal(hex("62 c328"), .cbor.invalidUTF8, at: 1)
        expectRefusal(hex("62 c328"), .cbor.invalidUTF8, at: 1, requireCanonical: false)
        expectRefusal(hex("62 c080"), .cbor.invalidUTF8, at: 1)  // overlong NUL
        expectRefusal(hex("63 e08080"), .cbor.invalidUTF8, at: 1)  // overlong
        expectRefusal(hex("63 eda080"), .cbor.invalidUTF8, at: 1)  // surrogate U+D800
        expectRefusal(hex("64 f4908080"), .cbor.invalidUTF8, at: 1)  // above U+10FFFF
        expectRefusal(hex("61 80"), .cbor.invalidUTF8, at: 1)  // lone continuation byte
        expectRefusal(hex("61 ff"), .cbor.invalidUTF8, at: 1)
        expectRefusal(hex("63 61 e282"), .cbor.invalidUTF8, at: 2)  // truncated sequence
        expectRefusal(hex("a1 62c328 00"), .cbor.invalidUTF8, at: 2)  // in a map key
        // The largest code point and the edges around the surrogates are fine.
        #expect(accepted(hex("64 f48fbfbf")) == text("\u{10FFFF}"))
        #expect(accepted(hex("63 ed9fbf")) == text("\u{D7FF}"))
        #expect(accepted(hex("63 ee8080")) == text("\u{E000}"))
    }

    @Test("bytes after the item are refused unless allowed; decodePrefix reports the item's length")
    func trailingBytes() throws {
        expectRefusal(hex("01 02"), .cbor.trailingBytes, at: 1)
        expectRefusal(hex("80 01"), .cbor.trailingBytes, at: 1)
        #expect(accepted(hex("01 02"), allowTrailingBytes: true) == n(1))

        let (item, byteCount) = try CBORDecoder.decodePrefix(hex("01 02")[...])
        #expect(item == n(1))
        #expect(byteCount == 1)

        // A COSE key followed by an extensions map, read from the middle of a buffer.
        let authData = [UInt8](repeating: 0xee, count: 5) + coseKeyEncoding + hex("a1 6161 f5")
        let (key, keyLength) = try CBORDecoder.decodePrefix(authData[5...])
        #expect(keyLength == coseKeyEncoding.count)
        #expect(key[n(3)]?.intValue == -7)
        let (extensions, extensionsLength) = try CBORDecoder.decodePrefix(authData[(5 + keyLength)...])
        #expect(extensionsLength == 4)
        #expect(extensions[text("a")]?.boolValue == true)

        // Error offsets count from the start of the slice.
        let broken = hex("ff ff 19 01")
        do throws(TokenMintError) {
            _ = try CBORDecoder.decodePrefix(broken[2...])
            Issue.record("a truncated item was accepted")
        } catch {
            #expect(error.code == .cbor.truncated)
            #expect(error.offset == 0)
        }
    }

    @Test("nesting deeper than maximumDepth is refused")
    func depth() {
        // 16 nested arrays are fine, 17 are not.
        let sixteen = [UInt8](repeating: 0x81, count: 15) + [0x80]
        let seventeen = [UInt8](repeating: 0x81, count: 16) + [0x80]
        #expect(accepted(sixteen) != nil)
        expectRefusal(seventeen, .cbor.tooDeep, at: 16)
        expectRefusal(seventeen, .cbor.tooDeep, at: 16, requireCanonical: false)
        // Tags and maps count as levels too.
        #expect(accepted([UInt8](repeating: 0xc1, count: 16) + [0x00]) != nil)
        expectRefusal([UInt8](repeating: 0xc1, count: 17) + [0x00], .cbor.tooDeep, at: 16)
        var maps: [UInt8] = []
        for _ in 0..<17 { maps += [0xa1, 0x00] }
        maps += [0x00]
        expectRefusal(maps, .cbor.tooDeep, at: 32)
        // A deep nest of one-element arrays far beyond the limit fails cleanly.
        expectRefusal([UInt8](repeating: 0x81, count: 100_000) + [0x80], .cbor.tooDeep, at: 16)

        var shallow = CBORDecoder.Limits()
        shallow.maximumDepth = 1
        #expect(accepted(hex("80"), limits: shallow) == array())
        expectRefusal(hex("8180"), .cbor.tooDeep, at: 1, limits: shallow)
        shallow.maximumDepth = 0
        #expect(accepted(hex("00"), limits: shallow) == n(0))
        expectRefusal(hex("80"), .cbor.tooDeep, at: 0, limits: shallow)
    }

    @Test("input and item-count limits are enforced")
    func sizeLimits() {
        var limits = CBORDecoder.Limits()
        limits.maximumBytes = 4
        expectRefusal(hex("1a000f4240"), .cbor.tooLarge, limits: limits)
        #expect(accepted(hex("19 03e8"), limits: limits) == n(1000))

        limits = CBORDecoder.Limits()
        limits.maximumItems = 3
        #expect(accepted(hex("820102"), limits: limits) == array(n(1), n(2)))
        expectRefusal(hex("83010203"), .cbor.tooLarge, at: 3, limits: limits)
        expectRefusal(hex("a2 01 02 03 04"), .cbor.tooLarge, at: 3, limits: limits)
    }

    @Test("only the simple values false, true, null and undefined are accepted")
    func simpleValues() {
        expectRefusal(hex("f810"), .cbor.invalidSimple, at: 0)
        expectRefusal(hex("f810"), .cbor.invalidSimple, at: 0, requireCanonical: false)
        expectRefusal(hex("f814"), .cbor.invalidSimple, at: 0)  // two-byte false
        expectRefusal(hex("f820"), .cbor.invalidSimple, at: 0)
        expectRefusal(hex("f8ff"), .cbor.invalidSimple, at: 0)
        expectRefusal(hex("e0"), .cbor.invalidSimple, at: 0)
        expectRefusal(hex("f3"), .cbor.invalidSimple, at: 0)
        #expect(accepted(hex("f4"))?.boolValue == false)
        #expect(accepted(hex("f5"))?.boolValue == true)
        #expect(accepted(hex("f6"))?.isNull == true)
        #expect(accepted(hex("f7")) == CBOR.cborUndefined)
    }

    @Test("every accepted canonical input re-encodes to the same bytes")
    func roundTrip() throws {
        var inputs = appendixA.map { hex($0.hex) } + canonicalMaps.map { hex($0.hex) }
        inputs.append(coseKeyEncoding)
        inputs.append(hex("a1 6161 f5"))
        inputs.append([UInt8](repeating: 0x81, count: 15) + [0x80])
        inputs.append([UInt8](repeating: 0xc1, count: 16) + [0x00])
        inputs.append(hex("a2 820102 00 a0 01"))  // a map with array and map keys
        inputs.append(hex("62 c3a9"))
        for input in inputs {
            let item = try #require(accepted(input), "\(hexString(input))")
            #expect(CBOREncoder.encode(item) == input, "\(hexString(input))")
        }
    }

    @Test("integer, Boolean and accessor conveniences")
    func conveniences() {
        #expect(CBOR.int(0) == .unsigned(0))
        #expect(CBOR.int(-1) == .negative(0))
        #expect(CBOR.int(Int64.max) == .unsigned(UInt64(Int64.max)))
        #expect(CBOR.int(Int64.min) == .negative(UInt64(Int64.max)))
        #expect(CBOR.negative(UInt64(Int64.max)).intValue == Int64.min)
        #expect(CBOR.negative(UInt64(Int64.max) + 1).intValue == nil)
        #expect(CBOR.unsigned(UInt64(Int64.max)).intValue == Int64.max)
        #expect(CBOR.unsigned(UInt64.max).intValue == nil)
        #expect(text("1").intValue == nil)

        #expect(CBOR.bool(true) == CBOR.cborTrue)
        #expect(CBOR.bool(false) == CBOR.cborFalse)
        #expect(CBOR.cborNull.boolValue == nil)
        #expect(CBOR.cborNull.isNull)
        #expect(!CBOR.cborFalse.isNull)

        #expect(bytes([1]).bytesValue == [1])
        #expect(text("x").bytesValue == nil)
        #expect(text("x").textValue == "x")
        #expect(bytes([1]).textValue == nil)
        #expect(array(n(1)).arrayValue == [n(1)])
        #expect(map().arrayValue == nil)
        #expect(map((n(1), n(2))).mapValue == [CBORMapEntry(n(1), n(2))])
        #expect(array().mapValue == nil)
        #expect(n(1)[n(1)] == nil)
        #expect(map((text("a"), n(1)))[text("a")] == n(1))
        #expect(map((text("a"), n(1)))[text("b")] == nil)
    }

    @Test("text compares by its UTF-8 bytes, not by canonical equivalence")
    func textEquality() {
        let composed = text("\u{E9}")
        let decomposed = text("e\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(CBOREncoder.encode(composed) != CBOREncoder.encode(decomposed))
        // Both are distinct map keys.
        let both = CBOREncoder.encode(map((composed, n(1)), (decomposed, n(2))))
        #expect(accepted(both)?.mapValue?.count == 2)
    }

    @Test("diagnostic notation")
    func diagnosticNotation() {
        #expect(map((n(1), n(-7)), (text("a"), bytes([1, 0xab]))).description == "{1: -7, \"a\": h'01ab'}")
        #expect(array(CBOR.cborTrue, CBOR.cborNull, CBOR.tagged(1, n(0))).description == "[true, null, 1(0)]")
        #expect(CBOR.negative(UInt64.max).description == "-18446744073709551616")
        #expect(text("\"\\").description == "\"\\\"\\\\\"")
    }

    @Test("errors describe their code and place")
    func errorDescription() {
        do throws(TokenMintError) {
            _ = try CBORDecoder.decode(hex("01 02"))
            Issue.record("trailing bytes were accepted")
        } catch {
            #expect(error.code == .cbor.trailingBytes)
            #expect(error.offset == 1)
            #expect(error.description.hasPrefix("cbor.trailingBytes at byte 1: "))
            #expect(TokenMintError.Code.cbor.invalidUTF8.description == "cbor.invalidUTF8")
        }
    }
}
