import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintJOSE
import TokenMintMLDSA

@Suite("JWT claims and validation")
struct JWTTests {
    static let now: Int64 = 1_763_776_800

    static func validation(_ edit: (inout JWTValidation) -> Void = { _ in }) -> JWTValidation {
        var v = JWTValidation()
        v.clock = { JWTTests.now }
        v.issuer = "https://issuer.example"
        v.audience = "cash-desk"
        edit(&v)
        return v
    }

    static func claims(_ edit: (inout JWTClaims) -> Void = { _ in }) -> JWTClaims {
        var c = JWTClaims(issuer: "https://issuer.example", subject: "device-42", audience: ["cash-desk"],
                          expiration: now + 600, issuedAt: now, jwtID: "j1", authorizedParty: "pos-app")
        c.additional.set("scope", "pay refund")
        edit(&c)
        return c
    }

    @Test(arguments: JWSAlgorithm.allCases.filter { $0.mlDSAParameterSet == nil || MLDSA.isAvailable })
    func mintAndVerifyEveryAlgorithm(alg: JWSAlgorithm) throws {
        let key = try JWK.generate(for: alg, keyID: "k-\(alg)")
        let token = try JWTSigner(key: key).sign(Self.claims())
        let verified = try JWTVerifier(keys: JWKSet(keys: [key]), validation: Self.validation()).verify(token)
        #expect(verified.claims == Self.claims())
        #expect(verified.header.algorithm == alg)
        #expect(verified.header.type == "JWT")
        #expect(verified.header.keyID == "k-\(alg)")
        #expect(verified.claims.additional["scope"] == "pay refund")
        // Tampering with any part fails.
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = b64(String(decoding: Self.claims { $0.subject = "device-43" }.jsonBytes, as: UTF8.self))
        expectJOSE(.jose.invalidSignature) { _ = try JWTVerifier(key: key, validation: Self.validation()).verify(parts.joined(separator: ".")) }
    }

