import TokenMintCore
import Dispatch

/// Where the server runs Argon2id (client secrets, account passwords): on a
/// serial queue of its own, off Swift's cooperative threads — two of them on
/// a 2-core machine, which a few hashes would otherwise hold while payments
/// and event streams wait — with at most ``maximumWaiting`` checks queued;
/// past that the request is refused with `server.tooManyRequests` (429), so
/// a flood of sign-in attempts costs the attacker, not every other route.
enum PasswordWork {
    static let queue = DispatchQueue(label: "tokenmint.serve.password-work", qos: .userInitiated)
    static let lock = Lock()
    nonisolated(unsafe) static var waiting = 0
    /// Checks queued or running at most.
    static let maximumWaiting = 16

    /// Runs `body` on the queue.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws(TokenMintError) -> T) async throws(TokenMintError) -> T {
        let admitted = lock.withLock { () -> Bool in
            guard waiting < maximumWaiting else { return false }
            waiting += 1
            return true
        }
        guard admitted else { throw TokenMintError(.server.tooManyRequests, "too many sign-in checks at once; try again shortly") }
        let result: Result<T, TokenMintError> = await withCheckedContinuation { continuation in
            queue.async {
                let outcome = Result<T, TokenMintError> { () throws(TokenMintError) -> T in try body() }
                lock.withLock { waiting -= 1 }
                continuation.resume(returning: outcome)
            }
        }
        return try result.get()
    }
}
