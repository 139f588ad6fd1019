import TokenMintCore
import TokenMintCrypto

/// The error `TokenMintAuth` throws. Codes are those of the iZettle SDK's
/// error domain where it has one, and TokenMint's own otherwise (documented
/// below); ``Code/rawValue`` is stable.
public struct AuthError: Error, Hashable, CustomStringConvertible, Sendable {
    /// The kind of failure.
    public let code: Code
    /// What went wrong. Never contains a token, a key or a secret.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = SafeText.escaped(reason)
    }

    /// `AuthError.<name> (<code>): <reason>`.
    public var description: String { "AuthError.\(code.name) (\(code.rawValue)): \(reason)" }

    /// A stable numeric code with a name.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The number.
        public let rawValue: Int
        /// The name.
        public let name: String
        private init(_ rawValue: Int, _ name: String) {
            self.rawValue = rawValue
            self.name = name
        }
        /// `name (rawValue)`.
        public var description: String { "\(name) (\(rawValue))" }

        /// The callback URL is malformed (iZettle −202).
        public static let callbackURLInvalid = Code(-202, "callbackURLInvalid")
        /// No callback URL is configured (iZettle −203).
        public static let callbackURLMissing = Code(-203, "callbackURLMissing")
        /// The client ID is not valid (iZettle −300).
        public static let clientIdInvalid = Code(-300, "clientIdInvalid")
        /// No UI could be presented (iZettle −501).
        public static let presentationNotPossible = Code(-501, "presentationNotPossible")
        /// No account is signed in (TokenMint −600).
        public static let notSignedIn = Code(-600, "notSignedIn")
        /// A refresh token is unknown, expired or revoked (TokenMint −610).
        public static let refreshTokenInvalid = Code(-610, "refreshTokenInvalid")
        /// A refresh token was used twice: its whole family is revoked (TokenMint −611).
        public static let refreshTokenReused = Code(-611, "refreshTokenReused")
        /// The FIDO2 assertion for a step-up did not verify (TokenMint −620).
        public static let assertionInvalid = Code(-620, "assertionInvalid")
        /// The step-up challenge was not issued, expired or was used (TokenMint −621).
        public static let challengeInvalid = Code(-621, "challengeInvalid")
        /// The passkey belongs to another account, or the account has none (TokenMint −622).
        public static let wrongAccount = Code(-622, "wrongAccount")
        /// The service key presented is wrong (TokenMint −630).
        public static let serviceKeyInvalid = Code(-630, "serviceKeyInvalid")
        /// A user token is unknown or revoked (TokenMint −631).
        public static let userTokenInvalid = Code(-631, "userTokenInvalid")
        /// The access token does not verify or belongs to another user (TokenMint −632).
        public static let accessTokenInvalid = Code(-632, "accessTokenInvalid")
        /// The store or the crypto core failed (TokenMint −700).
        public static let internalFailure = Code(-700, "internalFailure")
        /// A passkey registration named a credential ID that is registered already (TokenMint −623).
        public static let credentialExists = Code(-623, "credentialExists")
    }
}
