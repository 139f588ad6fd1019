import CBenchRaw
import Foundation
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn

/// FIDO2 rows: getAssertion with an in-memory and a durable (SQLite) counter,
/// next to the raw sign of the same algorithm; RP assertion verify.
enum FIDO2Suite {
    static func groups() throws -> [Group] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-bench-fido2-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let rp = "example.org"
        let origin = "https://example.org"
        let verifier = RelyingPartyVerifier(policy: RelyingPartyPolicy(rpID: rp, origins: [origin]))
        var groups: [Group] = []
        for alg in [COSEAlgorithm.es256, .edDSA] {
            let memory = try SoftwareAuthenticator(store: InMemoryStore())
            let durable = try SoftwareAuthenticator(store: try SQLiteStore(path: directory + "/\(alg.rawValue).sqlite", masterKey: .key(SecureBytes(randomCount: 32))))
            let challenge = SecureRandom.bytes(count: 32)
            let create = CollectedClientData(type: "webauthn.create", challenge: challenge, origin: origin).json
            let hash = HashFunction.sha256.hash(create)
            let (memoryID, durableID, credential, json, assertion) = try JWTSuite.blocking { () async throws -> ([UInt8], [UInt8], RegisteredCredential, [UInt8], SoftwareAuthenticator.GetAssertionResponse) in
                let a = try await memory.makeCredential(clientDataHash: hash, rp: (rp, nil), user: ([1], "u", nil), pubKeyCredParams: [alg])
                let b = try await durable.makeCredential(clientDataHash: hash, rp: (rp, nil), user: ([1], "u", nil), pubKeyCredParams: [alg])
                let credential = try verifier.verifyRegistration(clientDataJSON: create, attestationObject: a.attestationObject.bytes, challenge: challenge)
                let get = CollectedClientData(type: "webauthn.get", challenge: challenge, origin: origin).json
                let assertion = try await memory.getAssertion(clientDataHash: HashFunction.sha256.hash(get), rpID: rp, allowList: [a.credentialID])
                return (a.credentialID, b.credentialID, credential, get, assertion)
            }
            let getHash = HashFunction.sha256.hash(json)
            let message = assertion.authenticatorData.bytes + getHash
            var out = [UInt8](repeating: 0, count: 160)
            let raw: Case
            if alg == .edDSA {
                var pk = [UInt8](repeating: 0, count: 32), sk = [UInt8](repeating: 0, count: 64)
                CBenchRaw_ed25519_seed_keypair(&pk, &sk, SecureRandom.bytes(count: 32))
                raw = Case(implementation: .raw("libsodium")) { CBenchRaw_ed25519_sign(&out, message, message.count, sk) == 0 }
            } else {
                let key = try ECDSA.PrivateKey(curve: .p256)
                let der = try key.derRepresentation.unsafeCopy
                guard let handle = CBenchRaw_private_key(der, der.count) else { throw BenchError("P-256 key") }
                raw = Case(implementation: .raw("OpenSSL EVP")) {
                    var length = out.count
                    return CBenchRaw_sign(handle, "SHA2-256", 0, message, message.count, &out, &length) == 0
                }
            }
            let name = alg == .es256 ? "ES256" : "EdDSA"
            groups.append(Group(name: "FIDO2 \(name) getAssertion (memory)", cases: [
                raw,
                Case(implementation: .tokenmint) {
                    (try? await memory.getAssertion(clientDataHash: getHash, rpID: rp, allowList: [memoryID])) != nil
                },
            ], goalToRaw: 0.9))
            groups.append(Group(name: "FIDO2 \(name) getAssertion (SQLite)", cases: [
                raw,
                Case(implementation: .tokenmint) {
                    (try? await durable.getAssertion(clientDataHash: getHash, rpID: rp, allowList: [durableID])) != nil
                },
            ], goalToRaw: nil))
            groups.append(Group(name: "FIDO2 \(name) RP verify", cases: [
                Case(implementation: .tokenmint) {
                    (try? verifier.verifyAssertion(credential: credential, storedSignCount: 0, clientDataJSON: json,
                                                   authenticatorData: assertion.authenticatorData.bytes, signature: assertion.signature,
                                                   challenge: challenge)) != nil
                },
            ], goalToRaw: nil))
        }
        return groups
    }
}
