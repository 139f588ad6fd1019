import TokenMintCore
import Foundation
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn

/// CTAP 2.1 extensions in the software authenticator (hmac-secret behind
/// WebAuthn's prf, credProtect, credBlob, largeBlobKey, minPinLength) and
/// their typed outputs at the relying party, signed (authenticator data) and
/// unsigned (`clientExtensionResults`).
@Suite("WebAuthn extensions")
struct ExtensionTests {
    static let rp = SoftwareAuthenticatorTests.rp
    static let origin = SoftwareAuthenticatorTests.origin

    /// Registers with `extensions` and verifies at the RP.
    static func register(
        _ session: SoftwareAuthenticator, _ extensions: SoftwareAuthenticator.MakeCredentialExtensions, resident: Bool = false, uv: Bool = false,
        excludeList: [[UInt8]] = []
    ) async throws -> (SoftwareAuthenticator.MakeCredentialResponse, RegisteredCredential) {
        let challenge = SecureRandom.bytes(count: 32)
        let json = SoftwareAuthenticatorTests.clientData("webauthn.create", challenge)
        let made = try await session.makeCredential(
            clientDataHash: HashFunction.sha256.hash(json), rp: (rp, nil), user: (SecureRandom.bytes(count: 8), "alice", nil),
            pubKeyCredParams: [.es256], excludeList: excludeList,
            options: .init(residentKey: resident, userVerification: uv, extensions: extensions))
        let credential = try SoftwareAuthenticatorTests.verifier.verifyRegistration(
            clientDataJSON: json, attestationObject: made.attestationObject.bytes, challenge: challenge)
        return (made, credential)
    }

    /// An assertion with `extensions`, verified at the RP.
    static func assert(
        _ session: SoftwareAuthenticator, _ credential: RegisteredCredential, stored: UInt32, allow: Bool = true, uv: Bool = false,
        _ extensions: SoftwareAuthenticator.GetAssertionExtensions = .init()
    ) async throws -> (SoftwareAuthenticator.GetAssertionResponse, AssertionResult) {
        let challenge = SecureRandom.bytes(count: 32)
        let json = SoftwareAuthenticatorTests.clientData("webauthn.get", challenge)
        let response = try await session.getAssertion(
            clientDataHash: HashFunction.sha256.hash(json), rpID: rp, allowList: allow ? [credential.credentialID] : [],
            options: .init(userVerification: uv, extensions: extensions))
        let result = try SoftwareAuthenticatorTests.verifier.verifyAssertion(
            credential: credential, storedSignCount: stored, clientDataJSON: json, authenticatorData: response.authenticatorData.bytes,
            signature: response.signature, challenge: challenge)
        return (response, result)
    }

