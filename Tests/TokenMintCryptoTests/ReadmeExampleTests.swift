import Foundation
import Testing
import TokenMint

/// The README's Swift example, compiled and run; the test also checks that
/// the README still shows exactly this code.
@Suite("README example")
struct ReadmeExampleTests {
    static func readmeExample() throws {
        // README-BEGIN
        let message = Array("02/4c9e1d/1763776800".utf8)

        // Ed25519 through libsodium.
        let deviceKey = Ed25519.PrivateKey()
        let signature = try deviceKey.signature(for: message)
        assert(deviceKey.publicKey.isValidSignature(signature, for: message))

        // ECDSA P-256 with an RFC 6979 nonce: same key and message, same signature.
        let issuerKey = try ECDSA.PrivateKey(curve: .p256)
        let es256 = try issuerKey.signature(for: message, nonce: .deterministic)
        let jose = Base64URL.encode(es256.rawRepresentation)       // r‖s, as JWS wants
        let webAuthn = es256.derRepresentation                     // DER, as WebAuthn wants
        let parsed = try ECDSA.Signature(rawRepresentation: Base64URL.decode(jose), curve: .p256)
        assert(issuerKey.publicKey.isValidSignature(parsed, for: message))
        assert((try? ECDSA.Signature(derRepresentation: webAuthn, curve: .p256)) == es256)

        // Keys travel as PKCS#8 / SPKI PEM.
        let publicPEM = try issuerKey.publicKey.pemRepresentation
        let verifier = try ECDSA.PublicKey(pemRepresentation: publicPEM)
        assert(verifier.isValidSignature(es256, for: message))

        // HMAC keys shorter than the hash are refused, in every build.
        let macKey = try HMACKey(generatingFor: .sha256)
        let tag = HMAC.authenticationCode(for: message, using: macKey)
        assert(HMAC.isValidAuthenticationCode(tag, for: message, using: macKey))
        // README-END
    }

    static func readmeJWTExample() throws -> String? {
        // README-JWT-BEGIN
        let now: Int64 = 1_763_776_800  // seconds since the epoch
        let issuerKey = try JWK.generate(for: .EdDSA, keyID: "issuer-2026")
        let claims = JWTClaims(issuer: "https://issuer.example", subject: "device-42",
                               audience: ["cash-desk"], expiration: now + 600, issuedAt: now)
        let token = try JWTSigner(key: issuerKey).sign(claims)

        var validation = JWTValidation()
        validation.issuer = "https://issuer.example"
        validation.audience = "cash-desk"
        validation.clock = { now + 60 }
        let verified = try JWTVerifier(keys: JWKSet(keys: [issuerKey]), validation: validation).verify(token)
        // README-JWT-END
        return verified.claims.subject
    }

    static func readmeJOSEExample() throws -> (String, String?) {
        // README-JOSE-BEGIN
        // JWE: a nested token for one recipient's X25519 (or EC, RSA) key.
        let recipient = JWK(try X25519.PrivateKey())
        let sealed = try JWE.encrypt(Array("eyJhbGciOi…".utf8), key: recipient.publicKey!,
                                     algorithm: .ECDH_ES_A256KW, encryption: .A256GCM, header: ["cty": "JWT"])
        let opened = try JWE(parsing: try sealed.compactSerialization).decrypt(using: recipient)

        // SD-JWT: the holder shows the verifier only what it needs, bound to the holder's key.
        let issuerKey = try JWK.generate(for: .ES256), holderKey = try JWK.generate(for: .EdDSA)
        let credential = try SDJWTIssuer(key: issuerKey).issue(
            ["iss": "https://issuer.example", "given_name": "Ada", "birthdate": "1815-12-10"],
            disclosable: ["/given_name", "/birthdate"], decoys: 4, holderKey: holderKey)
        let presentation = try credential.presenting(["/given_name"])
            .binding(to: holderKey, audience: "https://verifier.example", nonce: "n-0S6", issuedAt: 1_763_776_800)
        var checks = JWTValidation()
        checks.requiredClaims = []
        checks.clock = { 1_763_776_860 }
        let shown = try SDJWTVerifier(issuerKeys: JWKSet(issuerKey), validation: checks)
            .verify(presentation.serialization, audience: "https://verifier.example", nonce: "n-0S6")
        // shown.claims holds given_name, not birthdate.
        // README-JOSE-END
        return (String(decoding: opened.plaintext.unsafeCopy, as: UTF8.self), shown.claims["given_name"]?.stringValue)
    }

    @Test func exampleRuns() throws {
        try Self.readmeExample()
        #expect(try Self.readmeJWTExample() == "device-42")
        let (plaintext, givenName) = try Self.readmeJOSEExample()
        #expect(plaintext == "eyJhbGciOi…" && givenName == "Ada")
    }

    @Test func readmeShowsTheJOSECode() throws {
        let readme = try String(contentsOf: SharedVectors.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let start = try #require(source.range(of: "// README-JOSE-BEGIN\n"))
        let end = try #require(source.range(of: "        // README-JOSE-END"))
        let body = source[start.upperBound..<end.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }
            .joined(separator: "\n")
        let block = try #require(readme.range(of: "```swift\n// JWE: a nested token"))
        let blockStart = readme.index(block.lowerBound, offsetBy: "```swift\n".count)
        let blockEnd = try #require(readme.range(of: "\n```", range: blockStart..<readme.endIndex))
        #expect(String(readme[blockStart..<blockEnd.lowerBound]) + "\n" == body)
    }

    @Test func readmeShowsTheJWTCode() throws {
        let readme = try String(contentsOf: SharedVectors.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let start = try #require(source.range(of: "// README-JWT-BEGIN\n"))
        let end = try #require(source.range(of: "        // README-JWT-END"))
        let body = source[start.upperBound..<end.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }
            .joined(separator: "\n")
        let block = try #require(readme.range(of: "```swift\nlet now: Int64"))
        let blockStart = readme.index(block.lowerBound, offsetBy: "```swift\n".count)
        let blockEnd = try #require(readme.range(of: "\n```", range: blockStart..<readme.endIndex))
        #expect(String(readme[blockStart..<blockEnd.lowerBound]) + "\n" == body)
    }

    @Test func readmeShowsThisCode() throws {
        let readme = try String(contentsOf: SharedVectors.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let start = try #require(source.range(of: "// README-BEGIN\n"))
        let end = try #require(source.range(of: "        // README-END"))
        let body = source[start.upperBound..<end.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }
            .joined(separator: "\n")
        let block = try #require(readme.range(of: "```swift\nimport TokenMint\n\n"))
        let blockEnd = try #require(readme.range(of: "\n```", range: block.upperBound..<readme.endIndex))
        #expect(String(readme[block.upperBound..<blockEnd.lowerBound]) + "\n" == body)
    }
}
