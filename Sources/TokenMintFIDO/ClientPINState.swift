import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR
import TokenMintStore
import TokenMintWebAuthn

/// The authenticator side of authenticatorClientPIN (CTAP 2.1 §6.5): the
/// PIN hash and the retries counter, kept durably in the authenticator's
/// store, and what lives only until power-down: the key agreement key, the
/// PIN/UV auth token and the count of consecutive wrong PINs.
///
/// A wrong PIN costs a retry before it is compared, and the decrement is
/// committed first: killing the process between the two wastes a retry,
/// never gives one back. Eight wrong PINs in all block the PIN until reset;
/// three in a row block PIN operations until the process restarts (a power
/// cycle for a software key).
actor ClientPINState {
    static let maximumRetries: Int64 = 8
    static let hashName = "fido2.pin.hash"
    static let failuresName = "fido2.pin.failures"
    /// How long a PIN/UV auth token lives after it is issued.
    static let tokenLifetime: Duration = .seconds(600)

    struct Token {
        let value: SecureBytes
        let version: PINUVAuthProtocol
        var permissions: PINUVAuthPermissions
        var rpID: String?
        let issued: ContinuousClock.Instant
        var userVerified: Bool
        var used = false
    }

    let store: any KeyValueStore
    let minimumLength: Int
    private var keyAgreement: ECDSA.PrivateKey?
    private var consecutiveMismatches = 0
    private var token: Token?
    /// Credential management's enumeration cursors, dropped by any other
    /// command, by a delete or reset, and after 30 s (CTAP 2.1 §6.8.3, §6.8.5).
    var remainingRPs: [String] = []
    var remainingCredentials: [SoftwareAuthenticator.ResidentCredential] = []
    var cursorDeadline = ContinuousClock.now
    static let cursorLifetime: Duration = .seconds(30)
    /// A token unused this long after it is issued expires (CTAP 2.1 §6.5.2.1's initial usage limit).
    static let initialUsageLimit: Duration = .seconds(30)

    init(store: any KeyValueStore, minimumLength: Int) {
        self.store = store
        self.minimumLength = minimumLength
    }

    private func storeCall<T>(_ body: (any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        do { return try store.transaction(body) } catch { throw TokenMintError.wrap(error, as: .fido.ctap(.other), "the PIN store failed: \(error)") }
    }

    /// Whether a PIN is set.
    func isPINSet() throws(TokenMintError) -> Bool { try storeCall { tx in try tx.secret(ClientPINState.hashName) } != nil }

    /// PIN retries left (8 when fresh).
    func retries() throws(TokenMintError) -> Int64 {
        max(0, Self.maximumRetries - (try storeCall { tx in try tx.counter(ClientPINState.failuresName) }))
    }

    /// Whether PIN operations wait for a power cycle (three wrong PINs in a row).
    var powerCycleRequired: Bool { consecutiveMismatches >= 3 }

    /// The key agreement key (made at first use after power-up, and again after a wrong PIN).
    private func agreementKey() throws(TokenMintError) -> ECDSA.PrivateKey {
        if let keyAgreement { return keyAgreement }
        let key: ECDSA.PrivateKey
        do { key = try ECDSA.PrivateKey(curve: .p256) } catch { throw TokenMintError(.fido.ctap(.other), "key agreement key", underlying: error) }
        keyAgreement = key
        return key
    }

    /// getKeyAgreement's COSE key.
    func keyAgreementKey() throws(TokenMintError) -> CBOR { PINUVAuthProtocol.coseKey(try agreementKey().publicKey) }

    /// The shared secret with a platform's key agreement key.
    func sharedSecret(_ version: PINUVAuthProtocol, _ peer: CBOR) throws(TokenMintError) -> SecureBytes {
        let own = try agreementKey()
        do { return try version.sharedSecret(own, peer: peer) } catch where error.code.domain == "fido" { throw error } catch {
            throw TokenMintError(.fido.ctap(.invalidParameter), "keyAgreement does not agree: \(error.reason)", underlying: error)
        }
    }

    /// After authenticatorReset (the store is wiped already): a new key, no token.
    func reset() {
        keyAgreement = nil
        token = nil
        consecutiveMismatches = 0
        remainingRPs = []
        remainingCredentials = []
    }

    /// setPIN (subcommand 0x03).
    func setPIN(_ version: PINUVAuthProtocol, peer: CBOR, newPinEnc: [UInt8], pinUvAuthParam: [UInt8]) throws(TokenMintError) {
        guard try !isPINSet() else { throw .ctap(.pinAuthInvalid, "a PIN is set already: change it instead") }
        let shared = try sharedSecret(version, peer)
        guard try version.verify(shared, newPinEnc, pinUvAuthParam) else { throw .ctap(.pinAuthInvalid, "pinUvAuthParam does not authenticate newPinEnc") }
        let hash = try newPINHash(version, shared, newPinEnc)
        try storeCall { tx in
            try tx.setSecret(ClientPINState.hashName, hash)
            try tx.setCounter(ClientPINState.failuresName, 0)
        }
    }

    /// changePIN (subcommand 0x04).
    func changePIN(_ version: PINUVAuthProtocol, peer: CBOR, pinHashEnc: [UInt8], newPinEnc: [UInt8], pinUvAuthParam: [UInt8]) throws(TokenMintError) {
        try checkNotBlocked()
        let shared = try sharedSecret(version, peer)
        guard try version.verify(shared, newPinEnc + pinHashEnc, pinUvAuthParam) else {
            throw .ctap(.pinAuthInvalid, "pinUvAuthParam does not authenticate newPinEnc ‖ pinHashEnc")
        }
        try checkPIN(version, shared, pinHashEnc)
        let hash = try newPINHash(version, shared, newPinEnc)
        try storeCall { tx in try tx.setSecret(ClientPINState.hashName, hash) }
        token = nil
    }

    /// getPinToken (0x05) and getPinUvAuthTokenUsingPinWithPermissions (0x09): the new token, encrypted.
    func pinToken(_ version: PINUVAuthProtocol, peer: CBOR, pinHashEnc: [UInt8], permissions: PINUVAuthPermissions, rpID: String?)
        throws(TokenMintError) -> [UInt8]
    {
        try checkNotBlocked()
        let shared = try sharedSecret(version, peer)
        try checkPIN(version, shared, pinHashEnc)
        return try issue(version, shared: shared, permissions: permissions, rpID: rpID)
    }

    /// getPinUvAuthTokenUsingUvWithPermissions (0x06), once the caller verified the user.
    func uvToken(_ version: PINUVAuthProtocol, peer: CBOR, permissions: PINUVAuthPermissions, rpID: String?) throws(TokenMintError) -> [UInt8] {
        let shared = try sharedSecret(version, peer)
        return try issue(version, shared: shared, permissions: permissions, rpID: rpID)
    }

    /// A new token (any earlier one is gone), encrypted for the platform.
    private func issue(_ version: PINUVAuthProtocol, shared: SecureBytes, permissions: PINUVAuthPermissions, rpID: String?) throws(TokenMintError) -> [UInt8] {
        let value = SecureBytes(randomCount: 32)
        token = Token(value: value, version: version, permissions: permissions, rpID: rpID, issued: .now, userVerified: true)
        return try version.encrypt(shared, value)
    }

    /// PIN_NOT_SET, PIN_BLOCKED or PIN_AUTH_BLOCKED when no PIN may be tried.
    private func checkNotBlocked() throws(TokenMintError) {
        guard try isPINSet() else { throw .ctap(.pinNotSet, "no PIN is set") }
        guard try retries() > 0 else { throw .ctap(.pinBlocked, "the PIN is blocked: only a reset helps") }
        guard !powerCycleRequired else { throw .ctap(.pinAuthBlocked, "three wrong PINs in a row: power-cycle the authenticator") }
    }

    /// Compares pinHashEnc with the stored PIN hash, a retry spent (durably) first.
    private func checkPIN(_ version: PINUVAuthProtocol, _ shared: SecureBytes, _ pinHashEnc: [UInt8]) throws(TokenMintError) {
        let stored = try storeCall { tx -> SecureBytes? in
            _ = try tx.increment(ClientPINState.failuresName, by: 1)
            return try tx.secret(ClientPINState.hashName)
        }
        let given = try? version.decrypt(shared, pinHashEnc)
        guard let stored, let given, given.count == 16, given == stored else {
            keyAgreement = nil
            consecutiveMismatches += 1
            token = nil
            if try retries() == 0 { throw .ctap(.pinBlocked, "wrong PIN; the PIN is now blocked") }
            if powerCycleRequired { throw .ctap(.pinAuthBlocked, "wrong PIN, the third in a row: power-cycle the authenticator") }
            throw .ctap(.pinInvalid, "wrong PIN")
        }
        try storeCall { tx in try tx.setCounter(ClientPINState.failuresName, 0) }
        consecutiveMismatches = 0
    }

    /// LEFT(SHA-256(newPin), 16) of a padded new PIN, checked against the policy.
    private func newPINHash(_ version: PINUVAuthProtocol, _ shared: SecureBytes, _ newPinEnc: [UInt8]) throws(TokenMintError) -> SecureBytes {
        guard newPinEnc.count == (version == .two ? 80 : 64) else { throw .ctap(.invalidParameter, "newPinEnc is a 64-byte padded PIN, encrypted") }
        let padded = try version.decrypt(shared, newPinEnc)
        let (length, points) = padded.withUnsafeBytes { bytes -> (Int, Int?) in
            let length = bytes.firstIndex(of: 0) ?? bytes.count
            var iterator = UnsafeRawBufferPointer(rebasing: bytes[0..<length]).makeIterator()
            var decoder = Unicode.UTF8()
            var points = 0
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue: points += 1
                case .emptyInput: return (length, points)
                case .error: return (length, nil)
                }
            }
        }
        guard length <= 63 else { throw .ctap(.pinPolicyViolation, "a PIN is at most 63 bytes") }
        guard let points else { throw .ctap(.pinPolicyViolation, "a PIN is UTF-8") }
        guard points >= minimumLength else { throw .ctap(.pinPolicyViolation, "a PIN has at least \(minimumLength) characters") }
        return try HashFunction.sha256.secretHash(padded.slice(0..<length)).slice(0..<16)
    }

    /// Checks a request's pinUvAuthParam against the token in use: right
    /// protocol, right tag over `message`, `permission` granted, and the
    /// token's RP (bound now when `bind` and none is yet). Returns whether the
    /// token carries user verification.
    func useToken(_ version: PINUVAuthProtocol, param: [UInt8], message: [UInt8], permission: PINUVAuthPermissions, rpID: String?, bind: Bool)
        throws(TokenMintError) -> Bool
    {
        guard var current = token, ContinuousClock.now < current.issued + (current.used ? Self.tokenLifetime : Self.initialUsageLimit) else {
            token = nil
            throw .ctap(.pinAuthInvalid, "no PIN/UV auth token is in use")
        }
        guard current.version == version, try version.verify(current.value, message, param) else {
            throw .ctap(.pinAuthInvalid, "pinUvAuthParam does not verify")
        }
        guard current.permissions.contains(permission) else { throw .ctap(.pinAuthInvalid, "the token lacks the permission") }
        if let rpID {
            if let bound = current.rpID {
                guard bound == rpID else { throw .ctap(.pinAuthInvalid, "the token is bound to another RP") }
            } else if bind {
                current.rpID = rpID
            }
        }
        current.used = true
        token = current
        return current.userVerified
    }

    /// The RP the token in use is bound to.
    var tokenRPID: String? { token?.rpID }

    /// After a makeCredential or getAssertion with user presence (CTAP 2.1
    /// §6.1.2, §6.2.2): the token's permissions are used up, except lbw,
    /// and its user verification with them.
    func consumeToken() {
        token?.permissions.formIntersection(.largeBlobWrite)
        token?.userVerified = false
    }
}
