import TokenMintCore
import TokenMintCrypto

/// Strict forms of the WhitelabelPay token strings.
public enum WhitelabelPayFormat {
    /// Whether `text` is a UUID string (8-4-4-4-12 hexadecimal digits).
    public static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let hex = (48...57).contains(byte) || (97...102).contains(byte) || (65...70).contains(byte)
                guard hex else { return false }
            }
        }
        return true
    }

    /// Characters allowed in an unsigned payment-token part: URL-safe, no '/'.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
    }
}
