import TokenMintCore
import Foundation
import Logging
import Testing
import TokenMintAuth
import TokenMintCrypto
import TokenMintJOSE
import TokenMintStore
import TokenMintWebAuthn

final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64 = 1_763_776_800
    var now: Int64 { lock.withLock { value } }
    func advance(_ s: Int64) { lock.withLock { value += s } }
}

/// Collects every log line (message and metadata) in memory.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    var lines: [String] { lock.withLock { stored } }
    func append(_ line: String) { lock.withLock { stored.append(line) } }

    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, b in b }
            capture.append("\(event.level) \(event.message) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
    }
}

func expectAuth(_ code: TokenMintError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code)", sourceLocation: sourceLocation)
    } catch let error as TokenMintError {
        if error.code != code { Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("Authorization provider, step-up and user-token exchange")
struct AuthTests {
    static let rp = "pay.example"
    static let origin = "https://pay.example"
    static let accountA = UUID(uuidString: "0B6D5B8E-8C1B-4A0A-9F5E-3C2D1E0F9A8B")!
    static let accountB = UUID(uuidString: "7F9E8D7C-6B5A-4C3D-9E2F-1A0B9C8D7E6F")!

    struct Fixture {
        let clock: TestClock
        let issuer: LocalTokenIssuer
        let session: SoftwareAuthenticator
        let credentialA: [UInt8]
        let credentialB: [UInt8]
    }

    static func fixture(logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })) async throws -> Fixture {
        let clock = TestClock()
        let issuer = try LocalTokenIssuer(store: InMemoryStore(), issuer: "https://auth.example", audience: "https://api.example",
                                          relyingParty: RelyingPartyPolicy(rpID: rp, origins: [origin]), clock: { clock.now }, logger: logger)
        let session = try SoftwareAuthenticator(store: InMemoryStore())
        var ids: [[UInt8]] = []
        for account in [accountA, accountB] {
            let challenge = SecureRandom.bytes(count: 32)
            let json = CollectedClientData(type: "webauthn.create", challenge: challenge, origin: origin).json
            let made = try await session.makeCredential(clientDataHash: HashFunction.sha256.hash(json), rp: (rp, nil),
                                                        user: (Array(account.uuidString.utf8), account.uuidString, nil), pubKeyCredParams: [.es256])
            let credential = try RelyingPartyVerifier(policy: RelyingPartyPolicy(rpID: rp, origins: [origin]))
                .verifyRegistration(clientDataJSON: json, attestationObject: made.attestationObject.bytes, challenge: challenge)
            try await issuer.registerPasskey(account: account.uuidString.lowercased(), credential: credential)
            ids.append(credential.credentialID)
        }
        return Fixture(clock: clock, issuer: issuer, session: session, credentialA: ids[0], credentialB: ids[1])
    }

    static func assertion(_ f: Fixture, credential: [UInt8], challenge: [UInt8], origin: String = AuthTests.origin) async throws
        -> (credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8])
    {
        let json = CollectedClientData(type: "webauthn.get", challenge: challenge, origin: origin).json
        let a = try await f.session.getAssertion(clientDataHash: HashFunction.sha256.hash(json), rpID: rp, allowList: [credential])
        return (credential, json, a.authenticatorData.bytes, a.signature)
    }

    @Test("account tokens are RFC 9068 JWTs; refresh rotates; reuse revokes the family")
    func refreshRotation() async throws {
        let f = try await Self.fixture()
        let account = Self.accountA.uuidString.lowercased()
        let first = try await f.issuer.issue(account: account, clientID: "pos-app", scopes: ["payments"])
        let verified = try await f.issuer.verify(first.accessToken)
        #expect(verified.header.type == "at+jwt" && verified.claims.subject == account && verified.claims.clientID == "pos-app")
        let second = try await f.issuer.refresh(try #require(first.refreshToken))
        #expect(second.refreshToken != first.refreshToken)
        let third = try await f.issuer.refresh(try #require(second.refreshToken))
        // The spent token again: reuse detected and the family revoked, even for the newest token.
        await expectAuth(.auth.refreshTokenReused) { _ = try await f.issuer.refresh(try #require(second.refreshToken)) }
        await expectAuth(.auth.refreshTokenInvalid) { _ = try await f.issuer.refresh(try #require(third.refreshToken)) }
        await expectAuth(.auth.refreshTokenInvalid) { _ = try await f.issuer.refresh("not-a-token") }
        await expectAuth(.auth.clientIdInvalid) { _ = try await f.issuer.issue(account: account, clientID: "bad client") }
    }

    @Test("the token manager refreshes before expiry under a fake clock, stores elevated tokens unrefreshed, publishes states, logs out")
    func tokenManager() async throws {
        let f = try await Self.fixture()
        let provider = LocalAuthorizationProvider(issuer: f.issuer, account: Self.accountA.uuidString.lowercased(), clientID: "pos-app") { challenge in
            try await Self.assertion(f, credential: f.credentialA, challenge: challenge)
        }
        let manager = TokenManager(provider: provider, store: InMemoryStore(), refreshMargin: 60, clock: { f.clock.now })
        let states = await manager.states()
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .signedOut)
        let signedIn = try await manager.signIn()
        #expect(await iterator.next() == .authorized(account: signedIn.account))
        #expect(try await manager.accountToken() == signedIn)  // 600 s left: no refresh
        f.clock.advance(545)
        let refreshed = try await manager.accountToken()  // 55 s left: refreshed
        #expect(refreshed.refreshToken != signedIn.refreshToken && refreshed.expiresAt > signedIn.expiresAt)
        let elevated = try await manager.elevate(account: Self.accountA)
        #expect(elevated.elevated && elevated.refreshToken == nil)
        #expect(await iterator.next() == .elevated(account: elevated.account, until: elevated.expiresAt))
        let claims = try await f.issuer.verify(elevated.accessToken).claims
        #expect(claims.additional["acr"] == "urn:tokenmint:acr:fido2" && claims.additional["account"] == .string(elevated.account))
        await expectAuth(.auth.refreshTokenInvalid) { _ = try await provider.refresh(elevated) }
        f.clock.advance(301)
        #expect(try await manager.elevatedToken() == nil)
        try await manager.logout()
        #expect(await iterator.next() == .signedOut)
        await expectAuth(.auth.notSignedIn) { _ = try await manager.accountToken() }
    }

    @Test("elevation is refused without a valid assertion, for a replay, for another account, on another origin")
    func elevationRules() async throws {
        let f = try await Self.fixture()
        let a = Self.accountA.uuidString.lowercased()
        let b = Self.accountB.uuidString.lowercased()
        // Valid.
        var challenge = try await f.issuer.elevationChallenge(account: a)
        let good = try await Self.assertion(f, credential: f.credentialA, challenge: challenge)
        _ = try await f.issuer.elevate(account: a, clientID: "pos", credentialID: good.credentialID, clientDataJSON: good.clientDataJSON,
                                       authenticatorData: good.authenticatorData, signature: good.signature)
        // Replay of the same assertion: the challenge is spent.
        await expectAuth(.auth.challengeInvalid) {
            _ = try await f.issuer.elevate(account: a, clientID: "pos", credentialID: good.credentialID, clientDataJSON: good.clientDataJSON,
                                           authenticatorData: good.authenticatorData, signature: good.signature)
        }
        // A bad signature.
        challenge = try await f.issuer.elevationChallenge(account: a)
        let bad = try await Self.assertion(f, credential: f.credentialA, challenge: challenge)
        var signature = bad.signature
        signature[signature.count - 3] ^= 1
        await expectAuth(.auth.assertionInvalid) {
            _ = try await f.issuer.elevate(account: a, clientID: "pos", credentialID: bad.credentialID, clientDataJSON: bad.clientDataJSON,
                                           authenticatorData: bad.authenticatorData, signature: signature)
        }
        // B's passkey for A's step-up.
        challenge = try await f.issuer.elevationChallenge(account: a)
        let other = try await Self.assertion(f, credential: f.credentialB, challenge: challenge)
        await expectAuth(.auth.wrongAccount) {
            _ = try await f.issuer.elevate(account: a, clientID: "pos", credentialID: other.credentialID, clientDataJSON: other.clientDataJSON,
                                           authenticatorData: other.authenticatorData, signature: other.signature)
        }
        // A challenge issued for B used to elevate A.
        challenge = try await f.issuer.elevationChallenge(account: b)
        let crossed = try await Self.assertion(f, credential: f.credentialA, challenge: challenge)
        await expectAuth(.auth.wrongAccount) {
            _ = try await f.issuer.elevate(account: a, clientID: "pos", credentialID: crossed.credentialID, clientDataJSON: crossed.clientDataJSON,
                                           authenticatorData: crossed.authenticatorData, signature: crossed.signature)
        }
        // A phishing origin.
        challenge = try await f.issuer.elevationChallenge(account: a)
        let phished = try await Self.assertion(f, credential: f.credentialA, challenge: challenge, origin: "https://pay.example.evil")
        await expectAuth(.auth.assertionInvalid) {
            _ = try await f.issuer.elevate(account: a, clientID: "pos", credentialID: phished.credentialID, clientDataJSON: phished.clientDataJSON,
                                           authenticatorData: phished.authenticatorData, signature: phished.signature)
        }
        // An expired challenge.
        challenge = try await f.issuer.elevationChallenge(account: a)
        let late = try await Self.assertion(f, credential: f.credentialA, challenge: challenge)
        f.clock.advance(301)
        await expectAuth(.auth.challengeInvalid) {
            _ = try await f.issuer.elevate(account: a, clientID: "pos", credentialID: late.credentialID, clientDataJSON: late.clientDataJSON,
                                           authenticatorData: late.authenticatorData, signature: late.signature)
        }
    }

    @Test("user-token exchange: service key checked, one user per token, revocation; no secret in errors")
    func exchange() async throws {
        let f = try await Self.fixture()
        let account = Self.accountA.uuidString.lowercased()
        let token = try await f.issuer.issue(account: account, clientID: "connect")
        let keyBytes = SecureRandom.bytes(count: 32)
        let issuer = f.issuer
        let exchange = UserTokenExchange(serviceKey: try ServiceKey(keyBytes), store: InMemoryStore()) { access in
            try await issuer.verify(access).claims.subject ?? ""
        }
        let json = try await exchange.exchange(userID: account, accessToken: token.accessToken, presentedServiceKey: keyBytes)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(object["type"] == "user_token")
        let userToken = UserToken(try #require(object["user_token"]))
        #expect(try await exchange.user(for: userToken) == account)
        var wrong = keyBytes
        wrong[0] ^= 1
        do {
            _ = try await exchange.exchange(userID: account, accessToken: token.accessToken, presentedServiceKey: wrong)
            Issue.record("a wrong service key was accepted")
        } catch {
            #expect((error as? TokenMintError)?.code == .auth.serviceKeyInvalid)
            #expect(!"\(error)".contains(Hex.encode(keyBytes)) && !"\(error)".contains(Base64URL.encode(keyBytes)))
        }
        await expectAuth(.auth.accessTokenInvalid) {
            _ = try await exchange.exchange(userID: Self.accountB.uuidString.lowercased(), accessToken: token.accessToken, presentedServiceKey: keyBytes)
        }
        try await exchange.revoke(userID: account)
        await expectAuth(.auth.userTokenInvalid) { _ = try await exchange.user(for: userToken) }
        #expect("\(try ServiceKey(keyBytes))" == "ServiceKey(redacted)")
        #expect(throws: TokenMintError.self) { _ = try ServiceKey([1, 2, 3]) }
    }

    @Test("every flow logs its events, and no log line carries a token, key, challenge or signature")
    func logsCarryNoSecrets() async throws {
        let capture = LogCapture()
        let f = try await Self.fixture(logger: capture.logger)
        let account = Self.accountA.uuidString.lowercased()
        var secrets: [String] = []
        let first = try await f.issuer.issue(account: account, clientID: "pos-app", scopes: ["payments"])
        let second = try await f.issuer.refresh(try #require(first.refreshToken))
        await expectAuth(.auth.refreshTokenReused) { _ = try await f.issuer.refresh(try #require(first.refreshToken)) }
        secrets += [first.accessToken, second.accessToken, try #require(first.refreshToken), try #require(second.refreshToken)]
        let challenge = try await f.issuer.elevationChallenge(account: account)
        let good = try await Self.assertion(f, credential: f.credentialA, challenge: challenge)
        let elevated = try await f.issuer.elevate(account: account, clientID: "pos-app", credentialID: good.credentialID,
                                                  clientDataJSON: good.clientDataJSON, authenticatorData: good.authenticatorData, signature: good.signature)
        await expectAuth(.auth.challengeInvalid) {
            _ = try await f.issuer.elevate(account: account, clientID: "pos-app", credentialID: good.credentialID,
                                           clientDataJSON: good.clientDataJSON, authenticatorData: good.authenticatorData, signature: good.signature)
        }
        secrets += [elevated.accessToken, Base64URL.encode(challenge), Base64URL.encode(good.signature), Hex.encode(good.signature)]
        let keyBytes = SecureRandom.bytes(count: 32)
        let issuer = f.issuer
        let exchange = UserTokenExchange(serviceKey: try ServiceKey(keyBytes), store: InMemoryStore(), logger: capture.logger) { access in
            try await issuer.verify(access).claims.subject ?? ""
        }
        let json = try await exchange.exchange(userID: account, accessToken: second.accessToken, presentedServiceKey: keyBytes)
        let userToken = try #require((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])?["user_token"])
        var wrong = keyBytes
        wrong[5] ^= 0x40
        await expectAuth(.auth.serviceKeyInvalid) { _ = try await exchange.exchange(userID: account, accessToken: second.accessToken, presentedServiceKey: wrong) }
        try await exchange.revoke(userID: account)
        secrets += [userToken] + [keyBytes, wrong].flatMap { [Hex.encode($0), Base64URL.encode($0), Data($0).base64EncodedString()] }

        let lines = capture.lines
        for event in ["access token", "refresh token rotated", "elevated", "user token issued", "user tokens revoked"] {
            #expect(lines.contains { $0.contains(event) }, "no log line for \(event)")
        }
        #expect(lines.contains { $0.hasPrefix("warning refused") && $0.contains("family=") && $0.contains("-611") })
        #expect(lines.contains { $0.hasPrefix("warning exchange refused") && $0.contains("-630") })
        for secret in secrets {
            // Any 16-character window of a secret would already be too much.
            let probe = String(secret.prefix(16))
            #expect(!lines.contains { $0.contains(probe) }, "a log line carries a secret")
        }
        // Revocation covers the tokens issued so far; a later exchange works again.
        await expectAuth(.auth.userTokenInvalid) { _ = try await exchange.user(for: UserToken(userToken)) }
        let later = try await exchange.exchange(userID: account, accessToken: second.accessToken, presentedServiceKey: keyBytes)
        let laterToken = try #require((try JSONSerialization.jsonObject(with: Data(later.utf8)) as? [String: String])?["user_token"])
        #expect(try await exchange.user(for: UserToken(laterToken)) == account)
    }
}

/// A store that has no room for new entries (a full disk): a transaction that
/// adds a name fails with `diskFull` and keeps nothing; updates in place fit.
final class FullDiskStore: KeyValueStore, @unchecked Sendable {
    let inner = InMemoryStore()
    private let lock = NSLock()
    private var full = false
    var isFull: Bool {
        get { lock.withLock { full } }
        set { lock.withLock { full = newValue } }
    }
    var identity: [UInt8] { inner.identity }

    final class Transaction: StoreTransaction {
        let inner: any StoreTransaction
        let full: Bool
        init(_ inner: any StoreTransaction, full: Bool) { self.inner = inner; self.full = full }
        func room(_ name: String) throws(TokenMintError) {
            if full, try inner.value(name) == nil, try inner.secret(name) == nil { throw TokenMintError(.store.diskFull, "no room for \(name)") }
        }
        func value(_ name: String) throws(TokenMintError) -> [UInt8]? { try inner.value(name) }
        func setValue(_ name: String, _ value: [UInt8]) throws(TokenMintError) { try room(name); try inner.setValue(name, value) }
        func secret(_ name: String) throws(TokenMintError) -> SecureBytes? { try inner.secret(name) }
        func setSecret(_ name: String, _ value: SecureBytes) throws(TokenMintError) { try room(name); try inner.setSecret(name, value) }
        func remove(_ name: String) throws(TokenMintError) { try inner.remove(name) }
        func removeValues(from lower: String, upTo upper: String) throws(TokenMintError) -> Int { try inner.removeValues(from: lower, upTo: upper) }
        func counter(_ name: String) throws(TokenMintError) -> Int64 { try inner.counter(name) }
        func setCounter(_ name: String, _ value: Int64) throws(TokenMintError) { try inner.setCounter(name, value) }
        func increment(_ name: String, by delta: Int64) throws(TokenMintError) -> Int64 { try inner.increment(name, by: delta) }
    }

    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T {
        let full = isFull
        return try inner.transaction { tx in try body(Transaction(tx, full: full)) }
    }

    func reset() throws(TokenMintError) { try inner.reset() }
}

@Suite("Issuer key rotation")
struct IssuerKeyRotationTests {
    @Test("a rotated key is persisted; the previous one verifies for one access lifetime, the one before is retired")
    func rotation() async throws {
        let store = InMemoryStore()
        let clock = TestClock()
        func issuer() throws -> LocalTokenIssuer {
            try LocalTokenIssuer(store: store, issuer: "https://auth.example", audience: "https://api.example",
                                 relyingParty: RelyingPartyPolicy(rpID: "example.org", origins: ["https://example.org"]),
                                 clock: { clock.now })
        }
        let a = try issuer()
        let firstKid = try #require(a.verificationKeys.keys.first?.keyID)
        let before = try await a.issue(account: "alice", clientID: "app")
        let secondKid = try await a.rotateSigningKey()
        #expect(a.verificationKeys.keys.compactMap(\.keyID) == [secondKid, firstKid])
        let after = try await a.issue(account: "alice", clientID: "app")
        _ = try await a.verify(before.accessToken)
        _ = try await a.verify(after.accessToken)
        // A second issuer on the same store (another process) sees the same keys.
        #expect(try issuer().verificationKeys.keys.compactMap(\.keyID) == [secondKid, firstKid])
        // After one access lifetime the previous key is gone from new issuers.
        clock.advance(601)
        #expect(try issuer().verificationKeys.keys.compactMap(\.keyID) == [secondKid])
        // …and from this one once it verifies: the old key's tokens are refused.
        await #expect(throws: TokenMintError.self) { _ = try await a.verify(before.accessToken) }
        #expect(a.verificationKeys.keys.compactMap(\.keyID) == [secondKid])
        // Rotating again retires the first key at once.
        let thirdKid = try await a.rotateSigningKey()
        #expect(a.verificationKeys.keys.compactMap(\.keyID) == [thirdKid, secondKid])
        _ = try await a.rotateSigningKey()
        #expect(!a.verificationKeys.keys.compactMap(\.keyID).contains(secondKid), "a rotation retires the key before the previous one")
    }
}

@Suite("Auth on a full disk")
struct AuthFullDiskTests {
    // Regression: refresh used to spend the presented token in one transaction
    // and write its successor in a second; when the second failed (disk full)
    // the token was spent with no pair handed out, and the client's retry was
    // taken for reuse and revoked the whole family.
    @Test("a refresh that cannot store its successor spends nothing; the same token works once there is room")
    func refreshOnFullDisk() async throws {
        let store = FullDiskStore()
        let issuer = try LocalTokenIssuer(store: store, issuer: "https://auth.example", audience: "https://api.example",
                                          relyingParty: RelyingPartyPolicy(rpID: "example.org", origins: ["https://example.org"]))
        let pair = try await issuer.issue(account: "alice", clientID: "app")
        let token = try #require(pair.refreshToken)
        store.isFull = true
        await #expect(throws: TokenMintError.self) { _ = try await issuer.refresh(token) }
        await #expect(throws: TokenMintError.self) { _ = try await issuer.issue(account: "bob", clientID: "app") }
        store.isFull = false
        let next = try await issuer.refresh(token)
        #expect(next.refreshToken != token)
        _ = try await issuer.refresh(try #require(next.refreshToken))
    }
}

/// Regressions for passkey registration attacks of the adversarial review.
@Suite("Attacks on passkey registration")
struct PasskeyAttackTests {
    @Test("a credential ID registered already is refused, for the same account and for another; nothing is replaced")
    func duplicateCredentialID() async throws {
        let f = try await AuthTests.fixture()
        let victim = try await f.issuer.elevationChallenge(account: AuthTests.accountA.uuidString.lowercased())
        // The attacker's own key under the victim's credential ID.
        let attacker = RegisteredCredential(credentialID: f.credentialA, publicKey: COSEKey(Ed25519.PrivateKey().publicKey), signCount: 0,
                                            backupEligible: false, backupState: false, userVerified: false, attestationFormat: "none", aaguid: [])
        for account in [AuthTests.accountB, AuthTests.accountA] {
            do {
                try await f.issuer.registerPasskey(account: account.uuidString.lowercased(), credential: attacker)
                Issue.record("a known credential ID was registered again")
            } catch {
                #expect(error.code == .auth.credentialExists)
            }
        }
        // The victim's own authenticator still steps up.
        let assertion = try await AuthTests.assertion(f, credential: f.credentialA, challenge: victim)
        _ = try await f.issuer.elevate(account: AuthTests.accountA.uuidString.lowercased(), clientID: "desk", credentialID: f.credentialA,
                                       clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData, signature: assertion.signature)
    }

    @Test("a 1,023-byte credential ID (the WebAuthn maximum) is stored")
    func longCredentialID() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-long-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let issuer = try LocalTokenIssuer(store: try SQLiteStore(path: dir + "/a.sqlite", masterKey: .key(SecureBytes(randomCount: 32))),
                                          issuer: "https://auth.example", audience: "https://api.example",
                                          relyingParty: RelyingPartyPolicy(rpID: AuthTests.rp, origins: [AuthTests.origin]))
        let credential = RegisteredCredential(credentialID: SecureRandom.bytes(count: 1023), publicKey: COSEKey(Ed25519.PrivateKey().publicKey),
                                              signCount: 0, backupEligible: false, backupState: false, userVerified: false,
                                              attestationFormat: "none", aaguid: [])
        try await issuer.registerPasskey(account: AuthTests.accountA.uuidString.lowercased(), credential: credential)
    }
}

@Suite("Passkey ceremonies in the store")
struct PasskeyCeremonyStoreTests {
    static func count(_ store: InMemoryStore, _ prefix: String) throws -> Int {
        // Counts by removing in a transaction that is then rolled back.
        struct Rollback: Error { let count: Int }
        do {
            _ = try store.transaction { tx -> Int in throw Rollback(count: try tx.removeValues(from: prefix, upTo: prefix + "\u{7F}")) }
        } catch let rollback as Rollback { return rollback.count }
        return -1
    }

    @Test("unanswered challenges do not pile up: a new one drops the expired; nothing is kept for a name until a registration lands")
    func expiredChallengesArePruned() async throws {
        let store = InMemoryStore()
        let clock = TestClock()
        let issuer = try LocalTokenIssuer(store: store, issuer: "https://auth.example", audience: "https://api.example",
                                          relyingParty: RelyingPartyPolicy(rpID: "example.org", origins: ["https://example.org"]),
                                          clock: { clock.now })
        for index in 0..<40 {
            _ = try await issuer.signInCeremony()
            _ = try await issuer.registrationCeremony(account: "name-\(index)", signUp: true)
        }
        #expect(try Self.count(store, "auth.challenge.") == 80)
        #expect(try Self.count(store, "auth.user-handle.") == 0, "a sign-up that never registers leaves no user handle")
        clock.advance(299)
        _ = try await issuer.signInCeremony()
        #expect(try Self.count(store, "auth.challenge.") == 81, "none has expired yet")
        clock.advance(2)
        let fresh = try await issuer.signInCeremony()
        #expect(try Self.count(store, "auth.challenge.") == 2, "the 80 expired ones are gone; the one from 2 s ago and the new one stay")
        #expect(fresh.challenge.count == 32)
    }
}
