internal import CSQLite
import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintPay
import TokenMintStore

/// A device whose key the attacker holds (a compromised or emulated phone):
/// it signs whatever unsigned part it likes.
struct ForgedDevice {
    let key = Ed25519.PrivateKey()
    let enrolment: EnrolmentToken

    init() {
        enrolment = EnrolmentToken(tenant: WhitelabelPayTests.tenant, publicKey: key.publicKey, referenceID: UUID().uuidString.lowercased())
    }

    var deviceID: String { PaymentTokenVerifier.deviceID(of: enrolment) }

    func token(_ unsigned: String, at epoch: Int64 = Int64(Date().timeIntervalSince1970)) throws -> String {
        let signature = try key.signature(for: Array("\(unsigned)/\(epoch)".utf8))
        return "02/\(unsigned)/\(epoch)/\(Base64URL.encode(signature, padding: .padded))"
    }

    static func nonce() -> String { Base64URL.encode(SecureRandom.bytes(count: 9)) }
}

/// Regressions for the attacks of the adversarial review on the verifier's
/// grants: each failed on the code before the fix.
@Suite("Attacks on the payment verifier")
struct VerifierAttackTests {
    @Test(arguments: VerifierStoreTests.local) func grantsBoundADevice(_ backend: Backend) async throws {
        try await backend.withStores(4) { try await Self.grantsBoundADevice($0) }
    }
    @Test(.enabled(if: Backend.postgresAvailable, VerifierStoreTests.postgresReason)) func grantsBoundADevicePostgres() async throws {
        try await Backend.postgres.withStores(4) { try await Self.grantsBoundADevice($0) }
    }

    @Test(arguments: VerifierStoreTests.local) func onlinePartsAreIssued(_ backend: Backend) async throws {
        try await backend.withStores(2) { try await Self.onlinePartsAreIssued($0) }
    }
    @Test(.enabled(if: Backend.postgresAvailable, VerifierStoreTests.postgresReason)) func onlinePartsAreIssuedPostgres() async throws {
        try await Backend.postgres.withStores(2) { try await Self.onlinePartsAreIssued($0) }
    }

    static func strict(_ store: any VerifierStore) throws -> PaymentTokenVerifier {
        var verifier = try PaymentTokenVerifier(store: store, lifetime: 600, clock: .system)
        verifier.requiresOfflineGrant = true
        return verifier
    }

