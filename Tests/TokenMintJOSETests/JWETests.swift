import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
@testable import TokenMintJOSE
import TokenMintVectors

/// JWE (RFC 7516/7518): RFC 7520 §5 examples byte for byte, Wycheproof's JWE
/// files, round trips for every algorithm, and the attacks a decrypter must refuse.
@Suite("JWE")
struct JWETests {
    static let cookbook = [
        "5_2.key_encryption_using_rsa-oaep_with_aes-gcm.json",
        "5_4.key_agreement_with_key_wrapping_using_ecdh-es_and_aes-keywrap_with_aes-gcm.json",
        "5_5.key_agreement_using_ecdh-es_with_aes-cbc-hmac-sha2.json",
        "5_6.direct_encryption_using_aes-gcm.json",
        "5_7.key_wrap_using_aes-gcm_keywrap_with_aes-cbc-hmac-sha2.json",
        "5_8.key_wrap_using_aes-keywrap_with_aes-gcm.json",
        "5_10.including_additional_authentication_data.json",
        "5_11.protecting_specific_header_fields.json",
    ]

    func bytes(_ text: String) throws -> [UInt8] { try Base64URL.decode(text, padding: .none) }
    func text(_ value: JSONValue?) throws -> String {
        let value = try #require(value)
        return value.stringValue ?? String(decoding: JSONWriter.encode(value), as: UTF8.self)
    }

