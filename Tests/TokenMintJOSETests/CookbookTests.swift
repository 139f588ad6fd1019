import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintJOSE

/// RFC 7520 (JOSE cookbook), RFC 8037 and RFC 7797 examples from Vectors/jose-cookbook.
@Suite("RFC 7520, 8037 and 7797 examples")
struct CookbookTests {
    struct Example {
        var file: String
        var root: JSONObject
        var payload: [UInt8]
        var key: JWK
        var alg: JWSAlgorithm
        var output: JSONObject
    }

    static func example(_ path: String) throws -> Example? {
        guard let url = Paths.vector("jose-cookbook/" + path) else { return nil }
        let root = try Paths.json(url)
        let input = try root.object("input")
        let key = try JWK(object: try input.object("key"))
        let alg = try #require(JWSAlgorithm(name: try input.string("alg")))
        return Example(file: path, root: root, payload: Array(try input.string("payload").utf8), key: key, alg: alg,
                       output: try root.object("output"))
    }

    func json(_ object: JSONObject) -> String { String(decoding: JSONWriter.encode(.object(object)), as: UTF8.self) }

    @Test("4.1 RS256 and 4.4 HS256 and RFC 8037 Ed25519 are reproduced byte for byte")
    func deterministicExamplesAreByteExact() throws {
        for path in ["jws/4_1.rsa_v15_signature.json", "jws/4_4.hmac-sha2_integrity_protection.json", "curve25519/jws.json"] {
            guard let example = try Self.example(path) else { continue }
            let signing = try example.root.object("signing")
            let signer = try JWSSigner(key: example.key, algorithm: example.alg)
            let signature = try signer.signature(forSigningInput: Array(try signing.string("sig-input").utf8))
            #expect(b64(signature) == (try signing.string("sig")), "\(path)")
            // Our own header serialization is the cookbook's ({"alg":…,"kid":…}).
            let compact = try signer.sign(example.payload)
            #expect(compact == (try example.output.string("compact")), "\(path)")
            let verifier = try JWSVerifier(key: example.key.publicKey ?? example.key)
            #expect(try verifier.verify(compact: compact).payload == example.payload)
            #expect(try verifier.verify(json: json(try example.output.object("json_flat"))).payload == example.payload)
            #expect(try verifier.verify(json: json(try example.output.object("json"))).payload == example.payload)
        }
    }

