import TokenMintCore
import Foundation
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintWebAuthn

/// Every registration/assertion pair of the W3C WebAuthn L3 test vectors
/// whose credential TokenMint supports (ES256/384/512, EdDSA, RS256).
@Suite("W3C WebAuthn L3 vectors")
struct W3CVectorTests {
    struct Section {
        var title: String
        var registration: [String: [UInt8]]
        var authentication: [String: [UInt8]]
    }

    nonisolated(unsafe) static let root: [String: Any]? = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/webauthn/w3c-webauthn-l3.json")
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }()

    static func sections() throws -> [Section] {
        let root = try #require(Self.root, "Vectors/webauthn/w3c-webauthn-l3.json is absent or unreadable: the repository ships it")
        var result: [Section] = []
        for section in root["sections"] as? [[String: Any]] ?? [] {
            guard let title = section["title"] as? String, let blocks = section["blocks"] as? [[String: Any]], blocks.count == 2 else { continue }
            func values(_ block: [String: Any]) -> [String: [UInt8]] {
                var out: [String: [UInt8]] = [:]
                for (key, value) in block["values"] as? [String: Any] ?? [:] {
                    if let hex = (value as? [String: Any])?["hex"] as? String, let bytes = try? Hex.decode(hex) { out[key] = bytes }
                }
                return out
            }
            result.append(Section(title: title, registration: values(blocks[0]), authentication: values(blocks[1])))
        }
        return result
    }

    static var attestationRoot: [UInt8] {
        let first = (root?["sections"] as? [[String: Any]])?.first
        let block = (first?["blocks"] as? [[String: Any]])?.first
        let hex = ((block?["values"] as? [String: Any])?["attestation_ca_cert"] as? [String: Any])?["hex"] as? String
        return (try? Hex.decode(hex ?? "")) ?? []
    }

    static var policy: RelyingPartyPolicy {
        var p = RelyingPartyPolicy(rpID: "example.org", origins: ["https://example.org"])
        p.allowCrossOrigin = true
        p.topOrigins = ["https://example.com"]
        p.attestationRoots = [attestationRoot]
        return p
    }

    @Test("byte-exact rebuilds: clientDataJSON, COSE keys, authenticatorData, attestationObject")
    func rebuilds() throws {
        var rebuilt = 0
        for section in try Self.sections() where !section.title.contains("Ed448") && !section.title.contains("trust root") {
            let r = section.registration
            let attestation = try #require(r["attestationObject"], "\(section.title)")
            let object = try AttestationObject(parsing: attestation)
            // Canonical CBOR: rebuilding from the parts gives the very same bytes.
            #expect(AttestationObject(format: object.format, statement: object.statement, authenticatorData: object.authenticatorData).bytes == attestation, "\(section.title)")
            for json in [r["clientDataJSON"], section.authentication["clientDataJSON"]].compactMap({ $0 }) {
                #expect(try CollectedClientData(parsing: json).json == json, "\(section.title)")
            }
            let credential = try #require(object.authenticatorData.attestedCredential)
            #expect(credential.credentialID == r["credential_id"])
            #expect(credential.aaguid == r["aaguid"])
            // The COSE key from the private key the vectors give.
            var derived: COSEKey?
            if let d = r["credential_private_key"] {
                let curve: ECDSA.Curve = d.count <= 32 ? .p256 : d.count <= 48 ? .p384 : .p521
                let scalar = [UInt8](repeating: 0, count: curve.scalarByteCount - d.count) + d
                derived = try COSEKey(ECDSA.PrivateKey(rawRepresentation: scalar, curve: curve).publicKey)
            } else if section.title.contains("Ed25519"), let seed = r["private_key"] {
                derived = COSEKey(try Ed25519.PrivateKey(rawRepresentation: seed).publicKey)
            }
            if let derived { #expect(derived.cbor == credential.publicKey.cbor, "\(section.title)") }
            // authenticatorData from its parts.
            let data = object.authenticatorData
            let again = AuthenticatorData(rpID: "example.org", flags: data.flags, signCount: data.signCount, attestedCredential: credential,
                                          extensions: data.extensions)
            #expect(again.bytes == data.bytes, "\(section.title)")
            rebuilt += 1
        }
        #expect(rebuilt >= 12)
    }

    @Test("the RP verifier accepts every supported pair and rejects each after a one-byte change")
    func verifierAcceptsAndRejects() throws {
        let verifier = RelyingPartyVerifier(policy: Self.policy)
        var registrations = 0
        var assertions = 0
        for section in try Self.sections() where !section.title.contains("Ed448") && !section.title.contains("trust root") {
            let r = section.registration
            let a = section.authentication
            let attestation = try #require(r["attestationObject"])
            let object = try AttestationObject(parsing: attestation)
            let credential: RegisteredCredential
            if ["none", "packed"].contains(object.format) {
                credential = try verifier.verifyRegistration(
                    clientDataJSON: try #require(r["clientDataJSON"]), attestationObject: attestation, challenge: try #require(r["challenge"]))
                registrations += 1
                var tampered = attestation
                tampered[tampered.count - 5] ^= 0x01
                #expect(throws: TokenMintError.self, "\(section.title)") {
                    try verifier.verifyRegistration(clientDataJSON: r["clientDataJSON"] ?? [], attestationObject: tampered, challenge: r["challenge"] ?? [])
                }
            } else {
                // tpm, android-key, apple, fido-u2f: formats this verifier does not take; the credential is still checked below.
                let attested = try #require(object.authenticatorData.attestedCredential)
                credential = RegisteredCredential(
                    credentialID: attested.credentialID, publicKey: attested.publicKey, signCount: 0,
                    backupEligible: object.authenticatorData.flags.contains(.backupEligible), backupState: false, userVerified: false,
                    attestationFormat: object.format, aaguid: attested.aaguid)
            }
            let result = try verifier.verifyAssertion(
                credential: credential, storedSignCount: 0, clientDataJSON: try #require(a["clientDataJSON"]),
                authenticatorData: try #require(a["authenticatorData"]), signature: try #require(a["signature"]),
                challenge: try #require(a["challenge"]))
            #expect(result.possibleClone == false)
            assertions += 1
            for field in ["clientDataJSON", "authenticatorData", "signature"] {
                var values = a
                var bytes = try #require(values[field])
                bytes[bytes.count / 2] ^= 0x01
                values[field] = bytes
                #expect(throws: TokenMintError.self, "\(section.title): \(field)") {
                    try verifier.verifyAssertion(credential: credential, storedSignCount: 0, clientDataJSON: values["clientDataJSON"] ?? [],
                                                 authenticatorData: values["authenticatorData"] ?? [], signature: values["signature"] ?? [],
                                                 challenge: values["challenge"] ?? [])
                }
            }
        }
        #expect(registrations >= 8)
        #expect(assertions >= 12)
    }
}
