import ArgumentParser
import Foundation
import TokenMint

struct AuthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth", abstract: "OAuth tokens with a FIDO2 step-up, and the service-key user-token exchange.",
        discussion: "Issuer state (signing key, refresh-token hashes, passkeys, challenges) lives in auth.sqlite in the --store folder; the session of `auth login` (with the HTTPClient trait) in session.sqlite.",
        subcommands: [Issue.self, Refresh.self, Passkey.self, Challenge.self, Elevate.self, Verify.self, JWKS.self, RotateKey.self, Exchange.self]
            + authLoginCommands)

    struct IssuerOptions: ParsableArguments {
        @OptionGroup var store: StoreOptions
        @Option(help: "iss of the tokens.") var issuer: String = "https://auth.tokenmint.test"
        @Option(help: "aud of the access tokens.") var audience: String = "https://api.tokenmint.test"
        @Option(help: "RP ID for passkeys.") var rp: String = "tokenmint.test"
        @Option(help: "Origin for passkeys.") var origin: String = "https://tokenmint.test"

        func makeIssuer() throws -> LocalTokenIssuer {
            try LocalTokenIssuer(store: try store.open("auth.sqlite"), issuer: issuer, audience: audience,
                                 relyingParty: RelyingPartyPolicy(rpID: rp, origins: [origin]))
        }
    }

    static func emit(_ token: OAuthToken) throws {
        var object: [String: Any] = [
            "access_token": token.accessToken, "token_type": "Bearer", "expires_at": token.expiresAt, "account": token.account,
            "elevated": token.elevated,
        ]
        if let refresh = token.refreshToken { object["refresh_token"] = refresh }
        try FIDO2Command.print(json: object)
    }

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue an account token (RFC 9068 access token + refresh token).")
        @OptionGroup var options: IssuerOptions
        @Option(help: "The account (UUID).") var account: String
        @Option(help: "The OAuth client ID.") var clientId: String
        @Option(help: "A scope (repeatable).") var scope: [String] = []
        func run() async throws { try AuthCommand.emit(try await options.makeIssuer().issue(account: account.lowercased(), clientID: clientId, scopes: scope)) }
    }

    struct Refresh: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rotate a refresh token (single use; reuse revokes the family).")
        @OptionGroup var options: IssuerOptions
        @Argument(help: "The refresh token (put `--` before one that starts with \"-\").") var refreshToken: String
        func run() async throws {
            try await refusing { try AuthCommand.emit(try await options.makeIssuer().refresh(refreshToken)) }
        }
    }

    struct Passkey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a passkey for an account from a WebAuthn registration JSON.")
        @OptionGroup var options: IssuerOptions
        @Option(help: "The account (UUID).") var account: String
        @Option(parsing: .unconditional, help: "The registration challenge, base64url.") var challenge: String
        @Option(name: .customLong("in"), help: "The registration JSON file.") var input: String

        func run() async throws {
            let object = try untrustedJSONObject(try readFile(input))
            var policy = RelyingPartyPolicy(rpID: options.rp, origins: [options.origin])
            policy.requireUserVerification = false
            policy.consumeChallenge = FIDO2Command.singleUse(try options.store.open("auth.sqlite"), prefix: "auth.registration-challenge.")
            try await refusing {
                let credential = try RelyingPartyVerifier(policy: policy).verifyRegistration(
                    clientDataJSON: try FIDO2Command.field(object, "response", "clientDataJSON"),
                    attestationObject: try FIDO2Command.field(object, "response", "attestationObject"),
                    challenge: try Base64URL.decode(challenge, padding: .either), rawID: try FIDO2Command.field(object, "rawId"))
                try await options.makeIssuer().registerPasskey(account: account.lowercased(), credential: credential)
                print(Base64URL.encode(credential.credentialID))
            }
        }
    }

    struct Challenge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A single-use step-up challenge for an account (base64url).")
        @OptionGroup var options: IssuerOptions
        @Option(help: "The account (UUID).") var account: String
        func run() async throws { print(Base64URL.encode(try await options.makeIssuer().elevationChallenge(account: account.lowercased()))) }
    }

    struct Elevate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a FIDO2 assertion JSON into an elevated token (never refreshed).")
        @OptionGroup var options: IssuerOptions
        @Option(help: "The account (UUID).") var account: String
        @Option(help: "The OAuth client ID.") var clientId: String
        @Option(help: "The assertion JSON file (from `tokenmint fido2 assert`).") var assertion: String

        func run() async throws {
            let object = try untrustedJSONObject(try readFile(assertion))
            try await refusing {
                let token = try await options.makeIssuer().elevate(
                    account: account.lowercased(), clientID: clientId, credentialID: try FIDO2Command.field(object, "rawId"),
                    clientDataJSON: try FIDO2Command.field(object, "response", "clientDataJSON"),
                    authenticatorData: try FIDO2Command.field(object, "response", "authenticatorData"),
                    signature: try FIDO2Command.field(object, "response", "signature"))
                try AuthCommand.emit(token)
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Verify an access token of this issuer; prints its claims.")
        @OptionGroup var options: IssuerOptions
        @Argument(help: "The access token.") var token: String
        func run() async throws {
            try await refusing { print(prettyJSON(try await options.makeIssuer().verify(token).claims.jsonObject)) }
        }
    }

    struct JWKS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "jwks", abstract: "Print the issuer's public JWK Set.")
        @OptionGroup var options: IssuerOptions
        func run() async throws { print(try options.makeIssuer().verificationKeys.json) }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Replace the signing key; the previous one verifies for one access-token lifetime. Prints the new kid.")
        @OptionGroup var options: IssuerOptions
        func run() async throws { print(try await options.makeIssuer().rotateSigningKey()) }
    }

    struct Exchange: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Server side: exchange (user id, access token) for a user token with the service key.")
        @OptionGroup var options: IssuerOptions
        @Option(help: "The user id (the access token's subject).") var userId: String
        @Option(help: "The access token.") var accessToken: String
        @Option(help: "File with the service key (raw bytes, 32 or more).") var serviceKeyFile: String
        @Option(help: "File with the key the caller presents (default: the service key file itself).") var presentedKeyFile: String?

        func run() async throws {
            let key = [UInt8](try readFile(serviceKeyFile, limit: 256))
            let presented = [UInt8](try readFile(presentedKeyFile ?? serviceKeyFile, limit: 256))
            let issuer = try options.makeIssuer()
            let exchange = UserTokenExchange(serviceKey: try ServiceKey(key), store: try options.store.open("auth.sqlite")) { token in
                try await issuer.verify(token).claims.subject ?? ""
            }
            try await refusing {
                print(try await exchange.exchange(userID: userId.lowercased(), accessToken: accessToken, presentedServiceKey: presented))
            }
        }
    }
}
