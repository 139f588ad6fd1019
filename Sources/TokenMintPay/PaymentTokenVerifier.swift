public import TokenMintCore
import TokenMintCrypto
import TokenMintStore

/// The cash-desk / backend side: checks a payment token's form, its Ed25519
/// signature with the enrolled device key, its age, that it is used once, and
/// that it uses up its slot once: an offline token's counter value, or (when
/// ``requiresOfflineGrant`` is set) an online token's server-issued unsigned
/// part. With ``requiresOfflineGrant`` an offline counter must also lie in a
/// grant the device was given, and an online unsigned part must have been
/// issued to the device by ``issueOnlinePart(deviceID:paymentMeansID:window:)``:
/// a device, however tampered, is then never accepted for more offline tokens
/// than its grants hold.
///
/// The state lives in a `VerifierStore`: `SQLiteStore` on one machine,
/// `PostgresVerifierStore` (product `TokenMintPostgres`) when many verifiers
/// share it. A token is accepted once, whichever verifier sees it.
public struct PaymentTokenVerifier: Sendable {
    let store: any VerifierStore
    /// Token lifetime in seconds (1 to ``maximumLifetime``).
    public let lifetime: Int64
    /// Clock skew allowed in both directions, in seconds (0 to 300).
    public let skew: Int64
    /// Whether a token must be one the verifier side handed out: an offline
    /// token's counter value must lie in an offline allowance granted to its
    /// device (``grantOfflineAllowance(deviceID:count:window:)``), an online
    /// token's unsigned part must have been issued to the device
    /// (``issueOnlinePart(deviceID:paymentMeansID:window:)``).
    public var requiresOfflineGrant = false
    let clock: WhitelabelPayClock

    /// The longest token lifetime a verifier takes: one day.
    public static let maximumLifetime: Int64 = 86_400
    /// The longest offline grant or issued-part window: 366 days.
    public static let maximumWindow: Int64 = 366 * 86_400

    /// A verifier over `store`.
    /// - Throws: `invalidConfiguration` when `lifetime` is not 1 to
    ///   ``maximumLifetime`` seconds or `skew` not 0 to 300.
    public init(store: any VerifierStore, lifetime: Int64 = 600, skew: Int64 = 30, clock: WhitelabelPayClock) throws(TokenMintError) {
        guard (1...Self.maximumLifetime).contains(lifetime) else {
            throw TokenMintError(.pay.invalidConfiguration, "the token lifetime is 1 to \(Self.maximumLifetime) s, not \(lifetime)")
        }
        guard (0...300).contains(skew) else { throw TokenMintError(.pay.invalidConfiguration, "the clock skew is 0 to 300 s, not \(skew)") }
        self.store = store
        self.lifetime = lifetime
        self.skew = skew
        self.clock = clock
    }

    /// The device ID an enrolment is stored under: its reference ID.
    public static func deviceID(of enrolment: EnrolmentToken) -> String { enrolment.referenceID }

    /// Enrols the device of `enrolment` (idempotent; another key under the
    /// same reference ID is refused).
    public func enrol(_ enrolment: EnrolmentToken) async throws(TokenMintError) {
        do { try await store.enrolDevice(Self.deviceID(of: enrolment), record: Array(enrolment.description.utf8)) } catch {
            throw TokenMintError(error.code == .store.conflict ? .pay.enrollmentError : .pay.storeFailure, "enrolment: \(error.description)", underlying: error)
        }
    }

    /// `now + window` for a grant or an issued part, with the window bounded.
    func deadline(_ window: Int64) throws(TokenMintError) -> Int64 {
        guard (1...Self.maximumWindow).contains(window) else {
            throw TokenMintError(.pay.invalidConfiguration, "the window is 1 to \(Self.maximumWindow) s, not \(window)")
        }
        return TimeArithmetic.adding(clock.now(), window)
    }

    /// Grants an enrolled device its next `count` offline counter values, for
    /// tokens dated up to `window` seconds from now. No value is granted twice.
    /// - Throws: `invalidConfiguration` for a window outside 1 to
    ///   ``maximumWindow`` seconds, `deviceNotEnrolled`, `storeFailure`.
    public func grantOfflineAllowance(deviceID: String, count: Int64, window: Int64) async throws(TokenMintError) -> OfflineGrant {
        let notAfter = try deadline(window)
        do { return try await store.grantOfflineAllowance(deviceID, count: count, notAfter: notAfter) } catch {
            throw TokenMintError(error.code == .store.notFound ? .pay.deviceNotEnrolled : error.code == .store.invalidArgument ? .pay.invalidConfiguration : .pay.storeFailure,
                                     "grant: \(error.description)", underlying: error)
        }
    }

