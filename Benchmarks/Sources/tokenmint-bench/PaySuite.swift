import TokenMintCore
import CBenchRaw
import Foundation
import TokenMintCrypto
import TokenMintPay
import TokenMintStore

/// WhitelabelPay rows: payment-token mint with an in-memory and a durable
/// (SQLite, fsync per commit) quota, next to the raw Ed25519 sign of the
/// same message; verify with and without the replay ledger.
enum PaySuite {
    /// A store that accepts every token: the verifier's own cost.
    struct NoLedger: VerifierStore {
        func recordOnce(_ identifier: [UInt8], expiresAt: Int64, attempt: [UInt8]?, spending slot: [UInt8]?) throws(TokenMintError) -> Bool { true }
        func prune(expiredBefore time: Int64) throws(TokenMintError) -> Int { 0 }
        func enrolDevice(_ deviceID: String, record: [UInt8]) throws(TokenMintError) {}
        func deviceRecord(_ deviceID: String) throws(TokenMintError) -> [UInt8]? { nil }
        func grantOfflineAllowance(_ deviceID: String, count: Int64, notAfter: Int64) throws(TokenMintError) -> OfflineGrant {
            OfflineGrant(deviceID: deviceID, first: 1, count: count, notAfter: notAfter)
        }
        func offlineGrant(_ deviceID: String, containing counter: Int64) throws(TokenMintError) -> OfflineGrant? { nil }
        func issueOnlinePart(_ deviceID: String, part: String, notAfter: Int64) throws(TokenMintError) {}
        func onlinePart(_ deviceID: String, part: String) throws(TokenMintError) -> Int64? { nil }
    }

    final class Pool: @unchecked Sendable {
        let tokens: [String]
        var next = 0
        init(_ tokens: [String]) { self.tokens = tokens }
        func take() -> String {
            defer { next = (next + 1) % tokens.count }
            return tokens[next]
        }
    }

    static func make(store: any KeyValueStore, limit: Int) throws -> WhitelabelPay {
        let configuration = try WhitelabelPayConfiguration(
            tenantID: "0b6d5b8e-8c1b-4a0a-9f5e-3c2d1e0f9a8b", referenceID: "7f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f",
            offlineTokenLimit: limit)
        return try WhitelabelPay(configuration: configuration, store: store, backend: LocalBackend(clock: .system))
    }

    static func groups() throws -> [Group] {
        let memory = try make(store: InMemoryStore(), limit: 100_000)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let sqlite = try SQLiteStore(path: directory + "/store.sqlite", masterKey: .key(SecureBytes(randomCount: 32)))
        let durable = try make(store: sqlite, limit: 100_000)
        var enrolment: EnrolmentToken?
        for sdk in [memory, durable] {
            let token = try JWTSuite.blocking {
                let t = try await sdk.getEnrolmentToken()
                try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"enrolment-succeeded.v1"}"#.utf8))
                try await sdk.addPaymentMeans("card-1")
                try await sdk.markOffline()
                return t
            }
            if enrolment == nil { enrolment = token }
        }
        let device = try require(enrolment)
        // The raw baseline signs a message of the same shape with libsodium directly.
        var pk = [UInt8](repeating: 0, count: 32), sk = [UInt8](repeating: 0, count: 64)
        CBenchRaw_ed25519_seed_keypair(&pk, &sk, SecureRandom.bytes(count: 32))
        let message = Array("off.card-1.123.AbCdEfGhIjKl/1763776800".utf8)
        var out = [UInt8](repeating: 0, count: 64)

        let pool = Pool(try JWTSuite.blocking {
            var tokens: [String] = []
            for _ in 0..<16_000 { tokens.append(try await memory.getPaymentToken().description) }
            try await memory.markOnline()
            try await memory.markOffline()
            return tokens
        })
        let noLedger = try PaymentTokenVerifier(store: NoLedger(), lifetime: 86_400, clock: .system)
        let memoryLedger = try PaymentTokenVerifier(store: InMemoryStore(), lifetime: 86_400, clock: .system)
        let sqliteLedger = try PaymentTokenVerifier(
            store: try SQLiteStore(path: directory + "/ledger.sqlite", masterKey: .key(SecureBytes(randomCount: 32))),
            lifetime: 86_400, clock: .system)
        let sample = pool.tokens[0]
        let parsed = try PaymentToken(parsing: sample)
        let signed = parsed.signedMessage
        let publicKey = device.publicKey.rawRepresentation

        return [
            Group(name: "Pay mint (in-memory quota)", cases: [
                Case(implementation: .raw("libsodium Ed25519")) { CBenchRaw_ed25519_sign(&out, message, message.count, sk) == 0 },
                Case(implementation: .tokenmint) {
                    if (try? await memory.getPaymentToken()) != nil { return true }
                    // The quota is used up (once in 100,000 mints): online and offline again, then mint.
                    try? await memory.markOnline()
                    try? await memory.markOffline()
                    return (try? await memory.getPaymentToken()) != nil
                },
            ], goalToRaw: 0.9),
            Group(name: "Pay mint (SQLite quota, fsync)", cases: [
                Case(implementation: .raw("libsodium Ed25519")) { CBenchRaw_ed25519_sign(&out, message, message.count, sk) == 0 },
                Case(implementation: .tokenmint) { (try? await durable.getPaymentToken()) != nil },
            ], goalToRaw: nil),
            Group(name: "Pay verify (no ledger)", cases: [
                Case(implementation: .raw("libsodium Ed25519")) {
                    CBenchRaw_ed25519_verify(parsed.signature, signed, signed.count, publicKey) == 0
                },
                Case(implementation: .tokenmint) { (try? await noLedger.verify(sample, enrolment: device)) != nil },
            ], goalToRaw: 0.95),
            Group(name: "Pay verify (in-memory ledger)", cases: [
                Case(implementation: .tokenmint) { (try? await memoryLedger.verify(pool.take(), enrolment: device)) != nil },
            ], goalToRaw: nil, scales: false),
            Group(name: "Pay verify (SQLite ledger)", cases: [
                Case(implementation: .tokenmint) { (try? await sqliteLedger.verify(pool.take(), enrolment: device)) != nil },
            ], goalToRaw: nil, scales: false),
        ]
    }
}

func require<T>(_ value: T?) throws -> T {
    guard let value else { throw BenchError("missing value") }
    return value
}
