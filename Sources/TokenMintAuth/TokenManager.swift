import TokenMintCore
public import TokenMintStore
import TokenMintCrypto
public import Foundation

/// Keeps the account token (sealed in the store) fresh, stores elevated
/// tokens without refreshing them, publishes the state, and logs out.
public actor TokenManager {
    let provider: any AuthorizationProvider
    let store: any KeyValueStore
    let clock: @Sendable () -> Int64
    /// Seconds before expiry at which the account token is refreshed.
    public let refreshMargin: Int64
    private var continuations: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    private var current: AuthState = .signedOut

    /// A manager over a provider and a store.
    public init(provider: any AuthorizationProvider, store: any KeyValueStore, refreshMargin: Int64 = 60,
                clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.provider = provider
        self.store = store
        self.clock = clock
        self.refreshMargin = refreshMargin
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
        do {
            guard let sealed = try store.transaction({ tx in try tx.secret(name) }) else { return nil }
            return try sealed.withUnsafeBytes { try JSONDecoder().decode(OAuthToken.self, from: Data($0)) }
        } catch { throw TokenMintError(.auth.internalFailure, "the token store failed", underlying: error) }
    }

    /// Signs in through the provider.
    public func signIn() async throws -> OAuthToken {
        let token = try await provider.authorizeAccount()
        try save(token, as: "auth.account")
        publish(.authorized(account: token.account))
        return token
    }

    /// The account token, refreshed first when it expires within the margin.
    public func accountToken() async throws -> OAuthToken {
        guard let token = try load("auth.account") else { throw TokenMintError(.auth.notSignedIn, "no account is signed in") }
        guard token.expiresAt - clock() <= refreshMargin else { return token }
        let fresh = try await provider.refresh(token)
        try save(fresh, as: "auth.account")
        return fresh
    }

    /// A step-up: the elevated token is stored and never refreshed.
    public func elevate(account uuid: UUID) async throws -> OAuthToken {
        let token = try await provider.verifyAccount(uuid: uuid)
        try save(token, as: "auth.elevated")
        publish(.elevated(account: token.account, until: token.expiresAt))
        return token
    }

    /// The elevated token while it is valid; nil after it expires.
    public func elevatedToken() throws -> OAuthToken? {
        guard let token = try load("auth.elevated"), token.expiresAt > clock() else { return nil }
        return token
    }

    /// Logs out: both tokens are wiped.
    public func logout() throws {
        try save(nil, as: "auth.account")
        try save(nil, as: "auth.elevated")
        publish(.signedOut)
    }
}
