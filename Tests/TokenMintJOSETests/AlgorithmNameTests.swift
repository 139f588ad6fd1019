import TokenMintCore
import Testing
import TokenMintCrypto
import TokenMintJOSE
import TokenMintMLDSA
import Foundation

/// RFC 8812's ES256K, RFC 9864's fully-specified Ed25519 beside EdDSA, and Ed448.
@Suite("ES256K, Ed448 and the fully-specified Ed25519 name")
struct AlgorithmNameTests {
    @Test("ES256K: secp256k1 JWKs round-trip; tokens sign and verify; a P-256 key or a changed signature is refused")
    func es256k() throws {
        let key = try JWK.generate(for: .ES256K, keyID: "k1")
        #expect(key.curveName == "secp256k1" && key.algorithm == .ES256K)
        let parsed = try JWK(json: key.json)
        #expect(parsed.json == key.json)
        let signer = try JWSSigner(key: parsed)
        #expect(signer.algorithm == .ES256K)
        let token = try signer.sign(Array("{\"sub\":\"k1\"}".utf8))
        let verified = try JWSVerifier(key: try #require(key.publicKey)).verify(compact: token)
        #expect(verified.header.algorithm == .ES256K && verified.payload == Array("{\"sub\":\"k1\"}".utf8))
        let parts = token.split(separator: ".")
        #expect((try? Base64URL.decode(parts[2]))?.count == 64, "r‖s, 32 bytes each")
        #expect(throws: TokenMintError.self) { _ = try JWSVerifier(key: try JWK.generate(for: .ES256)).verify(compact: token) }
        var flipped = Array(token.utf8)
        flipped[flipped.count - 2] = flipped[flipped.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: TokenMintError.self) { _ = try JWSVerifier(key: try #require(key.publicKey)).verify(compact: String(decoding: flipped, as: UTF8.self)) }
        // A secp256k1 key cannot sign ES256, nor a P-256 key ES256K.
        #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: key, algorithm: .ES256) }
        #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: try JWK.generate(for: .ES256), algorithm: .ES256K) }
    }

    @Test("Ed25519 and EdDSA: the same key verifies both names unless its alg binds it to one; either can be minted")
    func ed25519() throws {
        let seed = Ed25519.PrivateKey()
        let unbound = JWK(seed, algorithm: nil)
        let polymorphic = try JWSSigner(key: unbound, algorithm: .EdDSA).sign(Array("p".utf8))
        let specified = try JWSSigner(key: unbound, algorithm: .Ed25519).sign(Array("s".utf8))
        let verifier = try JWSVerifier(key: JWK(seed.publicKey, algorithm: nil))
        #expect(try verifier.verify(compact: polymorphic).header.algorithm == .EdDSA)
        #expect(try verifier.verify(compact: specified).header.algorithm == .Ed25519)
        // The signatures are the same scheme: only the header differs.
        #expect(seed.publicKey.isValidSignature((try Base64URL.decode(specified.split(separator: ".")[2])),
                                                for: Array(specified.split(separator: ".").prefix(2).joined(separator: ".").utf8)))
        // Bound keys: an EdDSA key refuses an Ed25519 token and the other way round.
        let boundOld = try JWSVerifier(key: JWK(seed.publicKey, algorithm: .EdDSA))
        let boundNew = try JWSVerifier(key: JWK(seed.publicKey, algorithm: .Ed25519))
        #expect(throws: TokenMintError.self) { _ = try boundOld.verify(compact: specified) }
        #expect(throws: TokenMintError.self) { _ = try boundNew.verify(compact: polymorphic) }
        #expect(try boundNew.verify(compact: specified).payload == Array("s".utf8))
        // A policy may allow only the fully-specified name.
        var policy = JWSPolicy()
        policy.algorithms = [.Ed25519]
        #expect(throws: TokenMintError.self) { _ = try JWSVerifier(key: JWK(seed.publicKey, algorithm: nil), policy: policy).verify(compact: polymorphic) }
        #expect(try JWK.generate(for: .Ed25519).algorithm == .Ed25519)
    }

    /// The same key without `alg` (bound to its family only).
    static func unbound(_ key: JWK) throws -> JWK {
        let object = key.jsonObject(includingPrivate: false)
        let stripped = JSONObject(object.members.filter { $0.name != "alg" }.map { ($0.name, $0.value) })
        let unbound = try JWK(json: String(decoding: JSONWriter.encode(.object(stripped)), as: UTF8.self))
        #expect(unbound.algorithm == nil)
        return unbound
    }

    /// A token whose header names `name`, signed by `sign` over the signing input.
    static func forged(_ name: String, _ sign: ([UInt8]) throws -> [UInt8]) throws -> String {
        let input = Base64URL.encode(Array("{\"alg\":\"\(name)\"}".utf8)) + "." + Base64URL.encode(Array("{}".utf8))
        return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
    }

    @Test("a PEM Edwards key is bound to its curve, not to one name: EdDSA and its RFC 9864 name both verify; an alg given binds it")
    func pemEdwardsKeys() throws {
        let ed25519 = Ed25519.PrivateKey()
        let ed448 = try Ed448.PrivateKey()
        for (privatePEM, publicPEM, name) in [
            (try ed25519.pemRepresentation, try ed25519.publicKey.pemRepresentation, JWSAlgorithm.Ed25519),
            (try ed448.pemRepresentation, try ed448.publicKey.pemRepresentation, JWSAlgorithm.Ed448),
        ] {
            let signing = try JWK(pem: privatePEM)
            #expect(signing.algorithm == nil, "\(name): the PEM key took alg \(String(describing: signing.algorithm))")
            let verifier = try JWSVerifier(key: try JWK(pem: publicPEM))
            for algorithm in [JWSAlgorithm.EdDSA, name] {
                let token = try JWSSigner(key: signing, algorithm: algorithm).sign(Array("m".utf8))
                #expect(try verifier.verify(compact: token).header.algorithm == algorithm)
            }
            #expect(try JWSSigner(key: signing).algorithm == .EdDSA)
            // The other curve's name never, and an alg given binds the key to it.
            let other: JWSAlgorithm = name == .Ed25519 ? .Ed448 : .Ed25519
            #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: signing, algorithm: other) }
            let bound = try JWK(pem: privatePEM, algorithm: name)
            #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: bound, algorithm: .EdDSA) }
        }
    }

    @Test("unbound keys never cross curves: ES256 signed on secp256k1, ES256K on P-256, Ed25519 by an Ed448 key and Ed448 by an Ed25519 key")
    func curveConfusion() throws {
        let k1 = try ECDSA.PrivateKey(curve: .secp256k1), p256 = try ECDSA.PrivateKey(curve: .p256)
        let ed448 = try Ed448.PrivateKey(), ed25519 = Ed25519.PrivateKey()
        let cases: [(String, JWK, ([UInt8]) throws -> [UInt8])] = [
            ("ES256", try Self.unbound(try JWK(k1.publicKey)), { try k1.signature(for: $0, hash: .sha256).rawRepresentation }),
            ("ES256K", try Self.unbound(try JWK(p256.publicKey)), { try p256.signature(for: $0, hash: .sha256).rawRepresentation }),
            ("Ed25519", JWK(ed448.publicKey, algorithm: nil), { try ed448.signature(for: $0) }),
            ("Ed448", JWK(ed25519.publicKey, algorithm: nil), { try ed25519.signature(for: $0) }),
        ]
        for (name, key, sign) in cases {
            let token = try Self.forged(name, sign)
            do {
                _ = try JWSVerifier(key: key).verify(compact: token)
                Issue.record("\(name) accepted with a key on another curve")
            } catch {
                #expect(error.code == .jose.algorithmNotAllowed, "\(name): \(error)")
            }
        }
    }

    @Test("Ed448: RFC 8032 §7.4 byte-exact; OKP JWKs with crv Ed448; Ed448 and EdDSA names; never across curves")
    func ed448() throws {
        let secret = SecureBytes(try Hex.decode("6c82a562cb808d10d632be89c8513ebf6c929f34ddfa8c9f63c9960ef6e348a3528c8a3fcc2f044e39a3fc5b94492f8f032e7549a20098f95b"))
        let key = try Ed448.PrivateKey(rawRepresentation: secret)
        #expect(Hex.encode(key.publicKey.rawRepresentation) == "5fd7449b59b461fd2ce787ec616ad46a1da1342485a70e1f8a0ea75d80e96778edf124769b46c7061bd6783df1e50f6cd1fa1abeafe8256180")
        #expect(Hex.encode(try key.signature(for: [UInt8]())) == "533a37f6bbe457251f023c0d88f976ae2dfb504a843e34d2074fd823d41a591f2b233f034f628281f2fd7a22ddd47d7828c59bd0a21bfd3980ff0d2028d4b18a9df63e006c5d1c2d345b925d8dc00b4104852db99ac5c7cdda8530a113a0f4dbb61149f05a7363268c71d95808ff2e652600")
        #expect(try key.rawRepresentation == secret)
        let jwk = try JWK(json: JWK(key, keyID: "e448").json)
        #expect(jwk.curveName == "Ed448" && jwk.algorithm == .Ed448)
        let token = try JWSSigner(key: jwk).sign(Array("448".utf8))
        let verifier = try JWSVerifier(key: try #require(jwk.publicKey))
        #expect(try verifier.verify(compact: token).header.algorithm == .Ed448)
        // EdDSA names Ed448 keys too (RFC 8037); Ed25519 never does, nor Ed448 an Ed25519 key.
        let unbound = JWK(key, algorithm: nil)
        let polymorphic = try JWSSigner(key: unbound, algorithm: .EdDSA).sign(Array("p".utf8))
        #expect(try JWSVerifier(key: JWK(key.publicKey, algorithm: nil)).verify(compact: polymorphic).payload == Array("p".utf8))
        #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: unbound, algorithm: .Ed25519) }
        #expect(throws: TokenMintError.self) { _ = try JWSSigner(key: JWK(Ed25519.PrivateKey(), algorithm: nil), algorithm: .Ed448) }
        // A private d that does not match x is refused.
        let other = try JWK.generate(for: .Ed448)
        var mixed = try #require(JSONParser.parse(Array(other.json.utf8)).objectValue)
        mixed.set("x", .string(Base64URL.encode(key.publicKey.rawRepresentation)))
        #expect(throws: TokenMintError.self) { _ = try JWK(json: String(decoding: JSONWriter.encode(.object(mixed)), as: UTF8.self)) }
    }

    @Test("a JWK Set holding an ML-DSA key: used with the MLDSA trait, skipped without it, never breaking the set; an AKP key of an unknown alg is skipped")
    func keySetWithAKP() throws {
        let es = try #require(try JWK.generate(for: .ES256, keyID: "es").publicKey)
        let url = try #require(Paths.vector("ml-dsa-jose/ML_DSA_65.jose.json"))
        var mldsa = try #require(try Paths.json(url)["jwk"]?.objectValue)
        _ = mldsa.remove("priv")
        let unknown = JSONObject([("kty", .string("AKP")), ("alg", .string("ML-DSA-99")), ("pub", .string("AAAA")), ("kid", .string("future"))])
        let keys = JSONValue.array([.object(es.jsonObject()), .object(mldsa), .object(unknown)])
        let text = String(decoding: JSONWriter.encode(.object(JSONObject([("keys", keys)]))), as: UTF8.self)
        let set = try JWKSet(json: text)
        #expect(set.keys.map(\.keyID) == (MLDSA.isAvailable ? ["es", mldsa["kid"]?.stringValue] : ["es"]))
    }
}