    @Test("RFC 7520 §5: every serialization decrypts, and the content, the wrapped key and the compact form are reproduced byte for byte")
    func cookbookExamples() throws {
        for file in Self.cookbook {
            guard let url = Paths.vector("jose-cookbook/jwe/" + file) else { continue }
            let root = try Paths.json(url)
            let input = try root.object("input")
            let key = try JWK(object: try input.object("key"))
            let plaintext = Array(try input.string("plaintext").utf8)
            let output = try root.object("output")
            for name in ["compact", "json", "json_flat"] where output[name] != nil {
                let opened = try JWE(parsing: try text(output[name])).decrypt(using: key)
                #expect(opened.plaintext.unsafeCopy == plaintext, "\(file) \(name)")
            }
            // Reproduce: the content under the listed CEK and IV, the wrapped key, the compact form.
            let generated = try root.object("generated")
            let encryptingKey = root["encrypting_key"]?.objectValue ?? JSONObject()
            let content = try root.object("encrypting_content")
            let alg = try #require(JWEAlgorithm(name: try input.string("alg")))
            let enc = try #require(JWEEncryption(name: try input.string("enc")))
            let protectedSegment = try content.string("protected_b64u")
            let header = try JWE(parsing: try text(output["json_flat"])).header(for: try JWE(parsing: try text(output["json_flat"])).recipients[0])
            let cek: SecureBytes
            switch alg {
            case .dir: cek = SecureBytes(try bytes(try input.object("key").string("k")))
            case .ECDH_ES:
                cek = try JWEKeyManagement.agree(using: key, algorithm: alg, encryption: enc, header: header)
                #expect(cek.unsafeCopy == (try bytes(try encryptingKey.string("cek"))), "\(file): Concat KDF output")
            default: cek = SecureBytes(try bytes(try generated.string("cek")))
            }
            var aad = Array(protectedSegment.utf8)
            if let extra = generated["aad_b64u"]?.stringValue { aad += Array(".\(extra)".utf8) }
            let sealed = enc.isGCM
                ? try AES.GCM.seal(plaintext, key: cek, nonce: try bytes(try generated.string("iv")), authenticating: aad)
                : try AES.CBCHMAC.seal(plaintext, key: cek, iv: try bytes(try generated.string("iv")), authenticating: aad)
            #expect(b64(sealed.ciphertext) == (try content.string("ciphertext")), "\(file): ciphertext")
            #expect(b64(sealed.tag) == (try content.string("tag")), "\(file): tag")
            var encryptedKey: [UInt8] = []
            switch alg {
            case .A128KW, .A192KW, .A256KW:
                encryptedKey = try AES.KeyWrap.wrap(cek, using: SecureBytes(try bytes(try input.object("key").string("k"))))
            case .A128GCMKW, .A192GCMKW, .A256GCMKW:
                let wrapped = try AES.GCM.seal(cek.unsafeCopy, key: SecureBytes(try bytes(try input.object("key").string("k"))),
                                               nonce: try bytes(try encryptingKey.string("iv")), authenticating: [UInt8]())
                encryptedKey = wrapped.ciphertext
                #expect(b64(wrapped.tag) == (try encryptingKey.string("tag")), "\(file): key wrap tag")
            case .ECDH_ES_A128KW, .ECDH_ES_A192KW, .ECDH_ES_A256KW:
                let kek = try JWEKeyManagement.agree(using: key, algorithm: alg, encryption: enc, header: header)
                encryptedKey = try AES.KeyWrap.wrap(cek, using: kek)
            case .RSA_OAEP, .RSA_OAEP_256:
                // OAEP is randomized: the listed encrypted key must decrypt to the listed CEK.
                encryptedKey = try bytes(try encryptingKey.string("encrypted_key"))
                guard case .rsaPrivate(let rsa) = key.material else { Issue.record("\(file): not an RSA key"); continue }
                #expect(try rsa.decrypt(encryptedKey, oaepHash: alg == .RSA_OAEP ? .sha1 : .sha256) == cek, "\(file): OAEP")
            default: break
            }
            if let listed = encryptingKey["encrypted_key"]?.stringValue { #expect(b64(encryptedKey) == listed, "\(file): encrypted key") }
            if let compact = output["compact"]?.stringValue {
                let rebuilt = [protectedSegment, b64(encryptedKey), try generated.string("iv"), b64(sealed.ciphertext), b64(sealed.tag)].joined(separator: ".")
                #expect(rebuilt == compact, "\(file): compact form")
            }
        }
    }

    @Test("RFC 7520 §5.9 (zip) and §5.12 (nothing protected) are refused, with the reason")
    func cookbookRefusals() throws {
        if let url = Paths.vector("jose-cookbook/jwe/5_9.compressed_content.json") {
            let root = try Paths.json(url)
            let key = try JWK(object: try root.object("input").object("key"))
            expectJOSE(.jose.unsupportedAlgorithm) { _ = try JWE(parsing: try root.object("output").string("compact")).decrypt(using: key) }
        }
        if let url = Paths.vector("jose-cookbook/jwe/5_12.protecting_content_only.json") {
            let root = try Paths.json(url)
            expectJOSE(.jose.invalidHeader) { _ = try JWE(parsing: try text(root.object("output")["json"])) }
        }
    }

    @Test("RFC 7518 Appendix C: the ECDH-ES Concat KDF example")
    func appendixC() throws {
        let bob = try JWK(json: #"{"kty":"EC","crv":"P-256","x":"weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ","y":"e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck","d":"VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw"}"#)
        let header: JSONObject = [
            "alg": "ECDH-ES", "enc": "A128GCM", "apu": "QWxpY2U", "apv": "Qm9i",
            "epk": ["kty": "EC", "crv": "P-256", "x": "gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0", "y": "SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps"],
        ]
        let derived = try JWEKeyManagement.agree(using: bob, algorithm: .ECDH_ES, encryption: .A128GCM, header: header)
        #expect(b64(derived.unsafeCopy) == "VqqN6vgjbSBcIijNcacQGg")
    }

    @Test("Wycheproof json_web_encryption_test.json: every case as marked except RSA1_5 and zip, refused on purpose")
    func wycheproofEncryption() throws {
        guard let url = Paths.vector("wycheproof/json_web_encryption_test.json") else { return }
        let report = try VectorRunner.run(path: url.path)
        #expect(report.failed == 0, "\(report.summary)\n\(report.failures.joined(separator: "\n"))")
        #expect(report.passed == 139)
        let ids = Set(report.exceptions.compactMap { Int($0.split(separator: ":")[0].dropFirst(5)) })
        #expect(ids == [22, 100, 101, 102, 103, 104, 105, 112, 128, 135], "\(report.exceptions)")
    }

    @Test("Wycheproof json_web_crypto_test.json: every JWS and JWE case as marked")
    func wycheproofCrypto() throws {
        guard let url = Paths.vector("wycheproof/json_web_crypto_test.json") else { return }
        let report = try VectorRunner.run(path: url.path)
        #expect(report.failed == 0, "\(report.summary)\n\(report.failures.joined(separator: "\n"))")
        #expect(report.passed == 83)
        #expect(report.exceptions.count == 1 && report.exceptions[0].hasPrefix("tcId 66:"), "\(report.exceptions)")
    }

    static func keys() throws -> [(JWK, JWEAlgorithm)] {
        let rsa = JWK(try RSA.PrivateKey(bits: 2048), algorithm: nil)
        var out: [(JWK, JWEAlgorithm)] = [(rsa, .RSA_OAEP), (rsa, .RSA_OAEP_256)]
        for curve in [ECDSA.Curve.p256, .p384, .p521] {
            let ec = try JWK(try ECDSA.PrivateKey(curve: curve))
            var unbound = ec
            unbound.algorithmName = nil
            for alg in [JWEAlgorithm.ECDH_ES, .ECDH_ES_A128KW, .ECDH_ES_A192KW, .ECDH_ES_A256KW] { out.append((unbound, alg)) }
        }
        let x = JWK(try X25519.PrivateKey())
        for alg in [JWEAlgorithm.ECDH_ES, .ECDH_ES_A128KW, .ECDH_ES_A256KW] { out.append((x, alg)) }
        for (alg, count) in [(JWEAlgorithm.A128KW, 16), (.A192KW, 24), (.A256KW, 32), (.A128GCMKW, 16), (.A192GCMKW, 24), (.A256GCMKW, 32)] {
            out.append((try JWK(object: ["kty": "oct", "k": .string(b64(SecureRandom.bytes(count: count)))]), alg))
        }
        return out
    }

    @Test("Every algorithm with every content encryption: compact, flattened and general round trips; a public key encrypts, only the private one decrypts")
    func roundTrips() throws {
        let message = Array("Ünïcödé and \u{0}binary\u{1}".utf8)
        for (key, alg) in try Self.keys() {
            for enc in JWEEncryption.allCases {
                let sendTo = key.keyType == .oct ? key : try #require(key.publicKey)
                let jwe = try JWE.encrypt(message, key: sendTo, algorithm: alg, encryption: enc, header: ["cty": "text/plain"])
                for text in [try jwe.compactSerialization, try jwe.flattenedJSON, jwe.generalJSON] {
                    let opened = try JWE(parsing: text).decrypt(using: key)
                    #expect(opened.plaintext.unsafeCopy == message, "\(alg) \(enc)")
                    #expect(opened.algorithm == alg && opened.encryption == enc)
                }
                if alg.isKeyAgreement {
                    let epk = try #require(jwe.protectedHeader["epk"]?.objectValue)
                    #expect(epk["d"] == nil && epk["crv"]?.stringValue == key.curveName, "\(alg): epk \(epk)")
                }
                if key.keyType != .oct { expectJOSE(.jose.algorithmNotAllowed) { _ = try jwe.decrypt(using: sendTo) } }
            }
        }
        // dir with each content encryption, an empty plaintext included.
        for enc in JWEEncryption.allCases {
            let key = try JWK(object: ["kty": "oct", "k": .string(b64(SecureRandom.bytes(count: enc.keyByteCount)))])
            let jwe = try JWE.encrypt([UInt8](), key: key, algorithm: .dir, encryption: enc)
            #expect(jwe.recipients[0].encryptedKey.isEmpty)
            #expect(try JWE(parsing: try jwe.compactSerialization).decrypt(using: key).plaintext.count == 0)
        }
    }

    @Test("The compact form is read from its bytes: five segments exactly, each segment's bad base64url named, a split character next to a dot refused")
    func compactSegments() throws {
        let key = try JWK(object: ["kty": "oct", "k": .string(b64(SecureRandom.bytes(count: 32)))])
        let compact = try JWE.encrypt(Array("hello".utf8), key: key, algorithm: .dir, encryption: .A256GCM).compactSerialization
        #expect(try JWE(parsing: compact).decrypt(using: key).plaintext.unsafeCopy == Array("hello".utf8))
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for text in [parts[0..<4].joined(separator: "."), compact + ".", compact + ".x"] {
            expectJOSE(.jose.malformed) { _ = try JWE(parsing: text) }
        }
        for (index, name) in [(2, "IV"), (3, "ciphertext"), (4, "tag")] {
            var broken = parts
            broken[index] += "*"
            do throws(TokenMintError) {
                _ = try JWE(parsing: broken.joined(separator: "."))
                Issue.record("a bad \(name) was accepted")
            } catch {
                #expect(error.code == .jose.invalidBase64URL && error.reason.contains(name), "\(error)")
            }
        }
        // A combining mark after a dot: one Character, but still a dot byte; the segment after it is not base64url.
        var combined = parts
        combined[2] = "\u{301}" + combined[2]
        expectJOSE(.jose.invalidBase64URL) { _ = try JWE(parsing: combined.joined(separator: ".")) }
    }

    @Test("Several recipients in the general serialization, with unprotected headers and aad; each key opens its own entry")
    func multipleRecipients() throws {
        let all = try Self.keys()
        let rsa = all[1].0, ec = all[3].0, kw = all.last!.0
        var rsaID = rsa; rsaID.keyID = "rsa-1"
        var ecID = ec; ecID.keyID = "ec-1"
        let recipients = [
            JWE.RecipientKey(key: try #require(rsaID.publicKey), algorithm: .RSA_OAEP_256),
            JWE.RecipientKey(key: try #require(ecID.publicKey), algorithm: .ECDH_ES_A256KW, header: ["apu": .string(b64("Alice"))]),
            JWE.RecipientKey(key: kw, algorithm: .A256GCMKW),
        ]
        let jwe = try JWE.encrypt(Array("to three".utf8), to: recipients, encryption: .A128CBC_HS256,
                                  unprotectedHeader: ["jku": "https://tokenmint.test/jwks"], additionalData: Array("extra".utf8))
        let parsed = try JWE(parsing: jwe.generalJSON)
        #expect(parsed.recipients.count == 3)
        for (key, index) in [(rsaID, 0), (ecID, 1), (kw, 2)] {
            let opened = try parsed.decrypt(using: key)
            #expect(opened.plaintext.unsafeCopy == Array("to three".utf8) && opened.recipientIndex == index)
        }
        expectJOSE(.jose.malformed) { _ = try jwe.compactSerialization }
        expectJOSE(.jose.malformed) { _ = try jwe.flattenedJSON }
        // The aad is authenticated.
        let tampered = jwe.generalJSON.replacingOccurrences(of: b64("extra"), with: b64("other"))
        expectJOSE(.jose.decryptionFailed) { _ = try JWE(parsing: tampered).decrypt(using: kw) }
        // dir and ECDH-ES stand alone.
        let dirKey = try JWK(object: ["kty": "oct", "k": .string(b64(SecureRandom.bytes(count: 16)))])
        expectJOSE(.jose.algorithmNotAllowed) {
            _ = try JWE.encrypt([1], to: [JWE.RecipientKey(key: dirKey, algorithm: .dir), recipients[2]], encryption: .A128GCM)
        }
    }

    @Test("Tampering anywhere is one error: tag, ciphertext, IV, protected header, encrypted key, wrong key")
    func tampering() throws {
        let key = try JWK(object: ["kty": "oct", "k": .string(b64(SecureRandom.bytes(count: 32)))])
        let rsa = try Self.keys()[1].0
        for (k, alg) in [(key, JWEAlgorithm.A256KW), (rsa, .RSA_OAEP_256)] {
            let compact = try JWE.encrypt(Array("secret".utf8), key: k.publicKey ?? k, algorithm: alg, encryption: .A256GCM).compactSerialization
            var parts = compact.split(separator: ".").map(String.init)
            for index in 1...4 {
                var changed = parts
                var raw = try bytes(changed[index])
                raw[raw.count / 2] ^= 1
                changed[index] = b64(raw)
                expectJOSE(.jose.decryptionFailed, "\(alg) segment \(index)") { _ = try JWE(parsing: changed.joined(separator: ".")).decrypt(using: k) }
            }
            parts[0] = b64(#"{"alg":"\#(alg.rawValue)","enc":"A256GCM","x":1}"#)
            expectJOSE(.jose.decryptionFailed, "\(alg) header") { _ = try JWE(parsing: parts.joined(separator: ".")).decrypt(using: k) }
        }
        let other = try JWK(object: ["kty": "oct", "k": .string(b64(SecureRandom.bytes(count: 32)))])
        let jwe = try JWE.encrypt([1, 2, 3], key: key, algorithm: .A256KW)
        expectJOSE(.jose.decryptionFailed) { _ = try jwe.decrypt(using: other) }
    }

    @Test("Invalid-curve and key-confusion attacks: an off-curve or cross-curve epk, dir with the wrong key length, a signing key, RSA1_5, PBES2, none, zip, crit")
    func attacks() throws {
        let p256 = try JWK(try ECDSA.PrivateKey(curve: .p256))
        var unbound = p256
        unbound.algorithmName = nil
        func token(_ header: String, ek: [UInt8] = [], iv: Int = 12) -> String {
            [b64(header), b64(ek), b64(SecureRandom.bytes(count: iv)), b64(SecureRandom.bytes(count: 16)), b64(SecureRandom.bytes(count: 16))].joined(separator: ".")
        }
        // A point not on P-256 (x = 1, y = 1).
        let one = b64([UInt8](repeating: 0, count: 31) + [1])
        let offCurve = #"{"alg":"ECDH-ES","enc":"A128GCM","epk":{"kty":"EC","crv":"P-256","x":"\#(one)","y":"\#(one)"}}"#
        expectJOSE(.jose.invalidHeader) { _ = try JWE(parsing: token(offCurve)).decrypt(using: unbound) }
        // A valid P-384 epk against a P-256 key.
        let p384 = try ECDSA.PrivateKey(curve: .p384).publicKey
        let crossCurve = #"{"alg":"ECDH-ES","enc":"A128GCM","epk":{"kty":"EC","crv":"P-384","x":"\#(b64(p384.x))","y":"\#(b64(p384.y))"}}"#
        expectJOSE(.jose.invalidHeader) { _ = try JWE(parsing: token(crossCurve)).decrypt(using: unbound) }
        // An X25519 small-order point (all zeros) against an X25519 key.
        let x = JWK(try X25519.PrivateKey())
        let zero = #"{"alg":"ECDH-ES","enc":"A128GCM","epk":{"kty":"OKP","crv":"X25519","x":"\#(b64([UInt8](repeating: 0, count: 32)))"}}"#
        #expect(throws: TokenMintError.self) { _ = try JWE(parsing: token(zero)).decrypt(using: x) }
        // An epk with a private part.
        let withD = try JWK(try ECDSA.PrivateKey(curve: .p256)).jsonObject(includingPrivate: true)
        var header: JSONObject = ["alg": "ECDH-ES", "enc": "A128GCM"]
        header.set("epk", .object(withD))
        expectJOSE(.jose.invalidHeader) { _ = try JWE(parsing: token(String(decoding: JSONWriter.encode(.object(header)), as: UTF8.self))).decrypt(using: unbound) }
        // dir with a key of the wrong length for the enc.
        let short = try JWK(object: ["kty": "oct", "k": .string(b64(SecureRandom.bytes(count: 16)))])
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWE(parsing: token(#"{"alg":"dir","enc":"A256GCM"}"#)).decrypt(using: short) }
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWE.encrypt([1], key: short, algorithm: .dir, encryption: .A256GCM) }
        // A signing key: its alg names a JWS algorithm (the P-256 key says ES256), or its use is "sig".
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWE(parsing: token(offCurve)).decrypt(using: p256) }
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWE.encrypt([1], key: p256, algorithm: .ECDH_ES) }
        var sig = unbound
        sig.use = "sig"
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWE.encrypt([1], key: sig, algorithm: .ECDH_ES) }
        let hs = try JWK(secret: SecureRandom.bytes(count: 32), algorithm: .HS256)
        expectJOSE(.jose.algorithmNotAllowed) { _ = try JWE.encrypt([1], key: hs, algorithm: .A256KW) }
        // An encryption key never signs.
        var enc = unbound
        enc.use = "enc"
        expectJOSE(.jose.algorithmNotAllowed) { try enc.admit(.ES256, for: .sign) }
        expectJOSE(.jose.algorithmNotAllowed) { try x.admit(.EdDSA, for: .verify) }
        // Algorithms refused by name, and zip.
        let kw = try JWK(object: ["kty": "oct", "k": .string(b64(SecureRandom.bytes(count: 16)))])
        for alg in ["RSA1_5", "PBES2-HS256+A128KW", "none", "A128KW\\u001b[31m"] {
            expectJOSE(.jose.unsupportedAlgorithm, "\(alg)") { _ = try JWE(parsing: token(#"{"alg":"\#(alg)","enc":"A128GCM"}"#, ek: Array(repeating: 0, count: 24))).decrypt(using: kw) }
        }
        expectJOSE(.jose.unsupportedAlgorithm) { _ = try JWE(parsing: token(#"{"alg":"A128KW","enc":"A128GCM","zip":"DEF"}"#, ek: Array(repeating: 0, count: 24))).decrypt(using: kw) }
        expectJOSE(.jose.unsupportedCritical) { _ = try JWE(parsing: token(#"{"alg":"A128KW","enc":"A128GCM","crit":["exp"],"exp":1}"#, ek: Array(repeating: 0, count: 24))).decrypt(using: kw) }
        // enc must be protected; recipients' headers cannot set what the encryption sets; a recipient cap.
        let protectedAlgOnly = b64(#"{"alg":"A128KW"}"#)
        expectJOSE(.jose.invalidHeader) {
            _ = try JWE(parsing: #"{"protected":"\#(protectedAlgOnly)","unprotected":{"enc":"A128GCM"},"encrypted_key":"\#(b64([UInt8](repeating: 0, count: 24)))","iv":"AAAAAAAAAAAAAAAA","ciphertext":"AA","tag":"AAAAAAAAAAAAAAAAAAAAAA"}"#).decrypt(using: kw)
        }
        expectJOSE(.jose.invalidHeader) {
            _ = try JWE.encrypt([1], to: [JWE.RecipientKey(key: kw, algorithm: .A128KW, header: ["enc": "A256GCM"])], encryption: .A128GCM)
        }
        let many = try JWE.encrypt([1], to: Array(repeating: JWE.RecipientKey(key: kw, algorithm: .A128KW), count: 9), encryption: .A128GCM)
        expectJOSE(.jose.tooLarge) { _ = try JWE(parsing: many.generalJSON).decrypt(using: kw) }
        #expect(try JWE(parsing: many.generalJSON).decrypt(using: kw, policy: JWEPolicy(maximumRecipients: 9)).plaintext.count == 1)
        // The policy narrows what is accepted.
        let jwe = try JWE.encrypt([1], key: kw, algorithm: .A128KW, encryption: .A128GCM)
        expectJOSE(.jose.algorithmNotAllowed) { _ = try jwe.decrypt(using: kw, policy: JWEPolicy(algorithms: [.A256KW])) }
        expectJOSE(.jose.algorithmNotAllowed) { _ = try jwe.decrypt(using: kw, policy: JWEPolicy(encryptions: [.A256GCM])) }
    }

    @Test("Malformed input is a typed error: segments, sizes, JSON shapes, duplicate header names")
    func malformed() throws {
        expectJOSE(.jose.malformed) { _ = try JWE(parsing: "a.b.c") }
        expectJOSE(.jose.tooLarge) { _ = try JWE(parsing: String(repeating: "a", count: 2000), maximumBytes: 1000) }
        expectJOSE(.jose.invalidBase64URL) { _ = try JWE(parsing: "e30=.a.b.c.d") }
        expectJOSE(.jose.invalidHeader) { _ = try JWE(parsing: "\(b64("{}")).AA.AA.AA.AA") }
        expectJOSE(.jose.invalidJSON) { _ = try JWE(parsing: "{\"protected\":") }
        let protected = b64(#"{"enc":"A128GCM","alg":"A128KW"}"#)
        expectJOSE(.jose.invalidHeader) {
            _ = try JWE(parsing: #"{"protected":"\#(protected)","unprotected":{"alg":"A128KW"},"iv":"AA","ciphertext":"AA","tag":"AA"}"#)
        }
        expectJOSE(.jose.malformed) {
            _ = try JWE(parsing: #"{"protected":"\#(protected)","recipients":[],"iv":"AA","ciphertext":"AA","tag":"AA"}"#)
        }
        expectJOSE(.jose.malformed) {
            _ = try JWE(parsing: #"{"protected":"\#(protected)","recipients":[{}],"encrypted_key":"AA","iv":"AA","ciphertext":"AA","tag":"AA"}"#)
        }
        expectJOSE(.jose.invalidHeader) {
            _ = try JWE(parsing: #"{"protected":"\#(protected)","unprotected":{"crit":["x"]},"iv":"AA","ciphertext":"AA","tag":"AA"}"#)
        }
    }

    @Test("A nested JWT: signed, then encrypted with cty JWT; the inner token verifies after decryption")
    func nestedJWT() throws {
        let signing = try JWK.generate(for: .ES256)
        var claims = JWTClaims()
        claims.subject = "user-1"
        claims.expiration = Int64(Date().timeIntervalSince1970) + 600
        let inner = try JWTSigner(key: signing).sign(claims)
        let x = JWK(try X25519.PrivateKey())
        let outer = try JWE.encrypt(Array(inner.utf8), key: try #require(x.publicKey), algorithm: .ECDH_ES, encryption: .A256GCM,
                                    header: ["cty": "JWT"]).compactSerialization
        let opened = try JWE(parsing: outer).decrypt(using: x)
        let token = try #require(opened.nestedToken)
        let verified = try JWTVerifier(key: try #require(signing.publicKey)).verify(token)
        #expect(verified.claims.subject == "user-1")
    }
}
