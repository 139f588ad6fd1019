import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintJOSE

/// One test per verification rule of the JOSE issue; each fails if its rule is removed.
@Suite("JWS verification rules")
struct VerificationRulesTests {
    static let ecKey = try? JWK(ECDSA.PrivateKey(curve: .p256), keyID: "ec-1")
    static let rsaKey: JWK? = (try? RSA.PrivateKey(bits: 2048)).map { JWK($0, keyID: "rsa-1") }
    static let edKey = JWK(Ed25519.PrivateKey(), keyID: "ed-1")
    static let hmacKey = try? JWK(secret: SecureRandom.bytes(count: 32), keyID: "mac-1", algorithm: .HS256)

    /// A compact JWS with a hand-written header, signed by `key` with `alg`.
    func token(header: String, payload: String = "{}", key: JWK, alg: JWSAlgorithm) throws -> String {
        let input = b64(header) + "." + b64(payload)
        let signature = try JWSSigner(key: key, algorithm: alg).signature(forSigningInput: Array(input.utf8))
        return input + "." + b64(signature)
    }

    @Test("header alg must be admitted by the key: no HS256 with an RSA, EC or OKP key")
    func algorithmMustMatchKeyType() throws {
        for key in [Self.rsaKey, Self.ecKey, Self.edKey].compactMap({ $0 }) {
            let publicKey = try #require(key.publicKey)
            // The classic confusion: the public key's bytes used as an HMAC secret.
            let secret = Array(try publicKey.pemRepresentation().utf8)
            let forged = try JWK(secret: secret, algorithm: .HS256)
            let t = try token(header: #"{"alg":"HS256","kid":"\#(key.keyID ?? "")"}"#, key: forged, alg: .HS256)
            expectJOSE(.jose.algorithmNotAllowed, "\(key)") { _ = try JWSVerifier(key: publicKey).verify(compact: t) }
        }
    }

    @Test("alg none is refused by every verifier, under any spelling")
    func noneIsRefused() throws {
        let key = try #require(Self.hmacKey)
        for alg in ["none", "None", "NONE", "nOnE"] {
            let t = b64(#"{"alg":"\#(alg)"}"#) + "." + b64("{}") + "."
            expectJOSE(.jose.invalidSignature) { _ = try JWSVerifier(key: key).verify(compact: t) }
            let signed = b64(#"{"alg":"\#(alg)"}"#) + "." + b64("{}") + "." + b64([1, 2, 3])
            expectJOSE(.jose.unsupportedAlgorithm) { _ = try JWSVerifier(key: key).verify(compact: signed) }
        }
        // The separately named API reads it.
        let unsecured = UnsecuredJWS.encode(Array("hi".utf8))
        #expect(try UnsecuredJWS.decode(unsecured).payload == Array("hi".utf8))
        expectJOSE(.jose.invalidSignature) { _ = try JWSVerifier(key: key).verify(compact: unsecured) }
    }

    @Test("no alg switching: a key without alg is bound to its family by type and curve")
    func noAlgorithmSwitching() throws {
        let ec = try #require(Self.ecKey)
        var unpinned = try #require(ec.publicKey)
        unpinned.algorithmName = nil
        // ES384 on a P-256 key is refused even though the key has no alg.
        let p384 = try JWK(ECDSA.PrivateKey(curve: .p384))
        let t = try token(header: #"{"alg":"ES384"}"#, key: p384, alg: .ES384)
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWSVerifier(key: unpinned).verify(compact: t) }
        // An RSA key with alg RS256 refuses PS256 tokens, though both are RSA.
        let rsa = try #require(Self.rsaKey)
        let ps = try token(header: #"{"alg":"PS256"}"#, key: JWK(try #require(Self.rsaPrivate(rsa)), algorithm: .PS256), alg: .PS256)
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWSVerifier(key: try #require(rsa.publicKey)).verify(compact: ps) }
        // A first verified token does not pin anything: the same verifier still refuses the other family.
        let verifier = try JWSVerifier(key: unpinned)
        let good = try token(header: #"{"alg":"ES256"}"#, key: ec, alg: .ES256)
        _ = try verifier.verify(compact: good)
        expectJOSE(.jose.algorithmNotAllowed) { _ = try verifier.verify(compact: t) }
    }

    static func rsaPrivate(_ key: JWK) -> RSA.PrivateKey? {
        guard let pem = try? key.pemRepresentation() else { return nil }
        return try? RSA.PrivateKey(pemRepresentation: pem)
    }

    @Test("an unknown kid is an error, never a fall-back to another key")
    func unknownKeyID() throws {
        let key = try #require(Self.ecKey)
        let t = try token(header: #"{"alg":"ES256","kid":"someone-else"}"#, key: key, alg: .ES256)
        let set = try JWKSet(keys: [try #require(key.publicKey), try JWK(ECDSA.PrivateKey(curve: .p256), keyID: "ec-2")])
        expectJOSE(.jose.unknownKeyID) { _ = try JWSVerifier(keys: set).verify(compact: t) }
        // Without a kid and with two candidate keys, the set does not guess.
        let untagged = try token(header: #"{"alg":"ES256"}"#, key: key, alg: .ES256)
        expectJOSE(.jose.ambiguousKey) { _ = try JWSVerifier(keys: set).verify(compact: untagged) }
        // With the right kid it verifies.
        let tagged = try token(header: #"{"alg":"ES256","kid":"ec-1"}"#, key: key, alg: .ES256)
        #expect(try JWSVerifier(keys: set).verify(compact: tagged).key.keyID == "ec-1")
    }

    @Test("key sets with duplicate kids, or secret keys mixed with public ones, are refused")
    func ambiguousSets() throws {
        let a = try JWK(ECDSA.PrivateKey(curve: .p256), keyID: "same")
        let b = try JWK(ECDSA.PrivateKey(curve: .p256), keyID: "same")
        expectJOSE(.jose.ambiguousKey) { _ = try JWKSet(keys: [a, b]) }
        expectJOSE(.jose.ambiguousKey) { _ = try JWKSet(keys: [try #require(Self.hmacKey), try #require(Self.ecKey)]) }
    }

    @Test("crit: unknown names are refused, registered names may not be listed, b64 must be listed")
    func criticalHeaders() throws {
        let key = try #require(Self.hmacKey)
        let verifier = try JWSVerifier(key: key)
        let unknown = try token(header: #"{"alg":"HS256","crit":["exp"],"exp":1}"#, key: key, alg: .HS256)
        expectJOSE(.jose.unsupportedCritical) { _ = try verifier.verify(compact: unknown) }
        let registered = try token(header: #"{"alg":"HS256","crit":["kid"],"kid":"mac-1"}"#, key: key, alg: .HS256)
        expectJOSE(.jose.invalidHeader) { _ = try verifier.verify(compact: registered) }
        let empty = try token(header: #"{"alg":"HS256","crit":[]}"#, key: key, alg: .HS256)
        expectJOSE(.jose.invalidHeader) { _ = try verifier.verify(compact: empty) }
        let absent = try token(header: #"{"alg":"HS256","crit":["b64"]}"#, key: key, alg: .HS256)
        expectJOSE(.jose.invalidHeader) { _ = try verifier.verify(compact: absent) }
        let b64Only = try token(header: #"{"alg":"HS256","b64":false}"#, key: key, alg: .HS256)
        expectJOSE(.jose.invalidHeader) { _ = try verifier.verify(compact: b64Only) }
        // An application that understands "exp" may accept it.
        var policy = JWSPolicy()
        policy.understoodCriticalHeaders = ["exp"]
        _ = try JWSVerifier(key: key, policy: policy).verify(compact: unknown)
    }

    @Test("base64url must be canonical: no padding, no stray characters, zero unused bits")
    func canonicalBase64URL() throws {
        let key = try #require(Self.hmacKey)
        let verifier = try JWSVerifier(key: key)
        let good = try token(header: #"{"alg":"HS256"}"#, payload: "ab", key: key, alg: .HS256)
        _ = try verifier.verify(compact: good)
        let parts = good.split(separator: ".").map(String.init)
        // Payload "ab" is "YWI"; "YWJ" decodes to the same bytes in a lax decoder.
        #expect(parts[1] == "YWI")
        expectJOSE(.jose.invalidBase64URL) { _ = try verifier.verify(compact: parts[0] + ".YWJ." + parts[2]) }
        expectJOSE(.jose.invalidBase64URL) { _ = try verifier.verify(compact: parts[0] + ".YWI=." + parts[2]) }
        expectJOSE(.jose.invalidBase64URL) { _ = try verifier.verify(compact: parts[0] + ".YW I." + parts[2]) }
        expectJOSE(.jose.invalidBase64URL) { _ = try verifier.verify(compact: parts[0] + "." + parts[1] + "." + parts[2] + "=") }
        let standard = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if standard != parts[2] {
            expectJOSE(.jose.invalidBase64URL) { _ = try verifier.verify(compact: parts[0] + "." + parts[1] + "." + standard) }
        }
    }

    @Test("duplicate member names in the header or the claims are refused")
    func duplicateMembers() throws {
        let key = try #require(Self.hmacKey)
        let header = try token(header: #"{"alg":"HS256","alg":"HS256"}"#, key: key, alg: .HS256)
        expectJOSE(.jose.invalidJSON) { _ = try JWSVerifier(key: key).verify(compact: header) }
        let claims = try token(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"a","exp":4102444800,"sub":"b"}"#, key: key, alg: .HS256)
        expectJOSE(.jose.invalidJSON) { _ = try JWTVerifier(key: key).verify(claims) }
    }

    @Test("size caps are checked before any crypto")
    func sizeCaps() throws {
        let key = try #require(Self.hmacKey)
        var policy = JWSPolicy()
        policy.maximumTokenBytes = 1024
        let verifier = try JWSVerifier(key: key, policy: policy)
        let big = try token(header: #"{"alg":"HS256"}"#, payload: String(repeating: "x", count: 2000), key: key, alg: .HS256)
        expectJOSE(.jose.tooLarge) { _ = try verifier.verify(compact: big) }
        // Even with a garbage signature the error is the size, not the signature.
        expectJOSE(.jose.tooLarge) { _ = try verifier.verify(compact: String(repeating: "a", count: 5000) + ".b.c") }
        let hugeHeader = #"{"alg":"HS256","x":""# + String(repeating: "y", count: 5000) + #""}"#
        expectJOSE(.jose.tooLarge) { _ = try JWSVerifier(key: key).verify(compact: b64(hugeHeader) + ".e30.AAAA") }
        let deep = #"{"alg":"HS256","x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        expectJOSE(.jose.invalidJSON) { _ = try JWSVerifier(key: key).verify(compact: b64(deep) + ".e30.AAAA") }
    }

    @Test("jku, x5u and an embedded jwk are never fetched or trusted")
    func embeddedKeysIgnored() throws {
        let trusted = try #require(Self.ecKey)
        let attacker = try JWK(ECDSA.PrivateKey(curve: .p256), keyID: "ec-1")
        let attackerPublic = try #require(attacker.publicKey).jsonObject(includingPrivate: false)
        let header = #"{"alg":"ES256","kid":"ec-1","jku":"https://attacker.example/jwks","x5u":"https://attacker.example/cert","jwk":"#
            + String(decoding: JSONWriter.encode(.object(attackerPublic)), as: UTF8.self) + "}"
        let t = try token(header: header, key: attacker, alg: .ES256)
        expectJOSE(.jose.invalidSignature) { _ = try JWSVerifier(key: try #require(trusted.publicKey)).verify(compact: t) }
    }

    @Test("ECDSA r and s are range- and length-checked (psychic signatures)")
    func psychicSignatures() throws {
        let key = try #require(Self.ecKey)
        let verifier = try JWSVerifier(key: try #require(key.publicKey))
        let input = b64(#"{"alg":"ES256"}"#) + "." + b64("{}")
        let n = try Hex.decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        for (r, s) in [([UInt8](repeating: 0, count: 32), [UInt8](repeating: 0, count: 32)), (n, n),
                       ([UInt8](repeating: 0, count: 31) + [1], n)] {
            expectJOSE(.jose.invalidSignature) { _ = try verifier.verify(compact: input + "." + b64(r + s)) }
        }
        let good = try token(header: #"{"alg":"ES256"}"#, key: key, alg: .ES256)
        let raw = try Base64URL.decode(String(good.split(separator: ".")[2]))
        // DER instead of r‖s, and r‖s with an extra byte, are refused.
        let der = try ECDSA.Signature(rawRepresentation: raw, curve: .p256).derRepresentation
        expectJOSE(.jose.invalidSignature) { _ = try verifier.verify(compact: input + "." + b64(der)) }
        expectJOSE(.jose.invalidSignature) { _ = try verifier.verify(compact: input + "." + b64(raw + [0])) }
        expectJOSE(.jose.invalidSignature) { _ = try verifier.verify(compact: input + "." + b64([0] + raw)) }
    }

    @Test("compact structure: three segments, nonempty header and signature, no JSON serialization")
    func structure() throws {
        let key = try #require(Self.hmacKey)
        let verifier = try JWSVerifier(key: key)
        let good = try token(header: #"{"alg":"HS256"}"#, key: key, alg: .HS256)
        for bad in ["", "a", "a.b", good + ".", good + ".x", "." + good.split(separator: ".").dropFirst().joined(separator: "."),
                    "{\"payload\":\"e30\"}"] {
            #expect(throws: TokenMintError.self) { _ = try verifier.verify(compact: bad) }
        }
    }

    @Test("use and key_ops are honoured")
    func useAndKeyOperations() throws {
        var key = try #require(Self.ecKey)
        let t = try token(header: #"{"alg":"ES256"}"#, key: key, alg: .ES256)
        key.use = "enc"
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWSVerifier(key: try #require(key.publicKey)).verify(compact: t) }
        key.use = nil
        key.keyOperations = ["sign"]
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWSVerifier(key: try #require(key.publicKey)).verify(compact: t) }
        key.keyOperations = ["sign", "verify"]
        _ = try JWSVerifier(key: try #require(key.publicKey)).verify(compact: t)
    }

    @Test("HMAC keys shorter than the hash and RSA keys under 2048 bits are refused")
    func keySizes() throws {
        expectJOSE(.jose.invalidKey) { _ = try JWK(secret: [UInt8](repeating: 1, count: 31), algorithm: .HS256) }
        expectJOSE(.jose.invalidKey) { _ = try JWK(secret: [UInt8](repeating: 1, count: 47), algorithm: .HS384) }
        let short = try JWK(json: #"{"kty":"oct","k":"\#(b64([UInt8](repeating: 7, count: 31)))"}"#)
        expectJOSE(.jose.algorithmNotAllowed) { try short.admit(.HS256, for: .verify) }
        let long = try JWK(json: #"{"kty":"oct","k":"\#(b64([UInt8](repeating: 7, count: 48)))"}"#)
        try long.admit(.HS384, for: .verify)
        expectJOSE(.jose.algorithmNotAllowed) { try long.admit(.HS512, for: .verify) }
    }
}
