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

    @Test func exampleRuns() throws {
        try Self.readmeExample()
        #expect(try Self.readmeJWTExample() == "device-42")
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
