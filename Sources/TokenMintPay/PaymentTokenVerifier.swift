public import TokenMintCrypto
public import TokenMintStore

/// A payment token that verified.
public struct VerifiedPaymentToken: Sendable {
    /// The token.
    public let token: PaymentToken
    /// The enrolment it was checked against.
    public let enrolment: EnrolmentToken
    /// Whether the device minted it offline (`off.` unsigned part).
    public var isOffline: Bool { token.unsignedPart.hasPrefix("off.") }
}

/// The cash-desk / backend side: checks a payment token's form, its Ed25519
/// signature with the enrolled device key, its age, for an offline token
/// (when asked) that its counter value was granted to the device, and that it
/// is used once.
///
/// The state lives in a ``VerifierStore``: ``SQLiteStore`` on one machine,
/// `PostgresVerifierStore` (product `TokenMintPostgres`) when many verifiers
/// share it. A token is accepted once, whichever verifier sees it.
public struct PaymentTokenVerifier: Sendable {
    let store: any VerifierStore
    /// Token lifetime in seconds.
    public let lifetime: Int64
    /// Clock skew allowed in both directions, in seconds.
    public let skew: Int64
    /// Whether an offline token's counter value must lie in an offline
    /// allowance granted to its device (``grantOfflineAllowance(deviceID:count:window:)``).
    public var requiresOfflineGrant = false
    let clock: WhitelabelPayClock

    /// A verifier over `store`.
    public init(store: any VerifierStore, lifetime: Int64 = 600, skew: Int64 = 30, clock: WhitelabelPayClock) {
        self.store = store
        self.lifetime = lifetime
        self.skew = max(0, min(skew, 300))
        self.clock = clock
    }

    /// The device ID an enrolment is stored under: its reference ID.
    public static func deviceID(of enrolment: EnrolmentToken) -> String { enrolment.referenceID }

    /// Enrols the device of `enrolment` (idempotent; another key under the
    /// same reference ID is refused).
    public func enrol(_ enrolment: EnrolmentToken) async throws(WhitelabelPayError) {
        do { try await store.enrolDevice(Self.deviceID(of: enrolment), record: Array(enrolment.description.utf8)) } catch {
            throw WhitelabelPayError(error.code == .conflict ? .enrollmentError : .storeFailure, "enrolment: \(error.description)")
        }
    }

    /// Grants an enrolled device its next `count` offline counter values, for
    /// tokens dated up to `window` seconds from now. No value is granted twice.
    public func grantOfflineAllowance(deviceID: String, count: Int64, window: Int64) async throws(WhitelabelPayError) -> OfflineGrant {
        do { return try await store.grantOfflineAllowance(deviceID, count: count, notAfter: clock.now() + window) } catch {
            throw WhitelabelPayError(error.code == .notFound ? .deviceNotEnrolled : .storeFailure, "grant: \(error.description)")
        }
    }

    /// Verifies `text` for the enrolled device `deviceID` and records it as used.
    /// `attempt` as in ``verify(_:enrolment:attempt:)``.
    public func verify(_ text: String, deviceID: String, attempt: String? = nil) async throws(WhitelabelPayError) -> VerifiedPaymentToken {
        let record: [UInt8]?
        do { record = try await store.deviceRecord(deviceID) } catch {
            throw WhitelabelPayError(.storeFailure, "device lookup: \(error.description)")
        }
        guard let record else { throw WhitelabelPayError(.deviceNotEnrolled, "device \(deviceID) is not enrolled") }
        let enrolment = try EnrolmentToken(parsing: String(decoding: record, as: UTF8.self), allowLegacyTenant: true)
        return try await verify(text, enrolment: enrolment, attempt: attempt)
    }

    /// Verifies `text` for the device of `enrolment` and records it as used.
    /// The order is: format, signature, time, grant, then the ledger — a
    /// token that fails any check is never recorded. A ledger that cannot
    /// commit throws `storeFailure`: the token is then not accepted.
    ///
    /// `attempt` names the payment this verification belongs to (a cash
    /// desk's transaction ID). Retrying the same attempt after a crash or a
    /// lost answer accepts the token again instead of calling it replayed;
    /// any other attempt, or none, is refused. So an acceptance whose answer
    /// was lost is not lost, and a token is still good for one payment only.
    public func verify(_ text: String, enrolment: EnrolmentToken, attempt: String? = nil) async throws(WhitelabelPayError) -> VerifiedPaymentToken {
        let (verified, identifier) = try check(text, enrolment: enrolment)
        if requiresOfflineGrant, verified.isOffline {
            let counter = try Self.offlineCounter(verified.token)
            let grant: OfflineGrant?
            do { grant = try await store.offlineGrant(Self.deviceID(of: enrolment), containing: counter) } catch {
                throw WhitelabelPayError(.storeFailure, "grant lookup: \(error.description)")
            }
            guard let grant else { throw WhitelabelPayError(.offlineTokenLimitReached, "offline counter \(counter) was never granted to this device") }
            guard verified.token.epochSeconds <= grant.notAfter else {
                throw WhitelabelPayError(.expiredToken, "the token is dated after its offline grant ended")
            }
        }
        let first: Bool
        let attemptKey = attempt.map { HashFunction.sha256.hash(Array($0.utf8)) }
        do { first = try await store.recordOnce(identifier, expiresAt: verified.token.epochSeconds + lifetime + skew, attempt: attemptKey) } catch {
            throw WhitelabelPayError(.storeFailure, "the replay ledger failed: \(error.description)")
        }
        guard first else { throw WhitelabelPayError(.replayedToken, "this token was accepted before") }
        return verified
    }

    /// The checks that need no store: form, signature, age. Returns the
    /// token and its ledger identifier.
    func check(_ text: String, enrolment: EnrolmentToken) throws(WhitelabelPayError) -> (VerifiedPaymentToken, [UInt8]) {
        let token = try PaymentToken(parsing: text)
        let message = token.signedMessage
        guard enrolment.publicKey.isValidSignature(token.signature, for: message) else {
            throw WhitelabelPayError(.invalidSignature, "the signature does not verify with the enrolled device key")
        }
        let now = clock.now()
        guard token.epochSeconds <= now + skew else {
            throw WhitelabelPayError(.expiredToken, "the token is dated \(token.epochSeconds - now) s in the future")
        }
        guard now <= token.epochSeconds + lifetime + skew else {
            throw WhitelabelPayError(.expiredToken, "the token expired \(now - token.epochSeconds - lifetime) s ago")
        }
        // The identifier covers what was signed, so the padded and unpadded
        // spellings of one token are the same token.
        let identifier = HashFunction.sha256.hash(Array(enrolment.publicKey.rawRepresentation) + message)
        return (VerifiedPaymentToken(token: token, enrolment: enrolment), identifier)
    }

    /// The counter value of an offline token: `off.<meansId>.<counter>.<nonce>`.
    static func offlineCounter(_ token: PaymentToken) throws(WhitelabelPayError) -> Int64 {
        let parts = token.unsignedPart.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 4, let counter = Int64(parts[parts.count - 2]), counter > 0 else {
            throw WhitelabelPayError(.malformedToken, "an offline token is off.<meansId>.<counter>.<nonce>")
        }
        return counter
    }
}
