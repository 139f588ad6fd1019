import TokenMintCore
import Foundation
import TokenMintCrypto
import TokenMintJOSE

/// Runners for Wycheproof's `json_web_signature_schema_v1` and
/// `json_web_key_schema_v1`: each token is verified with TokenMint's strict
/// compact-serialization verifier and must come out as marked.
enum JOSERunner {
    /// Cases of `json_web_signature_test.json` whose expected result no strict
    /// verifier can produce (see Vectors/README.md). They are reported,
    /// with the reason, whenever TokenMint's result differs from the file's.
    static let documentedExceptions: [Int: String] = [
        357: "byte-identical to tcIds 367 and 370, which are marked invalid; a verifier can match only one side",
        367: "byte-identical to tcId 357, which is marked valid",
        370: "byte-identical to tcId 357, which is marked valid",
        372: "a '?' is inserted into the header base64url; canonical base64url rejects it",
        373: "a '?' is inserted into the payload base64url; canonical base64url rejects it",
        346: "RFC 7520 PS384 token checked with a key whose alg is PS256; the key's alg is honoured",
        350: "RFC 7520 PS384 token checked with a key whose alg is PS256; the key's alg is honoured",
        347: "the key's alg is \"ES521\", which is no JWA name; such a key admits no algorithm",
        351: "the key's alg is \"ES521\", which is no JWA name; such a key admits no algorithm",
    ]

    struct Test: Decodable {
        var tcId: Int
        var comment: String
        var jws: JSONText
        var result: String
    }

    /// A JSON value kept as its text (the `jws` member is a string, or an object
    /// for JSON-serialization cases).
    struct JSONText: Decodable {
        var text: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let string = try? container.decode(String.self) {
                text = string
            } else {
                let any = try container.decode(AnyJSON.self)
                text = String(decoding: try JSONSerialization.data(withJSONObject: any.value, options: [.sortedKeys]), as: UTF8.self)
            }
        }
    }

    struct AnyJSON: Decodable {
        var value: Any
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let v = try? container.decode([String: AnyJSON].self) { value = v.mapValues(\.value) }
            else if let v = try? container.decode([AnyJSON].self) { value = v.map(\.value) }
            else if let v = try? container.decode(String.self) { value = v }
            else if let v = try? container.decode(Bool.self) { value = v }
            else if let v = try? container.decode(Double.self) { value = v }
            else { value = NSNull() }
        }
    }

    struct Group: Decodable {
        var `private`: AnyJSON?
        var `public`: AnyJSON?
        var tests: [Test]
    }

    struct File: Decodable {
        var testGroups: [Group]
    }

    static func jsonString(_ value: AnyJSON) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: value.value) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func run(_ data: Data, keySet: Bool, into report: inout VectorReport) throws {
        for group in try JSONDecoder().decode(File.self, from: data).testGroups {
            var verifier: JWSVerifier? = nil
            if keySet {
                if let text = group.private.flatMap(jsonString), let set = try? JWKSet(json: text) {
                    verifier = JWSVerifier(keys: set)
                }
            } else if let text = (group.public ?? group.private).flatMap(jsonString), let key = try? JWK(json: text) {
                verifier = try? JWSVerifier(key: key)
            }
            for test in group.tests {
                let accepted = (try? verifier?.verify(compact: test.jws.text)) != nil
                report.record(
                    test.tcId, expected: test.result, accepted: accepted, comment: test.comment,
                    exception: keySet ? nil : documentedExceptions[test.tcId])
            }
        }
    }
}

/// TokenMint's own JOSE known-answer files (`tokenmint_jose_kat_v1`): RFC
/// 7515 appendix A tokens (byte-exact where the algorithm is deterministic)
/// and RFC 7638 thumbprints.
enum JOSEKnownAnswers {
    static func run(_ data: Data, into report: inout VectorReport) throws {
        var limits = JSONParser.Limits()
        limits.maximumBytes = 8 << 20
        guard let root = try JSONParser.parse(Array(data), limits: limits).objectValue else {
            throw TokenMintError(.vectors.invalidFile, "not a JSON object")
        }
        for test in root["tests"]?.arrayValue ?? [] {
            guard let t = test.objectValue, let id = t["tcId"]?.int64Value, let compact = t["compact"]?.stringValue,
                let alg = t["alg"]?.stringValue
            else { throw TokenMintError(.vectors.invalidFile, "malformed test") }
            let comment = t["comment"]?.stringValue ?? ""
            let payload = Array((t["payload"]?.stringValue ?? "").utf8)
            var ok = false
            if alg == "none" {
                ok = (try? UnsecuredJWS.decode(compact).payload) == payload
                    && (try? JWSVerifier(key: JWK.generate(for: .HS256)).verify(compact: compact)) == nil
            } else if let object = t["jwk"]?.objectValue, let key = try? JWK(object: object),
                let algorithm = JWSAlgorithm(name: alg), let verifier = try? JWSVerifier(key: key.publicKey ?? key)
            {
                ok = (try? verifier.verify(compact: compact).payload) == payload
                if t["deterministic"]?.boolValue == true, let input = t["signingInput"]?.stringValue,
                    let expected = t["signature"]?.stringValue
                {
                    let signature = try? JWSSigner(key: key, algorithm: algorithm).signature(forSigningInput: Array(input.utf8))
                    ok = ok && signature.map { Base64URL.encode($0) } == expected
                }
            }
            report.record(Int(id), expected: "valid", accepted: ok, comment: comment)
        }
        for test in root["thumbprints"]?.arrayValue ?? [] {
            guard let t = test.objectValue, let id = t["tcId"]?.int64Value, let object = t["jwk"]?.objectValue,
                let expected = t["sha256"]?.stringValue
            else { throw TokenMintError(.vectors.invalidFile, "malformed thumbprint test") }
            let ok = (try? JWK(object: object))?.thumbprint() == expected
            report.record(Int(id), expected: "valid", accepted: ok, comment: t["comment"]?.stringValue ?? "")
        }
    }
}

