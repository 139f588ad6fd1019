import Testing
import TokenMintCrypto

@Suite struct ECDSATests {
    @Test(arguments: [ECDSA.Curve.p256, .p384, .p521])
    func signVerifyRoundTrip(curve: ECDSA.Curve) throws {
        let key = try ECDSA.PrivateKey(curve: curve)
        let message = Array("hello".utf8)
        for nonce in [ECDSA.Nonce.random, .deterministic] {
            let signature = try key.signature(for: message, nonce: nonce)
            #expect(key.publicKey.isValidSignature(signature, for: message))
            #expect(!key.publicKey.isValidSignature(signature, for: Array("hellp".utf8)))
            let raw = try ECDSA.Signature(rawRepresentation: signature.rawRepresentation, curve: curve)
            let der = try ECDSA.Signature(derRepresentation: signature.derRepresentation, curve: curve)
            #expect(raw == signature && der == signature)
        }
    }
}
