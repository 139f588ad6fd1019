import TokenMintCore
import TokenMintCrypto

/// RFC 4648 §6 base32, as `otpauth://` URIs carry secrets: the alphabet
/// `A–Z 2–7`, upper case and unpadded when written; read in either case,
/// with or without `=` padding. Decoded secrets go straight into zeroing memory.
enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The longest text ``decode(_:)`` reads.
    static let maximumCharacters = 4096

    /// `bytes` as unpadded upper-case base32.
    static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// A secret, read in place, as unpadded upper-case base32.
    static func encode(_ secret: SecureBytes) -> String {
        secret.withUnsafeBytes { encode($0) }
    }

    /// The bytes of `text`: case-insensitive, trailing `=` padding optional
    /// (at most six), no other character. Leftover bits of the last symbol
    /// are ignored, as other readers do.
    static func decode(_ text: some StringProtocol) throws(TokenMintError) -> SecureBytes {
        let utf8 = Array(text.utf8)
        guard utf8.count <= maximumCharacters else {
            throw TokenMintError(.oath.invalidParameter, "a base32 secret is at most \(maximumCharacters) characters")
        }
        var end = utf8.count
        while end > 0, utf8[end - 1] == UInt8(ascii: "=") { end -= 1 }
        guard utf8.count - end <= 6 else { throw TokenMintError(.oath.invalidParameter, "too much base32 padding") }
        guard [0, 2, 4, 5, 7].contains(end % 8) else {
            throw TokenMintError(.oath.invalidParameter, "a base32 secret of \(end) characters is truncated")
        }
        for index in 0..<end where value(utf8[index]) == nil {
            throw TokenMintError(.oath.invalidParameter, "a base32 secret has a character outside A-Z and 2-7 at offset \(index)")
        }
        let count = end * 5 / 8
        return SecureBytes(count: count, initializingWith: { (out: UnsafeMutableRawBufferPointer) in
            var buffer: UInt32 = 0
            var bits = 0
            var written = 0
            for index in 0..<end {
                buffer = (buffer << 5) | UInt32(value(utf8[index]) ?? 0)
                bits += 5
                if bits >= 8 {
                    bits -= 8
                    if written < count { out[written] = UInt8(truncatingIfNeeded: buffer >> UInt32(bits)) }
                    written += 1
                }
            }
        })
    }

    /// The 5-bit value of a base32 character, either case.
    static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): character - UInt8(ascii: "2") + 26
        default: nil
        }
    }
}
