import TokenMintCore

/// A strict reader of DER tag-length-value items, for the few certificate
/// extensions attestation formats put their data in. Definite lengths only,
/// minimal length encodings, nothing past the end.
struct DERItem {
    /// The tag class: 0 universal, 1 application, 2 context-specific, 3 private.
    let tagClass: UInt8
    /// Whether the item is constructed.
    let constructed: Bool
    /// The tag number (high-tag-number form decoded).
    let number: UInt64
    /// The contents.
    let contents: ArraySlice<UInt8>

    static func fail(_ why: String) -> TokenMintError { TokenMintError(.webAuthn.invalidAttestation, "DER: \(why)") }

    /// Every item in `bytes`, in order.
    static func items(_ bytes: ArraySlice<UInt8>) throws(TokenMintError) -> [DERItem] {
        var items: [DERItem] = []
        var cursor = bytes.startIndex
        while cursor < bytes.endIndex {
            let (item, next) = try read(bytes, at: cursor)
            items.append(item)
            cursor = next
        }
        return items
    }

    /// The one item `bytes` holds.
    static func single(_ bytes: ArraySlice<UInt8>) throws(TokenMintError) -> DERItem {
        let (item, next) = try read(bytes, at: bytes.startIndex)
        guard next == bytes.endIndex else { throw fail("trailing bytes") }
        return item
    }

    static func read(_ bytes: ArraySlice<UInt8>, at start: Int) throws(TokenMintError) -> (DERItem, Int) {
        var cursor = start
        func next() throws(TokenMintError) -> UInt8 {
            guard cursor < bytes.endIndex else { throw fail("truncated") }
            defer { cursor += 1 }
            return bytes[cursor]
        }
        let first = try next()
        var number = UInt64(first & 0x1F)
        if number == 0x1F {
            number = 0
            var digits = 0
            while true {
                let byte = try next()
                digits += 1
                guard digits <= 8, !(digits == 1 && byte == 0x80) else { throw fail("tag number too long or not minimal") }
                number = number << 7 | UInt64(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            guard number >= 0x1F else { throw fail("high tag form for a low tag number") }
        }
        let lengthByte = try next()
        var length = 0
        if lengthByte < 0x80 {
            length = Int(lengthByte)
        } else {
            let count = Int(lengthByte & 0x7F)
            guard (1...4).contains(count) else { throw fail("indefinite or oversized length") }
            for index in 0..<count {
                let byte = try next()
                guard !(index == 0 && byte == 0) else { throw fail("length not minimal") }
                length = length << 8 | Int(byte)
            }
            guard length >= 0x80 else { throw fail("length not minimal") }
        }
        guard length <= bytes.endIndex - cursor else { throw fail("length past the end") }
        let item = DERItem(tagClass: first >> 6, constructed: first & 0x20 != 0, number: number,
                           contents: bytes[cursor..<(cursor + length)])
        return (item, cursor + length)
    }

    /// Whether this is the universal item `number` (e.g. 0x10 SEQUENCE, 0x04 OCTET STRING).
    func isUniversal(_ number: UInt64) -> Bool { tagClass == 0 && self.number == number }

    /// Whether this is the context-specific item `[number]`.
    func isContext(_ number: UInt64) -> Bool { tagClass == 2 && self.number == number }

    /// The items inside a constructed item.
    func children() throws(TokenMintError) -> [DERItem] {
        guard constructed else { throw Self.fail("a primitive item has no children") }
        return try Self.items(contents)
    }

    /// A non-negative INTEGER or ENUMERATED that fits 63 bits.
    func smallInteger() throws(TokenMintError) -> Int64 {
        guard !constructed, isUniversal(0x02) || isUniversal(0x0A), (1...8).contains(contents.count),
            contents.first! & 0x80 == 0
        else { throw Self.fail("not a small non-negative integer") }
        return contents.reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }
}
