import TokenMintCore
import Testing
import TokenMintCrypto
import TokenMintJOSE

/// RFC 8812's ES256K and RFC 9864's fully-specified Ed25519 beside EdDSA.
@Suite("ES256K and the fully-specified Ed25519 name")
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
}
