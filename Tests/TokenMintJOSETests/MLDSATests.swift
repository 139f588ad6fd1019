import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintMLDSA
import TokenMintJOSE
import TokenMintVectors

/// ML-DSA-44/65/87 (FIPS 204) for JOSE (RFC 9964): AKP JWKs, JWS with the
/// three algorithms, Wycheproof's verification files. Runs with the MLDSA
/// trait (the test command turns it on).
@Suite("ML-DSA (RFC 9964): AKP keys, JWS, Wycheproof", .enabled(if: MLDSA.isAvailable))
struct MLDSATests {
    static let sets: [(JWSAlgorithm, MLDSA.ParameterSet)] = [(.MLDSA44, .mlDSA44), (.MLDSA65, .mlDSA65), (.MLDSA87, .mlDSA87)]

    @Test("RFC 9964's examples: the zero seed gives pub byte for byte, kid is the RFC 7638 thumbprint, the JWS verifies; a changed byte does not",
          arguments: [44, 65, 87])
    func rfcExamples(level: Int) throws {
        let url = try #require(Paths.vector("ml-dsa-jose/ML_DSA_\(level).jose.json"))
        let example = try Paths.json(url)
        let jwkObject = try #require(example["jwk"]?.objectValue)
        let key = try JWK(object: jwkObject)
        #expect(key.keyType == .akp && key.isPrivate && key.algorithm?.rawValue == "ML-DSA-\(level)")
        // Expanding the 32-byte seed gives exactly the published public key.
        let rawPublic = try Hex.decode(try #require(example["raw_public_key"]?.stringValue))
        let seed = try Base64URL.decode(try #require(jwkObject["priv"]?.stringValue))
        let set = try #require(MLDSA.ParameterSet(rawValue: "ML-DSA-\(level)"))
        let expanded = try MLDSA.PrivateKey(seedRepresentation: SecureBytes(seed), parameterSet: set)
        #expect(expanded.publicKey.rawRepresentation == rawPublic)
        #expect(key.thumbprint() == jwkObject["kid"]?.stringValue)
        // The written JWK is the published one, member for member.
        let written = key.jsonObject()
        for name in ["kty", "alg", "pub", "priv", "kid"] { #expect(written[name] == jwkObject[name], "\(name)") }

        let jws = try #require(example["jws"]?.stringValue)
        let verifier = try JWSVerifier(key: try #require(key.publicKey))
        let verified = try verifier.verify(compact: jws)
        #expect(verified.header.algorithm.rawValue == "ML-DSA-\(level)")
        #expect(Array(jws.split(separator: ".").prefix(2).joined(separator: ".").utf8)
                == (try Hex.decode(try #require(example["raw_to_be_signed"]?.stringValue))))
        var changed = Array(jws.utf8)
        let index = changed.count / 2 + changed.count / 4
        changed[index] = changed[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: TokenMintError.self) { _ = try verifier.verify(compact: String(decoding: changed, as: UTF8.self)) }
        // The raw signature checks through the crypto layer too, and not under a context.
        let rawSignature = try Hex.decode(try #require(example["raw_signature"]?.stringValue))
        let message = try Hex.decode(try #require(example["raw_to_be_signed"]?.stringValue))
        #expect(expanded.publicKey.isValidSignature(rawSignature, for: message))
        #expect(!expanded.publicKey.isValidSignature(rawSignature, for: message, context: [1]))
    }

    @Test("Wycheproof mldsa_44/65/87_verify_test.json: every case comes out as marked, contexts included")
    func wycheproof() throws {
        var total = 0
        for level in [44, 65, 87] {
            let url = try #require(Paths.vector("wycheproof/mldsa_\(level)_verify_test.json"))
            let report = try VectorRunner.run(path: url.path)
            #expect(report.failed == 0, "\(report.summary)\n\(report.failures.prefix(10).joined(separator: "\n"))")
            #expect(report.passed >= 180, "\(report.summary)")
            total += report.passed
        }
        #expect(total == 631)  // 180 + 210 + 241
    }

    @Test("JWS and JWT with each set: sign, verify, keys bound to their set, AKP JWK rules", arguments: [0, 1, 2])
    func signAndVerify(index: Int) throws {
        let (algorithm, set) = Self.sets[index]
        let key = try JWK.generate(for: algorithm, keyID: "pq")
        #expect(key.algorithm == algorithm && key.keyType == .akp)
        let parsed = try JWK(json: key.json)
        #expect(parsed.json == key.json && parsed.thumbprint() == key.thumbprint())
        let publicJWK = try #require(key.publicKey)
        #expect(publicJWK.jsonObject()["priv"] == nil && !publicJWK.isPrivate)

        let signer = try JWSSigner(key: parsed)
        #expect(signer.algorithm == algorithm)
        let payload = Array("{\"sub\":\"post-quantum\"}".utf8)
        let token = try signer.sign(payload)
        let signature = try Base64URL.decode(try #require(token.split(separator: ".").last))
        #expect(signature.count == set.signatureByteCount)
        let verified = try JWSVerifier(key: publicJWK).verify(compact: token)
        #expect(verified.payload == payload && verified.header.algorithm == algorithm)
        // Hedged: two signatures of the same input differ, both verify.
        #expect(try signer.sign(payload) != token)

        // A key of another set neither verifies nor signs under this name.
        let (otherAlgorithm, _) = Self.sets[(index + 1) % 3]
        let other = try JWK.generate(for: otherAlgorithm)
        #expect(throws: TokenMintError.self) { _ = try JWSVerifier(key: try #require(other.publicKey)).verify(compact: token) }
        #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: other, algorithm: algorithm) }
        #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: key, algorithm: .EdDSA) }
        // A public key cannot sign; an Ed25519 key cannot claim ML-DSA.
        #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: publicJWK) }
        #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: JWK.generate(for: .EdDSA), algorithm: algorithm) }
    }

    @Test("AKP JWKs are strict: alg required and an ML-DSA name, pub of the exact length, priv that gives pub")
    func strictKeys() throws {
        let key = try JWK.generate(for: .MLDSA44)
        let object = key.jsonObject()
        func variant(_ change: (inout JSONObject) -> Void) -> String {
            var copy = object
            change(&copy)
            return String(decoding: JSONWriter.encode(.object(copy)), as: UTF8.self)
        }
        let bad: [(String, String)] = [
            ("no alg", variant { _ = $0.remove("alg") }),
            ("alg ES256", variant { $0.set("alg", .string("ES256")) }),
            ("alg of another set", variant { $0.set("alg", .string("ML-DSA-65")) }),
            ("pub one byte short", variant {
                let pub = try! Base64URL.decode($0["pub"]!.stringValue!)
                $0.set("pub", .string(Base64URL.encode(Array(pub.dropLast()))))
            }),
            ("priv of another key", variant { $0.set("priv", .string(Base64URL.encode([UInt8](repeating: 7, count: 32)))) }),
            ("priv of 31 bytes", variant { $0.set("priv", .string(Base64URL.encode([UInt8](repeating: 7, count: 31)))) }),
            ("no pub", variant { _ = $0.remove("pub") }),
        ]
        for (why, json) in bad {
            #expect(throws: TokenMintError.self, "\(why)") { _ = try JWK(json: json) }
        }
        // Contexts are at most 255 bytes.
        let raw = try MLDSA.PrivateKey(parameterSet: .mlDSA44)
        #expect(throws: TokenMintError.self) { _ = try raw.signature(for: [1], context: [UInt8](repeating: 0, count: 256)) }
        let signature = try raw.signature(for: [1], context: [UInt8](repeating: 0, count: 255))
        #expect(raw.publicKey.isValidSignature(signature, for: [1], context: [UInt8](repeating: 0, count: 255)))
        #expect(!raw.publicKey.isValidSignature(signature, for: [1]))
        #expect(!raw.publicKey.isValidSignature(Array(signature.dropLast()), for: [1], context: [UInt8](repeating: 0, count: 255)))
    }
}
