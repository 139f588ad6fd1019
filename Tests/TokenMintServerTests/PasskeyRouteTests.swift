#if Server
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TokenMintAuth
import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
import TokenMintStore
import TokenMintWebAuthn
@testable import TokenMintServer

/// The passkey routes in process, with TokenMint's software authenticator in
/// the browser's place: sign-up, sign-in with and without a username,
/// step-up, the passkey sign-in of the authorization endpoint, and every
/// refusal a relying party owes (replays, strangers, rollbacks, takeovers).
@Suite("Passkey routes")
struct PasskeyRouteTests {
    static let origin = "http://127.0.0.1:8080"
    static let rpID = "127.0.0.1"

    /// A browser holding one software authenticator.
    struct Browser {
        let authenticator: SoftwareAuthenticator
        let client: any TestClientProtocol

        init(_ client: any TestClientProtocol) throws {
            self.client = client
            self.authenticator = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)
        }

        /// Client data as Chrome writes it: with a member no spec names.
        static func clientData(_ type: String, _ challenge: String, origin: String = PasskeyRouteTests.origin) throws -> [UInt8] {
            var data = CollectedClientData(type: type, challenge: try Base64URL.decode(challenge), origin: origin)
            data.extra = [("other_keys_can_be_added_here", "\"do not compare clientDataJSON against a template. See https://goo.gl/yabPex\"")]
            return data.json
        }

        static func credentialJSON(_ id: [UInt8], _ response: [(String, String)], extensionResults: String = "{}") -> String {
            let members = response.map { "\"\($0.0)\":\"\($0.1)\"" }.joined(separator: ",")
            let encoded = Base64URL.encode(id)
            return "{\"id\":\"\(encoded)\",\"rawId\":\"\(encoded)\",\"type\":\"public-key\",\"clientExtensionResults\":\(extensionResults),\"response\":{\(members)}}"
        }

