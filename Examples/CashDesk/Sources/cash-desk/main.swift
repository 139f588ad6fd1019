// A cash desk and a phone, in one process for the example: the phone enrols
// and mints payment tokens offline; the desk enrols the phone, grants it
// offline counter values, and verifies each token once, in a SQLite ledger.
import TokenMintCore
import Foundation
import TokenMintCrypto
import TokenMintPay
import TokenMintStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cash-desk-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
defer { try? FileManager.default.removeItem(atPath: folder) }

// The phone: the WhitelabelPay SDK over its own sealed store.
let configuration = try WhitelabelPayConfiguration(
    tenantID: "0b6d5b8e-8c1b-4a0a-9f5e-3c2d1e0f9a8b", referenceID: UUID().uuidString.lowercased(), offlineTokenLimit: 3)
let phone = try WhitelabelPay(
    configuration: configuration,
    store: try SQLiteStore(path: folder + "/phone.sqlite", masterKey: .file(path: folder + "/phone.key")),
    backend: LocalBackend(clock: .system))
let enrolment = try await phone.getEnrolmentToken()
try await phone.handlePush(Array(#"{"aps":{},"yp-type":"enrolment-succeeded.v1"}"#.utf8))
try await phone.addPaymentMeans("card-1")
try await phone.markOffline()
print("phone enrolled: \(enrolment)")

// The desk: a strict verifier over a SQLite ledger.
let ledger = try SQLiteStore(path: folder + "/ledger.sqlite", masterKey: .file(path: folder + "/desk.key"))
var desk = try PaymentTokenVerifier(store: ledger, clock: .system)
desk.requiresOfflineGrant = true
try await desk.enrol(enrolment)
let deviceID = PaymentTokenVerifier.deviceID(of: enrolment)
let grant = try await desk.grantOfflineAllowance(deviceID: deviceID, count: 2, window: 3600)
print("desk granted counters \(grant.first)...\(grant.first + grant.count - 1)")

/// One verification, its typed error as a value.
func check(_ desk: PaymentTokenVerifier, _ token: String, _ deviceID: String, _ attempt: String) async -> Result<VerifiedPaymentToken, TokenMintError> {
    do { return .success(try await desk.verify(token, deviceID: deviceID, attempt: attempt)) } catch { return .failure(error) }
}

var accepted = 0
for number in 1...3 {
    let token = try await phone.getPaymentToken().description
    switch await check(desk, token, deviceID, "sale-\(number)") {
    case .success(let verified):
        accepted += 1
        print("sale \(number): accepted \(verified.token.unsignedPart)")
        guard case .failure(let error) = await check(desk, token, deviceID, "another-sale"), error.code == .pay.replayedToken else {
            print("sale \(number): the same token was accepted twice")
            exit(1)
        }
        print("sale \(number): the same token for another sale is refused (\(error.code))")
    case .failure(let error):
        print("sale \(number): refused (\(error.code)): \(error.reason)")
        guard error.code == .pay.offlineTokenLimitReached else { exit(1) }
    }
}
print("\(accepted) of 3 offline tokens accepted, as granted")
exit(accepted == 2 ? 0 : 1)
