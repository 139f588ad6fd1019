public import TokenMintCore
public import Foundation
import TokenMintCrypto
import TokenMintMLDSA

/// Runs Project Wycheproof files and TokenMint's own known-answer files.
///
/// The file's `schema` field picks the runner, so any Wycheproof file of a
/// supported schema works, whatever its curve, hash or key size.
public enum VectorRunner {
    /// The schemas this runner knows (ML-DSA's only when built with the MLDSA trait).
    public static var schemas: [String] { knownSchemas + (MLDSA.isAvailable ? ["mldsa_verify_schema_v1"] : []) }

    static let knownSchemas: [String] = [
        "ecdsa_verify_schema_v1", "ecdsa_p1363_verify_schema_v1", "eddsa_verify_schema_v1",
        "rsassa_pkcs1_verify_schema_v1", "rsassa_pss_verify_schema_v1", "mac_test_schema_v1",
        "json_web_signature_schema_v1", "json_web_key_schema_v1",
        "json_web_encryption_schema_v1", "json_web_crypto_schema_v1", "tokenmint_kat_v1", "tokenmint_jose_kat_v1", "tokenmint_aztec_golden_v1",
    ]

    /// Runs the file at `path`.
    public static func run(path: String) throws(TokenMintError) -> VectorReport {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw TokenMintError(.vectors.invalidFile, "\(path): cannot read (\(error.localizedDescription))")
        }
        return try run(data: data, label: (path as NSString).lastPathComponent)
    }

    /// Runs a vector file held in memory.
    public static func run(data: Data, label: String) throws(TokenMintError) -> VectorReport {
        guard data.count <= 64 << 20 else { throw TokenMintError(.vectors.invalidFile, "\(label): larger than 64 MiB") }
        let header: Header
        do { header = try JSONDecoder().decode(Header.self, from: data) } catch {
            throw TokenMintError(.vectors.invalidFile, "\(label): not a vector file (\(error))")
        }
        var schema = header.schema.hasSuffix(".json") ? String(header.schema.dropLast(5)) : header.schema
        // Wycheproof files from before the testvectors_v1 rename name the same
        // schemas without "_v1" and have the same fields.
        if !schema.hasSuffix("_v1"), schemas.contains(schema + "_v1") { schema += "_v1" }
        var report = VectorReport(file: label, schema: schema)
        do {
            switch schema {
            case "ecdsa_verify_schema_v1": try ecdsa(data, der: true, into: &report)
            case "ecdsa_p1363_verify_schema_v1": try ecdsa(data, der: false, into: &report)
            case "eddsa_verify_schema_v1": try eddsa(data, into: &report)
            case "rsassa_pkcs1_verify_schema_v1": try rsa(data, pss: false, into: &report)
            case "rsassa_pss_verify_schema_v1": try rsa(data, pss: true, into: &report)
            case "mac_test_schema_v1": try mac(data, algorithm: header.algorithm ?? "", into: &report)
            case "json_web_signature_schema_v1": try JOSERunner.run(data, keySet: false, into: &report)
            case "json_web_key_schema_v1": try JOSERunner.run(data, keySet: true, into: &report)
            case "json_web_encryption_schema_v1": try JWERunner.run(data, crypto: false, into: &report)
            case "json_web_crypto_schema_v1": try JWERunner.run(data, crypto: true, into: &report)
            case "mldsa_verify_schema_v1": try mldsa(data, algorithm: header.algorithm ?? "", into: &report)
            case "tokenmint_jose_kat_v1": try JOSEKnownAnswers.run(data, into: &report)
            case "tokenmint_aztec_golden_v1": try AztecGoldenRunner.run(data, into: &report)
            case "tokenmint_kat_v1": try KnownAnswers.run(data, algorithm: header.algorithm ?? "", into: &report)
            default:
                throw TokenMintError(.vectors.invalidFile, "\(label): unknown schema \"\(header.schema)\"")
            }
        } catch {
            throw TokenMintError.wrap(error, as: .vectors.invalidFile, "\(label): malformed \(schema) file (\(error))")
        }
        return report
    }

    struct Header: Decodable {
        var schema: String
        var algorithm: String?
    }

    struct File<Group: Decodable>: Decodable {
        var testGroups: [Group]
    }

    struct SignatureTest: Decodable {
        var tcId: Int
        var comment: String, msg: String, sig: String, result: String
    }

    static func hex(_ text: String) throws -> [UInt8] { try Hex.decode(text) }

    /// Records each test's outcome; `accepts` says whether TokenMint accepted it.
    static func check(_ tests: [SignatureTest], into report: inout VectorReport, _ accepts: (SignatureTest) throws -> Bool) rethrows {
        for test in tests {
            report.record(test.tcId, expected: test.result, accepted: try accepts(test), comment: test.comment)
        }
    }

    static func hash(named name: String) throws -> HashFunction {
        guard let hash = HashFunction(name: name) else { throw TokenMintError(.vectors.invalidFile, "unknown hash \(name)") }
        return hash
    }

    // MARK: ECDSA

    struct ECDSAGroup: Decodable {
        var publicKeyDer: String, sha: String
        var tests: [SignatureTest]
    }

    static func ecdsa(_ data: Data, der: Bool, into report: inout VectorReport) throws {
        for group in try JSONDecoder().decode(File<ECDSAGroup>.self, from: data).testGroups {
            let hash = try hash(named: group.sha)
            let key = try? ECDSA.PublicKey(derRepresentation: hex(group.publicKeyDer))
            try check(group.tests, into: &report) { test in
                guard let key, let bytes = try? hex(test.sig),
                    let signature = try? (der
                        ? ECDSA.Signature(derRepresentation: bytes, curve: key.curve)
                        : ECDSA.Signature(rawRepresentation: bytes, curve: key.curve))
                else { return false }
                return key.isValidSignature(signature, for: try hex(test.msg), hash: hash)
            }
        }
    }

    // MARK: EdDSA

    struct EdDSAGroup: Decodable {
        struct Key: Decodable {
            var curve: String, pk: String
        }
        var publicKey: Key
        var tests: [SignatureTest]
    }

    static func eddsa(_ data: Data, into report: inout VectorReport) throws {
        for group in try JSONDecoder().decode(File<EdDSAGroup>.self, from: data).testGroups {
            let verify: ([UInt8], [UInt8]) -> Bool
            switch group.publicKey.curve {
            case "edwards25519":
                let key = try? Ed25519.PublicKey(rawRepresentation: hex(group.publicKey.pk))
                verify = { sig, msg in key?.isValidSignature(sig, for: msg) ?? false }
            case "edwards448":
                let key = try? Ed448.PublicKey(rawRepresentation: hex(group.publicKey.pk))
                verify = { sig, msg in key?.isValidSignature(sig, for: msg) ?? false }
            default:
                throw TokenMintError(.vectors.invalidFile, "unsupported EdDSA curve \(group.publicKey.curve)")
            }
            check(group.tests, into: &report) { test in (try? verify(hex(test.sig), hex(test.msg))) ?? false }
        }
    }

    // MARK: ML-DSA

    struct MLDSAGroup: Decodable {
        var publicKey: String
        var tests: [MLDSATest]
    }

    struct MLDSATest: Decodable {
        var tcId: Int
        var comment: String, msg: String, sig: String, result: String
        var ctx: String?
    }

    /// Wycheproof's ML-DSA verification files (pure ML-DSA with a context);
    /// a key of the wrong length or encoding fails every test of its group.
    static func mldsa(_ data: Data, algorithm: String, into report: inout VectorReport) throws {
        guard let set = MLDSA.ParameterSet(rawValue: algorithm) else { throw TokenMintError(.vectors.invalidFile, "unknown ML-DSA parameter set \(algorithm)") }
        guard MLDSA.isAvailable else { throw TokenMintError(.vectors.invalidFile, "ML-DSA files need TokenMint built with the MLDSA trait") }
        for group in try JSONDecoder().decode(File<MLDSAGroup>.self, from: data).testGroups {
            let key = try? MLDSA.PublicKey(rawRepresentation: hex(group.publicKey), parameterSet: set)
            for test in group.tests {
                let accepted = (try? key?.isValidSignature(hex(test.sig), for: hex(test.msg), context: hex(test.ctx ?? ""))) ?? false
                report.record(test.tcId, expected: test.result, accepted: accepted, comment: test.comment)
            }
        }
    }

    // MARK: RSA

    struct RSAGroup: Decodable {
        var publicKeyDer: String, sha: String
        var mgfSha: String?
        var sLen: Int?
        var tests: [SignatureTest]
    }

    static func rsa(_ data: Data, pss: Bool, into report: inout VectorReport) throws {
        for group in try JSONDecoder().decode(File<RSAGroup>.self, from: data).testGroups {
            let hash = try hash(named: group.sha)
            let padding: RSA.Padding
            if pss {
                guard let sLen = group.sLen, let mgf = group.mgfSha else {
                    throw TokenMintError(.vectors.invalidFile, "PSS group without sLen or mgfSha")
                }
                padding = .pss(saltLength: .bytes(sLen), mgf1Hash: try self.hash(named: mgf))
            } else {
                padding = .pkcs1v15
            }
            let key = try? RSA.PublicKey(derRepresentation: hex(group.publicKeyDer))
            try check(group.tests, into: &report) { test in
                guard let key, let sig = try? hex(test.sig) else { return false }
                return key.isValidSignature(sig, for: try hex(test.msg), hash: hash, padding: padding)
            }
        }
    }

    // MARK: MAC

    struct MACGroup: Decodable {
        struct Test: Decodable {
            var tcId: Int
            var comment: String, key: String, msg: String, tag: String, result: String
        }
        var keySize: Int
        var tagSize: Int
        var tests: [Test]
    }

    static func mac(_ data: Data, algorithm: String, into report: inout VectorReport) throws {
        guard algorithm.hasPrefix("HMAC"), let hash = HashFunction(name: String(algorithm.dropFirst(4))) else {
            throw TokenMintError(.vectors.invalidFile, "unsupported MAC algorithm \(algorithm)")
        }
        for group in try JSONDecoder().decode(File<MACGroup>.self, from: data).testGroups {
            for test in group.tests {
                var accepted = false
                if let key = try? HMACKey(allowingShortKey: hex(test.key), hash: hash) {
                    let tag = try hex(test.tag)
                    let full = HMAC.authenticationCode(for: try hex(test.msg), using: key)
                    accepted = tag.count == group.tagSize / 8 && tag.count <= full.count
                        && ConstantTime.equals(tag, full.prefix(tag.count))
                }
                report.record(test.tcId, expected: test.result, accepted: accepted, comment: test.comment)
            }
        }
    }
}