    /// Issues an online unsigned part to an enrolled device (what the backend
    /// answers when a device online asks for a payment token):
    /// `on.<paymentMeansID>.<22 random base64url characters>`, usable for one
    /// token dated up to `window` seconds from now.
    public func issueOnlinePart(deviceID: String, paymentMeansID: String, window: Int64 = 600) async throws(TokenMintError) -> String {
        guard PaymentMeans.isValidID(paymentMeansID) else {
            throw TokenMintError(.pay.failureToRetrievePaymentMeans, "payment means ids are 1 to 64 characters of [A-Za-z0-9-]")
        }
        let notAfter = try deadline(window)
        let part = "on.\(paymentMeansID).\(Base64URL.encode(SecureRandom.bytes(count: 16)))"
        do { try await store.issueOnlinePart(deviceID, part: part, notAfter: notAfter) } catch {
            throw TokenMintError(error.code == .store.notFound ? .pay.deviceNotEnrolled : .pay.storeFailure, "issue: \(error.description)", underlying: error)
        }
        return part
    }

    /// Verifies `text` for the enrolled device `deviceID` and records it as used.
    /// `attempt` as in ``verify(_:enrolment:attempt:)``.
    public func verify(_ text: String, deviceID: String, attempt: String? = nil) async throws(TokenMintError) -> VerifiedPaymentToken {
        let record: [UInt8]?
        do { record = try await store.deviceRecord(deviceID) } catch {
            throw TokenMintError(.pay.storeFailure, "device lookup: \(error.description)", underlying: error)
        }
        guard let record else { throw TokenMintError(.pay.deviceNotEnrolled, "device \(deviceID) is not enrolled") }
        let enrolment = try EnrolmentToken(parsing: String(decoding: record, as: UTF8.self), allowLegacyTenant: true)
        return try await verify(text, enrolment: enrolment, attempt: attempt)
    }

    /// Verifies `text` for the device of `enrolment` and records it as used.
    /// The order is: format, signature, time, grant or issued part, then the
    /// ledger and the token's slot in one transaction — a token that fails
    /// any check is never recorded. A ledger that cannot commit throws
    /// `storeFailure`: the token is then not accepted.
    ///
    /// `attempt` names the payment this verification belongs to (a cash
    /// desk's transaction ID). Retrying the same attempt after a crash or a
    /// lost answer accepts the token again instead of calling it replayed;
    /// any other attempt, or none, is refused. So an acceptance whose answer
    /// was lost is not lost, and a token is still good for one payment only.
    public func verify(_ text: String, enrolment: EnrolmentToken, attempt: String? = nil) async throws(TokenMintError) -> VerifiedPaymentToken {
        let (verified, identifier) = try check(text, enrolment: enrolment)
        let deviceID = Self.deviceID(of: enrolment)
        let slot: [UInt8]?
        switch try Self.kind(of: verified.token.unsignedPart) {
        case .offline(let counter):
            slot = Self.slot(enrolment, "off", String(counter))
            if requiresOfflineGrant {
                let grant: OfflineGrant?
                do { grant = try await store.offlineGrant(deviceID, containing: counter) } catch {
                    throw TokenMintError(.pay.storeFailure, "grant lookup: \(error.description)", underlying: error)
                }
                guard let grant else { throw TokenMintError(.pay.offlineTokenLimitReached, "offline counter \(counter) was never granted to this device") }
                guard verified.token.epochSeconds <= grant.notAfter else {
                    throw TokenMintError(.pay.expiredToken, "the token is dated after its offline grant ended")
                }
            }
        case .online:
            guard requiresOfflineGrant else { slot = nil; break }
            let part = verified.token.unsignedPart
            let notAfter: Int64?
            do { notAfter = try await store.onlinePart(deviceID, part: part) } catch {
                throw TokenMintError(.pay.storeFailure, "issued-part lookup: \(error.description)", underlying: error)
            }
            guard let notAfter else { throw TokenMintError(.pay.notIssued, "this unsigned part was never issued to this device") }
            guard verified.token.epochSeconds <= notAfter else {
                throw TokenMintError(.pay.expiredToken, "the token is dated after its unsigned part's window ended")
            }
            slot = Self.slot(enrolment, "on", part)
        }
        let first: Bool
        let attemptKey = attempt.map { HashFunction.sha256.hash(Array($0.utf8)) }
        let expiresAt = TimeArithmetic.adding(verified.token.epochSeconds, lifetime + skew)
        do { first = try await store.recordOnce(identifier, expiresAt: expiresAt, attempt: attemptKey, spending: slot) } catch {
            throw TokenMintError(.pay.storeFailure, "the replay ledger failed: \(error.description)", underlying: error)
        }
        guard first else {
            throw TokenMintError(.pay.replayedToken, slot == nil
                ? "this token was accepted before"
                : "this token, or another with the same offline counter or unsigned part, was accepted before")
        }
        return verified
    }