    @Test("claims JSON: registered first, compact, typed on the way back")
    func claimsEncoding() throws {
        let c = Self.claims()
        #expect(String(decoding: c.jsonBytes, as: UTF8.self)
            == #"{"iss":"https://issuer.example","sub":"device-42","aud":"cash-desk","exp":1763777400,"iat":1763776800,"jti":"j1","azp":"pos-app","scope":"pay refund"}"#)
        var many = c
        many.audience = ["a", "b"]
        #expect(String(decoding: many.jsonBytes, as: UTF8.self).contains(#""aud":["a","b"]"#))
        let parsed = try JWTClaims(object: try #require(try JSONParser.parse(many.jsonBytes).objectValue))
        #expect(parsed.audience == ["a", "b"])
        expectJOSE(.jose.invalidClaim) { _ = try JWTClaims(object: try #require(try JSONParser.parse(Array(#"{"exp":"soon"}"#.utf8)).objectValue)) }
        expectJOSE(.jose.invalidClaim) { _ = try JWTClaims(object: try #require(try JSONParser.parse(Array(#"{"aud":[1]}"#.utf8)).objectValue)) }
        expectJOSE(.jose.invalidClaim) { _ = try JWTClaims(object: try #require(try JSONParser.parse(Array(#"{"iss":5}"#.utf8)).objectValue)) }
        // NumericDate may carry a fraction.
        let fractional = try JWTClaims(object: try #require(try JSONParser.parse(Array(#"{"exp":1763777400.75}"#.utf8)).objectValue))
        #expect(fractional.expiration == 1_763_777_400)
    }

    @Test("exp, nbf and iat with an injected clock and a leeway")
    func timeClaims() throws {
        let key = try JWK.generate(for: .HS256)
        let signer = try JWTSigner(key: key)
        func verify(_ claims: JWTClaims, leeway: Int64 = 0, at time: Int64 = JWTTests.now) throws {
            _ = try JWTVerifier(key: key, validation: Self.validation { $0.leeway = leeway; $0.clock = { time } }).verify(signer.sign(claims))
        }
        try verify(Self.claims())
        expectJOSE(.jose.expired) { try verify(Self.claims(), at: Self.now + 600) }
        try verify(Self.claims(), leeway: 30, at: Self.now + 620)
        expectJOSE(.jose.expired) { try verify(Self.claims(), leeway: 30, at: Self.now + 630) }
        expectJOSE(.jose.notYetValid) { try verify(Self.claims { $0.notBefore = Self.now + 60 }) }
        try verify(Self.claims { $0.notBefore = Self.now + 60 }, leeway: 60)
        expectJOSE(.jose.issuedInFuture) { try verify(Self.claims { $0.issuedAt = Self.now + 120 }, leeway: 60) }
        expectJOSE(.jose.missingClaim) { try verify(Self.claims { $0.expiration = nil }) }
        // maximumAge
        expectJOSE(.jose.expired) {
            _ = try JWTVerifier(key: key, validation: Self.validation { $0.maximumAge = 60; $0.clock = { Self.now + 120 } })
                .verify(signer.sign(Self.claims()))
        }
    }

    @Test("iss, aud, azp and typ are checked; a token naming audiences needs a configured audience")
    func identityClaims() throws {
        let key = try JWK.generate(for: .EdDSA)
        let signer = try JWTSigner(key: key)
        func verify(_ claims: JWTClaims = JWTTests.claims(), _ edit: (inout JWTValidation) -> Void = { _ in }) throws {
            _ = try JWTVerifier(key: key, validation: Self.validation(edit)).verify(signer.sign(claims))
        }
        try verify()
        expectJOSE(.jose.invalidIssuer) { try verify { $0.issuer = "https://other.example" } }
        expectJOSE(.jose.invalidIssuer) { try verify(Self.claims { $0.issuer = nil }) }
        expectJOSE(.jose.invalidAudience) { try verify { $0.audience = "back-office" } }
        expectJOSE(.jose.invalidAudience) { try verify { $0.audience = nil } }
        expectJOSE(.jose.invalidAudience) { try verify(Self.claims { $0.audience = nil }) }
        try verify(Self.claims { $0.audience = ["back-office", "cash-desk"] })
        try verify { $0.authorizedParty = "pos-app" }
        expectJOSE(.jose.invalidAuthorizedParty) { try verify { $0.authorizedParty = "other-app" } }
        try verify { $0.type = "application/JWT" }
        expectJOSE(.jose.invalidType) { try verify { $0.type = "at+jwt" } }
        expectJOSE(.jose.missingClaim) { try verify { $0.requiredClaims = ["exp", "nbf"] } }
    }

    @Test("RFC 9068 access tokens")
    func accessTokens() throws {
        let key = try JWK.generate(for: .ES256, keyID: "as-1")
        let claims = JWTClaims.accessToken(
            issuer: "https://as.example", subject: "merchant-7", audience: ["https://api.example"], clientID: "pos-app",
            scopes: ["payments:write", "refunds"], lifetime: 300, now: Self.now)
        #expect(claims.scopes == ["payments:write", "refunds"])
        let token = try JWTSigner(key: key, type: "at+jwt").sign(claims)
        var validation = JWTValidation.accessToken(issuer: "https://as.example", audience: "https://api.example")
        validation.clock = { Self.now + 10 }
        let verified = try JWTVerifier(key: key, validation: validation).verify(token)
        #expect(verified.claims.clientID == "pos-app")
        #expect(verified.header.type == "at+jwt")
        // A plain JWT is not an access token.
        let plain = try JWTSigner(key: key).sign(claims)
        expectJOSE(.jose.invalidType) { _ = try JWTVerifier(key: key, validation: validation).verify(plain) }
        var noClient = claims
        noClient.additional.remove("client_id")
        expectJOSE(.jose.missingClaim) { _ = try JWTVerifier(key: key, validation: validation).verify(JWTSigner(key: key, type: "at+jwt").sign(noClient)) }
    }

    @Test("decode without verification is available and clearly separate")
    func unverifiedDecode() throws {
        let key = try JWK.generate(for: .HS256)
        let token = try JWTSigner(key: key).sign(Self.claims())
        let (header, claims) = try UnverifiedJWT.decode(token)
        #expect(header["alg"] == "HS256")
        #expect(claims["sub"] == "device-42")
    }

    @Test("JWK: thumbprints, PEM round trips, public halves, generated kid")
    func jwkBasics() throws {
        for alg in JWSAlgorithm.allCases where alg.mlDSAParameterSet == nil || MLDSA.isAvailable {
            let key = try JWK.generate(for: alg)
            let parsed = try JWK(json: key.json)
            #expect(parsed.thumbprint() == key.thumbprint())
            #expect(parsed.isPrivate)
            if alg.keyType != .oct {
                if alg.keyType == .akp {
                    #expect(throws: TokenMintError.self) { _ = try key.pemRepresentation() }  // no PEM form for ML-DSA here
                } else {
                    let pem = try key.pemRepresentation()
                    #expect(try JWK(pem: pem, algorithm: alg).thumbprint() == key.thumbprint())
                }
                let pub = try #require(key.publicKey)
                #expect(!pub.isPrivate)
                #expect(pub.thumbprint() == key.thumbprint())
                #expect(!pub.json.contains("\"d\"") && !pub.json.contains("\"priv\""))
            } else {
                #expect(key.publicKey == nil)
            }
            #expect(!key.description.contains(key.thumbprint()))
        }
    }

    @Test("JWKS JSON round trip and selection by kid")
    func keySets() throws {
        let a = try JWK.generate(for: .ES256, keyID: "a")
        let b = try JWK.generate(for: .EdDSA, keyID: "b")
        let set = try JWKSet(keys: [a, b])
        let parsed = try JWKSet(json: set.json)
        #expect(parsed.keys.map(\.keyID) == ["a", "b"])
        #expect(!set.json.contains("\"d\""))
        let token = try JWTSigner(key: b).sign(Self.claims())
        #expect(try JWTVerifier(keys: parsed, validation: Self.validation()).verify(token).key.keyID == "b")
        // Unknown kty members are skipped; malformed known ones are errors.
        _ = try JWKSet(json: #"{"keys":[{"kty":"XYZ","foo":1}]}"#)
        expectJOSE(.jose.invalidKey) { _ = try JWKSet(json: #"{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}"#) }
    }
}

@Suite("JWT key ring")
struct JWTKeyRingTests {
    @Test("rotation keeps old tokens verifying until their key is retired; kids are unique; the signing key cannot be retired")
    func rotateAndRetire() throws {
        let ring = try JWTKeyRing(signingKey: try JWK.generate(for: .EdDSA), validation: JWTTests.validation())
        let first = try #require(ring.signingKey.keyID)
        #expect(first == ring.signingKey.thumbprint(), "a key without kid gets its thumbprint")
        let old = try ring.sign(JWTTests.claims())
        try ring.rotate(to: try JWK.generate(for: .ES256, keyID: "second"))
        let new = try ring.sign(JWTTests.claims())
        #expect(try UnverifiedJWT.decode(new).header["kid"]?.stringValue == "second")
        #expect(ring.verificationKeys.keys.compactMap(\.keyID) == ["second", first])
        #expect(ring.verificationKeys.keys.allSatisfy { !$0.isPrivate }, "the published set holds public halves only")
        _ = try ring.verify(old)
        _ = try ring.verify(new)
        expectJOSE(.jose.ambiguousKey) { try ring.rotate(to: try JWK.generate(for: .EdDSA, keyID: first)) }
        #expect(throws: TokenMintError.self) { try ring.retire(keyID: "second") }
        #expect(try ring.retire(keyID: first))
        #expect(try !ring.retire(keyID: first))
        #expect(throws: TokenMintError.self) { _ = try ring.verify(old) }
        _ = try ring.verify(new)
        #expect(throws: TokenMintError.self) { try ring.rotate(to: try JWK.generate(for: .ES256).publicKey!) }
    }
}
