import TokenMintCore
import Foundation
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn

/// Regressions for the relying-party attacks of the adversarial review.
@Suite("Attacks on the relying party")
struct RelyingPartyAttackTests {
    static func registration() async throws -> (json: [UInt8], attestation: [UInt8], challenge: [UInt8], id: [UInt8]) {
        let session = try SoftwareAuthenticator(store: InMemoryStore())
        let challenge = SecureRandom.bytes(count: 32)
        let json = SoftwareAuthenticatorTests.clientData("webauthn.create", challenge)
        let made = try await session.makeCredential(
            clientDataHash: HashFunction.sha256.hash(json), rp: (SoftwareAuthenticatorTests.rp, nil), user: ([1], "alice", nil), pubKeyCredParams: [.es256])
        return (json, made.attestationObject.bytes, challenge, made.credentialID)
    }

    @Test("a rawId that is not the credential ID in the authenticator data is refused")
    func rawIDMismatch() async throws {
        let r = try await Self.registration()
        let verifier = SoftwareAuthenticatorTests.verifier
        _ = try verifier.verifyRegistration(clientDataJSON: r.json, attestationObject: r.attestation, challenge: r.challenge, rawID: r.id)
        var other = r.id
        other[0] ^= 1
        #expect(throws: TokenMintError.self) {
            _ = try verifier.verifyRegistration(clientDataJSON: r.json, attestationObject: r.attestation, challenge: r.challenge, rawID: other)
        }
    }

    @Test("clientDataJSON claiming token binding in use is refused; supported is not")
    func tokenBinding() throws {
        let challenge = Base64URL.encode(SecureRandom.bytes(count: 32))
        let base = #"{"type":"webauthn.get","challenge":"\#(challenge)","origin":"https://example.org","crossOrigin":false"#
        #expect(throws: TokenMintError.self) { _ = try CollectedClientData(parsing: Array((base + #","tokenBinding":{"status":"present","id":"AAA"}}"#).utf8)) }
        #expect(throws: TokenMintError.self) { _ = try CollectedClientData(parsing: Array((base + #","tokenBinding":"present"}"#).utf8)) }
        _ = try CollectedClientData(parsing: Array((base + #","tokenBinding":{"status":"supported"}}"#).utf8))
    }

    @Test("attacker text in a refusal is escaped")
    func escapedOrigin() throws {
        let challenge = SecureRandom.bytes(count: 32)
        let json = Array(#"{"type":"webauthn.get","challenge":"\#(Base64URL.encode(challenge))","origin":"https://x\u001b[31m\n\u0000"}"#.utf8)
        var policy = RelyingPartyPolicy(rpID: SoftwareAuthenticatorTests.rp, origins: [SoftwareAuthenticatorTests.origin])
        policy.requireUserVerification = false
        do {
            _ = try RelyingPartyVerifier(policy: policy).verifyAssertion(
                credential: RegisteredCredential(credentialID: [1], publicKey: COSEKey(Ed25519.PrivateKey().publicKey), signCount: 0, backupEligible: false,
                                                 backupState: false, userVerified: false, attestationFormat: "none", aaguid: []),
                storedSignCount: 0, clientDataJSON: json, authenticatorData: [], signature: [], challenge: challenge)
            Issue.record("accepted")
        } catch {
            let text = "\(error)"
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }, "\(text.debugDescription)")
        }
    }
}