    /// The checks that need no store: form, signature, age. Returns the
    /// token and its ledger identifier.
    func check(_ text: String, enrolment: EnrolmentToken) throws(TokenMintError) -> (VerifiedPaymentToken, [UInt8]) {
        // One buffer: the device key, then the signed message, which is
        // verified on its own and hashed with the key for the identifier.
        let publicKey = enrolment.publicKey.rawRepresentation
        let (token, keyAndMessage) = try PaymentToken.parse(text, messagePrefix: publicKey)
        let verifies = token.signature.withUnsafeBytes { signature in
            keyAndMessage.withUnsafeBytes { bytes in
                enrolment.publicKey.isValidSignature(signature, for: UnsafeRawBufferPointer(rebasing: bytes[publicKey.count...]))
            }
        }
        guard verifies else {
            throw TokenMintError(.pay.invalidSignature, "the signature does not verify with the enrolled device key")
        }
        // Token times are the sender's and options may be extreme: every sum saturates.
        let now = clock.now()
        guard token.epochSeconds <= TimeArithmetic.adding(now, skew) else {
            throw TokenMintError(.pay.expiredToken, "the token is dated \(TimeArithmetic.subtracting(token.epochSeconds, now)) s in the future")
        }
        guard now <= TimeArithmetic.adding(token.epochSeconds, lifetime + skew) else {
            throw TokenMintError(.pay.expiredToken, "the token expired \(TimeArithmetic.subtracting(now, TimeArithmetic.adding(token.epochSeconds, lifetime))) s ago")
        }
        // The identifier covers what was signed, so the padded and unpadded
        // spellings of one token are the same token.
        let identifier = HashFunction.sha256.hash(keyAndMessage)
        return (VerifiedPaymentToken(token: token, enrolment: enrolment), identifier)
    }

    /// What an unsigned part is.
    enum Kind: Equatable {
        /// `off.<meansId>.<counter>.<nonce>`, composed on the device.
        case offline(counter: Int64)
        /// Anything else: issued by the server.
        case online
    }

    /// Reads the label of an unsigned part exactly: `off` is an offline token
    /// and must be `off.<meansId>.<counter>.<nonce>` with the counter in its
    /// one canonical form (decimal, no sign, no leading zero, 1 or more);
    /// a label that is `off` in another case is refused; anything else is online.
    /// `unsigned` is a parsed token's part, so ASCII token characters: it is
    /// read as bytes.
    static func kind(of unsigned: String) throws(TokenMintError) -> Kind {
        var unsigned = unsigned
        return try unsigned.withUTF8 { utf8 in kind(of: UnsafeRawBufferPointer(utf8)) }.get()
    }

    private static func kind(of utf8: UnsafeRawBufferPointer) -> Result<Kind, TokenMintError> {
        let dots = Separators(of: UInt8(ascii: "."), in: utf8)
        let label = dots.segment(0, of: utf8)
        // "off" in any case (ASCII: no other character lower-cases to o or f).
        guard label.count == 3, label[0] | 0x20 == UInt8(ascii: "o"), label[1] | 0x20 == UInt8(ascii: "f"), label[2] | 0x20 == UInt8(ascii: "f") else {
            return .success(.online)
        }
        guard label[0] == UInt8(ascii: "o"), label[1] == UInt8(ascii: "f"), label[2] == UInt8(ascii: "f") else {
            return .failure(TokenMintError(.pay.malformedToken, "the offline label is \"off\", in lower case"))
        }
        let malformed = TokenMintError(.pay.malformedToken, "an offline token is off.<meansId>.<counter>.<nonce>, the counter a decimal number without leading zeros")
        guard dots.count == 3 else { return .failure(malformed) }
        let nonce = dots.segment(3, of: utf8)
        guard PaymentMeans.isValidID(utf8: dots.segment(1, of: utf8)), let counter = canonicalCounter(dots.segment(2, of: utf8)),
            (1...64).contains(nonce.count), nonce.allSatisfy(Self.isBase64URLCharacter)
        else { return .failure(malformed) }
        return .success(.offline(counter: counter))
    }

    /// A counter in its one canonical form: 1 to 18 decimal digits, no sign, no leading zero, not 0.
    static func canonicalCounter(_ digits: UnsafeRawBufferPointer) -> Int64? {
        guard (1...18).contains(digits.count), digits[0] != UInt8(ascii: "0"), digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        // At most 18 digits: the sum cannot overflow.
        return digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) }
    }

    static func isBase64URLCharacter(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// The slot a token uses up: one offline counter value or one issued
    /// part, of one device key.
    static func slot(_ enrolment: EnrolmentToken, _ kind: StaticString, _ value: String) -> [UInt8] {
        let label: StaticString = "tokenmint.pay.slot.v1\0"
        let key = enrolment.publicKey.rawRepresentation
        var input = [UInt8]()
        input.reserveCapacity(label.utf8CodeUnitCount + key.count + kind.utf8CodeUnitCount + 1 + value.utf8.count)
        input.append(contentsOf: UnsafeBufferPointer(start: label.utf8Start, count: label.utf8CodeUnitCount))
        input += key
        input.append(contentsOf: UnsafeBufferPointer(start: kind.utf8Start, count: kind.utf8CodeUnitCount))
        input.append(0)
        input += value.utf8
        return HashFunction.sha256.hash(input)
    }
}
