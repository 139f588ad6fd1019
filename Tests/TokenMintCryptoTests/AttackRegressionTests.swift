import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto

/// Regressions for the key-import and message findings of the adversarial review.
@Suite("Attacks on key import and messages")
struct KeyImportAttackTests {
    static func pem(_ label: String, _ der: [UInt8]) -> String {
        let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
    }

    @Test("a PEM whose DER has trailing bytes, or a second block after END, is refused")
    func strictPEM() throws {
        let key = Ed25519.PrivateKey()
        let good = try key.publicKey.pemRepresentation
        _ = try Ed25519.PublicKey(pemRepresentation: good)
        let der = try #require(Data(base64Encoded: good.split(separator: "\n").dropFirst().dropLast().joined()))
        #expect(throws: TokenMintError.self) { _ = try Ed25519.PublicKey(pemRepresentation: Self.pem("PUBLIC KEY", [UInt8](der) + [0, 0])) }
        let other = try Ed25519.PrivateKey().publicKey.pemRepresentation
        #expect(throws: TokenMintError.self) { _ = try Ed25519.PublicKey(pemRepresentation: good + other) }
        #expect(throws: TokenMintError.self) { _ = try Ed25519.PublicKey(pemRepresentation: good + "trailing words\n") }
        #expect(throws: TokenMintError.self) { _ = try Ed25519.PublicKey(pemRepresentation: good.replacingOccurrences(of: "END PUBLIC KEY", with: "END PRIVATE KEY")) }
        let ec = try ECDSA.PrivateKey(curve: .p256)
        _ = try ECDSA.PrivateKey(pemRepresentation: try ec.pemRepresentation, curve: .p256)
        #expect(throws: TokenMintError.self) { _ = try ECDSA.PrivateKey(pemRepresentation: try ec.pemRepresentation + other, curve: .p256) }
    }

    @Test("untrusted text is escaped: control characters, escapes, separators and bidi overrides")
    func safeText() {
        #expect(SafeText.escaped("plain ünïcode kid-1") == "plain ünïcode kid-1")
        #expect(SafeText.escaped("a\u{1b}[31mb\nc\u{0}\u{7f}\u{9b}\u{2028}\u{202e}\\") == "a\\u{1b}[31mb\\u{a}c\\u{0}\\u{7f}\\u{9b}\\u{2028}\\u{202e}\\\\")
        let error = TokenMintError(.crypto.invalidKey, "kid \u{1b}]0;owned\u{7}")
        #expect(!error.description.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test("time sums saturate instead of trapping or wrapping")
    func timeArithmetic() {
        #expect(TimeArithmetic.adding(.max, 1) == .max)
        #expect(TimeArithmetic.adding(.min, -1) == .min)
        #expect(TimeArithmetic.subtracting(.min, 1) == .min)
        #expect(TimeArithmetic.subtracting(.max, -1) == .max)
        #expect(TimeArithmetic.adding(40, 2) == 42)
    }
}