    @Test("4.2 PS384 and 4.3 ES512 verify (randomized algorithms)")
    func randomizedExamplesVerify() throws {
        for path in ["jws/4_2.rsa-pss_signature.json", "jws/4_3.ecdsa_signature.json"] {
            guard let example = try Self.example(path) else { continue }
            let verifier = try JWSVerifier(key: try #require(example.key.publicKey))
            let verified = try verifier.verify(compact: try example.output.string("compact"))
            #expect(verified.payload == example.payload)
            #expect(verified.header.algorithm == example.alg)
            #expect(try verifier.verify(json: json(try example.output.object("json_flat"))).payload == example.payload)
            // Sign anew with the cookbook key and verify.
            let token = try JWSSigner(key: example.key, algorithm: example.alg).sign(example.payload)
            #expect(try verifier.verify(compact: token).payload == example.payload)
        }
    }

    @Test("4.5 detached content")
    func detachedContent() throws {
        guard let example = try Self.example("jws/4_5.signature_with_detached_content.json") else { return }
        let verifier = try JWSVerifier(key: example.key)
        let compact = try example.output.string("compact")
        #expect(try verifier.verify(compact: compact, detachedPayload: example.payload).payload == example.payload)
        expectJOSE(.jose.invalidSignature) { _ = try verifier.verify(compact: compact, detachedPayload: example.payload + [0x20]) }
        #expect(try verifier.verify(json: json(try example.output.object("json_flat")), detachedPayload: example.payload).payload == example.payload)
        let signer = try JWSSigner(key: example.key)
        #expect(try signer.sign(example.payload, detached: true) == compact)
    }

    @Test("4.6 protecting specific header fields: kid in the unprotected header")
    func unprotectedKeyID() throws {
        guard let example = try Self.example("jws/4_6.protecting_specific_header_fields.json") else { return }
        let verifier = try JWSVerifier(key: example.key)
        for form in ["json", "json_flat"] {
            let verified = try verifier.verify(json: json(try example.output.object(form)))
            #expect(verified.payload == example.payload)
            #expect(verified.header.keyID == example.key.keyID)
        }
        var unprotected = JSONObject()
        unprotected.set("kid", .string(example.key.keyID ?? ""))
        let signed = try JWSSigner(key: example.key).signJSON(
            example.payload, header: JWSHeaderFields(keyID: nil), unprotected: unprotected)
        #expect(try verifier.verify(json: signed).payload == example.payload)
    }

    @Test("4.7 protecting content only: refused by default, accepted when the policy allows an unprotected alg")
    func unprotectedAlgorithm() throws {
        guard let example = try Self.example("jws/4_7.protecting_content_only.json") else { return }
        let text = json(try example.output.object("json_flat"))
        expectJOSE(.jose.invalidHeader) { _ = try JWSVerifier(key: example.key).verify(json: text) }
        var policy = JWSPolicy()
        policy.allowsUnprotectedAlgorithm = true
        let lenient = try JWSVerifier(key: example.key, policy: policy)
        #expect(try lenient.verify(json: text).payload == example.payload)
        #expect(try lenient.verify(json: json(try example.output.object("json"))).payload == example.payload)
    }

    @Test("4.8 multiple signatures: each key verifies its own signature")
    func multipleSignatures() throws {
        guard let url = Paths.vector("jose-cookbook/jws/4_8.multiple_signatures.json") else { return }
        let root = try Paths.json(url)
        let input = try root.object("input")
        let keys = try #require(input["key"]?.arrayValue).map { try JWK(object: try #require($0.objectValue)) }
        let text = json(try root.object("output").object("json"))
        #expect(keys.count == 3)
        var lenient = JWSPolicy()
        lenient.allowsUnprotectedAlgorithm = true
        for (index, key) in keys.enumerated() {
            // The RSA and EC keys in the cookbook have no alg: their type binds the family.
            // The ES512 signature carries its alg only in the unprotected header, so the
            // EC key verifies only under a policy that allows that.
            if index == 1 {
                #expect(throws: TokenMintError.self) { _ = try JWSVerifier(keys: JWKSet(keys: [key])).verify(json: text) }
            }
            let policy = index == 1 ? lenient : JWSPolicy()
            let verified = try JWSVerifier(keys: JWKSet(keys: [key]), policy: policy).verify(json: text)
            #expect(String(decoding: verified.payload, as: UTF8.self) == (try input.string("payload")))
            #expect(verified.key.keyID == key.keyID)
        }
    }

    @Test("RFC 7797 b64:false, compact and JSON; b64 outside crit is refused")
    func unencodedPayload() throws {
        guard let url = Paths.vector("jose-cookbook/rfc7797/hmac-sha2_b64_false.json") else { return }
        let root = try Paths.json(url)
        let input = try root.object("input")
        let key = try JWK(object: try input.object("key"))
        let output = try root.object("output")
        let verifier = try JWSVerifier(key: key)
        let payload = Array(try input.string("payload").utf8)
        let compact = try output.string("compact")
        let verified = try verifier.verify(compact: compact)
        #expect(verified.payload == payload)
        #expect(!verified.header.isPayloadBase64URLEncoded)
        #expect(try verifier.verify(json: json(try output.object("json_flat"))).payload == payload)
        // Our signer reproduces the RFC's compact form.
        let signer = try JWSSigner(key: key)
        #expect(try signer.sign(payload, header: JWSHeaderFields(unencodedPayload: true)) == compact)
        // A verifier that does not allow unencoded payloads refuses it.
        var strict = JWSPolicy()
        strict.allowsUnencodedPayload = false
        expectJOSE(.jose.invalidHeader) { _ = try JWSVerifier(key: key, policy: strict).verify(compact: compact) }

        // The "JSON only" example's header has b64 without crit: RFC 7797 §6 says reject.
        if let other = Paths.vector("jose-cookbook/rfc7797/4.2.hmac-sha2_b64_false.json") {
            let example = try Paths.json(other)
            let key2 = try JWK(object: try example.object("input").object("key"))
            expectJOSE(.jose.invalidHeader) {
                _ = try JWSVerifier(key: key2).verify(json: json(try example.object("output").object("json_flat")))
            }
        }
    }

    @Test("RFC 7520 §3 keys parse, round-trip, and admit only what they may")
    func cookbookKeys() throws {
        var parsed = 0
        for name in ["3_1.ec_public_key", "3_2.ec_private_key", "3_3.rsa_public_key", "3_4.rsa_private_key",
                     "3_5.symmetric_key_mac_computation", "3_6.symmetric_key_encryption"] {
            guard let url = Paths.vector("jose-cookbook/jwk/\(name).json") else { continue }
            let object = try Paths.json(url)
            let key = try JWK(object: object)
            parsed += 1
            let again = try JWK(json: key.json)
            #expect(again.thumbprint() == key.thumbprint(), "\(name)")
            #expect(again.isPrivate == key.isPrivate)
            // Every member of the source reappears with the same value.
            let written = key.jsonObject()
            for member in object { #expect(written[member.name] == member.value, "\(name).\(member.name)") }
        }
        #expect(parsed == 6)
        if let url = Paths.vector("jose-cookbook/jwk/3_6.symmetric_key_encryption.json") {
            let key = try JWK(object: try Paths.json(url))
            expectJOSE(.jose.algorithmNotAllowed) { try key.admit(.HS256, for: .verify) }
        }
        if let url = Paths.vector("jose-cookbook/jwk/3_2.ec_private_key.json") {
            let key = try JWK(object: try Paths.json(url))
            try key.admit(.ES512, for: .sign)
            expectJOSE(.jose.algorithmNotAllowed) { try key.admit(.ES256, for: .verify) }
            expectJOSE(.jose.algorithmNotAllowed) { try #require(key.publicKey).admit(.ES512, for: .sign) }
        }
    }
}
