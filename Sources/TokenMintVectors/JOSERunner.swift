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