    /// A device granted two counter values gets at most two offline tokens
    /// accepted, whatever it signs, from four verifiers at once.
    static func grantsBoundADevice(_ stores: [any VerifierStore]) async throws {
        let device = ForgedDevice()
        let verifiers = try stores.map(strict)
        try await verifiers[0].enrol(device.enrolment)
        _ = try await verifiers[1].grantOfflineAllowance(deviceID: device.deviceID, count: 2, window: 3600)

        // Counter 1 six times with different nonces, from four verifiers concurrently: once.
        let sameCounter = try (0..<6).map { _ in try device.token("off.M1.1.\(ForgedDevice.nonce())") }
        let accepted = await withTaskGroup(of: Int.self) { group in
            for (index, token) in sameCounter.enumerated() {
                let verifier = verifiers[index % verifiers.count]
                group.addTask { (try? await verifier.verify(token, deviceID: device.deviceID)) == nil ? 0 : 1 }
            }
            return await group.reduce(0, +)
        }
        #expect(accepted == 1, "counter 1 accepted \(accepted) times")

        // One canonical form per counter, the label exact.
        for unsigned in ["off.M1.01.\(ForgedDevice.nonce())", "off.M1.001.\(ForgedDevice.nonce())", "off.M1.+1.\(ForgedDevice.nonce())",
                         "off.M1.-1.\(ForgedDevice.nonce())", "off.M1.0.\(ForgedDevice.nonce())", "off", "off.M1.2", "off.M1.2.x.y",
                         "OFF.M1.2.\(ForgedDevice.nonce())", "Off.M1.2.\(ForgedDevice.nonce())"] {
            await expectPay(.pay.malformedToken) { _ = try await verifiers[2].verify(try device.token(unsigned), deviceID: device.deviceID) }
        }
        // Any other label is an online token, and none was issued.
        await expectPay(.pay.notIssued) { _ = try await verifiers[2].verify(try device.token("on.M1.5.\(ForgedDevice.nonce())"), deviceID: device.deviceID) }
        _ = try await verifiers[3].verify(try device.token("off.M1.2.\(ForgedDevice.nonce())"), deviceID: device.deviceID)
        await expectPay(.pay.replayedToken) { _ = try await verifiers[0].verify(try device.token("off.M1.2.\(ForgedDevice.nonce())"), deviceID: device.deviceID) }
        await expectPay(.pay.offlineTokenLimitReached) { _ = try await verifiers[0].verify(try device.token("off.M1.3.\(ForgedDevice.nonce())"), deviceID: device.deviceID) }

        // A verifier without grants still takes each counter of a device once.
        let lenient = try PaymentTokenVerifier(store: stores[0], lifetime: 600, clock: .system)
        let other = ForgedDevice()
        _ = try await lenient.verify(try other.token("off.M1.7.\(ForgedDevice.nonce())"), enrolment: other.enrolment)
        await expectPay(.pay.replayedToken) { _ = try await lenient.verify(try other.token("off.M1.7.\(ForgedDevice.nonce())"), enrolment: other.enrolment) }
    }

    /// An online token is accepted only over an unsigned part the server
    /// issued to that device, and only once.
    static func onlinePartsAreIssued(_ stores: [any VerifierStore]) async throws {
        let device = ForgedDevice()
        let verifier = try strict(stores[0])
        let server = try strict(stores[1])
        try await verifier.enrol(device.enrolment)
        let part = try await server.issueOnlinePart(deviceID: device.deviceID, paymentMeansID: "M1")
        #expect(part.hasPrefix("on.M1."))
        let now = Int64(Date().timeIntervalSince1970)
        let verified = try await verifier.verify(try device.token(part, at: now), deviceID: device.deviceID)
        #expect(!verified.isOffline)
        await expectPay(.pay.replayedToken) { _ = try await server.verify(try device.token(part, at: now - 1), deviceID: device.deviceID) }
        await expectPay(.pay.notIssued) { _ = try await verifier.verify(try device.token("on.M1.\(ForgedDevice.nonce())"), deviceID: device.deviceID) }
        let stranger = ForgedDevice()
        try await verifier.enrol(stranger.enrolment)
        let theirs = try await server.issueOnlinePart(deviceID: device.deviceID, paymentMeansID: "M1")
        await expectPay(.pay.notIssued) { _ = try await verifier.verify(try stranger.token(theirs), deviceID: stranger.deviceID) }
        await expectPay(.pay.deviceNotEnrolled) { _ = try await server.issueOnlinePart(deviceID: UUID().uuidString, paymentMeansID: "M1") }
    }

