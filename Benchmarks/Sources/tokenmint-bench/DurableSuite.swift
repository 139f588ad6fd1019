import Foundation
import TokenMintAuth
import TokenMintCrypto
import TokenMintPay
import TokenMintStore
import TokenMintWebAuthn

/// The durable paths at 1, 4 and 16 concurrent callers (`--durable`): the
/// SQLite quota (offline mints), the SQLite replay ledger (verifies), FIDO2
/// signature counters (getAssertion) and refresh-token rotation, each next
/// to the same work on an in-memory store. Every caller returns only after
/// its own write is durable; concurrent callers share commits (group
/// commit), one fsync per group.
enum DurableSuite {
    struct Row {
        let path: String
        let store: String
        let row: VerifierScaleSuite.Row
    }

    static let levels = [1, 4, 16]

    static func run(quick: Bool, directory: String, progress: @escaping @Sendable (String) -> Void) async throws -> [Row] {
        let count = quick ? 1_000 : 8_000
        var rows: [Row] = []
        func sqlite(_ name: String) throws -> SQLiteStore {
            try SQLiteStore(path: directory + "/durable-\(name).sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        }
        func cells(_ path: String, _ stores: [(String, any KeyValueStore)],
                   _ make: (String, any KeyValueStore) async throws -> @Sendable (Int) async throws -> Void) async throws {
            for (label, store) in stores {
                for level in label == "memory" ? [1, 16] : levels {
                    progress("durable paths: \(path), \(label), \(level) callers")
                    let operation = try await make(label, store)
                    rows.append(Row(path: path, store: label,
                                    row: try await VerifierScaleSuite.measure(label, concurrency: level, count: count, operation)))
                }
            }
        }

        // Offline mints: each takes a quota slot. A fresh device per cell keeps the quota ample.
        try await cells("Pay mint (offline quota)", [("SQLite", try sqlite("quota")), ("memory", InMemoryStore())]) { _, store in
            let sdk = try PaySuite.make(store: store, limit: 100_000)
            _ = try await sdk.getEnrolmentToken()
            try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"enrolment-succeeded.v1"}"#.utf8))
            try await sdk.addPaymentMeans("card-1")
            try await sdk.markOnline()
            try await sdk.markOffline()
            return { _ in _ = try await sdk.getPaymentToken(offline: true) }
        }

        // Verifies: each records a fresh token in the replay ledger.
        progress("durable paths: minting tokens to verify")
        let (enrolment, pool) = try await VerifierScaleSuite.onlineTokens(count * 5)
        let next = VerifierScaleSuite.Counter()
        let ledgers: [String: any VerifierStore] = ["SQLite": try sqlite("ledger"), "memory": InMemoryStore()]
        try await cells("Pay verify (replay ledger)", [("SQLite", InMemoryStore()), ("memory", InMemoryStore())]) { label, _ in
            // The ledger is a VerifierStore, picked by the cell's label.
            let verifier = try PaymentTokenVerifier(store: ledgers[label] ?? InMemoryStore(), lifetime: 86_400, clock: .system)
            return { _ in
                guard let index = next.take(below: pool.count) else { throw BenchError("out of tokens") }
                _ = try await verifier.verify(pool[index], enrolment: enrolment)
            }
        }

        // FIDO2 ES256 getAssertion: each commits the credential's counter before it signs.
        let rp = "example.org"
        try await cells("FIDO2 ES256 getAssertion", [("SQLite", try sqlite("fido2")), ("memory", InMemoryStore())]) { _, store in
            let authenticator = try SoftwareAuthenticator(store: store)
            let made = try await authenticator.makeCredential(
                clientDataHash: SecureRandom.bytes(count: 32), rp: (rp, nil), user: ([1], "u", nil), pubKeyCredParams: [.es256])
            let hash = SecureRandom.bytes(count: 32)
            return { _ in _ = try await authenticator.getAssertion(clientDataHash: hash, rpID: rp, allowList: [made.credentialID]) }
        }

        // Refresh rotation: each spends a refresh token and writes its successor.
        try await cells("OAuth refresh rotation", [("SQLite", try sqlite("auth")), ("memory", InMemoryStore())]) { _, store in
            let issuer = try LocalTokenIssuer(store: store, issuer: "https://auth.example", audience: "api",
                                              relyingParty: RelyingPartyPolicy(rpID: rp, origins: ["https://\(rp)"]))
            var refresh: [String] = []
            for i in 0..<count {
                guard let token = try await issuer.issue(account: "a\(i)", clientID: "bench").refreshToken else { throw BenchError("no refresh token") }
                refresh.append(token)
            }
            let presented = refresh
            return { i in _ = try await issuer.refresh(presented[i], clientID: "bench") }
        }
        return rows
    }
}
