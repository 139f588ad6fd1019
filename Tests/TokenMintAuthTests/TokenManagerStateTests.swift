import Foundation
import Testing
import TokenMintAuth
import TokenMintCore
import TokenMintStore

/// The token manager's state survives a restart, and logging out revokes
/// at the server first but signs out whatever the server says.
@Suite("Token manager state")
struct TokenManagerStateTests {
    static let now: Int64 = 1_763_776_800

    /// The refresh tokens a provider was asked to revoke.
    actor Revocations {
        var tokens: [String] = []
        func add(_ token: String) { tokens.append(token) }
    }

    /// A provider with fixed tokens that records revocations (or fails them).
    struct StubProvider: AuthorizationProvider {
        let revocations: Revocations
        var failsRevocation = false

        func authorizeAccount() async throws -> OAuthToken {
            OAuthToken(accessToken: "access", refreshToken: "refresh-1", expiresAt: TokenManagerStateTests.now + 600, elevated: false, account: "alice")
        }

        func verifyAccount(uuid: UUID) async throws -> OAuthToken {
            OAuthToken(accessToken: "elevated", refreshToken: nil, expiresAt: TokenManagerStateTests.now + 300, elevated: true,
                       account: uuid.uuidString.lowercased())
        }

        func refresh(_ token: OAuthToken) async throws -> OAuthToken { token }

        func revoke(_ token: OAuthToken) async throws {
            if failsRevocation { throw TokenMintError(.auth.serverUnreachable, "the server cannot be reached") }
            await revocations.add(token.refreshToken ?? "")
        }
    }

    @Test("the OAuth client flow's codes keep the iZettle numbers, and TokenMint's follow on")
    func codeNumbers() {
        let auth = TokenMintError.Code.auth
        #expect([auth.callbackURLInvalid, auth.callbackURLMissing, auth.clientIdInvalid, auth.presentationNotPossible].map(\.number) == [-202, -203, -300, -501])
        #expect([auth.authorizationDenied, auth.redirectMismatch, auth.serverUnreachable, auth.signInTimedOut, auth.stepUpUnavailable].map(\.number)
            == [-640, -641, -642, -643, -644])
    }

    @Test("a new manager over a store holding an account token starts authorized, not signed out")
    func restoresAuthorized() async throws {
        let store = InMemoryStore()
        let provider = StubProvider(revocations: Revocations())
        let first = TokenManager(provider: provider, store: store, clock: { Self.now })
        #expect(await first.state == .signedOut)
        _ = try await first.signIn()

        let second = TokenManager(provider: provider, store: store, clock: { Self.now })
        #expect(await second.state == .authorized(account: "alice"))
        let states = await second.states()
        var iterator = states.makeAsyncIterator()
        #expect(await iterator.next() == .authorized(account: "alice"))
        #expect(try await second.accountToken().account == "alice")
    }

    @Test("a stored elevated token restores the elevated state while it is valid, the account state after")
    func restoresElevated() async throws {
        let store = InMemoryStore()
        let provider = StubProvider(revocations: Revocations())
        let account = UUID()
        let first = TokenManager(provider: provider, store: store, clock: { Self.now })
        _ = try await first.signIn()
        let elevated = try await first.elevate(account: account)

        let during = TokenManager(provider: provider, store: store, clock: { Self.now + 10 })
        #expect(await during.state == .elevated(account: account.uuidString.lowercased(), until: elevated.expiresAt))
        let after = TokenManager(provider: provider, store: store, clock: { Self.now + 301 })
        #expect(await after.state == .authorized(account: "alice"))
        #expect(await TokenManager(provider: provider, store: InMemoryStore()).state == .signedOut)
    }

    @Test("logout revokes the refresh token first; it signs out even when the revocation fails")
    func logoutRevokes() async throws {
        let store = InMemoryStore()
        let revocations = Revocations()
        let manager = TokenManager(provider: StubProvider(revocations: revocations), store: store, clock: { Self.now })
        _ = try await manager.signIn()
        #expect(try await manager.logout())
        #expect(await revocations.tokens == ["refresh-1"])
        #expect(await manager.state == .signedOut)
        #expect(await TokenManager(provider: StubProvider(revocations: revocations), store: store).state == .signedOut)

        var failing = StubProvider(revocations: revocations)
        failing.failsRevocation = true
        let offline = TokenManager(provider: failing, store: store, clock: { Self.now })
        _ = try await offline.signIn()
        #expect(try await offline.logout() == false)
        #expect(await offline.state == .signedOut)
        await expectAuth(.auth.notSignedIn) { _ = try await offline.accountToken() }
        #expect(await TokenManager(provider: failing, store: store).state == .signedOut)
        // Nothing stored: nothing to revoke, and still signed out.
        #expect(try await offline.logout())
        #expect(await revocations.tokens == ["refresh-1"])
    }
}