/// Runners for Wycheproof's `json_web_encryption_schema_v1` (JWE only) and
/// `json_web_crypto_schema_v1` (JWS and JWE, keys or key sets): each JWE is
/// decrypted with the group's private key, and a valid one must give the
/// test's plaintext.
enum JWERunner {
    /// Cases whose expected result TokenMint does not produce on purpose (see Vectors/README.md).
    static let documentedExceptions: [Int: String] = Dictionary(uniqueKeysWithValues:
        [100, 101, 102, 103, 104, 105, 112, 128].map { ($0, "RSA1_5 key transport is refused on purpose (padding oracles, RFC 8725 §3.4)") }
        + [(135, "zip DEF: TokenMint does not decompress JWE content (RFC 8725 §3.6)"), (22, jsonSerialization)])
    /// The crypto file's cases TokenMint decides otherwise.
    static let cryptoExceptions: [Int: String] = [66: jsonSerialization]
    static let jsonSerialization = "a valid JWE in the JSON serialization (RFC 7516 §7.2), marked invalid for compact-only libraries; TokenMint reads both"

    static func run(_ data: Data, crypto: Bool, into report: inout VectorReport) throws {
        var limits = JSONParser.Limits()
        limits.maximumBytes = 16 << 20
        limits.maximumDepth = 16
        guard let root = try JSONParser.parse(Array(data), limits: limits).objectValue else {
            throw TokenMintError(.vectors.invalidFile, "not a JSON object")
        }
        for group in root["testGroups"]?.arrayValue ?? [] {
            guard let group = group.objectValue else { throw TokenMintError(.vectors.invalidFile, "malformed group") }
            let keys = privateKeys(group["private"])
            for test in group["tests"]?.arrayValue ?? [] {
                guard let t = test.objectValue, let id = t["tcId"]?.int64Value, let expected = t["result"]?.stringValue else {
                    throw TokenMintError(.vectors.invalidFile, "malformed test")
                }
                let comment = t["comment"]?.stringValue ?? ""
                var accepted = false
                if let jwe = t["jwe"] {
                    let text = jwe.stringValue ?? String(decoding: JSONWriter.encode(jwe), as: UTF8.self)
                    let plaintext = decrypt(text, keys: keys)
                    if let plaintext, let pt = t["pt"]?.stringValue {
                        accepted = (try? Hex.decode(pt)).map { SecureBytes($0) } == plaintext
                    } else {
                        accepted = plaintext != nil
                    }
                } else if crypto, let jws = t["jws"] {
                    accepted = verify(jws, group: group)
                } else {
                    throw TokenMintError(.vectors.invalidFile, "tcId \(id) has neither jwe nor jws")
                }
                report.record(Int(id), expected: expected, accepted: accepted, comment: comment,
                              exception: (crypto ? cryptoExceptions : documentedExceptions)[Int(id)])
            }
        }
    }

    /// The group's private key, or each key of its key set.
    private static func privateKeys(_ value: JSONValue?) -> [JWK] {
        guard let object = value?.objectValue else { return [] }
        if let set = object["keys"]?.arrayValue { return set.compactMap { $0.objectValue.flatMap { try? JWK(object: $0) } } }
        return (try? JWK(object: object)).map { [$0] } ?? []
    }

    /// The plaintext, when one of the keys (the one whose `kid` the header names, if any) decrypts `text`.
    private static func decrypt(_ text: String, keys: [JWK]) -> SecureBytes? {
        guard let jwe = try? JWE(parsing: text) else { return nil }
        let kid = jwe.protectedHeader["kid"]?.stringValue
        for key in keys where kid == nil || key.keyID == nil || key.keyID == kid {
            if let opened = try? jwe.decrypt(using: key) { return opened.plaintext }
        }
        return nil
    }

    /// A JWS case of the crypto file: verified with the group's key or key set.
    private static func verify(_ jws: JSONValue, group: JSONObject) -> Bool {
        guard let text = jws.stringValue else { return false }  // JSON-serialized JWS cases are all invalid
        let keyValue = group["public"] ?? group["private"]
        guard let object = keyValue?.objectValue else { return false }
        let keyText = String(decoding: JSONWriter.encode(.object(object)), as: UTF8.self)
        let verifier: JWSVerifier?
        if object["keys"] != nil {
            verifier = (try? JWKSet(json: keyText)).map { JWSVerifier(keys: $0) }
        } else {
            verifier = (try? JWK(json: keyText)).flatMap { try? JWSVerifier(key: $0) }
        }
        return (try? verifier?.verify(compact: text)) != nil
    }
}
