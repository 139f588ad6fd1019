import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintJOSE
import TokenMintPay
import TokenMintStore
import TokenMintWebAuthn

/// Thread-safe bookkeeping for the stress test.
final class Recorder<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []
    func append(_ item: Element) { lock.withLock { items.append(item) } }
    var all: [Element] { lock.withLock { items } }
    func item(at index: Int) -> Element? { lock.withLock { index < items.count ? items[index] : nil } }
}

/// Many tasks minting, verifying and rotating keys at once, for
/// TOKENMINT_STRESS_SECONDS (default 3; the test command runs it for 30 under
/// ThreadSanitizer). Every result is then checked against a serial replay.
@Suite("Concurrency stress")
struct ConcurrencyStressTests {
    static var seconds: Double {
        ProcessInfo.processInfo.environment["TOKENMINT_STRESS_SECONDS"].flatMap(Double.init) ?? 3
    }

    /// Runs `body` until the deadline and at least 50 times, yielding
    /// between runs so every worker gets the cooperative threads.
    static func repeatUntil(_ deadline: Date, _ body: () async -> Void) async {
        var runs = 0
        while Date() < deadline || runs < 50 {
            runs += 1
            await Task.yield()
            await body()
        }
    }

    struct MintedJWT: Sendable { let index: Int; let keyID: String; let token: String; let verifiedAtOnce: Bool }
    struct Verification: Sendable { let token: String; let accepted: Bool }

    @Test("JWT minting and verifying during key rotation, offline pay mints and their single-use verification, FIDO2 assertions: results as serial")
    func stress() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-stress-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        // JWTs over a rotating key ring.
        let firstKey = JWK(Ed25519.PrivateKey(), algorithm: .EdDSA)
        var validation = JWTValidation()
        validation.requiredClaims = []
        let ring = try JWTKeyRing(signingKey: firstKey, validation: validation)
        let keys = Recorder<JWK>()
        keys.append(ring.signingKey)
        let minted = Recorder<MintedJWT>()
        let counter = Recorder<Int>()