    @Test("lifetimes, skews and windows are bounded with typed errors; extreme times never trap")
    func boundsAndExtremeTimes() async throws {
        let store = InMemoryStore()
        for (lifetime, skew) in [(Int64(0), Int64(30)), (.max, 30), (600, -1), (600, 301), (.min, 0)] {
            await expectPay(.pay.invalidConfiguration) { _ = try PaymentTokenVerifier(store: store, lifetime: lifetime, skew: skew, clock: .system) }
        }
        let device = ForgedDevice()
        let verifier = try PaymentTokenVerifier(store: store, clock: .system)
        try await verifier.enrol(device.enrolment)
        for window in [Int64.max, .min, 0, PaymentTokenVerifier.maximumWindow + 1] {
            await expectPay(.pay.invalidConfiguration) { _ = try await verifier.grantOfflineAllowance(deviceID: device.deviceID, count: 1, window: window) }
        }
        for now in [Int64.max, .min] {
            let late = try PaymentTokenVerifier(store: store, lifetime: PaymentTokenVerifier.maximumLifetime, skew: 300, clock: WhitelabelPayClock { now })
            await expectPay(.pay.expiredToken) { _ = try await late.verify(try device.token("off.M1.1.\(ForgedDevice.nonce())"), enrolment: device.enrolment) }
        }
        // The largest time a token can carry (12 digits) verifies at that time, no overflow.
        let far: Int64 = 999_999_999_999
        let atFar = try PaymentTokenVerifier(store: store, clock: WhitelabelPayClock { far })
        _ = try await atFar.verify(try device.token("off.M1.9.\(ForgedDevice.nonce())", at: far), enrolment: device.enrolment)
    }
}