        /// Options, `create`, verification; returns the verification's answer.
        func register(_ username: String, bearer: String? = nil, origin: String = PasskeyRouteTests.origin, extensionResults: String = "{}",
                      extensions: SoftwareAuthenticator.MakeCredentialExtensions = .init()) async throws -> TestResponse {
            let optionsResponse = try await ServerRouteTests.post(client, "/webauthn/registration/options", "{\"username\":\"\(username)\"}", bearer: bearer)
            guard optionsResponse.status == .ok else { return optionsResponse }
            let options = try ServerRouteTests.json(optionsResponse)
            let challenge = try #require(options["challenge"]?.stringValue)
            let user = try #require(options["user"]?.objectValue)
            let excluded = try (options["excludeCredentials"]?.arrayValue ?? []).map { try Base64URL.decode(#require($0["id"]?.stringValue)) }
            #expect(options["authenticatorSelection"]?["residentKey"]?.stringValue == "required")
            #expect(options["authenticatorSelection"]?["userVerification"]?.stringValue == "required")
            let clientData = try Self.clientData("webauthn.create", challenge, origin: origin)
            let made = try await authenticator.makeCredential(
                clientDataHash: HashFunction.sha256.hash(clientData), rp: (PasskeyRouteTests.rpID, "TokenMint"),
                user: (try Base64URL.decode(#require(user["id"]?.stringValue)), username, nil), pubKeyCredParams: [.es256], excludeList: excluded,
                options: .init(residentKey: true, userVerification: true, extensions: extensions), attestation: .packed)
            let body = "{\"username\":\"\(username)\",\"credential\":" + Self.credentialJSON(made.credentialID, [
                ("clientDataJSON", Base64URL.encode(clientData)), ("attestationObject", Base64URL.encode(made.attestationObject.bytes)),
            ], extensionResults: extensionResults) + "}"
            return try await ServerRouteTests.post(client, "/webauthn/registration/verify", body, bearer: bearer)
        }

        /// An assertion over the challenge of `options` (a request options answer).
        func assert(_ options: JSONObject, tamper: Bool = false) async throws -> String {
            let challenge = try #require(options["challenge"]?.stringValue)
            let allowed = try (options["allowCredentials"]?.arrayValue ?? []).map { try Base64URL.decode(#require($0["id"]?.stringValue)) }
            let clientData = try Self.clientData("webauthn.get", challenge)
            let assertion = try await authenticator.getAssertion(clientDataHash: HashFunction.sha256.hash(clientData), rpID: PasskeyRouteTests.rpID,
                                                                 allowList: allowed, options: .init(userVerification: true))
            var signature = assertion.signature
            if tamper { signature[signature.count - 1] ^= 1 }
            var response = [("clientDataJSON", Base64URL.encode(clientData)), ("authenticatorData", Base64URL.encode(assertion.authenticatorData.bytes)),
                            ("signature", Base64URL.encode(signature))]
            if let handle = assertion.userHandle { response.append(("userHandle", Base64URL.encode(handle))) }
            return Self.credentialJSON(assertion.credentialID, response)
        }

        func signIn(_ username: String? = nil, tamper: Bool = false) async throws -> TestResponse {
            let request = username.map { "{\"username\":\"\($0)\"}" } ?? "{}"
            let options = try ServerRouteTests.json(try await ServerRouteTests.post(client, "/webauthn/authentication/options", request))
            let credential = try await assert(options, tamper: tamper)
            return try await ServerRouteTests.post(client, "/webauthn/authentication/verify", "{\"credential\":\(credential)}")
        }

        func stepUp(_ bearer: String) async throws -> TestResponse {
            let optionsResponse = try await ServerRouteTests.post(client, "/webauthn/step-up/options", "{}", bearer: bearer)
            guard optionsResponse.status == .ok else { return optionsResponse }
            let credential = try await assert(try ServerRouteTests.json(optionsResponse))
            return try await ServerRouteTests.post(client, "/webauthn/step-up/verify", "{\"credential\":\(credential)}", bearer: bearer)
        }
    }

    static func error(_ response: TestResponse) throws -> String? { try ServerRouteTests.json(response)["error"]?.stringValue }

    @Test("sign up, sign in with and without a username, counters rising, step up to an elevated token")
    func ceremonies() async throws {
        try await ServerRouteTests.withServer { server, client in
            let browser = try Browser(client)
            let registered = try await browser.register("carol")
            #expect(registered.status == .created)
            #expect(try ServerRouteTests.json(registered)["verified"]?.boolValue == true)
            #expect(try ServerRouteTests.json(registered)["attestationFormat"]?.stringValue == "packed")

            var counts: [Int64] = []
            for username in ["carol", nil] {
                let signedIn = try await browser.signIn(username)
                #expect(signedIn.status == .ok)
                let answer = try ServerRouteTests.json(signedIn)
                #expect(answer["username"]?.stringValue == "carol")
                counts.append(try #require(answer["signCount"]?.int64Value))
                let access = try #require(answer["accessToken"]?.stringValue)
                let verified = try await server.issuer.verify(access)
                #expect(verified.claims.subject == "carol")
            }
            #expect(counts[1] > counts[0])

            let token = try #require(try ServerRouteTests.json(try await browser.signIn("carol"))["accessToken"]?.stringValue)
            let elevated = try await browser.stepUp(token)
            #expect(elevated.status == .ok)
            let elevatedToken = try #require(try ServerRouteTests.json(elevated)["accessToken"]?.stringValue)
            let claims = try await server.issuer.verify(elevatedToken).claims
            #expect(claims.scopes == ["elevated"])
            #expect(claims["acr"]?.stringValue == "urn:tokenmint:acr:fido2")
            #expect(claims["amr"]?.arrayValue?.compactMap(\.stringValue) == ["hwk", "user"])

            // A second passkey for carol needs carol's token; excluded credentials are refused by the authenticator.
            let stranger = try await browser.register("carol")
            #expect(stranger.status == .conflict)
            #expect(try Self.error(stranger) == "accountExists")
            await #expect(throws: TokenMintError.self) { _ = try await browser.register("carol", bearer: token) }
            let other = try Browser(client)
            #expect(try await other.register("carol", bearer: token).status == .created)
            #expect(try await server.issuer.passkeyCredentialIDs(account: "carol").count == 2)
            // The passkey sign-in gives an access token only: the page is no OAuth client.
            #expect(try ServerRouteTests.json(try await browser.signIn("carol"))["refreshToken"] == nil)
            // A passkey account's name cannot be given a password.
            #expect(throws: TokenMintError.self) { try server.accountDirectory.add(username: "carol", password: SecureBytes(Array("a password".utf8))) }
        }
    }

    @Test("adding a passkey to an existing account takes proof: its password, a recent passkey sign-in or an elevated token")
    func addingPasskeys() async throws {
        try await ServerRouteTests.withServer { server, client in
            try OAuthFlowTests.register(server)  // the client app and alice with a password
            let browser = try Browser(client)
            // A token alice gave a client through the code flow is not enough.
            let exchanged = try await OAuthFlowTests.exchange(client, code: try await OAuthFlowTests.code(client))
            let appToken = try #require(try ServerRouteTests.json(exchanged)["access_token"]?.stringValue)
            let refused = try await browser.register("alice", bearer: appToken)
            #expect(refused.status == .conflict)
            #expect(try Self.error(refused) == "accountExists")
            // A wrong password is refused; the right one opens a registration.
            let wrong = try await ServerRouteTests.post(client, "/webauthn/registration/options", "{\"username\":\"alice\",\"password\":\"not it\"}")
            #expect(wrong.status == .unauthorized)
            let options = try await ServerRouteTests.post(
                client, "/webauthn/registration/options", "{\"username\":\"alice\",\"password\":\"\(OAuthFlowTests.password)\"}")
            #expect(options.status == .ok)
            // A registration challenge from a sign-up request is refused once the name has a password.
            let signUp = try await server.issuer.registrationCeremony(account: "alice", signUp: true)
            let clientData = CollectedClientData(type: "webauthn.create", challenge: signUp.challenge, origin: PasskeyRouteTests.origin).json
            let made = try await browser.authenticator.makeCredential(
                clientDataHash: HashFunction.sha256.hash(clientData), rp: (PasskeyRouteTests.rpID, nil), user: (signUp.userHandle ?? [], "alice", nil),
                pubKeyCredParams: [.es256], options: .init(residentKey: true, userVerification: true))
            let body = "{\"username\":\"alice\",\"credential\":" + Browser.credentialJSON(made.credentialID, [
                ("clientDataJSON", Base64URL.encode(clientData)), ("attestationObject", Base64URL.encode(made.attestationObject.bytes)),
            ]) + "}"
            let takeover = try await ServerRouteTests.post(client, "/webauthn/registration/verify", body)
            #expect(takeover.status == .conflict)
            #expect(try Self.error(takeover) == "accountExists")
            #expect(try await server.issuer.passkeyCredentialIDs(account: "alice").isEmpty)
            // The elevated scope is never granted by a sign-in.
            let elevated = try await OAuthFlowTests.signIn(client, OAuthFlowTests.authorization(extra: [("scope", "elevated")]))
            #expect(try OAuthFlowTests.parameters(elevated)["error"] == "invalid_scope")
        }
    }

    @Test("refusals: tampered signatures, replays, strangers, takeovers, rollbacks, bad bodies")
    func refusals() async throws {
        try await ServerRouteTests.withServer { server, client in
            let browser = try Browser(client)
            #expect(try await browser.register("dave").status == .created)
            try server.accountDirectory.add(username: "erin", password: SecureBytes(Array("erin's password".utf8)))

            let tampered = try await browser.signIn("dave", tamper: true)
            #expect(tampered.status == .unauthorized)
            #expect(try Self.error(tampered) == "assertionInvalid")

            // A replayed assertion finds its challenge spent.
            let options = try ServerRouteTests.json(try await ServerRouteTests.post(client, "/webauthn/authentication/options", "{}"))
            let credential = try await browser.assert(options)
            #expect(try await ServerRouteTests.post(client, "/webauthn/authentication/verify", "{\"credential\":\(credential)}").status == .ok)
            let replay = try await ServerRouteTests.post(client, "/webauthn/authentication/verify", "{\"credential\":\(credential)}")
            #expect(replay.status == .unauthorized)
            #expect(try Self.error(replay) == "challengeInvalid")

            // An authenticator the server never saw.
            let fresh = try Browser(client)
            _ = try await fresh.authenticator.makeCredential(
                clientDataHash: [UInt8](repeating: 7, count: 32), rp: (PasskeyRouteTests.rpID, nil), user: ([9, 9, 9], "dave", nil),
                pubKeyCredParams: [.es256], options: .init(residentKey: true, userVerification: true))
            let unknown = try await fresh.signIn()
            #expect(unknown.status == .unauthorized)
            #expect(try Self.error(unknown) == "wrongAccount")

            // A password account cannot be taken over by a passkey sign-up.
            let takeover = try await fresh.register("erin")
            #expect(takeover.status == .conflict)
            #expect(try Self.error(takeover) == "accountExists")

            // A sign-in challenge does not register, and a registration challenge does not sign in.
            let signInOptions = try ServerRouteTests.json(try await ServerRouteTests.post(client, "/webauthn/authentication/options", "{}"))
            let mixed = try await browser.assert(signInOptions)
            let wrongPurpose = try await ServerRouteTests.post(client, "/webauthn/step-up/verify", "{\"credential\":\(mixed)}",
                                                               bearer: try #require(try ServerRouteTests.json(try await browser.signIn())["accessToken"]?.stringValue))
            #expect(wrongPurpose.status == .unauthorized)
            #expect(try Self.error(wrongPurpose) == "challengeInvalid")

            // Step-up needs a bearer token; a desk's token names no account.
            #expect(try await ServerRouteTests.post(client, "/webauthn/step-up/options", "{}").status == .unauthorized)
            let desk = try await ServerRouteTests.deskToken(server, client)
            #expect(try await ServerRouteTests.post(client, "/webauthn/step-up/options", "{}", bearer: desk).status == .forbidden)

            for (path, body) in [
                ("/webauthn/registration/options", "{\"username\":\"\"}"), ("/webauthn/registration/options", "{\"username\":\"a b\"}"),
                ("/webauthn/registration/verify", "{\"username\":\"dave2\",\"credential\":{\"type\":\"public-key\"}}"),
                ("/webauthn/authentication/verify", "{\"credential\":{\"id\":\"AAAA\",\"rawId\":\"AAAA\",\"type\":\"public-key\",\"response\":{}}}"),
                ("/webauthn/authentication/verify", "[1]"), ("/webauthn/authentication/options", "{\"username\":7}"),
            ] {
                let response = try await ServerRouteTests.post(client, path, body)
                #expect(response.status == .badRequest, "\(path) \(body)")
            }
            let page = try await ServerRouteTests.get(client, "/passkeys/")
            #expect(page.status == .ok)
            #expect(String(buffer: page.body).contains("/passkeys/passkeys.js"))
            let script = try await ServerRouteTests.get(client, "/passkeys/tokenmint-webauthn.js")
            #expect(script.headers[.contentType]?.hasPrefix("text/javascript") == true)
        }
    }

    @Test("the authorization endpoint signs in with a passkey instead of a password")
    func authorizeWithPasskey() async throws {
        try await ServerRouteTests.withServer { server, client in
            try OAuthFlowTests.register(server)
            let browser = try Browser(client)
            #expect(try await browser.register("frank").status == .created)
            let page = try await OAuthFlowTests.authorize(client, OAuthFlowTests.authorization())
            #expect(String(buffer: page.body).contains("passkey-sign-in"))
            for tamper in [true, false] {
                let options = try ServerRouteTests.json(try await ServerRouteTests.post(client, "/webauthn/authentication/options", "{}"))
                let credential = try await browser.assert(options, tamper: tamper)
                let form = OAuthFlowTests.encode(OAuthFlowTests.authorization() + [("passkey", credential)])
                let answer = try await ServerRouteTests.post(client, "/oauth/authorize", form, contentType: "application/x-www-form-urlencoded")
                if tamper {
                    #expect(answer.status == .unauthorized)
                    #expect(String(buffer: answer.body).contains("assertionInvalid"))
                } else {
                    #expect(answer.status == .seeOther)
                    let code = try #require(try OAuthFlowTests.parameters(answer)["code"])
                    let exchanged = try await OAuthFlowTests.exchange(client, code: code)
                    #expect(exchanged.status == .ok)
                    let access = try #require(try ServerRouteTests.json(exchanged)["access_token"]?.stringValue)
                    #expect(try await server.issuer.verify(access).claims.subject == "frank")
                }
            }
        }
    }

    @Test("extensions: credProps and prf.enabled reported, signed outputs accepted; PRF outputs, blobs and malformed results a 400 that stores nothing")
    func extensionResults() async throws {
        try await ServerRouteTests.withServer { _, client in
            let browser = try Browser(client)
            let registered = try await browser.register(
                "una", extensionResults: #"{"credProps":{"rk":true},"prf":{"enabled":true},"unknownOne":1}"#,
                extensions: .init(credProtect: .userVerificationRequired, hmacSecret: true, credBlob: [1, 2, 3]))
            #expect(registered.status == .created, "\(String(buffer: registered.body))")
            let answer = try ServerRouteTests.json(registered)
            #expect(answer["discoverable"]?.boolValue == true && answer["prfEnabled"]?.boolValue == true)
            for results in [#"{"prf":{"enabled":true,"results":{"first":"AAAA"}}}"#, #"{"largeBlob":{"blob":"AAAA"}}"#,
                            #"{"credProps":{"rk":"yes"}}"#, #"[]"#] {
                let refused = try await Browser(client).register("vera", extensionResults: results)
                #expect(refused.status == .badRequest, "\(results): \(String(buffer: refused.body))")
            }
            // Nothing was stored: the name is still free for a sign-up.
            let vera = try await Browser(client).register("vera")
            #expect(vera.status == .created, "\(String(buffer: vera.body))")
        }
    }

    @Test("related origins: published at /.well-known/webauthn and accepted in a ceremony, a stranger's refused; hints in both options")
    func relatedOrigins() async throws {
        try await ServerRouteTests.withServer(configure: {
            $0.relatedOrigins = ["https://pay.tokenmint.test"]
            $0.hints = ["security-key", "hybrid"]
        }) { _, client in
            let published = try await ServerRouteTests.get(client, "/.well-known/webauthn")
            #expect(published.status == .ok)
            #expect(try ServerRouteTests.json(published)["origins"]?.arrayValue?.compactMap(\.stringValue) == ["https://pay.tokenmint.test"])
            let related = try await Browser(client).register("rita", origin: "https://pay.tokenmint.test")
            #expect(related.status == .created, "\(String(buffer: related.body))")
            let stranger = try await Browser(client).register("sam", origin: "https://pay.tokenmint.example")
            #expect(stranger.status.code >= 400 && stranger.status.code < 500)
            let creation = try ServerRouteTests.json(try await ServerRouteTests.post(client, "/webauthn/registration/options", "{\"username\":\"tess\"}"))
            let request = try ServerRouteTests.json(try await ServerRouteTests.post(client, "/webauthn/authentication/options", "{}"))
            for options in [creation, request] {
                #expect(options["hints"]?.arrayValue?.compactMap(\.stringValue) == ["security-key", "hybrid"])
            }
        }
        try await ServerRouteTests.withServer { _, client in
            let none = try await ServerRouteTests.get(client, "/.well-known/webauthn")
            #expect(none.status == .notFound)
            #expect(try ServerRouteTests.json(none)["error"]?.stringValue == "notFound")
        }
        for (related, hints) in [(["https://a.test/path"], [String]()), (["ftp://a.test"], []), (["https://a.test#x"], []), ([], ["usb"]),
                                 (["http://localhost.evil.example"], [])] {
            var configuration = ServerConfiguration(stateDirectory: "/nonexistent")
            configuration.relatedOrigins = related
            configuration.hints = hints
            #expect(throws: TokenMintError.self, "\(related) \(hints)") { try configuration.validate() }
        }
        // Five labels start (counted with a list the test gives); a sixth is refused at start, naming it.
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("psl-\(UUID().uuidString).dat").path
        try "// test list\ntest\nco.test\n".write(toFile: list, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: list) }
        let five = ["https://a.test", "https://b.test", "https://shop.b.test", "https://c.co.test", "https://d.test", "https://e.test:8443"]
        try await ServerRouteTests.withServer(configure: {
            $0.relatedOrigins = five
            $0.publicSuffixListPath = list
        }) { _, _ in }
        do {
            try await ServerRouteTests.withServer(configure: {
                $0.relatedOrigins = five + ["https://f.co.test"]
                $0.publicSuffixListPath = list
            }) { _, _ in }
            Issue.record("a sixth label started")
        } catch let error as TokenMintError {
            #expect(error.code == .server.invalidConfiguration && error.reason.contains("https://f.co.test"), "\(error)")
        }
    }
}
#endif
