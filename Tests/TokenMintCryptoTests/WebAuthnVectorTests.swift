import Foundation
import Testing
import TokenMintCrypto

/// The W3C WebAuthn Level 3 test vectors sign authenticatorData ‖
/// SHA-256(clientDataJSON) with RFC 6979 ECDSA and with Ed25519: TokenMint must
/// produce the very same bytes.
@Suite("W3C WebAuthn L3 signatures")
struct WebAuthnVectorTests {
    struct Case {
        var title: String
        var privateKey: [UInt8]
        var authenticatorData: [UInt8]
        var clientDataJSON: [UInt8]
        var signature: [UInt8]
    }

    static func cases(algorithm: String) throws -> [Case] {
        guard let folder = SharedVectors.folder("webauthn") else { return [] }
        let data = try Data(contentsOf: folder.appendingPathComponent("w3c-webauthn-l3.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let sections = try #require(root["sections"] as? [[String: Any]])
        func hex(_ values: [String: Any], _ name: String) -> [UInt8]? {
            ((values[name] as? [String: Any])?["hex"] as? String).flatMap { try? Hex.decode($0) }
        }
        var result: [Case] = []
        for section in sections {
            guard let title = section["title"] as? String, title.contains(algorithm),
                let blocks = section["blocks"] as? [[String: Any]], blocks.count == 2,
                let registration = blocks[0]["values"] as? [String: Any],
                let authentication = blocks[1]["values"] as? [String: Any],
                let key = hex(registration, "credential_private_key") ?? hex(registration, "private_key"),
                let authData = hex(authentication, "authenticatorData"),
                let clientData = hex(authentication, "clientDataJSON"),
                let signature = hex(authentication, "signature")
            else { continue }
            result.append(Case(title: title, privateKey: key, authenticatorData: authData,
                               clientDataJSON: clientData, signature: signature))
        }
        return result
    }

    @Test("ES256, ES384 and ES512 assertions are byte-exact with RFC 6979")
    func ecdsaByteExact() throws {
        let suites: [(String, ECDSA.Curve, Int)] = [("ES256", .p256, 10), ("ES384", .p384, 1), ("ES512", .p521, 1)]
        for (name, curve, minimum) in suites {
            let cases = try Self.cases(algorithm: name)
            #expect(cases.count >= minimum, "\(name): found \(cases.count) vectors")
            for vector in cases {
                // Some vectors print the scalar without its leading zero byte.
                let scalar = [UInt8](repeating: 0, count: curve.scalarByteCount - vector.privateKey.count) + vector.privateKey
                let key = try ECDSA.PrivateKey(rawRepresentation: scalar, curve: curve)
                let message = vector.authenticatorData + HashFunction.sha256.hash(vector.clientDataJSON)
                let signature = try key.signature(for: message, nonce: .deterministic)
                #expect(signature.derRepresentation == vector.signature, "\(vector.title)")
                #expect(key.publicKey.isValidSignature(signature, for: message))
                let parsed = try ECDSA.Signature(derRepresentation: vector.signature, curve: curve)
                #expect(key.publicKey.isValidSignature(parsed, for: message))
                var tampered = message
                tampered[tampered.count - 1] ^= 1
                #expect(!key.publicKey.isValidSignature(parsed, for: tampered))
            }
        }
    }

    @Test("Ed25519 assertion is byte-exact")
    func ed25519ByteExact() throws {
        let cases = try Self.cases(algorithm: "Ed25519")
        #expect(cases.count == 1)
        for vector in cases {
            let key = try Ed25519.PrivateKey(rawRepresentation: vector.privateKey)
            let message = vector.authenticatorData + HashFunction.sha256.hash(vector.clientDataJSON)
            #expect(try key.signature(for: message) == vector.signature)
            #expect(key.publicKey.isValidSignature(vector.signature, for: message))
        }
    }
}
