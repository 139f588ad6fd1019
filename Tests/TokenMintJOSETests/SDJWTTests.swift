import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintJOSE

/// SD-JWT (RFC 9901) and SD-JWT VC: issue, present, bind, verify, and what a verifier must refuse.
@Suite("SD-JWT")
struct SDJWTTests {
    let issuerKey: JWK
    let holderKey: JWK
    let verifier: SDJWTVerifier
    let now = Int64(Date().timeIntervalSince1970)

    init() throws {
        issuerKey = try JWK.generate(for: .ES256, keyID: "issuer-1")
        holderKey = try JWK.generate(for: .EdDSA)
        verifier = SDJWTVerifier(issuerKeys: try JWKSet(try #require(issuerKey.publicKey)))
    }

    var claims: JSONObject {
        [
            "iss": "https://issuer.tokenmint.test", "iat": .number(now), "exp": .number(now + 3600), "sub": "user-42",
            "given_name": "Ada", "family_name": "Lovelace", "email": "ada@tokenmint.test",
            "address": ["street_address": "12 Marylebone", "locality": "London", "country": "GB"],
            "nationalities": ["GB", "IT", "FR"],
        ]
    }
    static let pointers = ["/given_name", "/family_name", "/email", "/address", "/address/street_address", "/nationalities/1", "/nationalities/2"]

    @Test("RFC 9901 §5: the example disclosures' digests")
    func specDigests() throws {
        let member = try SDJWTDisclosure(encoded: "WyIyR0xDNDJzS1F2ZUNmR2ZyeU5STjl3IiwgImdpdmVuX25hbWUiLCAiSm9obiJd")
        #expect(member.digest == "jsu9yVulwQQlhFlM_3JlzMaSFzglhQG0DpfayQwLUK4")
        #expect(member.name == "given_name" && member.value == "John" && member.salt == "2GLC42sKQveCfGfryNRN9w")
        let element = try SDJWTDisclosure(encoded: "WyJsa2x4RjVqTVlsR1RQVW92TU5JdkNBIiwgIkZSIl0")
        #expect(element.digest == "w0I8EKcdCtUPkGCNUrfwVp2xEgNjtoIDlOxc9-PlOhs" && element.name == nil && element.value == "FR")
        for bad in [b64(#"["salt"]"#), b64(#"["salt","_sd","x"]"#), b64(#"["salt","...","x"]"#), b64(#"[1,"x"]"#), b64(#"{"a":1}"#)] {
            expectJOSE(.jose.malformed) { _ = try SDJWTDisclosure(encoded: bad) }
        }
    }

    @Test("Issue, present a subset with key binding, verify: disclosed claims in place, the rest absent, decoys ignored")
    func roundTrip() throws {
        let issuer = try SDJWTIssuer(key: issuerKey)
        let full = try issuer.issue(claims, disclosable: Self.pointers, decoys: 5, holderKey: holderKey)
        #expect(full.disclosures.count == 7 && full.serialization.hasSuffix("~"))
        // Nothing disclosable shows in the signed payload; decoys and real digests are sorted together.
        let signed = String(decoding: try Base64URL.decode(String(full.issuerSignedJWT.split(separator: ".")[1]), padding: .none), as: UTF8.self)
        #expect(!signed.contains("Ada") && !signed.contains("Lovelace") && !signed.contains("Marylebone") && signed.contains("user-42"))
        let all = try verifier.verify(full.serialization)
        #expect(all.claims["given_name"] == "Ada" && all.claims["address"]?["street_address"] == "12 Marylebone")
        #expect(all.claims["nationalities"] == ["GB", "IT", "FR"] && all.claims["_sd_alg"] == nil && !all.isKeyBound)

        let presentation = try full.presenting(["/given_name", "/address/street_address", "/nationalities/2"])
            .binding(to: holderKey, audience: "https://verifier.tokenmint.test", nonce: "n-0S6", issuedAt: now)
        #expect(presentation.disclosures.count == 4)  // the address disclosure comes with its street
        let shown = try verifier.verify(presentation.serialization, audience: "https://verifier.tokenmint.test", nonce: "n-0S6")
        #expect(shown.isKeyBound && shown.claims["given_name"] == "Ada" && shown.claims["family_name"] == nil && shown.claims["email"] == nil)
        #expect(shown.claims["address"] == ["locality": "London", "country": "GB", "street_address": "12 Marylebone"])
        #expect(shown.claims["nationalities"] == ["GB", "FR"])
        #expect(shown.holderKey?.thumbprint() == holderKey.thumbprint())
        // Reparsing gives the same serialization.
        #expect(try SDJWT(parsing: presentation.serialization).serialization == presentation.serialization)
        expectJOSE(.jose.invalidClaim) { _ = try full.presenting(["/sub"]) }
    }

    @Test("Refused: an altered, foreign or repeated disclosure; wrong nonce, aud, holder key; sd_hash over other disclosures; another issuer; no KB when required; an old KB; sha-512")
    func refusals() throws {
        let issuer = try SDJWTIssuer(key: issuerKey)
        let full = try issuer.issue(claims, disclosable: Self.pointers, holderKey: holderKey)
        let bound = try full.binding(to: holderKey, audience: "aud-1", nonce: "nonce-1", issuedAt: now)
        let parts = full.serialization.split(separator: "~", omittingEmptySubsequences: false).map(String.init)
        // One character of a disclosure changed.
        var altered = parts
        altered[1] = String(altered[1].dropLast()) + (altered[1].hasSuffix("A") ? "Q" : "A")
        #expect(throws: TokenMintError.self) { _ = try verifier.verify(altered.joined(separator: "~")) }
        // A disclosure from another SD-JWT.
        let other = try issuer.issue(claims, disclosable: ["/email"])
        expectJOSE(.jose.invalidClaim) { _ = try verifier.verify(full.serialization + other.disclosures[0].encoded + "~") }
        // The same disclosure twice.
        expectJOSE(.jose.malformed) { _ = try verifier.verify(full.serialization + parts[1] + "~") }
        // Key binding: nonce, aud, the holder's key, sd_hash.
        expectJOSE(.jose.replayed) { _ = try verifier.verify(bound.serialization, audience: "aud-1", nonce: "nonce-2") }
        expectJOSE(.jose.invalidAudience) { _ = try verifier.verify(bound.serialization, audience: "aud-2", nonce: "nonce-1") }
        let stranger = try full.binding(to: try JWK.generate(for: .EdDSA), audience: "aud-1", nonce: "nonce-1", issuedAt: now)
        expectJOSE(.jose.invalidSignature) { _ = try verifier.verify(stranger.serialization, audience: "aud-1", nonce: "nonce-1") }
        let trimmed = SDJWT(issuerSignedJWT: bound.issuerSignedJWT, disclosures: Array(bound.disclosures.dropFirst()), keyBindingJWT: bound.keyBindingJWT)
        expectJOSE(.jose.invalidClaim) { _ = try verifier.verify(trimmed.serialization, audience: "aud-1", nonce: "nonce-1") }
        let old = try full.binding(to: holderKey, audience: "aud-1", nonce: "nonce-1", issuedAt: now - 3600)
        expectJOSE(.jose.expired) { _ = try verifier.verify(old.serialization, audience: "aud-1", nonce: "nonce-1") }
        // Another issuer's key; a required KB that is absent.
        let forged = try SDJWTIssuer(key: try JWK.generate(for: .ES256, keyID: "issuer-1")).issue(claims, disclosable: ["/email"])
        expectJOSE(.jose.invalidSignature) { _ = try verifier.verify(forged.serialization) }
        expectJOSE(.jose.missingClaim) { _ = try verifier.verify(full.serialization, requireKeyBinding: true) }
        expectJOSE(.jose.missingClaim) { _ = try verifier.verify(full.serialization, nonce: "nonce-1") }
        // An expired issuer JWT.
        var expired = claims
        expired.set("exp", .number(now - 10))
        expectJOSE(.jose.expired) { _ = try verifier.verify(try issuer.issue(expired, disclosable: []).serialization) }
        // _sd_alg other than sha-256; a disclosure that would overwrite a claim; a digest used twice.
        let signer = try JWTSigner(key: issuerKey, type: nil)
        let d = try SDJWTDisclosure(encoded: b64(#"["salt","sub","someone-else"]"#))
        for payload: JSONObject in [
            ["_sd_alg": "sha-512", "_sd": .array([.string(d.digest)])],
            ["sub": "user-42", "_sd": .array([.string(d.digest)])],
            ["_sd": .array([.string(d.digest), .string(d.digest)])],
        ] {
            let jwt = try signer.sign(claimsJSON: JSONWriter.encode(.object(payload)))
            expectJOSE(.jose.invalidClaim, "\(payload)") { _ = try verifier.verify(jwt + "~" + d.encoded + "~") }
        }
        // A key binding JWT is checked only against this verifier's aud and nonce.
        expectJOSE(.jose.invalidConfiguration) { _ = try verifier.verify(bound.serialization) }
        // Time and binding claims are never selectively disclosable, and a disclosure cannot bring them in.
        for name in ["exp", "nbf", "iss", "cnf", "vct", "status"] {
            expectJOSE(.jose.invalidClaim, "\(name)") { _ = try issuer.issue(claims, disclosable: ["/\(name)"]) }
        }
        let sneaked = try SDJWTDisclosure(encoded: b64(#"["salt","exp",99999999999]"#))
        let unsigned = try signer.sign(claimsJSON: JSONWriter.encode(.object(["_sd": .array([.string(sneaked.digest)])])))
        expectJOSE(.jose.invalidClaim) { _ = try verifier.verify(unsigned + "~" + sneaked.encoded + "~") }
        // Disclosures nested 40 deep are refused with a typed error, not a deep recursion.
        var chain: [SDJWTDisclosure] = []
        var inner: JSONValue = "leaf"
        for level in 0..<40 {
            let d = try SDJWTDisclosure(encoded: b64(String(decoding: JSONWriter.encode(.array([.string("s\(level)"), "n", inner])), as: UTF8.self)))
            chain.append(d)
            inner = .object(["_sd": .array([.string(d.digest)])])
        }
        let deep = try signer.sign(claimsJSON: JSONWriter.encode(inner))
        expectJOSE(.jose.tooLarge) { _ = try verifier.verify(deep + "~" + chain.map { $0.encoded + "~" }.joined()) }
        // Reserved names and unknown pointers at issuance.
        expectJOSE(.jose.invalidClaim) { _ = try issuer.issue(["_sd": "x"], disclosable: []) }
        expectJOSE(.jose.invalidClaim) { _ = try issuer.issue(claims, disclosable: ["/nope"]) }
        expectJOSE(.jose.malformed) { _ = try SDJWT(parsing: "abc") }
        expectJOSE(.jose.tooLarge) { _ = try SDJWT(parsing: String(repeating: "~", count: 3000)) }
    }

    @Test("SD-JWT VC: typ dc+sd-jwt and vct are required and checked")
    func verifiableCredential() throws {
        let vcIssuer = try SDJWTIssuer(key: issuerKey, type: SDJWT.verifiableCredentialType)
        var vc = claims
        vc.set("vct", "https://credentials.tokenmint.test/identity")
        let issued = try vcIssuer.issue(vc, disclosable: ["/given_name"], holderKey: holderKey)
        let verified = try verifier.verify(issued.serialization, verifiableCredentialType: "https://credentials.tokenmint.test/identity")
        #expect(verified.header.type == "dc+sd-jwt" && verified.claims["given_name"] == "Ada")
        expectJOSE(.jose.invalidClaim) { _ = try verifier.verify(issued.serialization, verifiableCredentialType: "https://other.test/x") }
        expectJOSE(.jose.invalidClaim) { _ = try vcIssuer.issue(claims, disclosable: []) }
        let plain = try SDJWTIssuer(key: issuerKey).issue(vc, disclosable: [])
        expectJOSE(.jose.invalidType) { _ = try verifier.verify(plain.serialization, verifiableCredentialType: "https://credentials.tokenmint.test/identity") }
    }
}
