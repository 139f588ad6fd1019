import TokenMintCrypto

/// Strict base64url for JOSE (RFC 7515 §2: no padding), with errors in JOSE's terms.
enum B64 {
    static func decode(_ text: some StringProtocol, _ what: @autoclosure () -> String) throws(JOSEError) -> [UInt8] {
        do { return try Base64URL.decode(text, padding: .none) } catch {
            throw JOSEError(.invalidBase64URL, "\(what()) is not canonical unpadded base64url")
        }
    }

    /// Token segments are public: the table decoder, as strict but faster than
    /// the constant-time one that key material goes through.
    static func decode(_ utf8: UnsafeRawBufferPointer, _ what: @autoclosure () -> String) throws(JOSEError) -> [UInt8] {
        do { return try Base64URL.decodePublic(utf8) } catch {
            throw JOSEError(.invalidBase64URL, "\(what()) is not canonical unpadded base64url")
        }
    }

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        if let s = bytes.withContiguousStorageIfAvailable({ Base64URL.encode(UnsafeRawBufferPointer($0)) }) { return s }
        return Array(bytes).withUnsafeBytes { Base64URL.encode($0) }
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws a `JOSEError` (the standard
    /// library's version rethrows untyped errors).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(JOSEError) -> R) throws(JOSEError) -> R {
        let result: Result<R, JOSEError> = withUnsafeBytes { buffer in
            do throws(JOSEError) { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

extension String {
    /// `withUTF8` for a body that throws a `JOSEError`.
    mutating func withUTF8Bytes<R>(_ body: (UnsafeRawBufferPointer) throws(JOSEError) -> R) throws(JOSEError) -> R {
        let result: Result<R, JOSEError> = withUTF8 { buffer in
            do throws(JOSEError) { return .success(try body(UnsafeRawBufferPointer(buffer))) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
