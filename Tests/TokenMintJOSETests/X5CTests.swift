import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintJOSE

/// JWS whose key is their `x5c` leaf (RFC 7515 §4.1.6), checked against
/// `Vectors/x5c/jws.json` (made with pyca/cryptography): only configured
/// roots anchor, at the given time, and the leaf must be allowed to sign.
@Suite("JWS with x5c")
struct X5CTests {
    static func load() throws -> (root: X509Certificate, other: X509Certificate, time: Int64, cases: [JSONObject]) {
        let url = try #require(Paths.vector("x5c/jws.json"))
        let file = try Paths.json(url)
        func certificate(_ name: String) throws -> X509Certificate {
            let text = try #require(file[name]?.stringValue)
            let der = try #require(Data(base64Encoded: text))
            return try X509Certificate(derRepresentation: [UInt8](der))
        }
        return (try certificate("root"), try certificate("otherRoot"), try #require(file["time"]?.int64Value),
                try #require(file["cases"]?.arrayValue).compactMap(\.objectValue))
    }

    @Test("every case: valid ones verify with their leaf's key and chain; the others fail with the named code")
    func vectors() throws {
        let (root, other, time, cases) = try Self.load()
        #expect(cases.count == 14)
        let verifier = try JWSVerifier(certificateRoots: [root], at: time)
        var accepted = 0
        for item in cases {
            let name = item["name"]?.stringValue ?? "?"
            let token = try #require(item["jws"]?.stringValue)
            if item["valid"]?.boolValue == true {
                let verified = try verifier.verify(compact: token)
                #expect(!verified.certificates.isEmpty, "\(name)")
                #expect(try verified.key.pemRepresentation() == (try verified.certificates[0].publicKeyPEM()), "\(name)")
                #expect(String(decoding: verified.payload, as: UTF8.self) == #"{"iss":"x5c test"}"#)
                accepted += 1
                // Another root anchors none of them.
                expectJOSE(.jose.untrustedCertificate, "\(name), other root") { _ = try JWSVerifier(certificateRoots: [other], at: time).verify(compact: token) }
                // Forty years on, a certificate has expired.
                expectJOSE(.jose.untrustedCertificate, "\(name), later") {
                    _ = try JWSVerifier(certificateRoots: [root], at: time + 40 * 365 * 86_400).verify(compact: token)
                }
            } else {
                let code = TokenMintError.Code(domain: "jose", name: try #require(item["refusal"]?.stringValue))
                expectJOSE(code, "\(name)") { _ = try verifier.verify(compact: token) }
            }
        }
        #expect(accepted == 5)
    }

    @Test("an x5c verifier needs a root, ignores key sets, and a key-set verifier never trusts x5c")
    func configuration() throws {
        let (root, _, time, cases) = try Self.load()
        #expect(throws: TokenMintError.self) { try JWSVerifier(certificateRoots: []) }
        let token = try #require(cases.first?["jws"]?.stringValue)
        // A verifier over an unrelated key: the x5c in the header is data, not a key.
        let stranger = try JWSVerifier(key: try JWK.generate(for: .ES256))
        #expect(throws: TokenMintError.self) { try stranger.verify(compact: token) }
        // The same verifier twice: nothing cached lets a later token skip its chain check.
        let verifier = try JWSVerifier(certificateRoots: [root], at: time)
        _ = try verifier.verify(compact: token)
        let forged = try #require(cases.first { $0["name"]?.stringValue?.contains("attacker") == true }?["jws"]?.stringValue)
        expectJOSE(.jose.untrustedCertificate) { _ = try verifier.verify(compact: forged) }
    }
}
