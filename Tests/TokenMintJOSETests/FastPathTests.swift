import Testing
import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE

/// The JWT fast paths (issue 20, item 3) against the general code they
/// shortcut: the table base64url decoder against libsodium's constant-time
/// one, the parser's fingerprinted duplicate check, the bit-packed JSON
/// writer past 64 levels, and tokens minted in place against the general
/// JWS signer, byte for byte.
@Suite("JWT fast paths agree with the general code")
struct FastPathTests {
    /// A deterministic byte stream (tests must not depend on luck).
    struct Stream {
        var state: UInt64
        mutating func next() -> UInt8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    @Test("the token-segment codec writes, accepts and refuses exactly what the constant-time codec does")
    func decoderAgrees() throws {
        var stream = Stream(state: 20)
        for length in 0...130 {
            let bytes = (0..<length).map { _ in stream.next() }
            let text = Base64URL.encode(bytes)
            let utf8 = Array(text.utf8)
            // The table encoder for public bytes writes what libsodium's writes.
            let table = [UInt8](unsafeUninitializedCapacity: max(1, Base64URL.encodedCount(length))) { out, count in
                count = bytes.withUnsafeBytes { Base64URL.encodePublic($0, at: UnsafeMutableRawPointer(out.baseAddress!)) }
            }
            #expect(table == utf8, "length \(length)")
            #expect(try utf8.withUnsafeBytes { try Base64URL.decodePublic($0) } == bytes, "length \(length)")
            // Every position replaced by a character outside the alphabet, or by one
            // that changes the trailing bits: both decoders decide alike.
            for position in utf8.indices {
                for replacement in [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "/"), 0x80, 0xFF, 0x00,
                                    UInt8(ascii: "B"), UInt8(ascii: "_")] {
                    var mutated = utf8
                    mutated[position] = replacement
                    let fast = try? mutated.withUnsafeBytes { try Base64URL.decodePublic($0) }
                    let strict = try? Base64URL.decode(String(decoding: mutated, as: UTF8.self))
                    #expect(fast == strict, "length \(length), \(replacement) at \(position)")
                }
            }
            // One character more: a length no encoder writes when it is 1 mod 4.
            let longer = utf8 + [UInt8(ascii: "A")]
            let fast = try? longer.withUnsafeBytes { try Base64URL.decodePublic($0) }
            #expect(fast == (try? Base64URL.decode(String(decoding: longer, as: UTF8.self))), "length \(length) + 1")
        }
    }

