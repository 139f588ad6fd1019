import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn

/// FIDO Metadata Service (MDS3) BLOBs signed under a test root
/// (`Vectors/webauthn/mds3.json`), applied to py_webauthn's TPM
/// registrations (`tpm.json`): the statement's roots anchor them, a
/// revocation refuses them, and a BLOB that does not verify is refused.
@Suite("MDS3 metadata")
struct MetadataTests {
    static func vectors() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/webauthn/mds3.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    static func der(_ value: Any?) throws -> [UInt8] {
        let text = try #require(value as? String)
        return [UInt8](try #require(Data(base64Encoded: text)))
    }

    static func blob(_ name: String) throws -> String {
        try #require((try vectors()["blobs"] as? [String: String])?[name])
    }

    static func verify(_ item: AttestationVectorTests.Case, metadata: MetadataBLOB?, requireEntry: Bool = false) throws(TokenMintError) -> RegisteredCredential {
        var policy = RelyingPartyPolicy(rpID: item.rpID, origins: [item.origin])
        policy.attestationTime = (item.item["validationTime"] as? NSNumber)?.int64Value
        policy.metadata = metadata
        policy.metadataPolicy.requireEntry = requireEntry
        return try RelyingPartyVerifier(policy: policy).verifyRegistration(
            clientDataJSON: item.clientDataJSON, attestationObject: item.attestationObject, challenge: item.challenge, rawID: item.rawID)
    }

    @Test("a BLOB verifies against its root; its entries by AAGUID; UAF entries skipped; the newest status report decides")
    func parse() throws {
        let root = try Self.der(try Self.vectors()["root"])
        let certified = try MetadataBLOB(jws: try Self.blob("certified"), roots: [root])
        #expect(certified.number == 7 && certified.nextUpdate == "2026-12-01" && certified.entries.count == 2)
        let aaguid = try Hex.decode(try #require(try Self.vectors()["tpmAaguid"] as? String).replacingOccurrences(of: "-", with: ""))
        let entry = try #require(certified.entry(aaguid: aaguid))
        #expect(entry.status == "FIDO_CERTIFIED_L1" && entry.attestationRoots.count == 1)
        #expect(try MetadataBLOB(jws: try Self.blob("revoked"), roots: [root]).entry(aaguid: aaguid)?.status == "REVOKED")
        #expect(certified.entry(aaguid: [UInt8](repeating: 0, count: 16))?.status == nil)
    }

    @Test("refused BLOBs: another signer, no root, a changed payload or signature, past its certificates, not a JWS")
    func refusals() throws {
        let vectors = try Self.vectors()
        let root = try Self.der(vectors["root"])
        let good = try Self.blob("certified")
        var cases: [(String, String, [[UInt8]], Int64?)] = [
            ("another signer", try Self.blob("otherSigner"), [root], nil),
            ("no root", good, [], nil),
            ("the other root", good, [try Self.der(vectors["otherRoot"])], nil),
            ("after its certificates expired", good, [root], 4_102_444_800),  // 2100
            ("not a JWS", "not.a-jws", [root], nil),
            ("empty", "", [root], nil),
        ]
        let parts = good.split(separator: ".").map(String.init)
        var payload = try Base64URL.decode(parts[1])
        if let index = payload.firstIndex(of: UInt8(ascii: "7")) { payload[index] = UInt8(ascii: "9") }  // "no":7 → 9
        cases.append(("a changed payload", parts[0] + "." + Base64URL.encode(payload) + "." + parts[2], [root], nil))
        var signature = try Base64URL.decode(parts[2])
        signature[10] ^= 1
        cases.append(("a changed signature", parts[0] + "." + parts[1] + "." + Base64URL.encode(signature), [root], nil))
        for (label, jws, roots, time) in cases {
            let error = #expect(throws: TokenMintError.self, "\(label)") { _ = try MetadataBLOB(jws: jws, roots: roots, at: time) }
            #expect(error?.code == .webAuthn.invalidMetadata, "\(label)")
        }
    }

    @Test("the relying party: metadata roots anchor a TPM registration, a revocation refuses it, unknown authenticators as the policy says")
    func relyingParty() throws {
        let root = try Self.der(try Self.vectors()["root"])
        let (cases, _) = try AttestationVectorTests.load("tpm.json")
        let aaguid = try Hex.decode(try #require(try Self.vectors()["tpmAaguid"] as? String).replacingOccurrences(of: "-", with: ""))
        let listed = try #require(cases.first { item in
            (try? AttestationObject(parsing: item.attestationObject))?.authenticatorData.attestedCredential?.aaguid == aaguid
        })
        let unlisted = try #require(cases.first { item in
            (try? AttestationObject(parsing: item.attestationObject))?.authenticatorData.attestedCredential?.aaguid != aaguid
        })
        let certified = try MetadataBLOB(jws: try Self.blob("certified"), roots: [root])
        let revoked = try MetadataBLOB(jws: try Self.blob("revoked"), roots: [root])
        // No root in the policy: the metadata's statement supplies Microsoft's.
        #expect(try Self.verify(listed, metadata: certified).attestationFormat == "tpm")
        #expect(throws: TokenMintError.self) { _ = try Self.verify(listed, metadata: nil) }
        let refused = #expect(throws: TokenMintError.self) { _ = try Self.verify(listed, metadata: revoked) }
        #expect(refused?.code == .webAuthn.authenticatorRefused)
        // An authenticator the BLOB does not list: the policy's roots only (none here), or refused outright.
        #expect(throws: TokenMintError.self) { _ = try Self.verify(unlisted, metadata: certified) }
        let unknown = #expect(throws: TokenMintError.self) { _ = try Self.verify(unlisted, metadata: certified, requireEntry: true) }
        #expect(unknown?.code == .webAuthn.authenticatorRefused)
    }

    @Test("kept in the store, verified again on load; an older BLOB is refused as a rollback")
    func store() throws {
        let root = try Self.der(try Self.vectors()["root"])
        let store = InMemoryStore()
        #expect(try MetadataBLOB.load(from: store, roots: [root]) == nil)
        try MetadataBLOB(jws: try Self.blob("certified"), roots: [root]).save(in: store, roots: [root])
        #expect(try MetadataBLOB.load(from: store, roots: [root])?.number == 7)
        let rollback = #expect(throws: TokenMintError.self) {
            try MetadataBLOB(jws: try Self.blob("older"), roots: [root]).save(in: store, roots: [root])
        }
        #expect(rollback?.code == .webAuthn.invalidMetadata)
        try MetadataBLOB(jws: try Self.blob("revoked"), roots: [root]).save(in: store, roots: [root])
        #expect(try MetadataBLOB.load(from: store, roots: [root])?.number == 8)
        // Loaded with another root, the kept BLOB does not verify.
        #expect(throws: TokenMintError.self) { _ = try MetadataBLOB.load(from: store, roots: [try Self.der(try Self.vectors()["otherRoot"])]) }
    }
}
