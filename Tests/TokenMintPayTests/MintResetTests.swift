import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintPay
import TokenMintStore

/// A store whose grouped transactions, once armed, commit and then wait for
/// the test before they return: a mint suspended between its slot's commit
/// and the actor taking it up again.
final class GatedStore: KeyValueStore, @unchecked Sendable {
    let inner = InMemoryStore()
    private let lock = NSLock()
    private var armed = false
    private var parked: CheckedContinuation<Void, Never>?
    private var reached: CheckedContinuation<Void, Never>?

    var identity: [UInt8] { get throws(TokenMintError) { inner.identity } }
    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws -> T { try inner.transaction(body) }
    func reset() throws(TokenMintError) { try inner.reset() }

    func arm() { lock.withLock { armed = true } }

    func groupedTransaction<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T) async throws -> T {
        let result = try inner.transaction(body)
        let gate = lock.withLock { () -> Bool in
            defer { armed = false }
            return armed
        }
        if gate {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                    parked = continuation
                    defer { reached = nil }
                    return reached
                }
                waiter?.resume()
            }
        }
        return result
    }

    /// Waits until a grouped transaction has committed and is parked.
    func waitUntilParked() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = lock.withLock { () -> Bool in
                if parked != nil { return true }
                reached = continuation
                return false
            }
            if already { continuation.resume() }
        }
    }

    /// Lets the parked transaction return.
    func release() {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            defer { parked = nil }
            return parked
        }
        waiter?.resume()
    }
}

@Suite("WhitelabelPay: a reset while a mint waits for its commit")
struct MintResetTests {
    @Test("a mint whose slot committed before a reset fails, and the wiped key is not cached again: the next device's tokens verify")
    func resetDuringMint() async throws {
        let clock = ManualClock(1_763_776_800)
        let store = GatedStore()
        let configuration = try WhitelabelPayConfiguration(tenantID: WhitelabelPayTests.tenant, referenceID: WhitelabelPayTests.reference,
                                                           offlineTokenLimit: 5)
        let sdk = try WhitelabelPay(configuration: configuration, store: store, backend: LocalBackend(clock: clock.clock), clock: clock.clock)
        _ = try await WhitelabelPayTests.activate(sdk)
        try await sdk.markOffline()
        _ = try await sdk.getPaymentToken(offline: true)  // caches the first device's key

        store.arm()
        let mint = Task { try await sdk.getPaymentToken(offline: true) }
        await store.waitUntilParked()
        try await sdk.reset()
        store.release()
        await expectPay(.pay.deviceNotEnrolled) { _ = try await mint.value }

        // A new device on the same store: its tokens carry its own key.
        let enrolment = try await WhitelabelPayTests.activate(sdk)
        let token = try await sdk.getPaymentToken()
        let verifier = try PaymentTokenVerifier(store: InMemoryStore(), clock: clock.clock)
        _ = try await verifier.verify(token.description, enrolment: enrolment)
    }
}
