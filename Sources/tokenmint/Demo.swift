import ArgumentParser
import Foundation
import TokenMint

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "A short tour of what TokenMint does.")

    func run() throws {
        print("TokenMint \(TokenMintVersion.string): the signature core\n")
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
        try jwtStep()
        try aztecStep()
    }

    func aztecStep() throws {
        let token = "02/5c2a8b0e-1d4f-4f8e-9a51-2b7c3d9e0f11/1763776800/"
            + Base64URL.encode(SecureRandom.bytes(count: 64), padding: .padded)
        let symbol = try AztecEncoder.encode(token: token)
        print("\nAztec: a payment token as a cash-desk scanner sees it (\(symbol.summary))")
        print(symbol.terminalText(quietZone: 2), terminator: "")
        let png = try symbol.png(scale: 4, quietZone: 4)
        print("  the same symbol as a \(png.count)-byte PNG, or SVG / JSON with `tokenmint aztec --format …`")
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