    @Test("duplicate member names are found whatever their fingerprints, and distinct names pass")
    func duplicateNames() throws {
        // All two-letter names: many share a length and first/last bytes' fingerprint bin.
        let letters = Array("abcdefghijklmnop".utf8)
        var names: [String] = []
        for a in letters { for b in letters { names.append(String(decoding: [a, b], as: UTF8.self)) } }
        for count in [2, 3, 8, 15, 16, 17, 40] {
            for start in stride(from: 0, to: names.count - count, by: 37) {
                let chosen = Array(names[start..<(start + count)])
                let members = chosen.map { "\"\($0)\":1" }
                let object = try JSONParser.parse(Array("{\(members.joined(separator: ","))}".utf8))
                #expect(object.objectValue?.count == count)
                // The last name repeated, written plainly and with an escape.
                for repeated in [chosen[count / 2], chosen[0], chosen[count - 1]] {
                    let escaped = "\\u00" + String(Array(repeated.utf8)[0], radix: 16) + String(repeated.dropFirst())
                    for spelling in [repeated, escaped] {
                        let text = "{\(members.joined(separator: ",")),\"\(spelling)\":2}"
                        #expect(throws: TokenMintError.self, "\(count) members, \(spelling) again") {
                            try JSONParser.parse(Array(text.utf8))
                        }
                    }
                }
            }
        }
        // Same length, same first and last byte, different middle: not duplicates.
        #expect(try JSONParser.parse(Array(#"{"abc":1,"axc":2,"ayc":3,"a\u0064c":4}"#.utf8)).objectValue?.count == 4)
    }

    @Test("the writer nests past 64 levels and writes every Int64")
    func writerDepthAndIntegers() throws {
        for depth in [1, 63, 64, 65, 100] {
            var writer = JSONWriter()
            for level in 0..<depth {
                if level % 2 == 0 { writer.beginArray(); writer.int(level) } else { writer.beginObject(); writer.key("k") }
            }
            for level in (0..<depth).reversed() {
                if level % 2 == 0 {
                    writer.int(-level)
                    writer.endArray()
                } else {
                    if level == depth - 1 { writer.null() }  // the innermost object's "k"
                    writer.endObject()
                }
            }
            var limits = JSONParser.Limits()
            limits.maximumDepth = 128
            let parsed = try JSONParser.parse(writer.bytes, limits: limits)
            #expect(JSONWriter.encode(parsed) == writer.bytes, "depth \(depth)")
        }
        for value: Int64 in [0, 1, -1, 9, 10, -10, 1_700_000_000, .max, .min, .max - 1, .min + 1] {
            var writer = JSONWriter()
            writer.int(value)
            #expect(writer.bytes == Array(String(value).utf8))
        }
    }

    @Test("a JWT minted in place is the general JWS signer's token, byte for byte")
    func mintedInPlace() throws {
        var claims = JWTClaims(issuer: "https://issuer.example", subject: "s", audience: ["a", "b"], expiration: 2_000_000_000,
                               issuedAt: -5, jwtID: "\u{7}quoted\"\\")
        claims.audienceAsArray = true
        claims.additional.set("nested", ["x": [1, 2, ["y": "ü"]]])
        // Deterministic signatures only: Ed25519 and HMAC go through the stack path, RSA through the array path.
        for alg in [JWSAlgorithm.EdDSA, .Ed25519, .HS256, .HS384, .HS512, .RS256] {
            let key = try JWK.generate(for: alg, keyID: "k1")
            for keyID in [nil, "other"] as [String?] {
                let minted = try JWTSigner(key: key, algorithm: alg, keyID: keyID).sign(claims)
                let general = try JWSSigner(key: key, algorithm: alg).sign(claims.jsonBytes, header: JWSHeaderFields(keyID: keyID, type: "JWT"))
                #expect(minted == general, "\(alg)")
                guard keyID == nil else { continue }
                let verified = try JWTVerifier(key: key, validation: { var v = JWTValidation(); v.audience = "a"; v.clock = { 1_000 }; return v }())
                    .verify(minted)
                #expect(verified.claims == claims)
            }
        }
    }

    @Test("a signature segment that is not canonical base64url is refused as such, on the stack path and the array path")
    func signatureSegments() throws {
        for alg in [JWSAlgorithm.EdDSA, .HS256] {
            let key = try JWK.generate(for: alg)
            var validation = JWTValidation()
            validation.requiredClaims = []
            let verifier = try JWTVerifier(key: key, validation: validation)
            let token = try JWTSigner(key: key).sign(JWTClaims(subject: "x"))
            #expect(throws: Never.self) { try verifier.verify(token) }
            // A last character whose unused bits are set (no canonical segment of
            // these lengths ends in "B"), a bad character on the stack path and on
            // the array path (over 1 KiB), a length no encoder writes; then
            // canonical segments of the wrong length.
            let signatureLength = token.split(separator: ".")[2].utf8.count
            let impossible = (5 - signatureLength % 4) % 4 == 0 ? 4 : (5 - signatureLength % 4) % 4  // to 1 mod 4
            let cases: [(String, TokenMintError.Code)] = [
                (String(token.dropLast()) + "B", .jose.invalidBase64URL),
                (String(token.dropLast()) + "+", .jose.invalidBase64URL),
                (token + String(repeating: "A", count: 2_000) + "+", .jose.invalidBase64URL),
                (token + String(repeating: "A", count: impossible), .jose.invalidBase64URL),
                (token + "AAAA", .jose.invalidSignature),
                (token + String(repeating: "A", count: 2_000), .jose.invalidSignature),
            ]
            for (bad, code) in cases {
                expectJOSE(code, "\(alg), \(bad.utf8.count) bytes") { _ = try verifier.verify(bad) }
            }
        }
    }

    @Test("a JWT's claims parsed straight into their fields follow every rule of the general parse")
    func claimsParsedDirectly() throws {
        let key = try JWK.generate(for: .HS256)
        let signer = try JWTSigner(key: key)
        var validation = JWTValidation()
        validation.requiredClaims = []
        validation.clock = { 1_000 }
        validation.audience = "p"
        let verifier = try JWTVerifier(key: key, validation: validation)
        func verify(_ json: String) throws -> JWTClaims { try verifier.verify(try signer.sign(claimsJSON: Array(json.utf8))).claims }
        // Registered claims, escaped names, order of the rest, nested values.
        let claims = try verify(#"{"a":1,"\u0069ss":"i","sub":"s","x":{"iss":"nested","iss2":[1]},"aud":["p","q"],"e\u0078p":2000,"b":null}"#)
        #expect(claims.issuer == "i")
        #expect(claims.subject == "s")
        #expect(claims.audience == ["p", "q"])
        #expect(claims.audienceAsArray)
        #expect(claims.expiration == 2000)
        #expect(claims.additional.map(\.name) == ["a", "x", "b"])
        #expect(claims == (try JWTClaims(object: try #require(try JSONParser.parse(Array(
            #"{"a":1,"iss":"i","sub":"s","x":{"iss":"nested","iss2":[1]},"aud":["p","q"],"exp":2000,"b":null}"#.utf8)).objectValue))))
        // A registered name repeated, plainly or escaped, is a JSON error; so is any other repeat.
        for json in [#"{"iss":"a","iss":"b"}"#, #"{"iss":"a","\u0069ss":"b"}"#, #"{"\u0065xp":1,"exp":2}"#, #"{"a":1,"sub":"s","a":2}"#] {
            expectJOSE(.jose.invalidJSON, "\(json)") { _ = try verify(json) }
        }
        // An escaped registered name alone is that claim, not an additional member.
        let escaped = try verify(#"{"\u0069ss":"i","\u0073ub":"s","\u0061ud":"p"}"#)
        #expect(escaped.issuer == "i")
        #expect(escaped.subject == "s")
        #expect(escaped.audience == ["p"])
        #expect(escaped.additional.count == 0)
        // A JSON error comes before a claim's type error; a type error alone is a claim error.
        expectJOSE(.jose.invalidJSON) { _ = try verify(#"{"iss":5,"a":1,"a":2}"#) }
        expectJOSE(.jose.invalidClaim) { _ = try verify(#"{"iss":5}"#) }
        expectJOSE(.jose.invalidClaim) { _ = try verify(#"{"aud":[1]}"#) }
        expectJOSE(.jose.invalidClaim) { _ = try verify(#"[1]"#) }
        // The member limit counts registered claims too.
        var limited = JWSPolicy()
        limited.claimsLimits.maximumMembers = 2
        var noAudience = validation
        noAudience.audience = nil
        let strict = try JWTVerifier(key: key, validation: noAudience, policy: limited)
        #expect(throws: Never.self) { try strict.verify(try signer.sign(claimsJSON: Array(#"{"iss":"i","a":1}"#.utf8))) }
        expectJOSE(.jose.invalidJSON) { _ = try strict.verify(try signer.sign(claimsJSON: Array(#"{"iss":"i","sub":"s","exp":9}"#.utf8))) }
    }

    @Test("claims read from a shared object leave the object as it was")
    func claimsFromSharedObject() throws {
        let object = try #require(try JSONParser.parse(Array(#"{"a":1,"iss":"i","b":[2],"exp":7,"c":null}"#.utf8)).objectValue)
        let claims = try JWTClaims(object: object)
        #expect(object.map(\.name) == ["a", "iss", "b", "exp", "c"])
        #expect(claims.additional.map(\.name) == ["a", "b", "c"])
        #expect(claims.issuer == "i")
        #expect(claims.expiration == 7)
        // Registered claims before and after the 64th member; the rest keep their order.
        var names = (0..<70).map { "c\($0)" }
        names[3] = "exp"
        names[66] = "iss"
        names[69] = "aud"
        let text = "{" + names.map { "\"\($0)\":\($0 == "exp" ? "9" : "\"v\"")" }.joined(separator: ",") + "}"
        let many = try JWTClaims(object: try #require(try JSONParser.parse(Array(text.utf8)).objectValue))
        #expect(many.additional.map(\.name) == names.filter { !["exp", "iss", "aud"].contains($0) })
        #expect(many.expiration == 9)
        #expect(many.issuer == "v")
        #expect(many.audience == ["v"])
    }
}
