import ArgumentParser
import Foundation
import TokenMint

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "A short tour of what TokenMint does.")

    func run() async throws {
        try signatureStep()
        try jwtStep()
        try await payStep()
        let (session, credential) = try await passkeyStep()
        try await stepUpStep(session: session, credential: credential)
    }

    func stepUpStep(session: SoftwareAuthenticator, credential: RegisteredCredential) async throws {
        print("\nStep-up: a refund asks for a touch, not a password")
        let account = "6f1c2a8e-3b7d-4e5f-9a0b-1c2d3e4f5a6b"
        var policy = RelyingPartyPolicy(rpID: "shop.example", origins: ["https://shop.example"])
        policy.requireUserVerification = true
        let issuer = try LocalTokenIssuer(store: InMemoryStore(), issuer: "https://auth.shop.example", audience: "https://api.shop.example",
                                          relyingParty: policy)
        let signedIn = try await issuer.issue(account: account, clientID: "pos-app", scopes: ["payments"])
        print("  account token: \(signedIn.accessToken.prefix(24))… (at+jwt, 10 min) + refresh token")
        try await issuer.registerPasskey(account: account, credential: credential)
        let challenge = try await issuer.elevationChallenge(account: account)
        let get = CollectedClientData(type: "webauthn.get", challenge: challenge, origin: "https://shop.example").json
        let assertion = try await session.getAssertion(clientDataHash: HashFunction.sha256.hash(get), rpID: "shop.example",
                                                       options: .init(userVerification: true))
        let elevated = try await issuer.elevate(account: account, clientID: "pos-app", credentialID: credential.credentialID, clientDataJSON: get,
                                          authenticatorData: assertion.authenticatorData.bytes, signature: assertion.signature)
        let claims = try await issuer.verify(elevated.accessToken).claims
        let amr = claims["amr"]?.arrayValue?.compactMap(\.stringValue).joined(separator: "+") ?? "-"
        print("  the assertion verified: elevated token, scope \(claims.scopes.joined(separator: " ")), acr \(claims["acr"]?.stringValue ?? "-"), amr \(amr), "
              + "\(elevated.expiresAt - (claims.issuedAt ?? 0)) s, no refresh token: \(elevated.refreshToken == nil)")
        do {
            _ = try await issuer.elevate(account: account, clientID: "pos-app", credentialID: credential.credentialID, clientDataJSON: get,
                                   authenticatorData: assertion.authenticatorData.bytes, signature: assertion.signature)
        } catch { print("  the same assertion again: \(error.code)") }
    }

    func passkeyStep() async throws -> (SoftwareAuthenticator, RegisteredCredential) {
        print("\nPasskey: a software FIDO2 authenticator registers and signs in, a strict RP verifies")
        let session = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)
        var policy = RelyingPartyPolicy(rpID: "shop.example", origins: ["https://shop.example"])
        policy.requireUserVerification = true
        let verifier = RelyingPartyVerifier(policy: policy)
        let challenge = SecureRandom.bytes(count: 32)
        let create = CollectedClientData(type: "webauthn.create", challenge: challenge, origin: "https://shop.example").json
        let made = try await session.makeCredential(
            clientDataHash: HashFunction.sha256.hash(create), rp: ("shop.example", "Shop"), user: ([1, 2, 3, 4], "merchant", nil),
            pubKeyCredParams: [.es256], options: .init(residentKey: true, userVerification: true), attestation: .packed)
        let credential = try verifier.verifyRegistration(clientDataJSON: create, attestationObject: made.attestationObject.bytes, challenge: challenge)
        print("  registered \(credential.publicKey.algorithm) credential \(Base64URL.encode(credential.credentialID).prefix(16))… (packed self attestation)")
        var count = credential.signCount
        for attempt in 1...2 {
            let fresh = SecureRandom.bytes(count: 32)
            let get = CollectedClientData(type: "webauthn.get", challenge: fresh, origin: "https://shop.example").json
            let assertion = try await session.getAssertion(clientDataHash: HashFunction.sha256.hash(get), rpID: "shop.example",
                                                           options: .init(userVerification: true))
            let result = try verifier.verifyAssertion(credential: credential, storedSignCount: count, clientDataJSON: get,
                                                      authenticatorData: assertion.authenticatorData.bytes, signature: assertion.signature, challenge: fresh)
            count = result.signCount
            print("  sign-in \(attempt): verified, signCount \(result.signCount), user verified \(result.userVerified)")
            if attempt == 2 {
                do {
                    _ = try verifier.verifyAssertion(credential: credential, storedSignCount: count, clientDataJSON: get,
                                                     authenticatorData: assertion.authenticatorData.bytes, signature: assertion.signature, challenge: fresh)
                } catch { print("  the same assertion replayed: \(error.code)") }
            }
        }
        let phishing = CollectedClientData(type: "webauthn.get", challenge: challenge, origin: "https://shop.example.evil.test").json
        let phished = try await session.getAssertion(clientDataHash: HashFunction.sha256.hash(phishing), rpID: "shop.example")
        do {
            _ = try verifier.verifyAssertion(credential: credential, storedSignCount: count, clientDataJSON: phishing,
                                             authenticatorData: phished.authenticatorData.bytes, signature: phished.signature, challenge: challenge)
        } catch { print("  an assertion collected on another origin: \(error.code)") }
        return (session, credential)
    }

    func signatureStep() throws {
        print("TokenMint \(TokenMintVersion.string): a tour of signatures, JWTs, WhitelabelPay tokens, passkeys and a FIDO2 step-up\n")
        let message = Array("02/demo-payment-token/1763776800".utf8)
        let tampered = message.dropLast() + [UInt8(ascii: "1")]
        func row(_ name: String, _ detail: String, _ signature: [UInt8], _ ok: Bool, _ bad: Bool) {
            let sig = Hex.encode(signature.prefix(12)) + "…"
            let pad = { (s: String, n: Int) in s + String(repeating: " ", count: max(0, n - s.count)) }
            print("\(pad(name, 8)) \(pad(detail, 26)) \(pad("\(signature.count) B", 7)) \(sig)  verify: \(ok ? "ok" : "FAIL")  tampered: \(bad ? "ACCEPTED" : "rejected")")
        }

        let ed = Ed25519.PrivateKey()
        let edSig = try ed.signature(for: message)
        row("EdDSA", "Ed25519 (libsodium)", edSig, ed.publicKey.isValidSignature(edSig, for: message),
            ed.publicKey.isValidSignature(edSig, for: tampered))

        for (name, curve) in [("ES256", ECDSA.Curve.p256), ("ES384", .p384), ("ES512", .p521)] {
            let key = try ECDSA.PrivateKey(curve: curve)
            let a = try key.signature(for: message, nonce: .deterministic)
            let b = try key.signature(for: message, nonce: .deterministic)
            row(name, "\(curve) RFC 6979\(a == b ? ", stable" : ", UNSTABLE")", a.rawRepresentation,
                key.publicKey.isValidSignature(a, for: message), key.publicKey.isValidSignature(a, for: tampered))
        }

        let rsa = try RSA.PrivateKey(bits: 2048)
        for (name, padding) in [("RS256", RSA.Padding.pkcs1v15), ("PS256", .pss)] {
            let sig = try rsa.signature(for: message, hash: .sha256, padding: padding)
            row(name, "RSA-2048 \(padding == .pkcs1v15 ? "PKCS#1 v1.5" : "PSS")", sig,
                rsa.publicKey.isValidSignature(sig, for: message, padding: padding),
                rsa.publicKey.isValidSignature(sig, for: tampered, padding: padding))
        }

        let hmac = try HMACKey(generatingFor: .sha256)
        let tag = HMAC.authenticationCode(for: message, using: hmac)
        row("HS256", "HMAC-SHA-256 (OpenSSL)", tag, HMAC.isValidAuthenticationCode(tag, for: message, using: hmac),
            HMAC.isValidAuthenticationCode(tag, for: tampered, using: hmac))

        print("\nA 16-byte key cannot make an HS256 key:")
        do {
            _ = try HMACKey(SecureRandom.bytes(count: 16), hash: .sha256)
        } catch {
            print("  \(error)")
        }
        print("\nbase64url of the Ed25519 public key: \(Base64URL.encode(ed.publicKey.rawRepresentation))")
    }

    func payStep() async throws {
        print("\nWhitelabelPay: enrol, mint online and offline, verify at the cash desk")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-demo-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(path: directory + "/store.sqlite", masterKey: .file(path: directory + "/master.key"))
        let configuration = try WhitelabelPayConfiguration(
            tenantID: "0b6d5b8e-8c1b-4a0a-9f5e-3c2d1e0f9a8b", referenceID: UUID().uuidString.lowercased(), offlineTokenLimit: 3)
        let sdk = try WhitelabelPay(configuration: configuration, store: store, backend: LocalBackend(clock: .system))
        let enrolment = try await sdk.getEnrolmentToken()
        print("  enrolment token: \(enrolment)")
        print("  state: \(try await sdk.state.rawValue)")
        try await sdk.handlePush(Array(#"{"aps":{},"yp-type":"enrolment-succeeded.v1"}"#.utf8))
        try await sdk.addPaymentMeans("card-1")
        print("  push enrolment-succeeded.v1 → state: \(try await sdk.state.rawValue), payment means card-1 active")
        let online = try await sdk.getPaymentToken()
        print("  online token:  \(online)")
        try await sdk.markOffline()
        print("  offline: \(try await sdk.availableOfflineTokensCount) tokens available")
        var last = online
        for _ in 0..<3 {
            last = try await sdk.getPaymentToken()
            print("  offline token: \(last)  (left: \(try await sdk.availableOfflineTokensCount))")
        }
        do {
            _ = try await sdk.getPaymentToken()
        } catch {
            print("  fourth offline token: \(error.code.name)")
        }
        try await sdk.markOnline()
        print("  back online: \(try await sdk.availableOfflineTokensCount) offline tokens available again")
        let verifier = try PaymentTokenVerifier(store: InMemoryStore(), clock: .system)
        let verified = try await verifier.verify(last.description, enrolment: enrolment)
        print("  cash desk: valid \(verified.isOffline ? "offline" : "online") token from \(enrolment.referenceID.prefix(8))…")
        do {
            _ = try await verifier.verify(last.description, enrolment: enrolment)
        } catch {
            print("  cash desk, same token again: \(error.code.name)")
        }
        let symbol = try AztecEncoder.encode(token: last.description)
        print("\n  the token as the cash-desk scanner sees it (\(symbol.summary)):")
        print(symbol.terminalText(quietZone: 2), terminator: "")
    }


    func jwtStep() throws {
        print("\nJWT: an issuer mints an 8-claim token, a cash desk verifies it")
        let issuer = try JWK.generate(for: .EdDSA, keyID: "issuer-2026")
        let now = Int64(Date().timeIntervalSince1970)
        var claims = JWTClaims(
            issuer: "https://issuer.example", subject: "device-42", audience: ["cash-desk"], expiration: now + 600,
            issuedAt: now, jwtID: Base64URL.encode(SecureRandom.bytes(count: 12)), authorizedParty: "pos-app")
        claims.additional.set("scope", "pay refund")
        let token = try JWTSigner(key: issuer).sign(claims)
        print("  token (\(token.utf8.count) bytes): \(token.prefix(60))…")
        let keys = try JWKSet(keys: [issuer])
        var validation = JWTValidation()
        validation.issuer = "https://issuer.example"
        validation.audience = "cash-desk"
        let verified = try JWTVerifier(keys: keys, validation: validation).verify(token)
        print("  verified: sub \(verified.claims.subject ?? "?"), kid \(verified.header.keyID ?? "?"), expires in \((verified.claims.expiration ?? now) - now) s")
        let attempts: [(String, String)] = [
            ("alg none", UnsecuredJWS.encode(claims.jsonBytes, type: "JWT")),
            ("HS256 with the public key as secret", try JWTSigner(
                key: JWK(secret: Array((try issuer.publicKey?.pemRepresentation() ?? "").utf8), keyID: "issuer-2026")).sign(claims)),
            ("another audience", try { () throws -> String in
                var other = claims
                other.audience = ["back-office"]
                return try JWTSigner(key: issuer).sign(other)
            }()),
        ]
        for (name, forged) in attempts {
            do {
                _ = try JWTVerifier(keys: keys, validation: validation).verify(forged)
                print("  \(name): ACCEPTED")
            } catch {
                print("  \(name): rejected (\(error.code))")
            }
        }
    }
}
