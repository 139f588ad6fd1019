import TokenMintCore
internal import CSodium

// The libsodium side of Base64URL: the constant-time codec (the public API is
// in Base64URL.swift).

extension Base64URL {
    /// The length of the base64url text of `count` bytes.
    @inline(__always)
    package static func encodedCount(_ count: Int, padded: Bool = false) -> Int {
        padded ? (count + 2) / 3 * 4 : count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1)
    }

    /// `sodium_bin2base64` into a new string.
    @inline(__always)
    static func sodiumEncode(_ buffer: UnsafeRawBufferPointer, padded: Bool) -> String {
        _ = Sodium.ready
        let variant = padded ? sodium_base64_VARIANT_URLSAFE : sodium_base64_VARIANT_URLSAFE_NO_PADDING
        let n = buffer.count
        let length = encodedCount(n, padded: padded)
        return String(unsafeUninitializedCapacity: length + 1) { out in
            out.withMemoryRebound(to: CChar.self) { chars in
                _ = sodium_bin2base64(
                    UnsafeMutableRawBufferPointer(chars).bytes.withMemoryRebound(to: CChar.self, capacity: length + 1) { $0 },
                    length + 1, buffer.bytes, n, variant)
            }
            return length
        }
    }

    /// `sodium_bin2base64` appended to `output` (without the NUL it writes).
    @inline(__always)
    static func sodiumEncode(_ buffer: UnsafeRawBufferPointer, into output: inout [UInt8], padded: Bool) {
        _ = Sodium.ready
        let variant = padded ? sodium_base64_VARIANT_URLSAFE : sodium_base64_VARIANT_URLSAFE_NO_PADDING
        let n = buffer.count
        let length = encodedCount(n, padded: padded)
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: length + 1))
        output.withUnsafeMutableBytes { out in
            let target = UnsafeMutableRawBufferPointer(rebasing: out[start...])
            _ = sodium_bin2base64(
                UnsafeMutableRawPointer(target.bytes).assumingMemoryBound(to: CChar.self), length + 1, buffer.bytes, n, variant)
        }
        output.removeLast()  // the NUL libsodium writes
    }

    /// `sodium_base642bin`, strict: no ignored characters, canonical trailing
    /// bits. The caller has checked for non-ASCII bytes and the padding rule.
    @inline(__always)
    static func sodiumDecode(_ utf8: UnsafeRawBufferPointer, padded: Bool) throws(TokenMintError) -> [UInt8] {
        _ = Sodium.ready
        let capacity = utf8.count / 4 * 3 + 3
        var decodedLength = 0
        var status: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { out, initialized in
            status = sodium_base642bin(
                UnsafeMutableRawBufferPointer(out).bytes, capacity,
                UnsafeRawPointer(utf8.bytes).assumingMemoryBound(to: CChar.self), utf8.count,
                nil, &decodedLength, nil,
                padded ? sodium_base64_VARIANT_URLSAFE : sodium_base64_VARIANT_URLSAFE_NO_PADDING)
            initialized = status == 0 ? decodedLength : 0
        }
        guard status == 0 else {
            throw TokenMintError(.crypto.invalidEncoding, "base64url: not canonical base64url (bad character, length or trailing bits)")
        }
        return bytes
    }
}
