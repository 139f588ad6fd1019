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
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(byte)] = Int8(index)
        }
        return table
    }()

    /// Decodes unpadded base64url text that is not secret (token segments,
    /// public keys) with a table: as strict as ``decode(_:padding:)-(UnsafeRawBufferPointer,_)``
    /// but not constant-time. Secret material goes through the constant-time decoder.
    public static func decodePublic(_ utf8: UnsafeRawBufferPointer) throws(TokenMintError) -> [UInt8] {
        let n = utf8.count
        guard n % 4 != 1 else { throw TokenMintError(.crypto.invalidEncoding, "base64url: impossible length \(n)") }
        let outputCount = n / 4 * 3 + [0, 0, 1, 2][n % 4]
        var failed = false
        let bytes = decodeTable.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
                var accumulator: UInt32 = 0
                var bits = 0
                var written = 0
                for byte in utf8 {
                    let value = table[Int(byte)]
                    if value < 0 {
                        failed = true
                        break
                    }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        out[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                        written += 1
                    }
                }
                // Unused trailing bits must be zero (RFC 4648 §3.5, canonical encoding).
                if !failed, bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { failed = true }
                initialized = failed ? 0 : written
            }
        }
        guard !failed else { throw TokenMintError(.crypto.invalidEncoding, "base64url: not canonical base64url (bad character or trailing bits)") }
        return bytes
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
