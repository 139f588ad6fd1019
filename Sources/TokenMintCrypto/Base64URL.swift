public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The libsodium codec calls are in Base64URL_sodium.swift.

/// Strict base64url (RFC 4648 §5) through libsodium's constant-time codec.
///
/// Decoding rejects any character outside the alphabet (including standard
/// base64's `+` and `/`, white space and line breaks), a length that cannot
/// come from an encoder, and unused trailing bits that are not zero, so every
/// byte string has exactly one accepted encoding per padding mode.
public enum Base64URL {
    /// Whether `=` padding is written or expected.
    public enum Padding: Sendable {
        /// No `=` (JOSE, RFC 7515 §2).
        case none
        /// Padded to a multiple of four characters with `=`.
        case padded
        /// Decoding only: accept either form (each must still be canonical).
        case either
    }

    /// The base64url text of `bytes`.
    public static func encode(_ bytes: some DataProtocol, padding: Padding = .none) -> String {
        bytes.withContiguousBytes { encode($0, padding: padding) }
    }

    /// The base64url text of the bytes in `buffer`.
    public static func encode(_ buffer: UnsafeRawBufferPointer, padding: Padding = .none) -> String {
        sodiumEncode(buffer, padded: padding == .padded)
    }

    /// Appends the base64url text of `bytes` to `output` as UTF-8 (no
    /// intermediate `String`: the fast path for building tokens).
    public static func encode(_ bytes: some DataProtocol, into output: inout [UInt8], padding: Padding = .none) {
        bytes.withContiguousBytes { encode($0, into: &output, padding: padding) }
    }

    /// Appends the base64url text of the bytes in `buffer` to `output`.
    public static func encode(_ buffer: UnsafeRawBufferPointer, into output: inout [UInt8], padding: Padding = .none) {
        sodiumEncode(buffer, into: &output, padded: padding == .padded)
    }

    /// Appends the base64url text of `bytes` to `output`.
    public static func encode(_ bytes: [UInt8], into output: inout [UInt8], padding: Padding = .none) {
        bytes.withUnsafeBytes { encode($0, into: &output, padding: padding) }
    }

