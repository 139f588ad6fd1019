#if Server
import TokenMintCore
import TokenMintCrypto
import TokenMintAuth
import TokenMintWebAuthn
import TokenMintJOSE
import Hummingbird
import HTTPTypes
import Logging

/// The WebAuthn relying party over HTTP, for the browser client the server
/// serves at `/passkeys/`: options in and credentials out in the JSON forms
/// of WebAuthn L3 (`PublicKeyCredentialCreationOptionsJSON`,
/// `PublicKeyCredential.toJSON()`), every byte string base64url.
///
/// - `POST /webauthn/registration/options` and `…/verify`: a passkey for a
///   new account (a sign-up), or for an existing one whose owner proves it
///   (its password, a passkey sign-in of the last five minutes, or its
///   elevated token). Resident key and user verification are required.
/// - `POST /webauthn/authentication/options` and `…/verify`: a sign-in with
///   or without a username (a discoverable credential); the answer carries
///   an RFC 9068 access token of the server's issuer.
/// - `POST /webauthn/step-up/options` and `…/verify`: with the account's
///   bearer token, an assertion turns into an elevated token.
struct PasskeyRoutes: Sendable {
    let issuer: LocalTokenIssuer
    /// Checks the access tokens requests carry (Bearer, or DPoP when bound).
    let tokens: AccessTokenAuthenticator
    let accounts: AccountDirectory
    let configuration: ServerConfiguration
    let relyingPartyID: String
    let clock: @Sendable () -> Int64
    let logger: Logger

    /// The client the tokens of the server's own passkey page are issued to.
    static let clientID = "tokenmint-passkeys"
    /// How long the browser is given for a ceremony, in milliseconds.
    static let timeout: Int64 = 300_000
    /// The algorithms offered, in order of preference: ES256, EdDSA, RS256.
    static let algorithms: [Int64] = [-7, -8, -257]

    func add(to router: Router<BasicRequestContext>) {
        router.get("passkeys") { _, _ in PasskeyPage.page() }
        router.get(".well-known/webauthn") { _, _ throws(TokenMintError) in
            // WebAuthn L3 §5.11.1: the origins a browser may accept for this RP ID.
            guard !configuration.relatedOrigins.isEmpty else { throw TokenMintError(.server.notFound, "no related origins are configured") }
            return HTTPMessages.json(.ok, JSONObject([("origins", .array(configuration.relatedOrigins.map { .string($0) }))]))
        }
        router.get("passkeys/tokenmint-webauthn.js") { _, _ in PasskeyPage.script(PasskeyPage.library) }
        router.get("passkeys/passkeys.js") { _, _ in PasskeyPage.script(PasskeyPage.pageScript) }
        router.post("webauthn/registration/options") { request, _ in try await registrationOptions(request) }
        router.post("webauthn/registration/verify") { request, _ in try await registration(request) }
        router.post("webauthn/authentication/options") { request, _ in try await authenticationOptions(request) }
        router.post("webauthn/authentication/verify") { request, _ in try await authentication(request) }
        router.post("webauthn/step-up/options") { request, _ in try await stepUpOptions(request) }
        router.post("webauthn/step-up/verify") { request, _ in try await stepUp(request) }
    }

    func body(_ request: Request) async throws(TokenMintError) -> JSONObject {
        try await HTTPMessages.object(request, limit: configuration.maximumBodyBytes)
    }

    static func username(_ body: JSONObject) throws(TokenMintError) -> String {
        let name = try HTTPMessages.string(body, "username", maximum: 64)
        guard AccountDirectory.isValid(username: name) else { throw TokenMintError(.server.badRequest, "a username is 1 to 64 visible ASCII characters") }
        return name
    }

    /// The claims of the request's bearer token, nil without one; a token
    /// that does not verify is refused.
    func bearerClaims(_ request: Request) async throws(TokenMintError) -> JWTClaims? {
        guard request.headers[.authorization] != nil else { return nil }
        return try await tokens.verify(request).claims
    }

    /// Whether `username` is taken: a password account, or one with passkeys.
    func exists(_ username: String) async throws(TokenMintError) -> Bool {
        if try accounts.contains(username: username) { return true }
        return try await !issuer.passkeyCredentialIDs(account: username).isEmpty
    }

    static func descriptors(_ ids: [[UInt8]]) -> JSONValue {
        .array(ids.map { .object(JSONObject([("type", "public-key"), ("id", .string(Base64URL.encode($0)))])) })
    }

    /// How recent a passkey sign-in must be to add another passkey, in seconds.
    static let recentSignIn: Int64 = 300

