public import TokenMintCore
import TokenMintCrypto
public import TokenMintStore
public import TokenMintWebAuthn
import Foundation
import Logging

/// A WebAuthn ceremony the issuer started: what the options a relying party
/// sends to the browser carry.
public struct PasskeyCeremony: Sendable, Hashable {
    /// The challenge: 32 bytes (its expiry, then 24 random bytes), single
    /// use, valid for 5 minutes.
    public let challenge: [UInt8]
    /// The account's user handle (WebAuthn `user.id`): 32 bytes fixed by the
    /// account's first registration (a hash of that ceremony's random
    /// challenge), never derived from the account name. Nil for a sign-in
    /// that names no account, or an account without passkeys.
    public let userHandle: [UInt8]?
    /// The account's registered credential IDs: `excludeCredentials` of a
    /// registration, `allowCredentials` of a sign-in or step-up (empty for a
    /// sign-in with a discoverable credential).
    public let credentialIDs: [[UInt8]]
}

/// A passkey sign-in that verified.
public struct PasskeySignIn: Sendable, Hashable {
    /// The account the passkey belongs to.
    public let account: String
    /// The credential that signed.
    public let credentialID: [UInt8]
    /// The signature counter the authenticator reported (now stored).
    public let signCount: UInt32
    /// Whether the authenticator verified the user (UV).
    public let userVerified: Bool
}

/// Passkeys: registration, sign-in and step-up ceremonies over challenges
/// this issuer gives out (single use, 5 minutes, bound to their purpose and
/// account), with the credentials and their counters in the issuer's store.
extension LocalTokenIssuer {
    /// What a challenge was given out for.
    enum CeremonyPurpose: String {
        /// A passkey for an account that has none yet (a sign-up).
        case signUp = "signup"
        /// A passkey for an existing account whose owner proved it.
        case register
        case signIn = "signin", elevate
    }

    static let challengeLifetime: Int64 = 300

    static func passkeyName(_ credentialID: [UInt8]) -> String { "auth.passkey." + Base64URL.encode(credentialID) }
    static func accountPasskeysName(_ account: String) -> String { "auth.account-passkeys." + account }
    static func userHandleName(_ account: String) -> String { "auth.user-handle." + account }

    static func validAccount(_ account: String) -> Bool { !account.isEmpty && account.utf8.count <= 128 }

    /// The store name of a challenge. A challenge is its expiry (8 bytes,
    /// big-endian) and 24 random bytes; the expiry goes first in the name, in
    /// hex, so that expired challenges are one range of names.
    static func challengeName(_ challenge: [UInt8]) -> String {
        guard challenge.count == 32 else { return challengePrefix + Base64URL.encode(challenge) }
        return challengePrefix + Hex.encode(Array(challenge.prefix(8))) + "." + Base64URL.encode(Array(challenge.dropFirst(8)))
    }

    static let challengePrefix = "auth.challenge."

    /// Stores a fresh challenge for `purpose` and `account` ("" for any
    /// account), after dropping every challenge that has expired: challenges
    /// nobody answers (anyone may ask for one) do not pile up.
    func newChallenge(_ purpose: CeremonyPurpose, account: String, in tx: any StoreTransaction) throws -> [UInt8] {
        let now = clock()
        let expires = TimeArithmetic.adding(now, Self.challengeLifetime)
        _ = try tx.removeValues(from: Self.challengePrefix + String(repeating: "0", count: 16),
                                upTo: Self.challengePrefix + Hex.encode(Self.bigEndian(UInt64(max(0, now)))))
        let challenge = Self.bigEndian(UInt64(max(0, expires))) + SecureRandom.bytes(count: 24)
        try tx.setValue(Self.challengeName(challenge), Array("\(purpose.rawValue)|\(account)|\(expires)".utf8))
        return challenge
    }

