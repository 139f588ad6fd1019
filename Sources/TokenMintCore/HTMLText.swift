/// Text from outside made safe inside HTML, in element content and in
/// quoted attribute values: `&`, `<`, `>`, `"` and `'` become character
/// references. The server's sign-in pages and the CLI's loopback answer page
/// share it.
package enum HTMLText {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references.
    package static func escape(_ text: some StringProtocol) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