    /// Whether the request proves it is `username`'s owner, as adding a
    /// passkey to an existing account takes: the account's password in the
    /// body, or a bearer token that is the account's elevated token or comes
    /// from a passkey sign-in of the last five minutes. A token from any
    /// other client (or an old one) is not enough: it may have leaked, or
    /// belong to a third-party app the user merely authorized.
    func provesOwnership(_ request: Request, _ body: JSONObject, _ username: String) async throws(TokenMintError) -> Bool {
        if let password = try HTTPMessages.optionalString(body, "password", maximum: 1024) {
            let accounts = self.accounts
            let secret = SecureBytes(Array(password.utf8))
            let valid = try await PasswordWork.run { () throws(TokenMintError) -> Bool in try accounts.authenticate(username: username, password: secret) }
            guard valid else { throw TokenMintError(.server.unauthorized, "the password is wrong") }
            return true
        }
        guard let claims = try await bearerClaims(request), claims.subject == username else { return false }
        if claims.scopes.contains("elevated"), claims["acr"]?.stringValue == "urn:tokenmint:acr:fido2" { return true }
        guard claims.clientID == Self.clientID, let issued = claims.issuedAt else { return false }
        return issued >= TimeArithmetic.adding(clock(), -Self.recentSignIn)
    }

    func registrationOptions(_ request: Request) async throws(TokenMintError) -> Response {
        let body = try await body(request)
        let username = try Self.username(body)
        let displayName = try HTTPMessages.optionalString(body, "displayName", maximum: 64) ?? username
        let taken = try await exists(username)
        if taken, !(try await provesOwnership(request, body, username)) {
            throw TokenMintError(.auth.accountExists, "the account exists: adding a passkey to it takes its password, a passkey sign-in of the last 5 minutes, or its elevated token")
        }
        let ceremony = try await issuer.registrationCeremony(account: username, signUp: !taken)
        let options = JSONObject([
            ("rp", .object(JSONObject([("id", .string(relyingPartyID)), ("name", "TokenMint")]))),
            ("user", .object(JSONObject([("id", .string(Base64URL.encode(ceremony.userHandle ?? []))), ("name", .string(username)),
                                         ("displayName", .string(displayName))]))),
            ("challenge", .string(Base64URL.encode(ceremony.challenge))),
            ("pubKeyCredParams", .array(Self.algorithms.map { .object(JSONObject([("type", "public-key"), ("alg", .number($0))])) })),
            ("timeout", .number(Self.timeout)),
            ("excludeCredentials", Self.descriptors(ceremony.credentialIDs)),
            ("authenticatorSelection", .object(JSONObject([("residentKey", "required"), ("requireResidentKey", true),
                                                           ("userVerification", "required")]))),
            ("attestation", .string(configuration.attestation.rawValue)),
            ("hints", .array(configuration.hints.map { .string($0) })),
            ("extensions", .object(JSONObject([("credProps", true)]))),
        ])
        return HTTPMessages.json(.ok, options)
    }

    /// The byte string `name` of a credential's `response`, base64url.
    static func bytes(_ object: JSONObject, _ name: String, maximum: Int = 16 * 1024) throws(TokenMintError) -> [UInt8] {
        let text = try HTTPMessages.string(object, name, maximum: maximum)
        guard let bytes = try? Base64URL.decode(text) else { throw TokenMintError(.server.badRequest, "\(name) is not base64url") }
        return bytes
    }

    /// A `PublicKeyCredential.toJSON()` object: its raw ID and its response.
    static func credential(_ body: JSONObject) throws(TokenMintError) -> (rawID: [UInt8], response: JSONObject) {
        guard let credential = body["credential"]?.objectValue else { throw TokenMintError(.server.badRequest, "credential is missing") }
        guard credential["type"]?.stringValue == "public-key" else { throw TokenMintError(.server.badRequest, "credential.type is not public-key") }
        let rawID = try bytes(credential, "rawId", maximum: 1366)
        guard (16...1023).contains(rawID.count), credential["id"]?.stringValue == Base64URL.encode(rawID) else {
            throw TokenMintError(.server.badRequest, "credential.id and rawId are one credential ID of 16 to 1023 bytes")
        }
        guard let response = credential["response"]?.objectValue else { throw TokenMintError(.server.badRequest, "credential.response is missing") }
        return (rawID, response)
    }

    func registration(_ request: Request) async throws(TokenMintError) -> Response {
        let body = try await body(request)
        let username = try Self.username(body)
        let (rawID, response) = try Self.credential(body)
        let clientDataJSON = try Self.bytes(response, "clientDataJSON")
        let attestationObject = try Self.bytes(response, "attestationObject", maximum: 48 * 1024)
        // Checked before anything is stored: a malformed result, or PRF
        // outputs and large blobs the page should have kept, is a 400.
        let results: ClientExtensionResults
        do { results = try ClientExtensionResults(body["credential"]?["clientExtensionResults"]).refusingClientSecrets() } catch {
            throw TokenMintError(.server.badRequest, "clientExtensionResults: \(error.reason)", underlying: error)
        }
        // A sign-up's challenge registers only while the name is free: of
        // passkeys (the issuer checks, in the write's transaction) and of a
        // password account (checked here).
        let registered = try await issuer.registerPasskey(account: username, clientDataJSON: clientDataJSON, attestationObject: attestationObject,
                                                          credentialID: rawID, allowSignUp: !(try accounts.contains(username: username)))
        var members: [(String, JSONValue)] = [
            ("verified", true), ("username", .string(username)), ("credentialId", .string(Base64URL.encode(registered.credentialID))),
            ("attestationFormat", .string(registered.attestationFormat)), ("attestationTrust", .string(registered.attestationTrust.rawValue)),
            ("userVerified", .bool(registered.userVerified)), ("backupEligible", .bool(registered.backupEligible)),
            ("signCount", .number(Int64(registered.signCount))),
        ]
        if let discoverable = results.residentKey { members.append(("discoverable", .bool(discoverable))) }
        if let prf = results.prfEnabled { members.append(("prfEnabled", .bool(prf))) }
        return HTTPMessages.json(.created, JSONObject(members))
    }