    @Test("hmac-secret: outputs are HMAC-SHA-256 under the credential's secret for UV or not, encrypted in the authenticator data")
    func hmacSecret() async throws {
        let store = InMemoryStore()
        let session = try SoftwareAuthenticator(store: store, supportsUserVerification: true)
        let (made, credential) = try await Self.register(session, .init(hmacSecret: true))
        #expect(made.extensionOutputs.hmacSecret == true)
        #expect(credential.extensionOutputs.hmacSecret == true)
        let salt1 = SoftwareAuthenticator.prfSalt(Array("first".utf8))
        let salt2 = SoftwareAuthenticator.prfSalt(Array("second".utf8))
        // WebAuthn L3 §10.1.4: the salt is SHA-256("WebAuthn PRF" ‖ 0x00 ‖ input).
        #expect(salt1 == HashFunction.sha256.hash(Array("WebAuthn PRF\u{0}first".utf8)))

        let (a, resultA) = try await Self.assert(session, credential, stored: 0, .init(hmacSecret: (salt1, nil)))
        let (b, _) = try await Self.assert(session, credential, stored: 1, .init(hmacSecret: (salt1, salt2)))
        let (c, _) = try await Self.assert(session, credential, stored: 2, uv: true, .init(hmacSecret: (salt1, nil)))
        let outA = try #require(a.hmacSecret).unsafeCopy, outB = try #require(b.hmacSecret).unsafeCopy
        let outC = try #require(c.hmacSecret).unsafeCopy
        #expect(outA.count == 32 && outB.count == 64)
        #expect(Array(outB[0..<32]) == outA, "the same salt gives the same output")
        #expect(Array(outB[32...]) != outA, "another salt another")
        #expect(outC != outA, "with UV the other secret is used")

        // Independently: HMAC-SHA-256 of the salt under the stored secret's half.
        let secrets = try #require(try store.transaction { tx in try tx.secret("fido2.hmac." + Base64URL.encode(credential.credentialID)) })
        let bytes = secrets.unsafeCopy
        let withoutUV = try HMACKey(Array(bytes[32..<64]), hash: .sha256), withUV = try HMACKey(Array(bytes[0..<32]), hash: .sha256)
        #expect(HMAC.authenticationCode(for: salt1, using: withoutUV) == outA)
        #expect(HMAC.authenticationCode(for: salt2, using: withoutUV) == Array(outB[32...]))
        #expect(HMAC.authenticationCode(for: salt1, using: withUV) == outC)

        // The RP sees IV ‖ ciphertext, never the outputs.
        let encrypted = try #require(resultA.extensionOutputs.hmacSecretOutput)
        #expect(encrypted.count == 48)
        #expect(try #require(b.extensionOutputs.hmacSecretOutput).count == 80)
        #expect(!a.authenticatorData.bytes.containsSubsequence(outA))

        // A credential made without hmac-secret gives no output, and salts must be 32 bytes.
        let (_, plain) = try await Self.register(session, .init())
        let (d, resultD) = try await Self.assert(session, plain, stored: 0, .init(hmacSecret: (salt1, nil)))
        #expect(d.hmacSecret == nil && resultD.extensionOutputs.hmacSecretOutput == nil && d.authenticatorData.extensions == nil)
        await expectCTAP(0x02) { _ = try await Self.assert(session, credential, stored: 3, .init(hmacSecret: ([1, 2, 3], nil))) }
    }

