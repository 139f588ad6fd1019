import TokenMintCore
import Foundation
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn

func expectCTAP(_ status: UInt8, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected CTAP2 status 0x\(String(status, radix: 16))", sourceLocation: sourceLocation)
    } catch let error as TokenMintError {
        if error.ctapStatus != status { Issue.record("expected 0x\(String(status, radix: 16)), got \(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("expected 0x\(String(status, radix: 16)), got \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("FIDO2 software authenticator")
struct SoftwareAuthenticatorTests {
    static let rp = "example.org"
    static let origin = "https://example.org"

    static func clientData(_ type: String, _ challenge: [UInt8]) -> [UInt8] {
        CollectedClientData(type: type, challenge: challenge, origin: origin).json
    }

    static var verifier: RelyingPartyVerifier { RelyingPartyVerifier(policy: RelyingPartyPolicy(rpID: rp, origins: [origin])) }

    static func register(_ session: SoftwareAuthenticator, alg: COSEAlgorithm, attestation: SoftwareAuthenticator.Attestation = .none, resident: Bool = false,
                         user: [UInt8] = [1, 2, 3]) async throws -> RegisteredCredential {
        let challenge = SecureRandom.bytes(count: 32)
        let json = clientData("webauthn.create", challenge)
        let made = try await session.makeCredential(
            clientDataHash: HashFunction.sha256.hash(json), rp: (rp, "Example"), user: (user, "alice", nil), pubKeyCredParams: [alg],
            options: .init(residentKey: resident), attestation: attestation)
        return try verifier.verifyRegistration(clientDataJSON: json, attestationObject: made.attestationObject.bytes, challenge: challenge)
    }

    @Test(arguments: [COSEAlgorithm.es256, .edDSA])
    func registerAndAssert(alg: COSEAlgorithm) async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore())
        for attestation in [SoftwareAuthenticator.Attestation.none, .packed] {
            let credential = try await Self.register(session, alg: alg, attestation: attestation)
            #expect(credential.publicKey.algorithm == alg)
            var stored = credential.signCount
            for _ in 0..<3 {
                let challenge = SecureRandom.bytes(count: 32)
                let json = Self.clientData("webauthn.get", challenge)
                let response = try await session.getAssertion(clientDataHash: HashFunction.sha256.hash(json), rpID: Self.rp,
                                                              allowList: [credential.credentialID])
                let result = try Self.verifier.verifyAssertion(
                    credential: credential, storedSignCount: stored, clientDataJSON: json, authenticatorData: response.authenticatorData.bytes,
                    signature: response.signature, challenge: challenge)
                #expect(result.signCount == stored + 1)
                stored = result.signCount
                // A replay (same counter) is a clone signal.
                #expect(throws: TokenMintError.self) {
                    try Self.verifier.verifyAssertion(credential: credential, storedSignCount: stored, clientDataJSON: json,
                                                      authenticatorData: response.authenticatorData.bytes, signature: response.signature, challenge: challenge)
                }
            }
        }
    }

    @Test("CTAP2 status codes: no credentials, unsupported UV, denied presence, excluded credential; uv:false accepted")
    func statusCodes() async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore())
        let hash = [UInt8](repeating: 7, count: 32)
        await expectCTAP(0x2E) { _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp) }
        await expectCTAP(0x2B) {
            _ = try await session.makeCredential(clientDataHash: hash, rp: (Self.rp, nil), user: ([1], "a", nil), pubKeyCredParams: [.es256],
                                                 options: .init(userVerification: true))
        }
        await expectCTAP(0x26) {
            _ = try await session.makeCredential(clientDataHash: hash, rp: (Self.rp, nil), user: ([1], "a", nil), pubKeyCredParams: [.rs256])
        }
        let credential = try await Self.register(session, alg: .es256)
        // uv:false on an authenticator without UV is fine (YubiKit #46).
        _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [credential.credentialID], options: .init(userVerification: false))
        await expectCTAP(0x2B) {
            _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [credential.credentialID], options: .init(userVerification: true))
        }
        await expectCTAP(0x19) {
            _ = try await session.makeCredential(clientDataHash: hash, rp: (Self.rp, nil), user: ([1], "a", nil), pubKeyCredParams: [.es256],
                                                 excludeList: [credential.credentialID])
        }
        await expectCTAP(0x2E) { _ = try await session.getAssertion(clientDataHash: hash, rpID: "other.example", allowList: [credential.credentialID]) }
        await expectCTAP(0x30) { _ = try await session.getNextAssertion() }
        let denying = try SoftwareAuthenticator(store: InMemoryStore(), confirmPresence: { _ in false })
        await expectCTAP(0x27) {
            _ = try await denying.makeCredential(clientDataHash: hash, rp: (Self.rp, nil), user: ([1], "a", nil), pubKeyCredParams: [.es256])
        }
    }

    @Test("resident credentials are discoverable, newest first, with getNextAssertion and user handles")
    func residentCredentials() async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore())
        _ = try await Self.register(session, alg: .es256, resident: true, user: [1])
        _ = try await Self.register(session, alg: .edDSA, resident: true, user: [2])
        _ = try await Self.register(session, alg: .es256, resident: false, user: [3])
        let first = try await session.getAssertion(clientDataHash: [UInt8](repeating: 1, count: 32), rpID: Self.rp)
        #expect(first.numberOfCredentials == 2)
        #expect(first.userHandle == [2])
        let second = try await session.getNextAssertion()
        #expect(second.userHandle == [1])
        await expectCTAP(0x30) { _ = try await session.getNextAssertion() }
    }

    @Test("what the authenticator keeps of a credential after signing follows a rename, a delete and a reset")
    func keptCredentialFollowsChanges() async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)
        let credential = try await Self.register(session, alg: .edDSA, resident: true, user: [7])
        let hash = [UInt8](repeating: 5, count: 32)
        let uv = SoftwareAuthenticator.GetAssertionOptions(userVerification: true)
        let before = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, options: uv)
        #expect(before.user?.name == "alice" && before.authenticatorData.signCount == 1)
        // Renamed after its key was opened and kept: the next assertion names the new user.
        try await session.updateUser(credentialID: credential.credentialID, userID: [7], name: "renamed", displayName: "R")
        let after = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, options: uv)
        #expect(after.user?.name == "renamed" && after.user?.displayName == "R" && after.authenticatorData.signCount == 2)
        // The kept key still signs what the registered public key verifies.
        #expect(credential.publicKey.isValidSignature(after.signature, for: after.authenticatorData.bytes + hash))
        // Deleted: neither the allow list nor discovery finds it, though its key was kept.
        try await session.deleteCredential(credential.credentialID)
        await expectCTAP(0x2E) { _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [credential.credentialID]) }
        await expectCTAP(0x2E) { _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp) }
        // Reset forgets another kept credential as well.
        let other = try await Self.register(session, alg: .es256)
        _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [other.credentialID])
        try await session.reset()
        await expectCTAP(0x2E) { _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [other.credentialID]) }
    }

    /// Holds the next presence check until released, and says when it is waiting.
    final class PresenceGate: @unchecked Sendable {
        private let lock = NSLock()
        private var armed = false
        let entered: AsyncStream<Void>
        private let enteredContinuation: AsyncStream<Void>.Continuation
        private let released: AsyncStream<Void>
        private let releaseContinuation: AsyncStream<Void>.Continuation

        init() {
            (entered, enteredContinuation) = AsyncStream<Void>.makeStream()
            (released, releaseContinuation) = AsyncStream<Void>.makeStream()
        }

        /// The next presence check waits for ``release()``.
        func arm() { lock.withLock { armed = true } }
        func release() { releaseContinuation.yield() }

        func confirm() async -> Bool {
            guard lock.withLock({ () -> Bool in defer { armed = false }; return armed }) else { return true }
            enteredContinuation.yield()
            for await _ in released { break }
            return true
        }
    }

    @Test("a credential deleted while the user is asked for presence is neither counted nor used (0x22), whether its key was open or not")
    func deletedDuringPresence() async throws {
        let gate = PresenceGate()
        let store = InMemoryStore()
        let session = try SoftwareAuthenticator(store: store, confirmPresence: { _ in await gate.confirm() })
        let hash = [UInt8](repeating: 3, count: 32)
        var waiting = gate.entered.makeAsyncIterator()
        for keyOpen in [false, true] {
            let credential = try await Self.register(session, alg: .edDSA, resident: true, user: [keyOpen ? 2 : 1])
            let id = credential.credentialID
            if keyOpen { _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [id]) }
            let countName = "fido2.count." + Base64URL.encode(id)
            gate.arm()
            let assertion = Task { try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [id]) }
            _ = await waiting.next()
            try await session.deleteCredential(id)
            let counted = try store.transaction { tx in try tx.counter(countName) }
            gate.release()
            await expectCTAP(0x22) { _ = try await assertion.value }
            #expect(try store.transaction { tx in try tx.counter(countName) } == counted)
        }
    }

    @Test("resident credentials are capped: keyStoreFull (0x28) beyond the cap, nothing stored, non-resident ones still made, reset frees")
    func residentCap() async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore(), maximumResidentCredentials: 2)
        _ = try await Self.register(session, alg: .es256, resident: true, user: [1])
        _ = try await Self.register(session, alg: .edDSA, resident: true, user: [2])
        let hash = [UInt8](repeating: 4, count: 32)
        for alg in [COSEAlgorithm.es256, .edDSA] {
            await expectCTAP(0x28) {
                _ = try await session.makeCredential(clientDataHash: hash, rp: (Self.rp, nil), user: ([3], "c", nil), pubKeyCredParams: [alg],
                                                     options: .init(residentKey: true))
            }
        }
        // Another RP counts against the same cap.
        await expectCTAP(0x28) {
            _ = try await session.makeCredential(clientDataHash: hash, rp: ("other.example", nil), user: ([3], "c", nil), pubKeyCredParams: [.es256],
                                                 options: .init(residentKey: true))
        }
        await expectCTAP(0x2E) { _ = try await session.getAssertion(clientDataHash: hash, rpID: "other.example") }
        _ = try await Self.register(session, alg: .es256, resident: false, user: [4])
        let first = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp)
        #expect(first.numberOfCredentials == 2)
        try await session.reset()
        _ = try await Self.register(session, alg: .es256, resident: true, user: [5])
        let after = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp)
        #expect(after.numberOfCredentials == 1)
        #expect(after.userHandle == [5])
        await expectCTAP(0x02) { _ = try SoftwareAuthenticator(store: InMemoryStore(), maximumResidentCredentials: 0) }
    }

    @Test("a resident credential for the same RP and user handle replaces the old one, even at the cap (CTAP 2.1 §6.1.2)")
    func residentReplaced() async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore(), maximumResidentCredentials: 2)
        let old = try await Self.register(session, alg: .es256, resident: true, user: [1])
        _ = try await Self.register(session, alg: .es256, resident: true, user: [2])
        // At the cap, the same user's new credential still fits: it takes the old one's place.
        let new = try await Self.register(session, alg: .edDSA, resident: true, user: [1])
        let hash = [UInt8](repeating: 4, count: 32)
        let first = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp)
        #expect(first.numberOfCredentials == 2)
        #expect(first.credentialID == new.credentialID && first.userHandle == [1])
        let second = try await session.getNextAssertion()
        #expect(second.userHandle == [2])
        await expectCTAP(0x2E) { _ = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [old.credentialID]) }
        // Another RP's credential for the same user handle is another credential.
        _ = try await session.makeCredential(clientDataHash: hash, rp: ("other.example", nil), user: ([1], "a", nil), pubKeyCredParams: [.es256],
                                             options: .init(residentKey: false))
        let still = try await session.getAssertion(clientDataHash: hash, rpID: Self.rp, allowList: [new.credentialID])
        #expect(still.credentialID == new.credentialID)
    }

    @Test("signCount is durable across sessions on the same store and never decreases; 'always 0' policy")
    func durableCounter() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fido2-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let key = SecureBytes(randomCount: 32)
        let credential: RegisteredCredential
        do {
            let session = try SoftwareAuthenticator(store: try SQLiteStore(path: dir + "/a.sqlite", masterKey: .key(key)))
            credential = try await Self.register(session, alg: .edDSA)
            for _ in 0..<3 { _ = try await session.getAssertion(clientDataHash: [UInt8](repeating: 2, count: 32), rpID: Self.rp, allowList: [credential.credentialID]) }
        }
        let reopened = try SoftwareAuthenticator(store: try SQLiteStore(path: dir + "/a.sqlite", masterKey: .key(key)))
        let next = try await reopened.getAssertion(clientDataHash: [UInt8](repeating: 2, count: 32), rpID: Self.rp, allowList: [credential.credentialID])
        #expect(next.authenticatorData.signCount == 4)
        let synced = try SoftwareAuthenticator(store: InMemoryStore(), backupEligible: true, backupState: true, signCountPolicy: .alwaysZero)
        let passkey = try await Self.register(synced, alg: .es256)
        #expect(passkey.backupEligible && passkey.backupState)
        let a = try await synced.getAssertion(clientDataHash: [UInt8](repeating: 3, count: 32), rpID: Self.rp, allowList: [passkey.credentialID])
        #expect(a.authenticatorData.signCount == 0)
        #expect(throws: TokenMintError.self) { _ = try SoftwareAuthenticator(store: InMemoryStore(), backupEligible: false, backupState: true) }
    }

    @Test("RP rules: subdomain origins, cross-origin, BE/BS, UV policy, AT in assertions, trailing bytes, short challenges")
    func relyingPartyRules() async throws {
        let session = try SoftwareAuthenticator(store: InMemoryStore())
        let credential = try await Self.register(session, alg: .es256)
        let challenge = SecureRandom.bytes(count: 32)
        func assertion(origin: String = SoftwareAuthenticatorTests.origin, crossOrigin: Bool = false) async throws -> ([UInt8], SoftwareAuthenticator.GetAssertionResponse) {
            let json = CollectedClientData(type: "webauthn.get", challenge: challenge, origin: origin, crossOrigin: crossOrigin).json
            return (json, try await session.getAssertion(clientDataHash: HashFunction.sha256.hash(json), rpID: Self.rp, allowList: [credential.credentialID]))
        }
        func verify(_ json: [UInt8], _ data: [UInt8], _ sig: [UInt8], policy: RelyingPartyPolicy? = nil, challenge c: [UInt8]? = nil) throws {
            _ = try RelyingPartyVerifier(policy: policy ?? Self.verifier.policy).verifyAssertion(
                credential: credential, storedSignCount: 0, clientDataJSON: json, authenticatorData: data, signature: sig, challenge: c ?? challenge)
        }
        let (evilJSON, evil) = try await assertion(origin: "https://evil.example.org")
        #expect(throws: TokenMintError.self) { try verify(evilJSON, evil.authenticatorData.bytes, evil.signature) }
        let (crossJSON, cross) = try await assertion(crossOrigin: true)
        #expect(throws: TokenMintError.self) { try verify(crossJSON, cross.authenticatorData.bytes, cross.signature) }
        let (json, good) = try await assertion()
        try verify(json, good.authenticatorData.bytes, good.signature)
        var uvPolicy = Self.verifier.policy
        uvPolicy.requireUserVerification = true
        #expect(throws: TokenMintError.self) { try verify(json, good.authenticatorData.bytes, good.signature, policy: uvPolicy) }
        #expect(throws: TokenMintError.self) { try verify(json, good.authenticatorData.bytes + [0], good.signature) }
        #expect(throws: TokenMintError.self) { try verify(json, good.authenticatorData.bytes, good.signature, challenge: Array(challenge.prefix(15))) }
        // Single-use challenges through the host's callback.
        final class Used: @unchecked Sendable {
            let lock = NSLock()
            var seen: Set<[UInt8]> = []
            func consume(_ c: [UInt8]) -> Bool { lock.withLock { seen.insert(c).inserted } }
        }
        let used = Used()
        var once = Self.verifier.policy
        once.consumeChallenge = { used.consume($0) }
        try verify(json, good.authenticatorData.bytes, good.signature, policy: once)
        #expect(throws: TokenMintError.self) { try verify(json, good.authenticatorData.bytes, good.signature, policy: once) }
        var badFlags = good.authenticatorData.bytes
        badFlags[32] |= 0x10  // BS without BE
        #expect(throws: TokenMintError.self) { try verify(json, badFlags, good.signature) }
        var reserved = good.authenticatorData.bytes
        reserved[32] |= 0x02
        #expect(throws: TokenMintError.self) { try verify(json, reserved, good.signature) }
    }
}
