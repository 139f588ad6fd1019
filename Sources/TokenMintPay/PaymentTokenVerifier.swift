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
/// signature with the enrolled device key, its age, and that it is used once.
public struct PaymentTokenVerifier: Sendable {
    let ledger: any ReplayLedger
    /// Token lifetime in seconds.
    public let lifetime: Int64
    /// Clock skew allowed in both directions, in seconds.
    public let skew: Int64
    let clock: WhitelabelPayClock

    /// A verifier with a single-use ledger.
    public init(ledger: any ReplayLedger, lifetime: Int64 = 600, skew: Int64 = 30, clock: WhitelabelPayClock) {
        self.ledger = ledger
        self.lifetime = lifetime
        self.skew = max(0, min(skew, 300))
        self.clock = clock
    }

    /// Verifies `text` for the device of `enrolment` and records it as used.
    /// The order is: format, signature, time, then the ledger — a token that
    /// fails any check is never recorded.
    public func verify(_ text: String, enrolment: EnrolmentToken) throws(WhitelabelPayError) -> VerifiedPaymentToken {
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
        let first: Bool
        do { first = try ledger.recordOnce(identifier, expiresAt: token.epochSeconds + lifetime + skew) } catch {
            throw WhitelabelPayError(.storeFailure, "the replay ledger failed: \(error.description)")
        }
        guard first else { throw WhitelabelPayError(.replayedToken, "this token was accepted before") }
        return VerifiedPaymentToken(token: token, enrolment: enrolment)
    }
}
