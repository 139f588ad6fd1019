import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto

/// Secrets stay in zeroing memory: keys open from `SecureBytes` directly,
/// and no library code copies a secret out.
@Suite("Secret handling")
struct SecretHandlingTests {
    @Test("keys open from SecureBytes and match the keys from the same bytes")
    func keysFromSecureBytes() throws {
        let ed = Ed25519.PrivateKey()
        #expect(try Ed25519.PrivateKey(rawRepresentation: ed.rawRepresentation).publicKey == ed.publicKey)
        #expect(throws: TokenMintError.self) { _ = try Ed25519.PrivateKey(rawRepresentation: SecureBytes(randomCount: 31)) }
        for curve in [ECDSA.Curve.p256, .p384, .p521] {
            let ec = try ECDSA.PrivateKey(curve: curve)
            #expect(try ECDSA.PrivateKey(rawRepresentation: try ec.rawRepresentation, curve: curve).publicKey == ec.publicKey)
        }
        #expect(throws: TokenMintError.self) { _ = try ECDSA.PrivateKey(rawRepresentation: SecureBytes(Array(repeating: 0, count: 32)), curve: .p256) }
        #expect(throws: TokenMintError.self) { _ = try ECDSA.PrivateKey(rawRepresentation: SecureBytes(Array(repeating: 0xFF, count: 32)), curve: .p256) }
    }

    @Test("RSA keys rebuilt from their components (secrets read in place) sign and verify")
    func rsaComponents() throws {
        let key = try RSA.PrivateKey(bits: 2048)
        var components = key.components
        let rebuilt = try RSA.PrivateKey(components: components)
        let message = Array("components".utf8)
        #expect(rebuilt.publicKey.isValidSignature(try key.signature(for: message, padding: .pss), for: message, padding: .pss))
        components.dp = nil
        let derived = try RSA.PrivateKey(components: components)
        #expect(key.publicKey.isValidSignature(try derived.signature(for: message, padding: .pkcs1v15), for: message, padding: .pkcs1v15))
    }

    @Test("no library source copies a secret out of secure memory (unsafeCopy)")
    func noUnsafeCopyInSources() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 50)
        for file in files where !file.hasSuffix("TokenMintCrypto/SecureBytes.swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            #expect(!text.contains(".unsafeCopy"), "\(file) copies a secret out of SecureBytes")
        }
    }
}
