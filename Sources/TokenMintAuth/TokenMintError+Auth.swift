public import TokenMintCore
import TokenMintCrypto

extension TokenMintError.Code {
    /// The codes `TokenMintAuth` raises (domain `auth`).
    public static var auth: AuthCodes { AuthCodes() }

    /// The `auth` domain's codes, reached as `.auth.<name>`.
    public struct AuthCodes: Sendable {
        /// The callback URL is malformed (iZettle −202): not an absolute URL
        /// with a scheme, or with a fragment; or the authorization server
        /// refuses it as a redirect URI of the client. The OAuth client flow
        /// raises it; the local provider has no callback URL.
        public var callbackURLInvalid: TokenMintError.Code { .init(domain: "auth", name: "callbackURLInvalid", number: -202) }
        /// No callback URL is configured (iZettle −203), raised by the OAuth
        /// client flow before anything is presented.
        public var callbackURLMissing: TokenMintError.Code { .init(domain: "auth", name: "callbackURLMissing", number: -203) }
        /// The client ID is not valid (iZettle −300): not 1 to 128 visible
        /// ASCII characters, or unknown to (or refused by) the authorization
        /// server.
        public var clientIdInvalid: TokenMintError.Code { .init(domain: "auth", name: "clientIdInvalid", number: -300) }
        /// No UI could be presented (iZettle −501): the OAuth client flow has
        /// no presenter to open its sign-in page with, or the presenter failed.
        public var presentationNotPossible: TokenMintError.Code { .init(domain: "auth", name: "presentationNotPossible", number: -501) }
        /// No account is signed in (TokenMint −600).
        public var notSignedIn: TokenMintError.Code { .init(domain: "auth", name: "notSignedIn", number: -600) }
        /// A refresh token is unknown, expired or revoked (TokenMint −610).
        public var refreshTokenInvalid: TokenMintError.Code { .init(domain: "auth", name: "refreshTokenInvalid", number: -610) }
        /// A refresh token was used twice: its whole family is revoked (TokenMint −611).
        public var refreshTokenReused: TokenMintError.Code { .init(domain: "auth", name: "refreshTokenReused", number: -611) }
        /// The FIDO2 assertion for a step-up did not verify (TokenMint −620).
        public var assertionInvalid: TokenMintError.Code { .init(domain: "auth", name: "assertionInvalid", number: -620) }
        /// The step-up challenge was not issued, expired or was used (TokenMint −621).
        public var challengeInvalid: TokenMintError.Code { .init(domain: "auth", name: "challengeInvalid", number: -621) }
        /// The passkey belongs to another account, or the account has none (TokenMint −622).
        public var wrongAccount: TokenMintError.Code { .init(domain: "auth", name: "wrongAccount", number: -622) }
        /// The service key presented is wrong (TokenMint −630).
        public var serviceKeyInvalid: TokenMintError.Code { .init(domain: "auth", name: "serviceKeyInvalid", number: -630) }
        /// A user token is unknown or revoked (TokenMint −631).
        public var userTokenInvalid: TokenMintError.Code { .init(domain: "auth", name: "userTokenInvalid", number: -631) }
        /// The access token does not verify or belongs to another user (TokenMint −632).
        public var accessTokenInvalid: TokenMintError.Code { .init(domain: "auth", name: "accessTokenInvalid", number: -632) }
        /// The authorization server refused the sign-in (TokenMint −640): the
        /// user denied it, or the server sent the redirect back with an
        /// OAuth error, or refused the authorization code; the reason names
        /// the server's error code.
        public var authorizationDenied: TokenMintError.Code { .init(domain: "auth", name: "authorizationDenied", number: -640) }
        /// A redirect does not belong to the sign-in waiting for it
        /// (TokenMint −641): its `state`, or its issuer (RFC 9207), is not
        /// the one sent. The sign-in is abandoned: a forged redirect is an
        /// attack, not a retry.
        public var redirectMismatch: TokenMintError.Code { .init(domain: "auth", name: "redirectMismatch", number: -641) }
        /// No usable answer from the authorization server (TokenMint −642):
        /// no connection, a timeout, a 5xx or a malformed answer, or a server
        /// URL that is not an http(s) URL.
        public var serverUnreachable: TokenMintError.Code { .init(domain: "auth", name: "serverUnreachable", number: -642) }
        /// The sign-in's redirect did not come back in the time allowed
        /// (TokenMint −643).
        public var signInTimedOut: TokenMintError.Code { .init(domain: "auth", name: "signInTimedOut", number: -643) }
        /// The provider cannot run a step-up (TokenMint −644): the OAuth
        /// client flow has no FIDO2 step-up over HTTP yet.
        public var stepUpUnavailable: TokenMintError.Code { .init(domain: "auth", name: "stepUpUnavailable", number: -644) }
        /// The store or the crypto core failed (TokenMint −700).
        public var internalFailure: TokenMintError.Code { .init(domain: "auth", name: "internalFailure", number: -700) }
        /// A passkey registration named a credential ID that is registered already (TokenMint −623).
        public var credentialExists: TokenMintError.Code { .init(domain: "auth", name: "credentialExists", number: -623) }
        /// A passkey registration did not verify (TokenMint −624): its client
        /// data, authenticator data or attestation statement is wrong.
        public var registrationInvalid: TokenMintError.Code { .init(domain: "auth", name: "registrationInvalid", number: -624) }
        /// A passkey sign-up named an account that exists already (TokenMint
        /// −625): adding a passkey to an existing account takes that
        /// account's signed-in token.
        public var accountExists: TokenMintError.Code { .init(domain: "auth", name: "accountExists", number: -625) }
    }
}