    @Test("credProtect: level 2 hides a credential from discovery without UV, level 3 needs UV for every use and for exclusion")
    func credProtect() async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)
        let (_, two) = try await Self.register(session, .init(credProtect: .userVerificationOptionalWithCredentialIDList), resident: true)
        #expect(two.extensionOutputs.credProtect == .userVerificationOptionalWithCredentialIDList)
        // Discoverable without UV: not offered; with UV, or named in an allow list: usable.
        await expectCTAP(0x2E) { _ = try await Self.assert(session, two, stored: 0, allow: false) }
        _ = try await Self.assert(session, two, stored: 0, allow: false, uv: true)
        _ = try await Self.assert(session, two, stored: 1, allow: true)

        let (_, three) = try await Self.register(session, .init(credProtect: .userVerificationRequired), uv: true)
        #expect(three.extensionOutputs.credProtect == .userVerificationRequired)
        await expectCTAP(0x2E) { _ = try await Self.assert(session, three, stored: 0) }
        _ = try await Self.assert(session, three, stored: 0, uv: true)
        // Exclusion of a level-3 credential only with UV (CTAP 2.1 §6.1.2 step 7).
        _ = try await Self.register(session, .init(), excludeList: [three.credentialID])
        await expectCTAP(0x19) { _ = try await Self.register(session, .init(), uv: true, excludeList: [three.credentialID]) }

        // UV is done before credentials are looked up: a failed UV is operationDenied whether or not
        // a protected credential exists (no oracle), and exclusion needs UV that succeeded.
        let refusing = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true, verifyUser: { _ in false })
        await expectCTAP(0x27) { _ = try await refusing.getAssertion(clientDataHash: [UInt8](repeating: 1, count: 32), rpID: Self.rp,
                                                                    options: .init(userVerification: true)) }
        await expectCTAP(0x27) { _ = try await Self.register(refusing, .init(), uv: true) }

        // Level 1 (the default) is not reported.
        let (_, one) = try await Self.register(session, .init(credProtect: .userVerificationOptional))
        #expect(one.extensionOutputs.credProtect == .userVerificationOptional)
        let (_, none) = try await Self.register(session, .init())
        #expect(none.extensionOutputs == AuthenticatorExtensionOutputs())
        #expect(CredentialProtection(webAuthnName: "userVerificationRequired") == .userVerificationRequired)
    }

    @Test("credBlob kept up to 32 bytes and returned on request; largeBlobKey for resident credentials; minPinLength to chosen RPs")
    func credBlobLargeBlobKeyMinPinLength() async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore(), minimumPINLength: 6, minPinLengthRPIDs: [Self.rp])
        let blob = Array("a blob of 32 bytes, exactly.....".utf8)
        #expect(blob.count == 32)
        let (made, credential) = try await Self.register(session, .init(credBlob: blob, minPinLength: true, largeBlobKey: true), resident: true)
        #expect(credential.extensionOutputs.credBlobStored == true)
        #expect(credential.extensionOutputs.minPinLength == 6)
        let key = try #require(made.largeBlobKey)
        #expect(key.count == 32)
        let (got, result) = try await Self.assert(session, credential, stored: 0, .init(credBlob: true, largeBlobKey: true))
        #expect(result.extensionOutputs.credBlob == blob)
        #expect(got.largeBlobKey == key)
        let (plain, _) = try await Self.assert(session, credential, stored: 1)
        #expect(plain.authenticatorData.extensions == nil && plain.largeBlobKey == nil)

        // Too long a blob is not kept, and says so; an empty one comes back.
        let (_, long) = try await Self.register(session, .init(credBlob: [UInt8](repeating: 1, count: 33)))
        #expect(long.extensionOutputs.credBlobStored == false)
        let (_, longResult) = try await Self.assert(session, long, stored: 0, .init(credBlob: true))
        #expect(longResult.extensionOutputs.credBlob == [])
        // largeBlobKey needs a resident credential (CTAP2_ERR_INVALID_OPTION).
        await expectCTAP(0x2C) { _ = try await Self.register(session, .init(largeBlobKey: true)) }
        // minPinLength only to RP IDs the authenticator was told.
        let other = try SoftwareAuthenticator(store: InMemoryStore())
        let (_, silent) = try await Self.register(other, .init(minPinLength: true))
        #expect(silent.extensionOutputs.minPinLength == nil)
        #expect(throws: TokenMintError.self) { try SoftwareAuthenticator(store: InMemoryStore(), minimumPINLength: 3) }

        let info = await session.getInfo()
        #expect(info.extensions == ["credBlob", "credProtect", "hmac-secret", "hmac-secret-mc", "largeBlobKey", "minPinLength"])
        #expect(info.maxCredBlobLength == 32)
    }

    @Test("RP: malformed extension outputs are invalidExtension; unknown ones are named; py_webauthn's fixtures parse")
    func relyingPartyOutputs() throws {
        func outputs(_ pairs: [(String, CBOR)], _ ceremony: AuthenticatorExtensionOutputs.Ceremony) throws(TokenMintError) -> AuthenticatorExtensionOutputs {
            try AuthenticatorExtensionOutputs(.map(pairs.map { CBORMapEntry(key: .text($0.0), value: $0.1) }), ceremony: ceremony)
        }
        let bad: [([(String, CBOR)], AuthenticatorExtensionOutputs.Ceremony)] = [
            ([("credProtect", .int(4))], .registration), ([("credProtect", .text("3"))], .registration),
            ([("hmac-secret", .bytes([UInt8](repeating: 0, count: 32)))], .registration), ([("hmac-secret", .bool(true))], .assertion),
            ([("hmac-secret", .bytes([1, 2]))], .assertion), ([("credBlob", .text("x"))], .assertion),
            ([("credBlob", .bytes([1]))], .registration), ([("minPinLength", .int(2))], .registration),
            ([("minPinLength", .int(4))], .assertion), ([("credProtect", .int(2))], .assertion),
            ([("credBlob", .bytes([UInt8](repeating: 0, count: 65)))], .assertion),
        ]
        for (pairs, ceremony) in bad {
            #expect(throws: TokenMintError.self, "\(pairs) in \(ceremony)") { try outputs(pairs, ceremony) }
            do { _ = try outputs(pairs, ceremony) } catch { #expect(error.code == .webAuthn.invalidExtension) }
        }
        #expect(throws: TokenMintError.self) { try AuthenticatorExtensionOutputs(.map([CBORMapEntry(key: .int(1), value: .int(1))]), ceremony: .registration) }
        let mixed = try outputs([("credProtect", .int(3)), ("thirdParty", .text("x")), ("hmac-secret", .bool(false))], .registration)
        #expect(mixed.credProtect == .userVerificationRequired && mixed.hmacSecret == false && mixed.otherExtensions == ["thirdParty"])

        // py_webauthn's parser fixtures (Vectors/webauthn/extensions.json).
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/webauthn/extensions.json")
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let cases = try #require(file["cases"] as? [[String: Any]])
        #expect(cases.count == 2)
        for item in cases {
            let data = try AuthenticatorData(parsing: try Base64URL.decode(try #require(item["authenticatorData"] as? String)))
            #expect(Int(data.signCount) == item["signCount"] as? Int)
            #expect(data.flags.contains(.extensionData))
            let ceremony: AuthenticatorExtensionOutputs.Ceremony = item["ceremony"] as? String == "registration" ? .registration : .assertion
            let parsed = try AuthenticatorExtensionOutputs(data.extensions, ceremony: ceremony)
            #expect(parsed.otherExtensions == item["otherExtensions"] as? [String])
            let expected = try #require(item["extensions"] as? [String: Any])
            #expect(parsed.credProtect?.rawValue == expected["credProtect"] as? Int)
            if let key = item["credentialPublicKey"] as? String {
                #expect(data.attestedCredential?.publicKey.cbor == (try Base64URL.decode(key)))
            }
            if let rpID = item["rpID"] as? String { #expect(data.rpIDHash == HashFunction.sha256.hash(Array(rpID.utf8))) }
        }
    }

    @Test("clientExtensionResults: typed, wrong shapes refused, PRF outputs and blobs refused where the RP never asked for them")
    func clientExtensionResults() throws {
        func parse(_ text: String) throws(TokenMintError) -> ClientExtensionResults {
            try ClientExtensionResults(try JSONParser.parse(Array(text.utf8)))
        }
        let good = try parse(#"{"credProps":{"rk":true},"prf":{"enabled":true},"largeBlob":{"supported":false},"appid":false}"#)
        #expect(good.residentKey == true && good.prfEnabled == true && good.largeBlobSupported == false && good.otherExtensions == ["appid"])
        #expect(try ClientExtensionResults(nil) == ClientExtensionResults())
        for text in [#"[]"#, #"{"credProps":true}"#, #"{"credProps":{"rk":"yes"}}"#, #"{"prf":{"enabled":1}}"#, #"{"prf":{"results":"x"}}"#,
                     #"{"largeBlob":{"written":null}}"#, #"{"largeBlob":{"blob":3}}"#] {
            #expect(throws: TokenMintError.self, "\(text)") { try parse(text) }
        }
        let leaked = try parse(#"{"prf":{"enabled":true,"results":{"first":"AAAA"}}}"#)
        #expect(leaked.prfResultsPresent)
        #expect(throws: TokenMintError.self) { try leaked.refusingClientSecrets() }
        #expect(throws: TokenMintError.self) { try parse(#"{"largeBlob":{"blob":"AAAA"}}"#).refusingClientSecrets() }
        _ = try good.refusingClientSecrets()
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        return (0...(count - needle.count)).contains { self[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
