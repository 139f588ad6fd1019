import Foundation
import Testing
import TokenMintVectors

@Suite("Wycheproof JWS and JWK files")
struct WycheproofJOSETests {
    @Test("json_web_signature_test.json: every case as marked, except the documented upstream defects")
    func signatures() throws {
        guard let url = Paths.vector("wycheproof/json_web_signature_test.json") else { return }
        let report = try VectorRunner.run(path: url.path)
        #expect(report.failed == 0, "\(report.summary)\n\(report.failures.joined(separator: "\n"))")
        #expect(report.passed == 401)
        // Only the cases listed in Vectors/README.md (known defects) may come out against the file.
        let allowed: Set<Int> = [346, 347, 350, 351, 357, 367, 370, 372, 373]
        let ids = Set(report.exceptions.compactMap { Int($0.split(separator: ":")[0].dropFirst(5)) })
        #expect(ids.isSubset(of: allowed), "\(report.exceptions)")
        #expect(ids.count >= 6, "\(report.exceptions)")
    }

    @Test("json_web_key_test.json: every key set comes out as marked")
    func keySets() throws {
        guard let url = Paths.vector("wycheproof/json_web_key_test.json") else { return }
        let report = try VectorRunner.run(path: url.path)
        #expect(report.failed == 0, "\(report.summary)\n\(report.failures.joined(separator: "\n"))")
        #expect(report.passed == 26)
        #expect(report.exceptions.isEmpty)
    }
}