        // Offline payment tokens from one device, verified by two cash desks sharing a ledger.
        let store = try SQLiteStore(path: dir + "/pay.sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        let configuration = try WhitelabelPayConfiguration(
            tenantID: "0b6d5b8e-8c1b-4a0a-9f5e-3c2d1e0f9a8b", referenceID: "7f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f",
            offlineTokenLimit: 100_000)
        let sdk = try WhitelabelPay(configuration: configuration, store: store, backend: LocalBackend(clock: .system))
        let enrolment = try await sdk.getEnrolmentToken()
        try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"enrolment-succeeded.v1"}"#.utf8))
        try await sdk.addPaymentMeans("card-1")
        try await sdk.markOffline()
        let ledger = try SQLiteStore(path: dir + "/ledger.sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        let verifier = try PaymentTokenVerifier(store: ledger, clock: .system)
        let payTokens = Recorder<String>()
        let payVerifications = Recorder<Verification>()

        // One authenticator, asserted from several tasks.
        let session = try SoftwareAuthenticator(store: try SQLiteStore(path: dir + "/fido2.sqlite", masterKey: .key(SecureBytes(randomCount: 32))))
        let made = try await session.makeCredential(
            clientDataHash: Array(repeating: 1, count: 32), rp: ("example.org", nil), user: ([1, 2], "alice", nil), pubKeyCredParams: [.es256])
        let credentialID = try #require(made.attestationObject.authenticatorData.attestedCredential?.credentialID)
        let signCounts = Recorder<UInt32>()

        // The clock starts once everything is set up; each worker also does a
        // minimum of rounds, so a loaded machine still exercises every path.
        let deadline = Date().addingTimeInterval(Self.seconds)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var n = 0
                    while Date() < deadline || n < 50 || keys.all.count < 5 {
                        let index = worker * 10_000_000 + n
                        n += 1
                        await Task.yield()  // CPU-bound: leave the cooperative threads to the other workers too
                        let claims = JWTClaims(subject: "user-\(index)", issuedAt: 1_700_000_000, jwtID: "\(index)")
                        guard let token = try? ring.sign(claims), let kid = (try? UnverifiedJWT.decode(token))?.header["kid"]?.stringValue
                        else { minted.append(MintedJWT(index: index, keyID: "", token: "", verifiedAtOnce: false)); continue }
                        // Keys are never retired here, so a fresh token must verify at once.
                        let verified = (try? ring.verify(token))?.claims.jwtID == "\(index)"
                        minted.append(MintedJWT(index: index, keyID: kid, token: token, verifiedAtOnce: verified))
                    }
                }
            }
            group.addTask {
                var rotations = 0
                while Date() < deadline || rotations < 5 {
                    rotations += 1
                    let key = JWK(Ed25519.PrivateKey(), algorithm: .EdDSA)
                    var identified = key
                    identified.keyID = key.thumbprint()
                    keys.append(identified)
                    if (try? ring.rotate(to: identified)) == nil { counter.append(-1) }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    await Self.repeatUntil(deadline) {
                        guard let token = try? await sdk.getPaymentToken(offline: true) else { return counter.append(-2) }
                        payTokens.append(token.description)
                    }
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    var next = 0
                    while true {
                        await Task.yield()
                        if let token = payTokens.item(at: next) {
                            payVerifications.append(Verification(token: token, accepted: (try? await verifier.verify(token, enrolment: enrolment)) != nil))
                            next += 1
                        } else if Date() >= deadline {
                            break
                        } else {
                            try? await Task.sleep(for: .milliseconds(1))
                        }
                    }
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    await Self.repeatUntil(deadline) {
                        guard let response = try? await session.getAssertion(
                            clientDataHash: Array(repeating: 2, count: 32), rpID: "example.org", allowList: [credentialID])
                        else { return counter.append(-3) }
                        signCounts.append(response.authenticatorData.signCount)
                    }
                }
            }
        }
        // The verifiers stop at the deadline; finish the tokens they had not reached.
        var seen = Dictionary(grouping: payVerifications.all, by: \.token)
        for token in payTokens.all where (seen[token]?.count ?? 0) < 2 {
            for _ in (seen[token]?.count ?? 0)..<2 {
                seen[token, default: []].append(Verification(token: token, accepted: (try? await verifier.verify(token, enrolment: enrolment)) != nil))
            }
        }

        #expect(counter.all.isEmpty, "failed operations: \(counter.all.count)")

        // JWTs: each verified at once, and each is byte-for-byte the token a
        // serial signer makes with the key its kid names (Ed25519 is deterministic).
        let jwts = minted.all
        let byKeyID = Dictionary(keys.all.map { ($0.keyID ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        var serialMismatches = 0
        for jwt in jwts {
            guard let key = byKeyID[jwt.keyID], let signer = try? JWTSigner(key: key) else { serialMismatches += 1; continue }
            let claims = JWTClaims(subject: "user-\(jwt.index)", issuedAt: 1_700_000_000, jwtID: "\(jwt.index)")
            if (try? signer.sign(claims)) != jwt.token { serialMismatches += 1 }
        }
        #expect(jwts.count > 0)
        let notVerified = jwts.filter { !$0.verifiedAtOnce }.count
        #expect(notVerified == 0)
        #expect(serialMismatches == 0)
        #expect(Set(jwts.map(\.keyID)).count > 1, "the key rotated while tokens were minted")

        // Payment tokens: sequence numbers 1…n exactly once; each token accepted by exactly one of two verifies.
        let tokens = payTokens.all
        let sequences = tokens.compactMap { token -> Int? in
            let unsigned = token.split(separator: "/")[1]
            return Int(unsigned.split(separator: ".")[2])
        }
        #expect(!tokens.isEmpty)
        let sequencesAsSerial = sequences.sorted() == Array(1...max(1, tokens.count))
        #expect(sequencesAsSerial, "offline sequence numbers are not exactly 1…\(tokens.count)")
        let acceptedTwice = seen.values.filter { $0.filter(\.accepted).count != 1 }.count
        #expect(acceptedTwice == 0, "tokens not accepted exactly once: \(acceptedTwice)")

        // FIDO2: the counter took each value once, as serial calls would have.
        let counts = signCounts.all
        #expect(!counts.isEmpty)
        let countsAsSerial = counts.sorted() == Array(1...UInt32(max(1, counts.count)))
        #expect(countsAsSerial, "signCounts are not exactly 1…\(counts.count)")

        print("stress \(Self.seconds) s: \(jwts.count) JWTs over \(Set(jwts.map(\.keyID)).count) keys, \(tokens.count) offline payment tokens "
              + "(\(seen.values.reduce(0) { $0 + $1.count }) verifications), \(counts.count) FIDO2 assertions")
    }
}
