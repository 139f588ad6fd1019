public import TokenMintCore
public import TokenMintStore
import TokenMintCrypto
import Foundation

/// The server side of OATH: checks HOTP and TOTP codes a user types, each
/// accepted once.
///
/// Per credential (named by an `id` the caller chooses, such as an account
/// ID), the store keeps the next counter or time step a code may use,
/// committed in the same transaction that accepts a code. Only a code for a
/// strictly later counter or step than the last accepted one passes: the
/// same code twice, or an earlier one, is `.oath.replayedCode`.
///
/// - HOTP: a code is looked for at the next counter and up to
///   ``lookAhead`` counters after it (the user may have pressed the button
///   without logging in). Further ahead, ``resynchronize(_:_:credential:id:)``
///   accepts two consecutive codes within ``resynchronizationWindow``
///   (RFC 4226 §7.4).
/// - TOTP: a code is looked for within ±``totpSteps`` time steps of now
///   (RFC 6238 §5.2, clock drift).
///
/// Codes are compared in constant time. Throttling failed attempts is the
/// caller's part (RFC 4226 §7.3): a 6-digit code falls to guessing otherwise.
public struct OTPVerifier: Sendable {
    /// How many counters past the next one a HOTP code is looked for at.
    public let lookAhead: Int
    /// How many counters past the next one resynchronization looks.
    public let resynchronizationWindow: Int
    /// How many time steps before and after now a TOTP code is looked for in.
    public let totpSteps: Int
    let store: any KeyValueStore

    /// A verifier keeping its state in `store`.
    /// - Throws: `.oath.invalidParameter` for a look-ahead of 0 to 1,000,
    ///   a resynchronization window from the look-ahead to 100,000, or a
    ///   TOTP window of 0 to 10 steps not respected.
    public init(store: any KeyValueStore, lookAhead: Int = 10, resynchronizationWindow: Int = 100, totpSteps: Int = 1) throws(TokenMintError) {
        guard (0...1_000).contains(lookAhead), (lookAhead...100_000).contains(resynchronizationWindow), (0...10).contains(totpSteps) else {
            throw TokenMintError(.oath.invalidParameter, "lookAhead 0–1000, resynchronizationWindow lookAhead–100000, totpSteps 0–10")
        }
        self.store = store
        self.lookAhead = lookAhead
        self.resynchronizationWindow = resynchronizationWindow
        self.totpSteps = totpSteps
    }

    /// Checks `code` for `credential` (HOTP: from the next counter on;
    /// TOTP: at `time`, Unix seconds, now when `nil`) and returns the
    /// counter or time step it was accepted at, committed before it returns.
    /// For HOTP, the credential's own counter is where counting starts when
    /// no code was accepted yet for `id`.
    /// - Throws: `.oath.invalidCode`, `.oath.replayedCode`, `.oath.invalidParameter`.
    public func verify(_ code: String, credential: OATHCredential, id: String, time: Int64? = nil) throws(TokenMintError) -> UInt64 {
        try OTPVerifier.checkFormat(code, digits: credential.digits)
        let stateName = try OTPVerifier.stateName(id)
        switch credential.kind {
        case .hotp(let start):
            return try transaction { tx -> UInt64 in
                let next = try max(OTPVerifier.next(stateName, tx), start)
                let window = try OTPVerifier.counters(from: next, count: lookAhead)
                if let counter = try OTPVerifier.firstMatch(code, credential, window) {
                    try tx.setCounter(stateName, OTPVerifier.stored(counter))
                    return counter
                }
                // A code of the counters just used up (never below the start) is a replay.
                let span = UInt64(lookAhead) + 1
                let earlier = max(next >= span ? next - span : 0, start)..<next
                if try OTPVerifier.firstMatch(code, credential, earlier) != nil { throw OTPVerifier.replayed() }
                throw OTPVerifier.wrong()
            }
        case .totp(let period):
            let step = try OATH.timeStep(time: time ?? OATH.now(), period: period)
            let drift = UInt64(totpSteps)
            let high = step.addingReportingOverflow(drift)
            let window = (step >= drift ? step - drift : 0)...(high.overflow ? UInt64.max : high.partialValue)
            // Nearest to now first, so a drifting clock is followed, never overtaken.
            let ordered = window.sorted { OTPVerifier.distance($0, step) < OTPVerifier.distance($1, step) }
            return try transaction { tx -> UInt64 in
                let next = try OTPVerifier.next(stateName, tx)
                guard let accepted = try OTPVerifier.firstMatch(code, credential, ordered) else { throw OTPVerifier.wrong() }
                // Only a step strictly later than the last accepted one: the same code twice is refused.
                guard accepted >= next else { throw OTPVerifier.replayed() }
                try tx.setCounter(stateName, OTPVerifier.stored(accepted))
                return accepted
            }
        }
    }