    func requestOptions(challenge: [UInt8], credentialIDs: [[UInt8]]) -> Response {
        HTTPMessages.json(.ok, JSONObject([
            ("challenge", .string(Base64URL.encode(challenge))), ("rpId", .string(relyingPartyID)), ("timeout", .number(Self.timeout)),
            ("allowCredentials", Self.descriptors(credentialIDs)), ("userVerification", "required"),
            ("hints", .array(configuration.hints.map { .string($0) })),
        ]))
    }

    func authenticationOptions(_ request: Request) async throws(TokenMintError) -> Response {
        let body = try await body(request)
        var username: String?
        if let value = body["username"], !value.isNull { username = try Self.username(body) }
        let ceremony = try await issuer.signInCeremony(account: username)
        return requestOptions(challenge: ceremony.challenge, credentialIDs: ceremony.credentialIDs)
    }

    /// The account a `credential` (an assertion) signs in, its counter and UV.
    func verifySignIn(_ body: JSONObject) async throws(TokenMintError) -> PasskeySignIn {
        let (rawID, response) = try Self.credential(body)
        var userHandle: [UInt8]?
        if let value = response["userHandle"], !value.isNull { userHandle = try Self.bytes(response, "userHandle", maximum: 88) }
        return try await issuer.verifyPasskeySignIn(
            credentialID: rawID, clientDataJSON: try Self.bytes(response, "clientDataJSON"),
            authenticatorData: try Self.bytes(response, "authenticatorData"), signature: try Self.bytes(response, "signature", maximum: 1024),
            userHandle: userHandle)
    }

    func authentication(_ request: Request) async throws(TokenMintError) -> Response {
        let signIn = try await verifySignIn(try await body(request))
        // An access token only: the page is no registered OAuth client, so
        // a refresh token would be a secret nobody can redeem.
        let token = try await issuer.issue(account: signIn.account, clientID: Self.clientID, refreshable: false)
        logger.info("passkey sign-in", metadata: ["account": "\(signIn.account)", "signCount": "\(signIn.signCount)"])
        return HTTPMessages.json(.ok, JSONObject([
            ("verified", true), ("username", .string(signIn.account)), ("signCount", .number(Int64(signIn.signCount))),
            ("userVerified", .bool(signIn.userVerified)), ("accessToken", .string(token.accessToken)),
            ("tokenType", "Bearer"), ("expiresAt", .number(token.expiresAt)),
        ]))
    }

    /// The signed-in account a step-up is for, with its passkeys.
    func stepUpAccount(_ request: Request) async throws(TokenMintError) -> (account: String, clientID: String, credentials: [[UInt8]], jkt: String?) {
        guard let claims = try await bearerClaims(request) else {
            throw TokenMintError(.server.unauthorized, "a step-up needs the signed-in account's bearer token")
        }
        guard let account = claims.subject, !claims.scopes.contains(DeskAuthenticator.scope) else {
            throw TokenMintError(.server.forbidden, "a desk's token names no account")
        }
        let credentials = try await issuer.passkeyCredentialIDs(account: account)
        guard !credentials.isEmpty else { throw TokenMintError(.server.forbidden, "the account has no passkey to step up with") }
        return (account, claims.clientID ?? Self.clientID, credentials, claims.additional["cnf"]?.objectValue?["jkt"]?.stringValue)
    }

    func stepUpOptions(_ request: Request) async throws(TokenMintError) -> Response {
        let (account, _, credentials, _) = try await stepUpAccount(request)
        return requestOptions(challenge: try await issuer.elevationChallenge(account: account), credentialIDs: credentials)
    }

    func stepUp(_ request: Request) async throws(TokenMintError) -> Response {
        let (account, clientID, _, jkt) = try await stepUpAccount(request)
        let body = try await body(request)
        let (rawID, response) = try Self.credential(body)
        let token = try await issuer.elevate(
            account: account, clientID: clientID, credentialID: rawID, clientDataJSON: try Self.bytes(response, "clientDataJSON"),
            authenticatorData: try Self.bytes(response, "authenticatorData"), signature: try Self.bytes(response, "signature", maximum: 1024),
            dpopThumbprint: jkt)
        return HTTPMessages.json(.ok, JSONObject([
            ("verified", true), ("elevated", true), ("username", .string(account)), ("accessToken", .string(token.accessToken)),
            ("tokenType", .string(jkt == nil ? "Bearer" : "DPoP")), ("scope", "elevated"), ("expiresAt", .number(token.expiresAt)),
        ]))
    }
}
#endif
