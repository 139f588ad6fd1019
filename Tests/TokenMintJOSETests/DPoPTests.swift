import Foundation
import Testing
import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE

/// RFC 9449 proofs: minted, checked, and refused for each rule of §4.3.
@Suite("DPoP proofs")
struct DPoPTests {
    /// A replay ledger in memory: each identifier once.
    actor Ledger {
        var seen: Set<[UInt8]> = []
        func record(_ id: [UInt8], _ expires: Int64) -> Bool { seen.insert(id).inserted }
    }

    static let url = "https://api.example.com/v1/pay"

    static func expect(_ code: TokenMintError.Code, _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await body()
            Issue.record("expected \(code)", sourceLocation: sourceLocation)
        } catch let error as TokenMintError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch { Issue.record("\(error)", sourceLocation: sourceLocation) }
    }

    @Test("htu is compared after RFC 3986 §6.2.2 normalization: case, default port, percent-encoding, dot segments")
    func htuNormalization() throws {
        let same = [
            "https://API.Example.com:443/v1/./x/../pay", "https://api.example.com/v1/pay?amount=5#top", "HTTPS://api.example.com/v1/%70ay",
            "https://api.example.com/v1/pay",
        ]
        for url in same { #expect(try DPoP.normalizedURL(url) == "https://api.example.com/v1/pay", "\(url)") }
        #expect(try DPoP.normalizedURL("https://api.example.com/a/%7euser/%2f") == "https://api.example.com/a/~user/%2F")
        #expect(try DPoP.normalizedURL("https://api.example.com/..") == "https://api.example.com/")
        #expect(try DPoP.normalizedURL("https://api.example.com/a/b/..") == "https://api.example.com/a/")
        #expect(try DPoP.normalizedURL("https://api.example.com") == "https://api.example.com/")
        #expect(try DPoP.normalizedURL("https://api.example.com/v1/pay") != DPoP.normalizedURL("https://api.example.com/v1/Pay"))
        expectJOSE(.jose.invalidClaim) { _ = try DPoP.normalizedURL("ftp://api.example.com/") }
    }

    @Test("minted and verified with ES256, EdDSA and ES256K; bound to the key's thumbprint; a jti used twice is refused",
          arguments: [JWSAlgorithm.ES256, .EdDSA, .ES256K])
    func roundTrip(algorithm: JWSAlgorithm) async throws {
        let key = try JWK.generate(for: algorithm, keyID: "client-key")
        let ledger = Ledger()
        let token = "an-access-token"
        let proof = try DPoP.proof(key: key, method: "POST", url: Self.url + "?amount=5#x", accessToken: token, nonce: "n-1")
        let (header, claims) = try UnverifiedJWT.decode(proof)
        #expect(header["typ"]?.stringValue == "dpop+jwt" && header["kid"] == nil && header["jwk"]?.objectValue?["d"] == nil)
        #expect(claims["htu"]?.stringValue == Self.url && claims["htm"]?.stringValue == "POST" && claims["ath"]?.stringValue == DPoP.accessTokenHash(token))
        let verifier = DPoPVerifier()
        let verified = try await verifier.verify(proof, method: "POST", url: "HTTPS://API.example.com:443/v1/pay", accessToken: token,
                                                 boundThumbprint: key.thumbprint(), nonce: "n-1", replay: { id, exp in await ledger.record(id, exp) })
        #expect(verified.thumbprint == key.thumbprint())
        await Self.expect(.jose.replayed) {
            _ = try await verifier.verify(proof, method: "POST", url: Self.url, accessToken: token, replay: { id, exp in await ledger.record(id, exp) })
        }
    }

    @Test("refused: method, URL, ath, cnf.jkt, nonce, iat, typ, HMAC, a private jwk, a jwk that did not sign")
    func refusals() async throws {
        let key = try JWK.generate(for: .ES256)
        let ledger = Ledger()
        let replay: @Sendable ([UInt8], Int64) async throws(TokenMintError) -> Bool = { id, exp in await ledger.record(id, exp) }
        let verifier = DPoPVerifier()
        func proof(_ method: String = "GET", url: String = Self.url, token: String? = "t", nonce: String? = nil, iat: Int64? = nil) throws -> String {
            try DPoP.proof(key: key, method: method, url: url, accessToken: token, nonce: nonce, issuedAt: iat)
        }
        await Self.expect(.jose.invalidClaim) { _ = try await verifier.verify(try proof("POST"), method: "GET", url: Self.url, accessToken: "t", replay: replay) }
        await Self.expect(.jose.invalidClaim) {
            _ = try await verifier.verify(try proof(url: "https://api.example.com/v1/other"), method: "GET", url: Self.url, accessToken: "t", replay: replay)
        }
        await Self.expect(.jose.invalidClaim) { _ = try await verifier.verify(try proof(token: "other"), method: "GET", url: Self.url, accessToken: "t", replay: replay) }
        await Self.expect(.jose.invalidClaim) { _ = try await verifier.verify(try proof(token: nil), method: "GET", url: Self.url, accessToken: "t", replay: replay) }
        await Self.expect(.jose.invalidClaim) {
            _ = try await verifier.verify(try proof(), method: "GET", url: Self.url, accessToken: "t", boundThumbprint: try JWK.generate(for: .ES256).thumbprint(),
                                          replay: replay)
        }
        await Self.expect(.jose.useDPoPNonce) { _ = try await verifier.verify(try proof(nonce: "old"), method: "GET", url: Self.url, nonce: "new", replay: replay) }
        await Self.expect(.jose.useDPoPNonce) { _ = try await verifier.verify(try proof(), method: "GET", url: Self.url, nonce: "new", replay: replay) }
        // Another scheme, host or port is another URL.
        for other in ["http://api.example.com/v1/pay", "https://api2.example.com/v1/pay", "https://api.example.com:8443/v1/pay"] {
            await Self.expect(.jose.invalidClaim) { _ = try await verifier.verify(try proof(url: other), method: "GET", url: Self.url, replay: replay) }
        }
        let now = Int64(Date().timeIntervalSince1970)
        await Self.expect(.jose.expired) { _ = try await verifier.verify(try proof(iat: now - 600), method: "GET", url: Self.url, replay: replay) }
        await Self.expect(.jose.issuedInFuture) { _ = try await verifier.verify(try proof(iat: now + 600), method: "GET", url: Self.url, replay: replay) }
        // Not a DPoP proof: a plain JWT, an HMAC proof, a jwk with its private part, a jwk that did not sign.
        let jwt = try JWSSigner(key: key).sign(Array("{}".utf8), header: JWSHeaderFields(type: "JWT"))
        await Self.expect(.jose.invalidType) { _ = try await verifier.verify(jwt, method: "GET", url: Self.url, replay: replay) }
        await Self.expect(.jose.invalidKey) { _ = try DPoP.proof(key: try JWK.generate(for: .HS256), method: "GET", url: Self.url) }
        var privateHeader = JWSHeaderFields(type: DPoP.type)
        privateHeader.additional.set("jwk", .object(key.jsonObject(includingPrivate: true)))
        let claims = "{\"jti\":\"a\",\"htm\":\"GET\",\"htu\":\"\(Self.url)\",\"iat\":\(now)}"
        let leaky = try JWSSigner(key: key).sign(Array(claims.utf8), header: privateHeader)
        await Self.expect(.jose.invalidClaim) { _ = try await verifier.verify(leaky, method: "GET", url: Self.url, replay: replay) }
        var swapped = JWSHeaderFields(type: DPoP.type)
        swapped.additional.set("jwk", .object(try #require(try JWK.generate(for: .ES256).publicKey).jsonObject(includingPrivate: false)))
        let forged = try JWSSigner(key: key).sign(Array(claims.utf8), header: swapped)
        await Self.expect(.jose.invalidSignature) { _ = try await verifier.verify(forged, method: "GET", url: Self.url, replay: replay) }
        // alg none and an HMAC proof with an oct jwk; a proof over the size cap; missing claims.
        let hs = try JWK.generate(for: .HS256)
        var octHeader = JWSHeaderFields(type: DPoP.type)
        octHeader.additional.set("jwk", .object(hs.jsonObject(includingPrivate: false)))
        await Self.expect(.jose.algorithmNotAllowed) {
            _ = try await verifier.verify(try JWSSigner(key: hs).sign(Array(claims.utf8), header: octHeader), method: "GET", url: Self.url, replay: replay)
        }
        let none = Base64URL.encode(Array("{\"alg\":\"none\",\"typ\":\"dpop+jwt\"}".utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "."
        await Self.expect(.jose.algorithmNotAllowed) { _ = try await verifier.verify(none, method: "GET", url: Self.url, replay: replay) }
        var small = DPoPVerifier()
        small.maximumBytes = 100
        await Self.expect(.jose.tooLarge) { _ = try await small.verify(try proof(), method: "GET", url: Self.url, accessToken: "t", replay: replay) }
        var bad = DPoPVerifier()
        bad.maximumAge = .min
        await Self.expect(.jose.invalidConfiguration) { _ = try await bad.verify(try proof(), method: "GET", url: Self.url, accessToken: "t", replay: replay) }
        for missing in ["jti", "htm", "htu", "iat"] {
            var object = try #require(JSONParser.parse(Array(claims.utf8)).objectValue)
            object = JSONObject(object.members.filter { $0.name != missing }.map { ($0.name, $0.value) })
            var header = JWSHeaderFields(type: DPoP.type)
            header.additional.set("jwk", .object(try #require(key.publicKey).jsonObject(includingPrivate: false)))
            let token = try JWSSigner(key: key).sign(JSONWriter.encode(.object(object)), header: header)
            await Self.expect(.jose.invalidClaim) { _ = try await verifier.verify(token, method: "GET", url: Self.url, replay: replay) }
        }
        #expect(await ledger.seen.isEmpty, "no refused proof reached the ledger")
    }
}
