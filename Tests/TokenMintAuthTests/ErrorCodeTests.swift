import Testing
import TokenMintAuth
import TokenMintCore
import TokenMintJOSE
import TokenMintWebAuthn

/// Codes that carry the number of the protocol or SDK they mirror.
@Suite("Error codes with numbers")
struct ErrorCodeTests {
    @Test("sign-in codes keep the SDK's numbers; authenticator codes their CTAP2 status")
    func numbers() {
        #expect(TokenMintError.Code.auth.notSignedIn.number == -600)
        #expect(TokenMintError.Code.auth.notSignedIn.description == "auth.notSignedIn (-600)")
        #expect(TokenMintError.Code.auth.notSignedIn.ctapStatus == nil)
        #expect(TokenMintError.Code.webAuthn.credentialExcluded.ctapStatus == 0x19)
        #expect(TokenMintError(.webAuthn.credentialExcluded, "x").ctapStatus == 0x19)
        #expect(TokenMintError.Code.webAuthn.credentialExcluded.description == "webauthn.credentialExcluded (0x19)")
        #expect(TokenMintError.Code.webAuthn.originMismatch.ctapStatus == nil)
        #expect(TokenMintError.Code.webAuthn.invalidSignature != .jose.invalidSignature)
    }
}