    private static let decodeTable: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        let alphabet = UnsafeBufferPointer(start: encodeAlphabet.utf8Start, count: encodeAlphabet.utf8CodeUnitCount)
        for (index, byte) in alphabet.enumerated() {
            table[Int(byte)] = Int8(index)
        }
        return table
    }()

    /// Decodes unpadded base64url text that is not secret (token segments,
    /// public keys) with a table: as strict as ``decode(_:padding:)-(UnsafeRawBufferPointer,_)``
    /// but not constant-time. Secret material goes through the constant-time decoder.
    public static func decodePublic(_ utf8: UnsafeRawBufferPointer) throws(TokenMintError) -> [UInt8] {
        guard let outputCount = decodedCount(utf8.count) else {
            throw TokenMintError(.crypto.invalidEncoding, "base64url: impossible length \(utf8.count)")
        }
        // Nothing to decode (only empty text decodes to nothing). An array made
        // with no capacity is the shared empty one, whose count the
        // initializer would write: a race between threads.
        guard outputCount > 0 else { return [] }
        var ok = false
        let bytes = [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
            let written = decodePublic(utf8, into: UnsafeMutableRawBufferPointer(out))
            ok = written != nil
            initialized = written ?? 0
        }
        guard ok else { throw TokenMintError(.crypto.invalidEncoding, "base64url: not canonical base64url (bad character or trailing bits)") }
        return bytes
    }

    /// Writes the unpadded base64url text of public bytes (token segments,
    /// signatures) at `out`, which has room for
    /// `encodedCount(buffer.count)` bytes; returns the text's length. A table
    /// lookup per character: not constant-time, so never for secret bytes,
    /// which go through libsodium's encoder (``encode(_:padding:)-(UnsafeRawBufferPointer,_)``).
    package static func encodePublic(_ buffer: UnsafeRawBufferPointer, at out: UnsafeMutableRawPointer) -> Int {
        let n = buffer.count
        guard n > 0 else { return 0 }
        let alphabet = encodeAlphabet.utf8Start
        let input = buffer.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
        let output = out.assumingMemoryBound(to: UInt8.self)
        var i = 0
        var o = 0
        while i + 3 <= n {
            let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            output[o] = alphabet[Int(v >> 18)]
            output[o + 1] = alphabet[Int(v >> 12 & 0x3F)]
            output[o + 2] = alphabet[Int(v >> 6 & 0x3F)]
            output[o + 3] = alphabet[Int(v & 0x3F)]
            i += 3
            o += 4
        }
        switch n - i {
        case 1:
            let v = UInt32(input[i])
            output[o] = alphabet[Int(v >> 2)]
            output[o + 1] = alphabet[Int(v << 4 & 0x3F)]
            o += 2
        case 2:
            let v = UInt32(input[i]) << 8 | UInt32(input[i + 1])
            output[o] = alphabet[Int(v >> 10)]
            output[o + 1] = alphabet[Int(v >> 4 & 0x3F)]
            output[o + 2] = alphabet[Int(v << 2 & 0x3F)]
            o += 3
        default:
            break
        }
        return o
    }

    private static let encodeAlphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    /// The number of bytes `count` characters of unpadded base64url decode
    /// to, or nil for a length no encoder writes.
    package static func decodedCount(_ count: Int) -> Int? {
        let tail = count % 4
        guard tail != 1 else { return nil }
        return count / 4 * 3 + (tail == 0 ? 0 : tail - 1)
    }

    /// ``decodePublic(_:)`` into `out`, which holds at least
    /// ``decodedCount(_:)`` bytes: the number written, or nil when `utf8` is
    /// not canonical unpadded base64url (nothing in `out` is then meaningful).
    /// Four characters make three bytes per step; a character outside the
    /// alphabet maps to −1, whose sign bit survives the OR of a whole pass.
    package static func decodePublic(_ utf8: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int? {
        let n = utf8.count
        guard let outputCount = decodedCount(n), out.count >= outputCount else { return nil }
        guard n > 0 else { return 0 }
        return decodeTable.withUnsafeBufferPointer { table -> Int? in
            let input = utf8.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
            let output = out.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt8.self)
            var invalid: Int8 = 0
            var i = 0
            var o = 0
            let whole = n & ~3
            while i < whole {
                let a = table[Int(input[i])], b = table[Int(input[i + 1])]
                let c = table[Int(input[i + 2])], d = table[Int(input[i + 3])]
                invalid |= a | b | c | d
                let v = UInt32(UInt8(bitPattern: a)) << 18 | UInt32(UInt8(bitPattern: b)) << 12
                    | UInt32(UInt8(bitPattern: c)) << 6 | UInt32(UInt8(bitPattern: d))
                output[o] = UInt8(truncatingIfNeeded: v >> 16)
                output[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                output[o + 2] = UInt8(truncatingIfNeeded: v)
                i += 4
                o += 3
            }
            // Unused trailing bits must be zero (RFC 4648 §3.5, canonical encoding).
            switch n - whole {
            case 2:
                let a = table[Int(input[i])], b = table[Int(input[i + 1])]
                invalid |= a | b
                if b & 0x0F != 0 { invalid = -1 }
                output[o] = UInt8(truncatingIfNeeded: UInt32(UInt8(bitPattern: a)) << 2 | UInt32(UInt8(bitPattern: b)) >> 4)
                o += 1
            case 3:
                let a = table[Int(input[i])], b = table[Int(input[i + 1])], c = table[Int(input[i + 2])]
                invalid |= a | b | c
                if c & 0x03 != 0 { invalid = -1 }
                let v = UInt32(UInt8(bitPattern: a)) << 10 | UInt32(UInt8(bitPattern: b)) << 4 | UInt32(UInt8(bitPattern: c)) >> 2
                output[o] = UInt8(truncatingIfNeeded: v >> 8)
                output[o + 1] = UInt8(truncatingIfNeeded: v)
                o += 2
            default:
                break
            }
            return invalid < 0 ? nil : o
        }
    }

    /// Decodes standard base64 (RFC 4648 §4: `+` and `/`, padding
    /// optional), as X.509 `x5c` members, PEM bodies and FIDO metadata hold.
    package static func decodeStandard(_ text: some StringProtocol) throws(TokenMintError) -> [UInt8] {
        try decode(String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }), padding: .either)
    }

    /// Decodes base64url text strictly.
    /// - Throws: `.crypto.invalidEncoding` for anything that is not the
    ///   canonical encoding of some byte string in the chosen padding mode.
    public static func decode(_ text: some StringProtocol, padding: Padding = .none) throws(TokenMintError) -> [UInt8] {
        try Array(text.utf8).withContiguousBytes(throwing: { utf8 throws(TokenMintError) in
            try decode(utf8, padding: padding)
        })
    }

    /// Decodes base64url text given as UTF-8 bytes.
    public static func decode(_ utf8: UnsafeRawBufferPointer, padding: Padding = .none) throws(TokenMintError) -> [UInt8] {
        // libsodium reads `char`, signed here: bytes ≥ 0x80 would alias '_'.
        guard !utf8.contains(where: { $0 >= 0x80 }) else {
            throw TokenMintError(.crypto.invalidEncoding, "base64url: non-ASCII character")
        }
        let hasPad = utf8.last == UInt8(ascii: "=")
        let padded: Bool
        switch padding {
        case .none:
            if hasPad { throw TokenMintError(.crypto.invalidEncoding, "base64url: padding '=' is not allowed here") }
            padded = false
        case .padded:
            if utf8.count % 4 != 0 { throw TokenMintError(.crypto.invalidEncoding, "base64url: padded text must be a multiple of 4 characters") }
            padded = true
        case .either:
            padded = hasPad
            if padded && utf8.count % 4 != 0 {
                throw TokenMintError(.crypto.invalidEncoding, "base64url: padded text must be a multiple of 4 characters")
            }
        }
        return try sodiumDecode(utf8, padded: padded)
    }
}