    static func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }

    /// Consumes `challenge` whatever happens next (a replay finds it gone)
    /// and returns what it was given out for and the account ("" for any),
    /// or throws `challengeInvalid` when it was not given out for one of
    /// `purposes`, expired or was used.
    func consumeChallenge(
        _ challenge: [UInt8], for purposes: Set<CeremonyPurpose>, _ who: Logger.Metadata
    ) throws(TokenMintError) -> (purpose: CeremonyPurpose, account: String) {
        let now = clock()
        let found: (CeremonyPurpose, String)? = try transaction { tx in
            let name = Self.challengeName(challenge)
            guard let value = try tx.value(name) else { return nil }
            try tx.remove(name)
            let text = String(decoding: value, as: UTF8.self)
            guard let first = text.firstIndex(of: "|"), let last = text.lastIndex(of: "|"), first < last,
                let purpose = CeremonyPurpose(rawValue: String(text[..<first])), purposes.contains(purpose),
                let expires = Int64(text[text.index(after: last)...]), expires > now
            else { return nil }
            return (purpose, String(text[text.index(after: first)..<last]))
        }
        guard let found else { throw refused(TokenMintError(.auth.challengeInvalid, "the challenge was not issued for this, expired, or was used"), who) }
        return found
    }

    func credentialIDs(of account: String, in tx: any StoreTransaction) throws -> [[UInt8]] {
        guard let data = try tx.value(Self.accountPasskeysName(account)),
            let list = try? JSONSerialization.jsonObject(with: Data(data)) as? [String]
        else { return [] }
        return list.compactMap { try? Base64URL.decode($0) }
    }

    func userHandle(of account: String, in tx: any StoreTransaction) throws -> [UInt8]? {
        try tx.value(Self.userHandleName(account))
    }

    /// The user handle a registration over `challenge` gives an account that has none.
    static func userHandle(for challenge: [UInt8]) -> [UInt8] {
        HashFunction.sha256.hash(Array("tokenmint user handle".utf8) + challenge)
    }

    /// The credential IDs of `account`'s passkeys, oldest first.
    public func passkeyCredentialIDs(account: String) throws(TokenMintError) -> [[UInt8]] {
        try transaction { tx in try credentialIDs(of: account, in: tx) }
    }

    /// Starts a registration for `account`: a challenge, the account's user
    /// handle (made now if it has none) and its credential IDs to exclude.
    ///
    /// - Parameters:
    ///   - account: The account.
    ///   - signUp: True for a sign-up: the registration lands only while the
    ///     account has no passkey. False when the caller has proved the
    ///     account is the user's (a fresh sign-in, a password checked in the
    ///     same request): the passkey is added beside the others.
    /// - Throws: `notSignedIn` for an account name that is empty or longer
    ///   than 128 bytes.
    public func registrationCeremony(account: String, signUp: Bool) throws(TokenMintError) -> PasskeyCeremony {
        guard Self.validAccount(account) else { throw TokenMintError(.auth.notSignedIn, "an account is 1 to 128 bytes") }
        return try transaction { tx in
            let challenge = try newChallenge(signUp ? .signUp : .register, account: account, in: tx)
            // Nothing is stored for an account until a registration lands: a
            // new account's user handle is derived from this challenge and
            // kept by the registration that answers it.
            let handle = try userHandle(of: account, in: tx) ?? Self.userHandle(for: challenge)
            return PasskeyCeremony(challenge: challenge, userHandle: handle, credentialIDs: try credentialIDs(of: account, in: tx))
        }
    }

    /// Verifies a registration over a challenge from
    /// `registrationCeremony(account:signUp:)` and records the passkey for
    /// `account`. A sign-up's challenge registers only while the account has
    /// no passkey (checked in the same transaction as the write, so two
    /// racing sign-ups cannot both land).
    ///
    /// - Parameters:
    ///   - account: The account the ceremony was started for.
    ///   - clientDataJSON: The `clientDataJSON` bytes the browser returned.
    ///   - attestationObject: The `attestationObject` bytes.
    ///   - credentialID: The credential's `rawId` as the client sent it,
    ///     which must be the one in the authenticator data.
    ///   - allowSignUp: False refuses a sign-up's challenge with
    ///     `accountExists` (the host knows the name is taken otherwise, by a
    ///     password account).
    /// - Throws: `challengeInvalid`, `wrongAccount` (a challenge given out
    ///   for another account), `registrationInvalid`, `credentialExists`,
    ///   `accountExists`.
    public func registerPasskey(
        account: String, clientDataJSON: [UInt8], attestationObject: [UInt8], credentialID: [UInt8]?, allowSignUp: Bool = true
    ) throws(TokenMintError) -> RegisteredCredential {
        let who: Logger.Metadata = ["account": "\(SafeText.escaped(account.prefix(128)))"]
        guard let challenge = (try? CollectedClientData(parsing: clientDataJSON))?.challenge else {
            throw refused(TokenMintError(.auth.registrationInvalid, "clientDataJSON is malformed"), who)
        }
        let (purpose, owner) = try consumeChallenge(challenge, for: [.signUp, .register], who)
        guard owner == account else { throw refused(TokenMintError(.auth.wrongAccount, "the challenge was issued for another account"), who) }
        if purpose == .signUp, !allowSignUp { throw refused(TokenMintError(.auth.accountExists, "the account exists already"), who) }
        let credential: RegisteredCredential
        do {
            credential = try relyingParty.verifyRegistration(clientDataJSON: clientDataJSON, attestationObject: attestationObject,
                                                             challenge: challenge, rawID: credentialID)
        } catch {
            throw refused(TokenMintError(.auth.registrationInvalid, "the registration does not verify: \(error.reason)", underlying: error), who)
        }
        try store(credential, account: account, newAccount: purpose == .signUp, userHandle: Self.userHandle(for: challenge), who)
        logger.notice("passkey registered", metadata: who.merging(["format": "\(credential.attestationFormat)"]) { a, _ in a })
        return credential
    }

    /// Whether `account` has a passkey in `store` (a name taken by a passkey
    /// account, for a host that keeps other accounts beside the issuer's).
    public static func hasPasskeys(account: String, in store: any KeyValueStore) throws(TokenMintError) -> Bool {
        do { return try store.transaction { tx in try tx.value(accountPasskeysName(account)) != nil } } catch {
            throw TokenMintError.wrap(error, as: .auth.internalFailure, "the store failed: \(error)")
        }
    }

    /// Records a passkey for an account (after its registration verified).
    /// A credential ID that is registered already, to this account or any
    /// other, is refused (WebAuthn §7.1 step 26): the check and the write are
    /// one transaction, so two racing registrations cannot both land.
    /// - Throws: `credentialExists` for a known credential ID.
    public func registerPasskey(account: String, credential: RegisteredCredential) throws(TokenMintError) {
        try store(credential, account: account, newAccount: false, userHandle: nil, ["account": "\(SafeText.escaped(account.prefix(128)))"])
    }

    /// Records `credential` for `account` and, when the account has no user
    /// handle yet, `userHandle` as its handle, in one transaction.
    func store(
        _ credential: RegisteredCredential, account: String, newAccount: Bool, userHandle: [UInt8]?, _ who: Logger.Metadata
    ) throws(TokenMintError) {
        let record: [String: Any] = [
            "account": account, "publicKey": Base64URL.encode(credential.publicKey.cbor), "signCount": Int(credential.signCount),
            "backupEligible": credential.backupEligible,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else {
            throw TokenMintError(.auth.internalFailure, "cannot encode")
        }
        let name = Self.passkeyName(credential.credentialID)
        try transaction { tx in
            guard try tx.value(name) == nil else {
                throw refused(TokenMintError(.auth.credentialExists, "this credential ID is registered already"), who)
            }
            let existing = try credentialIDs(of: account, in: tx)
            if newAccount, !existing.isEmpty { throw refused(TokenMintError(.auth.accountExists, "the account exists already"), who) }
            let list = (existing + [credential.credentialID]).map { Base64URL.encode($0) }
            guard let index = try? JSONSerialization.data(withJSONObject: list) else { throw TokenMintError(.auth.internalFailure, "cannot encode") }
            try tx.setValue(name, Array(data))
            try tx.setValue(Self.accountPasskeysName(account), Array(index))
            if let userHandle, try self.userHandle(of: account, in: tx) == nil { try tx.setValue(Self.userHandleName(account), userHandle) }
        }
    }

    /// Starts a passkey sign-in: a challenge and, when `account` is named,
    /// its credential IDs (`allowCredentials`); with no account the browser
    /// offers the discoverable credentials it holds for the RP.
    public func signInCeremony(account: String? = nil) throws(TokenMintError) -> PasskeyCeremony {
        let named = account.flatMap { Self.validAccount($0) ? $0 : nil }
        return try transaction { tx in
            let ids = try named.map { name in try credentialIDs(of: name, in: tx) } ?? []
            let handle = try named.flatMap { name in try userHandle(of: name, in: tx) }
            return PasskeyCeremony(challenge: try newChallenge(.signIn, account: named ?? "", in: tx), userHandle: handle, credentialIDs: ids)
        }
    }

    /// Verifies a passkey sign-in over a challenge from
    /// `signInCeremony(account:)` and stores the new signature counter.
    ///
    /// - Parameters:
    ///   - credentialID: The credential's `rawId`.
    ///   - clientDataJSON: The `clientDataJSON` bytes the browser returned.
    ///   - authenticatorData: The `authenticatorData` bytes.
    ///   - signature: The `signature` bytes.
    ///   - userHandle: The `userHandle` the authenticator returned, which
    ///     must be the credential's account's (required when the ceremony
    ///     named no account, as a discoverable credential always returns it).
    /// - Throws: `challengeInvalid`, `wrongAccount` (unknown credential, or
    ///   one of another account than the ceremony's or the user handle's),
    ///   `assertionInvalid`.
    public func verifyPasskeySignIn(
        credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?
    ) throws(TokenMintError) -> PasskeySignIn {
        try verifyPasskey(.signIn, account: nil, credentialID: credentialID, clientDataJSON: clientDataJSON,
                          authenticatorData: authenticatorData, signature: signature, userHandle: userHandle)
    }

    /// A fresh step-up challenge for `account` (single use, 5 minutes).
    public func elevationChallenge(account: String) throws(TokenMintError) -> [UInt8] {
        try transaction { tx in try newChallenge(.elevate, account: account, in: tx) }
    }

    /// An elevated token: only after a FIDO2 assertion by a passkey of
    /// `account`, over a challenge this issuer gave out for that account.
    /// Carries `acr`/`amr` and the account; never refreshed. With
    /// `dpopThumbprint` (the signed-in token was DPoP-bound) the elevated
    /// token is bound to the same key.
    public func elevate(
        account: String, clientID: String, credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8],
        dpopThumbprint: String? = nil
    ) throws(TokenMintError) -> OAuthToken {
        let result = try verifyPasskey(.elevate, account: account, credentialID: credentialID, clientDataJSON: clientDataJSON,
                                       authenticatorData: authenticatorData, signature: signature, userHandle: nil)
        var extra = JSONObject()
        extra.set("acr", "urn:tokenmint:acr:fido2")
        extra.set("amr", .array(result.userVerified ? ["hwk", "user"] : ["hwk"]))
        extra.set("account", .string(account))
        let (access, expiresAt) = try accessToken(account: account, clientID: clientID, scopes: ["elevated"], lifetime: elevatedLifetime, extra: extra,
                                                  jkt: dpopThumbprint)
        logger.notice("elevated", metadata: ["account": "\(account)", "client_id": "\(clientID)", "signCount": "\(result.signCount)",
                                             "uv": "\(result.userVerified)"])
        return OAuthToken(accessToken: access, refreshToken: nil, expiresAt: expiresAt, elevated: true, account: account)
    }

    /// The assertion checks shared by sign-in and step-up: the challenge is
    /// consumed first; the counter is checked and stored in one transaction
    /// with the read, so two racing assertions cannot both pass one count.
    func verifyPasskey(
        _ purpose: CeremonyPurpose, account expected: String?, credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8],
        signature: [UInt8], userHandle: [UInt8]?
    ) throws(TokenMintError) -> PasskeySignIn {
        var who: Logger.Metadata = expected.map { ["account": "\(SafeText.escaped($0.prefix(128)))"] } ?? [:]
        guard let challenge = (try? CollectedClientData(parsing: clientDataJSON))?.challenge else {
            throw refused(TokenMintError(.auth.assertionInvalid, "clientDataJSON is malformed"), who)
        }
        let owner = try consumeChallenge(challenge, for: [purpose], who).account
        if let expected, owner != expected { throw refused(TokenMintError(.auth.wrongAccount, "the challenge was issued for another account"), who) }
        let name = Self.passkeyName(credentialID)
        let relyingParty = self.relyingParty
        let outcome: Result<PasskeySignIn, TokenMintError> = try transaction { tx in
            guard let saved = try tx.value(name),
                var record = try? JSONSerialization.jsonObject(with: Data(saved)) as? [String: Any],
                let account = record["account"] as? String, let keyText = record["publicKey"] as? String,
                let stored = record["signCount"] as? Int, let storedCount = UInt32(exactly: stored)
            else { return .failure(TokenMintError(.auth.wrongAccount, "unknown passkey")) }
            who["account"] = "\(SafeText.escaped(account.prefix(128)))"
            guard owner.isEmpty || owner == account else { return .failure(TokenMintError(.auth.wrongAccount, "the passkey belongs to another account")) }
            if let userHandle {
                guard let handle = try self.userHandle(of: account, in: tx), ConstantTime.equals(handle, userHandle) else {
                    return .failure(TokenMintError(.auth.wrongAccount, "the user handle is not the passkey's account's"))
                }
            } else if owner.isEmpty {
                return .failure(TokenMintError(.auth.assertionInvalid, "a sign-in with a discoverable credential returns the user handle"))
            }
            let result: AssertionResult
            do {
                let key = try COSEKey(cbor: try Base64URL.decode(keyText))
                let credential = RegisteredCredential(credentialID: credentialID, publicKey: key, signCount: storedCount,
                                                      backupEligible: record["backupEligible"] as? Bool ?? false, backupState: false,
                                                      userVerified: false, attestationFormat: "", aaguid: [])
                result = try relyingParty.verifyAssertion(credential: credential, storedSignCount: storedCount, clientDataJSON: clientDataJSON,
                                                          authenticatorData: authenticatorData, signature: signature, challenge: challenge)
            } catch {
                return .failure(TokenMintError(.auth.assertionInvalid, "the assertion does not verify: \((error as? TokenMintError)?.reason ?? "\(error)")",
                                                underlying: error))
            }
            record["signCount"] = Int(result.signCount)
            guard let data = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else {
                throw TokenMintError(.auth.internalFailure, "cannot encode")
            }
            try tx.setValue(name, Array(data))
            return .success(PasskeySignIn(account: account, credentialID: credentialID, signCount: result.signCount, userVerified: result.userVerified))
        }
        switch outcome {
        case .success(let signIn):
            logger.info("passkey assertion verified", metadata: who.merging(["signCount": "\(signIn.signCount)", "uv": "\(signIn.userVerified)"]) { a, _ in a })
            return signIn
        case .failure(let error): throw refused(error, who)
        }
    }
}
