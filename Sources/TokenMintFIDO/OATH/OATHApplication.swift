public import TokenMintCore
import TokenMintCrypto
public import TokenMintStore
import Foundation

/// A software OATH application, as a YubiKey's: HOTP and TOTP credentials
/// kept in a `KeyValueStore` (secrets sealed with `setSecret`), with put,
/// list, calculate, calculateAll, delete, rename and reset. Clients reach it
/// through an ``OATHSession`` on a connection, or call it directly.
///
/// A HOTP code's counter is moved on and committed durably before the code
/// is returned, so a code is never given out twice, even across a crash. A
/// credential that requires touch or verification asks the host's callbacks
/// (`confirmPresence`, `verifyUser`) before each code; calculateAll lists
/// such credentials, and HOTP ones, without a code, as a YubiKey does.
public actor OATHApplication {
    /// What the host is asked to confirm.
    public struct Request: Sendable {
        /// The operation: "calculate".
        public let operation: String
        /// The credential's name.
        public let name: String
    }

    /// How many credentials a YubiKey 5 keeps: the default of ``maximumCredentials``.
    public static let defaultMaximumCredentials = 64
    /// How many credentials this application keeps; a put beyond it throws `.oath.storeFull`.
    nonisolated public let maximumCredentials: Int

    let store: any KeyValueStore
    let confirmPresence: @Sendable (Request) async -> Bool
    let verifyUser: @Sendable (Request) async -> Bool

    /// An application over `store`. `confirmPresence` is asked before each
    /// code of a touch-required credential, `verifyUser` before each code of
    /// a verification-required one; a `false` is `.oath.operationDenied`.
    public init(
        store: any KeyValueStore, maximumCredentials: Int = OATHApplication.defaultMaximumCredentials,
        confirmPresence: @escaping @Sendable (Request) async -> Bool = { _ in true },
        verifyUser: @escaping @Sendable (Request) async -> Bool = { _ in true }
    ) throws(TokenMintError) {
        guard maximumCredentials >= 1 else { throw TokenMintError(.oath.invalidParameter, "maximumCredentials must be at least 1") }
        self.store = store
        self.maximumCredentials = maximumCredentials
        self.confirmPresence = confirmPresence
        self.verifyUser = verifyUser
    }

    /// Stores `credential`, replacing one of the same name (its counter
    /// too). Throws `.oath.storeFull` when ``maximumCredentials`` are kept
    /// and the name is new.
    public func put(_ credential: OATHCredential) throws(TokenMintError) {
        let name = credential.name
        guard let record = try? JSONEncoder().encode(Record(credential)) else {
            throw TokenMintError(.oath.storeFailed, "cannot encode the credential record")
        }
        var counter: Int64 = 0
        if case .hotp(let start) = credential.kind { counter = Int64(clamping: start) }
        let cap = maximumCredentials
        try storeCall { tx in
            var names = try OATHApplication.names(tx)
            if !names.contains(name) {
                guard names.count < cap else { throw TokenMintError(.oath.storeFull, "the application keeps \(cap) credentials, its maximum") }
                names.append(name)
                try OATHApplication.setNames(names, tx)
            }
            try tx.setValue(OATHApplication.key("meta", name), Array(record))
            try tx.setSecret(OATHApplication.key("secret", name), credential.secret)
            try tx.setCounter(OATHApplication.key("counter", name), counter)
        }
    }

    /// Every credential, in the order they were first put; never a secret.
    public func list() throws(TokenMintError) -> [OATHCredential.Info] {
        try storeCall { tx in try OATHApplication.names(tx).map { try OATHApplication.info($0, tx) } }
    }

    /// The code of the credential named `name`: TOTP at `time` (Unix
    /// seconds; now when `nil`), HOTP at its counter, which is moved on and
    /// committed first. Asks for verification and touch when the credential
    /// requires them.
    /// - Throws: `.oath.noSuchCredential`, `.oath.operationDenied`.
    public func calculate(_ name: String, time: Int64? = nil) async throws(TokenMintError) -> OATHCode {
        let info = try storeCall { tx in try OATHApplication.info(name, tx) }
        let request = Request(operation: "calculate", name: name)
        if info.requiresVerification {
            guard await verifyUser(request) else { throw TokenMintError(.oath.operationDenied, "user verification failed") }
        }
        if info.requiresTouch {
            guard await confirmPresence(request) else { throw TokenMintError(.oath.operationDenied, "the user did not confirm presence") }
        }
        // Read again after the callbacks: the credential may have changed meanwhile.
        let (current, secret, counter) = try storeCall { tx -> (OATHCredential.Info, SecureBytes, Int64) in
            let fresh = try OATHApplication.info(name, tx)
            guard fresh.requiresTouch == info.requiresTouch, fresh.requiresVerification == info.requiresVerification else {
                throw TokenMintError(.oath.operationDenied, "the credential changed during the request")
            }
            let stored = try OATHApplication.secret(name, tx)
            guard case .hotp = fresh.kind else { return (fresh, stored, 0) }
            let counterName = OATHApplication.key("counter", name)
            let next = try tx.counter(counterName)
            guard next >= 0, next < Int64.max else { throw TokenMintError(.oath.invalidParameter, "the HOTP counter is exhausted") }
            try tx.setCounter(counterName, next + 1)
            return (fresh, stored, next)
        }
        // Now is after the prompts: a slow touch still gets the code of the moment it came.
        return try OATHApplication.code(current, secret: secret, counter: counter, time: time ?? OATH.now())
    }

    /// Every credential with its code at `time` (now when `nil`): TOTP
    /// credentials that need neither touch nor verification get one; the
    /// others, and every HOTP credential (whose counter would move), are
    /// listed without a code, to be asked for with ``calculate(_:time:)``.
    public func calculateAll(time: Int64? = nil) throws(TokenMintError) -> [(credential: OATHCredential.Info, code: OATHCode?)] {
        let moment = time ?? OATH.now()
        let entries = try storeCall { tx -> [(OATHCredential.Info, SecureBytes?)] in
            try OATHApplication.names(tx).map { name -> (OATHCredential.Info, SecureBytes?) in
                let listed = try OATHApplication.info(name, tx)
                guard case .totp = listed.kind, !listed.requiresTouch, !listed.requiresVerification else { return (listed, nil) }
                let stored = try OATHApplication.secret(name, tx)
                return (listed, stored)
            }
        }
        var result: [(credential: OATHCredential.Info, code: OATHCode?)] = []
        for (info, secret) in entries {
            guard let secret else {
                result.append((info, nil))
                continue
            }
            let code = try OATHApplication.code(info, secret: secret, counter: 0, time: moment)
            result.append((info, code))
        }
        return result
    }

    /// Deletes the credential named `name`.
    /// - Throws: `.oath.noSuchCredential`.
    public func delete(_ name: String) throws(TokenMintError) {
        try storeCall { tx in
            var names = try OATHApplication.names(tx)
            guard let position = names.firstIndex(of: name) else { throw OATHApplication.noSuchCredential(name) }
            names.remove(at: position)
            try OATHApplication.setNames(names, tx)
            try OATHApplication.removeEntries(name, tx)
        }
    }

    /// Gives the credential named `name` a new issuer and account, keeping
    /// its secret, counter and flags.
    /// - Throws: `.oath.noSuchCredential`, `.oath.credentialExists` when the
    ///   new name is taken, `.oath.invalidParameter` for a bad name.
    public func rename(_ name: String, issuer: String?, account: String) throws(TokenMintError) {
        try OATHCredential.check(issuer: issuer, account: account)
        let newName = OATHCredential.name(issuer: issuer, account: account)
        try storeCall { tx in
            var names = try OATHApplication.names(tx)
            guard let position = names.firstIndex(of: name) else { throw OATHApplication.noSuchCredential(name) }
            guard newName == name || !names.contains(newName) else {
                throw TokenMintError(.oath.credentialExists, "a credential named \(newName) exists already")
            }
            guard var record = try OATHApplication.record(name, tx) else { throw OATHApplication.noSuchCredential(name) }
            let secret = try OATHApplication.secret(name, tx)
            let counter = try tx.counter(OATHApplication.key("counter", name))
            record.issuer = issuer
            record.account = account
            guard let data = try? JSONEncoder().encode(record) else { throw TokenMintError(.oath.storeFailed, "cannot encode the credential record") }
            try OATHApplication.removeEntries(name, tx)
            try tx.setValue(OATHApplication.key("meta", newName), Array(data))
            try tx.setSecret(OATHApplication.key("secret", newName), secret)
            try tx.setCounter(OATHApplication.key("counter", newName), counter)
            names[position] = newName
            try OATHApplication.setNames(names, tx)
        }
    }

    /// Deletes every credential (a YubiKey's OATH reset).
    public func reset() throws(TokenMintError) {
        try storeCall { tx in
            for name in try OATHApplication.names(tx) { try OATHApplication.removeEntries(name, tx) }
            try tx.remove(OATHApplication.indexName)
        }
    }

    // MARK: The store

    /// A credential's record: everything but the secret and the counter.
    struct Record: Codable {
        var issuer: String?
        var account: String
        var type: String
        var period: Int?
        var algorithm: String
        var digits: Int
        var touch: Bool
        var verify: Bool

        init(_ credential: OATHCredential) {
            issuer = credential.issuer
            account = credential.account
            algorithm = credential.algorithm.rawValue
            digits = credential.digits
            touch = credential.requiresTouch
            verify = credential.requiresVerification
            switch credential.kind {
            case .hotp:
                type = "hotp"
                period = nil
            case .totp(let seconds):
                type = "totp"
                period = seconds
            }
        }

        /// The listed form, checked as a new credential is.
        func info(counter: Int64) throws(TokenMintError) -> OATHCredential.Info {
            let kind: OATHCredential.Kind
            switch type {
            case "hotp" where counter >= 0: kind = .hotp(counter: UInt64(counter))
            case "totp": kind = .totp(period: period ?? 0)
            default: throw OATHApplication.damaged()
            }
            guard let hash = OATH.Algorithm(rawValue: self.algorithm) else { throw OATHApplication.damaged() }
            do throws(TokenMintError) {
                try OATHCredential.check(issuer: issuer, account: account)
                try OATHCredential.check(kind: kind, digits: digits)
            } catch {
                throw OATHApplication.damaged()
            }
            return OATHCredential.Info(issuer: issuer, account: account, kind: kind, algorithm: hash, digits: digits,
                                       requiresTouch: touch, requiresVerification: verify)
        }
    }

    /// The index of credential names, in the order they were put.
    static let indexName = "oath.index"

    /// The store name of one of a credential's entries ("meta", "secret", "counter").
    static func key(_ kind: String, _ name: String) -> String {
        "oath.\(kind).\(Base64URL.encode(Array(name.utf8)))"
    }

    static func names(_ tx: any StoreTransaction) throws -> [String] {
        guard let bytes = try tx.value(indexName) else { return [] }
        guard let names = try? JSONDecoder().decode([String].self, from: Data(bytes)) else { throw damaged() }
        return names
    }

    static func setNames(_ names: [String], _ tx: any StoreTransaction) throws {
        guard let data = try? JSONEncoder().encode(names) else { throw TokenMintError(.oath.storeFailed, "cannot encode the credential index") }
        try tx.setValue(indexName, Array(data))
    }

    static func record(_ name: String, _ tx: any StoreTransaction) throws -> Record? {
        guard let bytes = try tx.value(key("meta", name)) else { return nil }
        guard let record = try? JSONDecoder().decode(Record.self, from: Data(bytes)) else { throw damaged() }
        return record
    }

    static func info(_ name: String, _ tx: any StoreTransaction) throws -> OATHCredential.Info {
        guard let stored = try OATHApplication.record(name, tx) else { throw noSuchCredential(name) }
        return try stored.info(counter: try tx.counter(key("counter", name)))
    }

    static func secret(_ name: String, _ tx: any StoreTransaction) throws -> SecureBytes {
        guard let secret = try tx.secret(key("secret", name)) else { throw damaged() }
        return secret
    }

    static func removeEntries(_ name: String, _ tx: any StoreTransaction) throws {
        try tx.remove(key("meta", name))
        try tx.remove(key("secret", name))
        try tx.setCounter(key("counter", name), 0)
    }

    /// The code of a credential read from the store.
    static func code(_ info: OATHCredential.Info, secret: SecureBytes, counter: Int64, time: Int64) throws(TokenMintError) -> OATHCode {
        switch info.kind {
        case .hotp:
            return OATHCode(value: try OATH.hotp(secret: secret, counter: UInt64(clamping: counter), algorithm: info.algorithm, digits: info.digits))
        case .totp(let period):
            let step = try OATH.timeStep(time: time, period: period)
            let value = try OATH.hotp(secret: secret, counter: step, algorithm: info.algorithm, digits: info.digits)
            let window = OATH.validity(step: step, period: period)
            return OATHCode(value: value, validFrom: window.from, validUntil: window.until)
        }
    }

    static func noSuchCredential(_ name: String) -> TokenMintError {
        TokenMintError(.oath.noSuchCredential, "no credential named \(name)")
    }

    static func damaged() -> TokenMintError {
        TokenMintError(.oath.storeFailed, "a credential record in the store is damaged")
    }

    func storeCall<T>(_ body: (any StoreTransaction) throws -> T) throws(TokenMintError) -> T {
        do { return try store.transaction(body) } catch {
            throw TokenMintError.wrap(error, as: .oath.storeFailed, "the OATH store failed: \(error)")
        }
    }
}
