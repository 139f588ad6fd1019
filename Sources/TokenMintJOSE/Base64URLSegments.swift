import TokenMintCore
import TokenMintCrypto

/// Strict base64url for JOSE (RFC 7515 §2: no padding), with errors in JOSE's terms.
enum B64 {
    static func decode(_ text: some StringProtocol, _ what: @autoclosure () -> String) throws(TokenMintError) -> [UInt8] {
        do { return try Base64URL.decode(text, padding: .none) } catch {
            throw TokenMintError(.jose.invalidBase64URL, "\(what()) is not canonical unpadded base64url", underlying: error)
        }
    }

    /// Token segments are public: the table decoder, as strict but faster than
    /// the constant-time one that key material goes through.
    static func decode(_ utf8: UnsafeRawBufferPointer, _ what: @autoclosure () -> String) throws(TokenMintError) -> [UInt8] {
        do { return try Base64URL.decodePublic(utf8) } catch {
            throw TokenMintError(.jose.invalidBase64URL, "\(what()) is not canonical unpadded base64url", underlying: error)
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
