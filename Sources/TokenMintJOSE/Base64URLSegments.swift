import TokenMintCore
import TokenMintCrypto

/// Strict base64url for JOSE (RFC 7515 §2: no padding), with errors in JOSE's terms.
enum B64 {
    static func decode(_ text: some StringProtocol, _ what: @autoclosure () -> String) throws(TokenMintError) -> [UInt8] {
        do { return try Base64URL.decode(text, padding: .none) } catch {
            throw TokenMintError(.jose.invalidBase64URL, "\(what()) is not canonical unpadded base64url", underlying: error)
        }
    }

    /// A public segment given as text (JWE parts): the table decoder.
    static func decodePublic(_ text: some StringProtocol, _ what: @autoclosure () -> String) throws(TokenMintError) -> [UInt8] {
        var utf8 = String(text)
        return try utf8.withUTF8Bytes { (bytes) throws(TokenMintError) in try decode(bytes, what()) }
    }

    /// Token segments are public: the table decoder, as strict but faster than
    /// the constant-time one that key material goes through.
    static func decode(_ utf8: UnsafeRawBufferPointer, _ what: @autoclosure () -> String) throws(TokenMintError) -> [UInt8] {
        do { return try Base64URL.decodePublic(utf8) } catch {
            throw TokenMintError(.jose.invalidBase64URL, "\(what()) is not canonical unpadded base64url", underlying: error)
        }
    }

    /// Runs `body` on the bytes that the public segment `utf8` decodes to:
    /// on the stack when they fit in `stackLimit` bytes, else in an array.
    static func withDecoded<R>(
        _ utf8: UnsafeRawBufferPointer, _ what: @autoclosure () -> String, stackLimit: Int, _ body: (UnsafeRawBufferPointer) -> R
    ) throws(TokenMintError) -> R {
        guard let count = Base64URL.decodedCount(utf8.count), count <= stackLimit else {
            return try decode(utf8, what()).withUnsafeBytes(body)
        }
        var decoded = false
        let result = withUnsafeTemporaryAllocation(byteCount: max(count, 1), alignment: 16) { out -> R? in
            guard let written = Base64URL.decodePublic(utf8, into: out) else { return nil }
            decoded = true
            return body(UnsafeRawBufferPointer(rebasing: out[..<written]))
        }
        guard decoded, let result else { throw TokenMintError(.jose.invalidBase64URL, "\(what()) is not canonical unpadded base64url") }
        return result
    }

    /// The base64url text of public bytes (token segments: ciphertexts,
    /// tags, IVs, encrypted keys, signatures, headers), by table; never for
    /// secrets, which ``encode(_:)`` writes in constant time.
    static func encodePublic(_ bytes: [UInt8]) -> String {
        let count = Base64URL.encodedCount(bytes.count)
        return bytes.withUnsafeBytes { input in
            String(unsafeUninitializedCapacity: count) { out in
                Base64URL.encodePublic(input, at: UnsafeMutableRawPointer(out.baseAddress.unsafelyUnwrapped))
            }
        }
    }

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        if let s = bytes.withContiguousStorageIfAvailable({ Base64URL.encode(UnsafeRawBufferPointer($0)) }) { return s }
        return Array(bytes).withUnsafeBytes { Base64URL.encode($0) }
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws a `TokenMintError` (the standard
    /// library's version rethrows untyped errors).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(TokenMintError) -> R) throws(TokenMintError) -> R {
        let result: Result<R, TokenMintError> = withUnsafeBytes { buffer in
            do throws(TokenMintError) { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

extension String {
    /// `withUTF8` for a body that throws a `TokenMintError`.
    mutating func withUTF8Bytes<R>(_ body: (UnsafeRawBufferPointer) throws(TokenMintError) -> R) throws(TokenMintError) -> R {
        let result: Result<R, TokenMintError> = withUTF8 { buffer in
            do throws(TokenMintError) { return .success(try body(UnsafeRawBufferPointer(buffer))) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