    /// HOTP resynchronization (RFC 4226 §7.4): accepts `first` and `second`
    /// when they are the codes of two consecutive counters within
    /// ``resynchronizationWindow`` of the next one; returns the counter of
    /// `second`, after which counting goes on.
    /// - Throws: `.oath.invalidCode` (for a TOTP credential too): codes of
    ///   counters already used are never found, as the search starts after them.
    public func resynchronize(_ first: String, _ second: String, credential: OATHCredential, id: String) throws(TokenMintError) -> UInt64 {
        guard case .hotp(let start) = credential.kind else { throw TokenMintError(.oath.invalidCode, "only HOTP counters are resynchronized") }
        try OTPVerifier.checkFormat(first, digits: credential.digits)
        try OTPVerifier.checkFormat(second, digits: credential.digits)
        let stateName = try OTPVerifier.stateName(id)
        return try transaction { tx -> UInt64 in
            let next = try max(OTPVerifier.next(stateName, tx), start)
            for counter in try OTPVerifier.counters(from: next, count: resynchronizationWindow) where counter < OATHCredential.maximumCounter {
                let firstExpected = try OTPVerifier.code(credential, counter)
                guard OTPVerifier.matches(first, firstExpected) else { continue }
                let secondExpected = try OTPVerifier.code(credential, counter + 1)
                guard OTPVerifier.matches(second, secondExpected) else { continue }
                try tx.setCounter(stateName, OTPVerifier.stored(counter + 1))
                return counter + 1
            }
            throw OTPVerifier.wrong()
        }
    }

    /// The next counter or time step a code may use for `id` (0 before any).
    public func nextAccepted(id: String) throws(TokenMintError) -> UInt64 {
        let stateName = try OTPVerifier.stateName(id)
        return try transaction { tx -> UInt64 in try OTPVerifier.next(stateName, tx) }
    }

    /// Forgets the state of `id` (a credential replaced or removed).
    public func forget(id: String) throws(TokenMintError) {
        let stateName = try OTPVerifier.stateName(id)
        try transaction { tx in try tx.setCounter(stateName, 0) }
    }

    // MARK: Parts

    func transaction<T>(_ body: (any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        do { return try store.transaction(body) } catch {
            throw TokenMintError.wrap(error, as: .oath.storeFailed, "the verifier's store failed: \(error)")
        }
    }

    static func stateName(_ id: String) throws(TokenMintError) -> String {
        guard (1...256).contains(id.utf8.count) else { throw TokenMintError(.oath.invalidParameter, "a credential id is 1 to 256 bytes") }
        return "oath.verifier." + Base64URL.encode(Array(id.utf8))
    }

    /// The next counter or step: the store keeps it as it is (0 when never set).
    static func next(_ stateName: String, _ tx: any StoreTransaction) throws -> UInt64 {
        try UInt64(clamping: tx.counter(stateName))
    }

    /// The value stored after accepting `accepted`: the one after it.
    static func stored(_ accepted: UInt64) throws(TokenMintError) -> Int64 {
        guard accepted < UInt64(Int64.max) else { throw TokenMintError(.oath.invalidParameter, "the counter is exhausted") }
        return Int64(accepted) + 1
    }

    /// `next` and up to `count` counters after it, within the counter range.
    static func counters(from next: UInt64, count: Int) throws(TokenMintError) -> ClosedRange<UInt64> {
        guard next <= OATHCredential.maximumCounter else { throw TokenMintError(.oath.invalidParameter, "the counter is exhausted") }
        let (end, overflow) = next.addingReportingOverflow(UInt64(count))
        return next...(overflow ? OATHCredential.maximumCounter : min(end, OATHCredential.maximumCounter))
    }

    /// The first counter or step of `candidates` whose code is `code`.
    static func firstMatch(_ code: String, _ credential: OATHCredential, _ candidates: some Sequence<UInt64>) throws(TokenMintError) -> UInt64? {
        for candidate in candidates {
            let expected = try OTPVerifier.code(credential, candidate)
            if matches(code, expected) { return candidate }
        }
        return nil
    }

    static func code(_ credential: OATHCredential, _ counter: UInt64) throws(TokenMintError) -> String {
        try OATH.hotp(secret: credential.secret, counter: counter, algorithm: credential.algorithm, digits: credential.digits)
    }

    /// Constant-time comparison of two codes of the same length.
    static func matches(_ given: String, _ expected: String) -> Bool {
        ConstantTime.equals(Array(given.utf8), Array(expected.utf8))
    }

    static func distance(_ a: UInt64, _ b: UInt64) -> UInt64 { a > b ? a - b : b - a }

    /// A code is exactly `digits` ASCII digits.
    static func checkFormat(_ code: String, digits: Int) throws(TokenMintError) {
        guard code.utf8.count == digits, code.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw TokenMintError(.oath.invalidCode, "a code is \(digits) decimal digits")
        }
    }

    static func wrong() -> TokenMintError { TokenMintError(.oath.invalidCode, "the code is wrong") }

    static func replayed() -> TokenMintError {
        TokenMintError(.oath.replayedCode, "the code was used already, or a later one was")
    }
}
