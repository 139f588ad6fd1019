import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintJOSE

/// Regressions for the JOSE findings of the adversarial review.
@Suite("Attacks on JWT validation")
struct JWTAttackTests {
    static let now: Int64 = 1_763_776_800

    static func verify(_ claims: JWTClaims, leeway: Int64, maximumAge: Int64? = nil) throws -> VerifiedJWT {
        let key = try JWK.generate(for: .EdDSA, keyID: "k")
        let token = try JWTSigner(key: key).sign(claims)
        var validation = JWTValidation()
        validation.leeway = leeway
        validation.maximumAge = maximumAge
        validation.clock = { now }
        return try JWTVerifier(keys: JWKSet(keys: [key]), validation: validation).verify(token)
    }

    @Test("exp at the end of time is not expired with a leeway (the sum used to wrap round)")
    func extremeTimes() throws {
        _ = try Self.verify(JWTClaims(expiration: .max), leeway: 1)
        _ = try Self.verify(JWTClaims(expiration: .max, issuedAt: .min), leeway: 600, maximumAge: .max)
        expectJOSE(.jose.notYetValid) { _ = try Self.verify(JWTClaims(expiration: .max, notBefore: .max), leeway: 600) }
        expectJOSE(.jose.expired) { _ = try Self.verify(JWTClaims(expiration: .min), leeway: 600) }
    }

    @Test("a leeway outside 0…600 s or a negative maximum age is refused, not clamped")
    func boundedSettings() throws {
        for leeway in [Int64(601), -1, .max, .min] {
            expectJOSE(.jose.invalidConfiguration) { _ = try Self.verify(JWTClaims(expiration: Self.now + 60), leeway: leeway) }
        }
        expectJOSE(.jose.invalidConfiguration) { _ = try Self.verify(JWTClaims(expiration: Self.now + 60), leeway: 0, maximumAge: -1) }
    }

    @Test("a kid with terminal escapes and newlines is escaped in the refusal")
    func escapedKeyID() throws {
        let signing = try JWK.generate(for: .EdDSA, keyID: "evil\u{1b}[31m\nFAKE LOG LINE\u{0}")
        let token = try JWTSigner(key: signing).sign(JWTClaims(expiration: Self.now + 60))
        var validation = JWTValidation()
        validation.clock = { Self.now }
        let other = try JWK.generate(for: .EdDSA, keyID: "good")
        let verifier = try JWTVerifier(keys: JWKSet(keys: [other]), validation: validation)
        let result = Result { try verifier.verify(token) }
        guard case .failure(let failure) = result, let error = failure as? TokenMintError else {
            Issue.record("verified with an unknown kid, or failed oddly")
            return
        }
        let text = error.description
        #expect(error.code == .jose.unknownKeyID)
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }, "\(text.debugDescription)")
    }
}
