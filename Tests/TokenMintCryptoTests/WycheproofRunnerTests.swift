import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintVectors

@Suite("Wycheproof and known-answer vector runners")
struct WycheproofRunnerTests {
    static let signatureSchemas: Set<String> = [
        "ecdsa_verify_schema_v1", "ecdsa_p1363_verify_schema_v1", "eddsa_verify_schema_v1",
        "rsassa_pkcs1_verify_schema_v1", "rsassa_pss_verify_schema_v1", "mac_test_schema_v1",
    ]

    static func schema(of url: URL) -> String? {
        guard let data = try? Data(contentsOf: url),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let schema = object["schema"] as? String
        else { return nil }
        return schema.hasSuffix(".json") ? String(schema.dropLast(5)) : schema
    }

    @Test("every Wycheproof file in Vectors/ of a signature or MAC schema comes out as marked")
    func wycheproofSignatureFiles() throws {
        guard let folder = SharedVectors.folder("wycheproof") else { return }
        let files = SharedVectors.files(in: folder).filter { Self.schema(of: $0).map(Self.signatureSchemas.contains) ?? false }
        #expect(files.count >= 9, "expected the nine signature and MAC files in \(folder.path)")
        var total = 0
        for file in files {
            let report = try VectorRunner.run(path: file.path)
            #expect(report.failed == 0, "\(report.summary)\n\(report.failures.prefix(10).joined(separator: "\n"))")
            #expect(report.passed > 80, "\(report.summary)")  // ed448_test.json has 87
            total += report.passed
        }
        #expect(total >= 2000)
    }

    @Test("the project's own RFC known-answer files pass byte-exact")
    func ownVectors() throws {
        let files = SharedVectors.files(in: SharedVectors.ownVectors)
        let expectedCounts = [
            "rfc4231-hmac.json": 21, "rfc6979-ecdsa.json": 24, "rfc8032-ed25519.json": 5,
            "rfc7515-jws.json": 5, "rfc7638-thumbprint.json": 2, "aztec-golden.json": 8,
        ]
        #expect(files.map(\.lastPathComponent) == expectedCounts.keys.sorted())
        for file in files {
            let report = try VectorRunner.run(path: file.path)
            #expect(report.failed == 0, "\(report.summary): \(report.failures)")
            #expect(report.passed == expectedCounts[file.lastPathComponent])
        }
    }

    @Test("the runner reports a case whose expected result is flipped")
    func runnerDetectsFailures() throws {
        guard let folder = SharedVectors.folder("wycheproof") else { return }
        for name in ["ed25519_test.json", "ecdsa_secp256r1_sha256_test.json", "hmac_sha256_test.json",
                     "rsa_signature_2048_sha256_test.json", "rsa_pss_2048_sha256_mgf1_32_test.json"] {
            var text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            // Flip the first "valid" case to "invalid": the runner must count exactly one failure.
            let range = try #require(text.range(of: "\"result\" : \"valid\"") ?? text.range(of: "\"result\": \"valid\""))
            text.replaceSubrange(range, with: "\"result\" : \"invalid\"")
            let report = try VectorRunner.run(data: Data(text.utf8), label: name)
            #expect(report.failed == 1, "\(name): \(report.summary)")
        }
    }

    @Test("a tampered known-answer value fails")
    func tamperedKnownAnswer() throws {
        let url = SharedVectors.ownVectors.appendingPathComponent("rfc6979-ecdsa.json")
        var text = try String(contentsOf: url, encoding: .utf8)
        let range = try #require(text.range(of: "\"s\": \"b9afb64f"))
        text.replaceSubrange(range, with: "\"s\": \"b9afb64e")
        let report = try VectorRunner.run(data: Data(text.utf8), label: "tampered")
        #expect(report.failed == 1)
    }

    @Test("files from before the _v1 rename run under the same runners")
    func legacySchemaNames() throws {
        guard let folder = SharedVectors.folder("wycheproof") else { return }
        var text = try String(contentsOf: folder.appendingPathComponent("hmac_sha256_test.json"), encoding: .utf8)
        let range = try #require(text.range(of: "mac_test_schema_v1.json"))
        text.replaceSubrange(range, with: "mac_test_schema.json")
        let report = try VectorRunner.run(data: Data(text.utf8), label: "legacy")
        #expect(report.schema == "mac_test_schema_v1")
        #expect(report.failed == 0 && report.passed == 174)
    }

    @Test("an unknown schema is an error, not an empty pass")
    func unknownSchema() {
        #expect(throws: TokenMintError(.vectors.invalidFile, "")) {
            try VectorRunner.run(data: Data(#"{"schema":"rsaes_oaep_decrypt_schema_v1.json","testGroups":[]}"#.utf8), label: "x")
        }
        #expect(throws: TokenMintError(.vectors.invalidFile, "")) {
            try VectorRunner.run(data: Data("not json".utf8), label: "y")
        }
    }
}
