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
    }
}
