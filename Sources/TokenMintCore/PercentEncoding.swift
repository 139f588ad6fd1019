/// Percent-encoding for form bodies and query strings, shared by the
/// server's redirects and the HTTP clients' requests.
package enum PercentEncoding {
    /// RFC 3986 unreserved: `A-Z a-z 0-9 - . _ ~` (also the PKCE verifier's alphabet).
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: true
        default: false
        }
    }

    /// `text` with every byte but RFC 3986's unreserved characters as `%XX`
    /// (upper-case hex): valid in a form-encoded body or a query, whatever
    /// the reader.
    package static func encode(_ text: some StringProtocol) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
