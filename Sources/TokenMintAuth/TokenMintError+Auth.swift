public import TokenMintCore
import TokenMintCrypto

extension TokenMintError.Code {
    /// The codes `TokenMintAuth` raises (domain `auth`).
    public static var auth: AuthCodes { AuthCodes() }

    /// The `auth` domain's codes, reached as `.auth.<name>`.
    public struct AuthCodes: Sendable {
        /// The callback URL is malformed (iZettle −202). Reserved for the OAuth
        /// client flow; the local provider has no callback URL.
        public var callbackURLInvalid: TokenMintError.Code { .init(domain: "auth", name: "callbackURLInvalid", number: -202) }
        /// No callback URL is configured (iZettle −203). Reserved for the OAuth
        /// client flow.
        public var callbackURLMissing: TokenMintError.Code { .init(domain: "auth", name: "callbackURLMissing", number: -203) }
        /// The client ID is not valid (iZettle −300).
        public var clientIdInvalid: TokenMintError.Code { .init(domain: "auth", name: "clientIdInvalid", number: -300) }
        /// No UI could be presented (iZettle −501). Reserved for the OAuth
        /// client flow, which presents a sign-in page.
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
        /// The store or the crypto core failed (TokenMint −700).
        public var internalFailure: TokenMintError.Code { .init(domain: "auth", name: "internalFailure", number: -700) }
        /// A passkey registration named a credential ID that is registered already (TokenMint −623).
        public var credentialExists: TokenMintError.Code { .init(domain: "auth", name: "credentialExists", number: -623) }
    }
}
