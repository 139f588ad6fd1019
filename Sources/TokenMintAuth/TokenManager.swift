import TokenMintCore
public import TokenMintStore
import TokenMintCrypto
public import Foundation
public import Logging

/// Keeps the account token (sealed in the store) fresh, stores elevated
/// tokens without refreshing them, publishes the state, and logs out.
///
/// The state survives a restart: a manager over a store that holds an
/// account token starts ``AuthState/authorized(account:)`` (or
/// ``AuthState/elevated(account:until:)`` while a stored elevated token is
/// valid), not ``AuthState/signedOut``.
public actor TokenManager {
    let provider: any AuthorizationProvider
    let store: any KeyValueStore
    let clock: @Sendable () -> Int64
    let logger: Logger
    /// Seconds before expiry at which the account token is refreshed.
    public let refreshMargin: Int64
    private var continuations: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    private var current: AuthState

    static let accountName = "auth.account"
    static let elevatedName = "auth.elevated"

    /// A manager over a provider and a store; its state is restored from
    /// the tokens the store holds. A store that cannot be read starts
    /// signed out (the failure is logged, and raised again by the first
    /// call that needs a token).
    ///
    /// `logger` receives the failures `logout()` carries on past (a
    /// revocation the server did not confirm), with the error code only:
    /// no token is ever logged. By default nothing is logged.
    public init(provider: any AuthorizationProvider, store: any KeyValueStore, refreshMargin: Int64 = 60,
                clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
                logger: Logger = Logger(label: "tokenmint.auth.manager", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.provider = provider
        self.store = store
        self.clock = clock
        self.refreshMargin = refreshMargin
        self.logger = logger
        do {
            self.current = try Self.restoredState(store: store, now: clock())
        } catch {
            logger.error("the token store could not be read; starting signed out", metadata: ["code": "\(error.code)"])
            self.current = .signedOut
        }
    }

    /// The state the stored tokens describe: elevated while a stored
    /// elevated token is valid, authorized while an account token is
    /// stored, signed out otherwise.
    static func restoredState(store: any KeyValueStore, now: Int64) throws(TokenMintError) -> AuthState {
        if let elevated = try read(elevatedName, from: store), elevated.expiresAt > now {
            return .elevated(account: elevated.account, until: elevated.expiresAt)
        }
        if let account = try read(accountName, from: store) { return .authorized(account: account.account) }
        return .signedOut
    }

    /// The state now.
    public var state: AuthState { current }

    /// A stream of states, starting with the current one.
    public func states() -> AsyncStream<AuthState> {
        let (stream, continuation) = AsyncStream<AuthState>.makeStream()
        let id = UUID()
        continuations[id] = continuation
        continuation.yield(current)
        continuation.onTermination = { [weak self] _ in Task { await self?.drop(id) } }
        return stream
    }

    func drop(_ id: UUID) { continuations[id] = nil }

    func publish(_ state: AuthState) {
        current = state
        for continuation in continuations.values { continuation.yield(state) }
    }

    func save(_ token: OAuthToken?, as name: String) throws(TokenMintError) {
        do {
            try store.transaction { tx in
                if let token { try tx.setSecret(name, SecureBytes(try JSONEncoder().encode(token))) } else { try tx.remove(name) }
            }
        } catch { throw TokenMintError(.auth.internalFailure, "the token store failed", underlying: error) }
    }

    func load(_ name: String) throws(TokenMintError) -> OAuthToken? {
        try Self.read(name, from: store)
    }

    static func read(_ name: String, from store: any KeyValueStore) throws(TokenMintError) -> OAuthToken? {
        do {
            guard let sealed = try store.transaction({ tx in try tx.secret(name) }) else { return nil }
            return try sealed.withUnsafeBytes { try JSONDecoder().decode(OAuthToken.self, from: Data($0)) }
        } catch { throw TokenMintError(.auth.internalFailure, "the token store failed", underlying: error) }
    }

    /// Signs in through the provider.
    public func signIn() async throws -> OAuthToken {
        let token = try await provider.authorizeAccount()
        try save(token, as: Self.accountName)
        publish(.authorized(account: token.account))
        return token
    }

    /// The account token, refreshed first when it expires within the margin.
    public func accountToken() async throws -> OAuthToken {
        guard let token = try load(Self.accountName) else { throw TokenMintError(.auth.notSignedIn, "no account is signed in") }
        guard token.expiresAt - clock() <= refreshMargin else { return token }
        let fresh = try await provider.refresh(token)
        try save(fresh, as: Self.accountName)
        return fresh
    }

    /// A step-up: the elevated token is stored and never refreshed. The
    /// provider is given the account token (refreshed first when it is about
    /// to expire), which a server's step-up takes as proof of the sign-in.
    public func elevate(account uuid: UUID) async throws -> OAuthToken {
        let current = try load(Self.accountName) == nil ? nil : try await accountToken()
        let token = try await provider.verifyAccount(uuid: uuid, accountToken: current)
        try save(token, as: Self.elevatedName)
        publish(.elevated(account: token.account, until: token.expiresAt))
        return token
    }

    /// The elevated token while it is valid; nil after it expires.
    public func elevatedToken() throws -> OAuthToken? {
        guard let token = try load(Self.elevatedName), token.expiresAt > clock() else { return nil }
        return token
    }

    /// Logs out: the account token's refresh token is revoked at the server
    /// first (``AuthorizationProvider/revoke(_:)``), then both tokens are
    /// wiped and the state becomes ``AuthState/signedOut``.
    ///
    /// A user who logs out ends signed out: when the revocation fails (the
    /// server cannot be reached, or refuses) the failure is logged and the
    /// local tokens are wiped regardless. The refresh token then stays
    /// valid at the server until it expires, but no copy of it is left
    /// here.
    /// - Returns: False when a refresh token may still be valid at its
    ///   server (the revocation failed); true otherwise, including when
    ///   there was nothing to revoke.
    /// - Throws: `auth.internalFailure` only when the store cannot be
    ///   written (the tokens may then still be stored).
    @discardableResult
    public func logout() async throws -> Bool {
        let token: OAuthToken?
        do { token = try load(Self.accountName) } catch {
            // An unreadable token cannot be revoked; it is wiped below all the same.
            logger.warning("the stored account token could not be read for revocation", metadata: ["code": "\(error.code)"])
            token = nil
        }
        var revoked = true
        if let token, token.refreshToken != nil {
            do { try await provider.revoke(token) } catch {
                revoked = false
                let code = (error as? TokenMintError).map { "\($0.code)" } ?? "\(type(of: error))"
                logger.warning("the refresh token was not revoked at the server; it is wiped here all the same", metadata: ["code": "\(code)"])
            }
        }
        try save(nil, as: Self.accountName)
        try save(nil, as: Self.elevatedName)
        publish(.signedOut)
        return revoked
    }
}
