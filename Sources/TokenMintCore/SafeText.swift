/// Text from outside (a token's `kid`, an `origin`, a push type) made safe to
/// print in a message or a log line: control characters, the escape
/// character, line and paragraph separators and bidirectional overrides
/// become `\u{…}` escapes, and a backslash becomes `\\`, so what an attacker
/// sends can neither move the cursor, colour the terminal, forge a log line
/// nor hide text. Everything else, including non-ASCII letters, is kept.
public enum SafeText {
    /// `text` with every character that could change how a terminal or a log
    /// shows it escaped. With `backslashes` false a backslash is kept as it
    /// is: for text that may hold escapes made here already (a message
    /// printed once more), so they are not doubled.
    public static func escaped(_ text: some StringProtocol, backslashes: Bool = true) -> String {
        // The common case, plain text, costs one scan and no rebuilding.
        if !text.unicodeScalars.contains(where: { ($0 == "\\" && backslashes) || needsEscape($0) }) { return String(text) }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar == "\\", backslashes {
                out += "\\\\"
            } else if needsEscape(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `text` would be left as it is by ``escaped(_:backslashes:)``.
    public static func isPlain(_ text: some StringProtocol) -> Bool {
        !text.unicodeScalars.contains { $0 == "\\" || needsEscape($0) }
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F..<0xA0: return true  // C0, DEL, C1 (CSI 0x9B among them)
        case 0x2028, 0x2029: return true  // line and paragraph separators
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // bidi marks, embeddings, overrides, isolates
        case 0xFEFF: return true
        default: return false
        }
    }
}