/// Regressions for tampering with the device's own store.
@Suite("Attacks on the device store")
struct DeviceStoreAttackTests {
    /// An active device over a SQLite store with a key file, two tokens minted offline.
    static func device(_ dir: String, limit: Int = 5) async throws -> (WhitelabelPay, WhitelabelPayConfiguration) {
        let configuration = try WhitelabelPayConfiguration(
            tenantID: WhitelabelPayTests.tenant, referenceID: UUID().uuidString.lowercased(), offlineTokenLimit: limit)
        let sdk = try WhitelabelPay(configuration: configuration, store: try open(dir), backend: LocalBackend(clock: .system))
        _ = try await sdk.getEnrolmentToken()
        try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"enrolment-succeeded.v1"}"#.utf8))
        try await sdk.addPaymentMeans("M1")
        try await sdk.markOffline()
        for _ in 0..<2 { _ = try await sdk.getPaymentToken() }
        return (sdk, configuration)
    }

    static func open(_ dir: String) throws -> SQLiteStore {
        try SQLiteStore(path: dir + "/store.sqlite", masterKey: .file(path: dir + "/master.key"))
    }

    /// Runs SQL on the store file behind the SDK's back.
    static func edit(_ dir: String, _ sql: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open(dir + "/store.sqlite", &db) == SQLITE_OK, let db else { throw TokenMintError(.store.cannotOpen, "open") }
        defer { sqlite3_close(db) }
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw TokenMintError(.store.databaseFailure, String(cString: sqlite3_errmsg(db))) }
    }

    /// Flips one bit of the value of the items row `row`, in place.
    static func flipBit(_ dir: String, row: String, offset: Int32) throws {
        var db: OpaquePointer?
        guard sqlite3_open(dir + "/store.sqlite", &db) == SQLITE_OK, let db else { throw TokenMintError(.store.cannotOpen, "open") }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT rowid FROM items WHERE name = '\(row)'", -1, &statement, nil) == SQLITE_OK,
            sqlite3_step(statement) == SQLITE_ROW
        else { throw TokenMintError(.store.notFound, row) }
        let rowid = sqlite3_column_int64(statement, 0)
        sqlite3_finalize(statement)
        var blob: OpaquePointer?
        guard sqlite3_blob_open(db, "main", "items", "value", rowid, 1, &blob) == SQLITE_OK else { throw TokenMintError(.store.databaseFailure, "blob") }
        defer { sqlite3_blob_close(blob) }
        var byte: UInt8 = 0
        guard sqlite3_blob_read(blob, &byte, 1, offset) == SQLITE_OK else { throw TokenMintError(.store.databaseFailure, "read") }
        byte ^= 0x04
        guard sqlite3_blob_write(blob, &byte, 1, offset) == SQLITE_OK else { throw TokenMintError(.store.databaseFailure, "write") }
    }

    /// Reopens the SDK and mints offline once: what the owner would do after an edit.
    static func reopenAndMint(_ dir: String, _ configuration: WhitelabelPayConfiguration) async throws -> PaymentToken {
        let sdk = try WhitelabelPay(configuration: configuration, store: try open(dir), backend: LocalBackend(clock: .system))
        return try await sdk.getPaymentToken(offline: true)
    }

    @Test("a renamed, flipped, deleted or foreign device record is tampered; the counters table is not the quota")
    func partialEdits() async throws {
        let edits = [
            "UPDATE items SET name = 'pay.device.old' WHERE name = 'pay.device'",
            "FLIP",
            "UPDATE items SET value = randomblob(length(value)) WHERE name = 'pay.device'",
            "DELETE FROM items WHERE name = 'pay.device'",
            "DELETE FROM items WHERE name = 'pay.deviceKey'",
            "UPDATE meta SET value = randomblob(16) WHERE name = 'salt'",
        ]
        for sql in edits {
            let dir = try temporaryDirectory()
            let (_, configuration) = try await Self.device(dir)
            if sql == "FLIP" { try Self.flipBit(dir, row: "pay.device", offset: 40) } else { try Self.edit(dir, sql) }
            await expectPay(.pay.tampered) { _ = try await Self.reopenAndMint(dir, configuration) }
        }
        // The old counters rows mean nothing now: zeroing them re-issues nothing.
        let dir = try temporaryDirectory()
        let (_, configuration) = try await Self.device(dir)
        try Self.edit(dir, "DELETE FROM counters")
        let next = try await Self.reopenAndMint(dir, configuration)
        #expect(next.unsignedPart.hasPrefix("off.M1.3."), "\(next.unsignedPart)")
    }

    @Test("a missing master key is never replaced by a new one; a key file others may read is refused")
    func masterKeyFile() async throws {
        let dir = try temporaryDirectory()
        _ = try await Self.device(dir)
        let keyPath = dir + "/master.key"
        chmod(keyPath, 0o644)
        #expect(throws: TokenMintError.self) { _ = try Self.open(dir) }
        chmod(keyPath, 0o600)
        _ = try Self.open(dir)
        try FileManager.default.removeItem(atPath: keyPath)
        #expect(throws: TokenMintError.self) { _ = try Self.open(dir) }
        #expect(!FileManager.default.fileExists(atPath: keyPath), "no new master key for an existing store")
        // A new store still gets its key, 0600 from the start.
        let fresh = try temporaryDirectory()
        _ = try Self.open(fresh)
        let mode = (try FileManager.default.attributesOfItem(atPath: fresh + "/master.key")[.posixPermissions] as? Int) ?? -1
        #expect(mode == 0o600)
    }

    @Test("push payloads go through the strict JSON parser: duplicate members, bad UTF-8 and trailing data are refused")
    func strictPush() async throws {
        let dir = try temporaryDirectory()
        let (sdk, _) = try await Self.device(dir)
        for payload in [#"{"aps":{},"yp-type":"payment-failed.v1","yp-type":"enrolment-succeeded.v1"}"#,
                        #"{"aps":{},"aps":{},"yp-type":"payment-failed.v1"}"#, #"{"aps":{},"yp-type":"payment-failed.v1"} x"#] {
            await expectPay(.pay.invalidPush) { try await sdk.handlePush(Array(payload.utf8)) }
        }
        await expectPay(.pay.invalidPush) { try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"payment-failed.v1"}"#.utf8).dropLast(2) + [0xC0, 0x7D]) }
        #expect(try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"payment-failed.v1"}"#.utf8)) == .paymentFailed)
    }

    @Test("a token whose output was lost is counted as wasted")
    func wastedTokens() async throws {
        let dir = try temporaryDirectory()
        let (sdk, _) = try await Self.device(dir)
        try await sdk.recordWastedToken()
        #expect(try await sdk.wastedTokenCount == 1)
        #expect(try await sdk.offlineMintedTokenCount == 2)
    }
}
