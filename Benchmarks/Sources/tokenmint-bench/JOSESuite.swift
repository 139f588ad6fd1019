import TokenMintCore
import CBenchRaw
import Foundation
import TokenMintCrypto
import TokenMintJOSE
import TokenMintPay
import TokenMintStore

/// JWE, SD-JWT and DPoP: TokenMint next to the raw OpenSSL calls the same
/// work needs (key agreement or key transport, the KDF, AES-256-GCM; the
/// signatures alone for SD-JWT and DPoP). joserfc's rates for the same JWEs
/// come from `scripts/bench/jose_python_rates.py`, run beside this.
enum JOSESuite {
    /// A nested access token's worth of plaintext (about 300 bytes).
    static let plaintext = Array(String(repeating: "eyJhbGciOiJFUzI1NiJ9.", count: 14).utf8)

    static func groups() throws -> [Group] {
        try jwe() + sdjwt() + dpop()
    }

    static func jwe() throws -> [Group] {
        let message = plaintext
        // ECDH-ES on P-256 with A256GCM.
        let recipient = try ECDSA.PrivateKey(curve: .p256)
        let recipientDER = try recipient.derRepresentation.unsafeCopy
        guard let rawRecipient = CBenchRaw_private_key(recipientDER, recipientDER.count),
            let rawRecipientPublic = CBenchRaw_public_key(try recipient.publicKey.derRepresentation, try recipient.publicKey.derRepresentation.count)
        else { throw BenchError("cannot load the P-256 key in C") }
        var unbound = try JWK(recipient)
        unbound.algorithmName = nil
        let recipientPublic = try unbound.publicKey.orThrow("no public half")
        let token = try JWE.encrypt(message, key: recipientPublic, algorithm: .ECDH_ES, encryption: .A256GCM).compactSerialization
        guard (try? JWE(parsing: token).decrypt(using: unbound)) != nil else { throw BenchError("ECDH-ES round trip") }
        // The raw side: the same Concat KDF input as the token's; it also
        // authenticates that input as its AAD (24 bytes, shorter than the
        // token's protected header).
        let info = [0, 0, 0, 7] + Array("A256GCM".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0] as [UInt8]
        let ephemeral = try ECDSA.PrivateKey(curve: .p256)
        let ephemeralDER = try ephemeral.publicKey.derRepresentation
        guard let rawEphemeral = CBenchRaw_public_key(ephemeralDER, ephemeralDER.count) else { throw BenchError("ephemeral key in C") }
        let kek = try ConcatKDF.deriveKey(sharedSecret: try ECDH.sharedSecret(ephemeral, recipient.publicKey), otherInfo: info, outputByteCount: 32)
        let iv = SecureRandom.bytes(count: 12)
        let sealed = try AES.GCM.seal(message, key: kek, nonce: iv, authenticating: info)
        var out = [UInt8](repeating: 0, count: message.count + 16)
        var tag = [UInt8](repeating: 0, count: 16)
        var sealedTag = sealed.tag
        guard CBenchRaw_ecdh_es_decrypt(rawRecipient, rawEphemeral, info, info.count, iv, sealed.ciphertext, sealed.ciphertext.count, &sealedTag, &out) == 0
        else { throw BenchError("raw ECDH-ES decrypt does not open TokenMint's sealing") }

        // RSA-OAEP-256 (2048 bits) with A256GCM.
        let rsa = try RSA.PrivateKey(bits: 2048)
        let rsaDER = try rsa.derRepresentation.unsafeCopy
        guard let rawRSA = CBenchRaw_private_key(rsaDER, rsaDER.count), let rawRSAPublic = CBenchRaw_public_key(try rsa.publicKey.derRepresentation, try rsa.publicKey.derRepresentation.count)
        else { throw BenchError("cannot load the RSA key in C") }
        let rsaJWK = JWK(rsa, algorithm: nil)
        let rsaPublic = try rsaJWK.publicKey.orThrow("no public half")
        let rsaToken = try JWE.encrypt(message, key: rsaPublic, algorithm: .RSA_OAEP_256, encryption: .A256GCM).compactSerialization
        let rsaAAD = Array(rsaToken.split(separator: ".")[0].utf8)
        let cek = SecureBytes(randomCount: 32)
        let encryptedKey = try rsa.publicKey.encrypt(cek, oaepHash: .sha256)
        let rsaSealed = try AES.GCM.seal(message, key: cek, nonce: iv, authenticating: rsaAAD)
        var rsaTag = rsaSealed.tag
        var ek = [UInt8](repeating: 0, count: 512)
        guard CBenchRaw_rsa_oaep_decrypt(rawRSA, encryptedKey, encryptedKey.count, rsaAAD, rsaAAD.count, iv, rsaSealed.ciphertext, rsaSealed.ciphertext.count,
                                         &rsaTag, &out) == 0
        else { throw BenchError("raw RSA-OAEP decrypt does not open TokenMint's sealing") }
        _ = rawRecipientPublic

        return [
            Group(name: "JWE ECDH-ES A256GCM encrypt", cases: [
                Case(implementation: .raw("OpenSSL EVP")) { CBenchRaw_ecdh_es_encrypt(rawRecipientPublic, info, info.count, message, message.count, &out, &tag) == 0 },
                Case(implementation: .tokenmint) {
                    (try? JWE.encrypt(message, key: recipientPublic, algorithm: .ECDH_ES, encryption: .A256GCM).compactSerialization) != nil
                },
            ], goalToRaw: 0.9),
            Group(name: "JWE ECDH-ES A256GCM decrypt", cases: [
                Case(implementation: .raw("OpenSSL EVP")) {
                    CBenchRaw_ecdh_es_decrypt(rawRecipient, rawEphemeral, info, info.count, iv, sealed.ciphertext, sealed.ciphertext.count, &sealedTag, &out) == 0
                },
                Case(implementation: .tokenmint) { (try? JWE(parsing: token).decrypt(using: unbound)) != nil },
            ], goalToRaw: 0.9),
            Group(name: "JWE RSA-OAEP-256 A256GCM encrypt", cases: [
                Case(implementation: .raw("OpenSSL EVP")) {
                    var length = 512
                    return CBenchRaw_rsa_oaep_encrypt(rawRSAPublic, rsaAAD, rsaAAD.count, message, message.count, &ek, &length, &out, &tag) == 0
                },
                Case(implementation: .tokenmint) {
                    (try? JWE.encrypt(message, key: rsaPublic, algorithm: .RSA_OAEP_256, encryption: .A256GCM).compactSerialization) != nil
                },
            ], goalToRaw: 0.9),
            Group(name: "JWE RSA-OAEP-256 A256GCM decrypt", cases: [
                Case(implementation: .raw("OpenSSL EVP")) {
                    CBenchRaw_rsa_oaep_decrypt(rawRSA, encryptedKey, encryptedKey.count, rsaAAD, rsaAAD.count, iv, rsaSealed.ciphertext,
                                               rsaSealed.ciphertext.count, &rsaTag, &out) == 0
                },
                Case(implementation: .tokenmint) { (try? JWE(parsing: rsaToken).decrypt(using: rsaJWK)) != nil },
            ], goalToRaw: 0.9),
        ]
    }

    /// An ES256 issuer, ten disclosable claims, an ES256 holder.
    static func sdjwt() throws -> [Group] {
        let issuerKey = try JWK.generate(for: .ES256)
        let holderKey = try JWK.generate(for: .ES256)
        let issuer = try SDJWTIssuer(key: issuerKey)
        let now = Int64(Date().timeIntervalSince1970)
        var claims: JSONObject = ["iss": "https://issuer.example", "iat": .number(now), "exp": .number(now + 86_400)]
        let names = ["given_name", "family_name", "email", "phone_number", "birthdate", "nationality", "street_address", "locality", "postal_code", "country"]
        for name in names { claims.set(name, .string("value of \(name)")) }
        let pointers = names.map { "/" + $0 }
        let holder = try holderKey.publicKey.orThrow("no public half")
        let issued = try issuer.issue(claims, disclosable: pointers, holderKey: holder)
        let presentation = try issued.binding(to: holderKey, audience: "https://verifier.example", nonce: "n-0S6_WzA2Mj", issuedAt: now).serialization
        let verifier = SDJWTVerifier(issuerKeys: try JWKSet(try issuerKey.publicKey.orThrow("no public half")))
        guard (try? verifier.verify(presentation, audience: "https://verifier.example", nonce: "n-0S6_WzA2Mj"))?.claims.count == 14 else {
            throw BenchError("SD-JWT round trip")
        }
        // The raw side: the signatures alone (one ES256 sign to issue; two ES256 verifies for the issuer and the KB-JWT).
        let raw = try RawSigner(alg: .ES256, key: issuerKey)
        let input = Array(issued.issuerSignedJWT.utf8.prefix(while: { $0 != UInt8(ascii: ".") }))
            + Array(".".utf8) + Array(issued.issuerSignedJWT.split(separator: ".")[1].utf8)
        let signature = raw.sign(input)
        return [
            Group(name: "SD-JWT issue (10 disclosures)", cases: [
                Case(implementation: .raw("OpenSSL EVP, the signature alone")) { !raw.sign(input).isEmpty },  // DER: 70 to 72 bytes
                Case(implementation: .tokenmint) { (try? issuer.issue(claims, disclosable: pointers, holderKey: holder)) != nil },
            ], goalToRaw: nil),
            Group(name: "SD-JWT verify (10 disclosures, KB)", cases: [
                Case(implementation: .raw("OpenSSL EVP, 2 verifies alone")) { raw.verify(signature, input) && raw.verify(signature, input) },
                Case(implementation: .tokenmint) {
                    (try? verifier.verify(presentation, audience: "https://verifier.example", nonce: "n-0S6_WzA2Mj")) != nil
                },
            ], goalToRaw: nil),
        ]
    }

    /// A pool of fresh proofs, each checked once against the payment verifier's in-memory replay ledger.
    final class ProofPool: @unchecked Sendable {
        let proofs: [String]
        var next = 0
        var ledger = InMemoryStore()
        init(_ proofs: [String]) { self.proofs = proofs }

        /// The next proof; at the end of the pool the ledger starts afresh (as if every entry had expired).
        func take() -> String {
            if next == proofs.count {
                next = 0
                ledger = InMemoryStore()
            }
            defer { next += 1 }
            return proofs[next]
        }
    }

    static func dpop() throws -> [Group] {
        let key = try JWK.generate(for: .ES256)
        let url = "https://api.example/v1/payments"
        let accessToken = "eyJhbGciOiJFUzI1NiJ9.access-token-of-some-length.signature"
        let pool = ProofPool(try (0..<20_000).map { _ in try DPoP.proof(key: key, method: "POST", url: url, accessToken: accessToken) })
        let thumbprint = key.thumbprint()
        let verifier = DPoPVerifier()
        let raw = try RawSigner(alg: .ES256, key: key)
        let sample = pool.proofs[0]
        let input = Array(sample.utf8[..<sample.utf8.lastIndex(of: UInt8(ascii: "."))!])
        let signature = raw.sign(input)
        return [
            Group(name: "DPoP proof verify (replay ledger)", cases: [
                Case(implementation: .raw("OpenSSL EVP, the signature alone")) { raw.verify(signature, input) },
                Case(implementation: .tokenmint, async: {
                    let proof = pool.take()
                    let ledger = pool.ledger
                    return (try? await verifier.verify(proof, method: "POST", url: url, accessToken: accessToken, boundThumbprint: thumbprint,
                                                       replay: { (id, expires) async throws(TokenMintError) -> Bool in
                                                           try await ledger.recordOnce(id, expiresAt: expires)
                                                       })) != nil
                }),
            ], goalToRaw: nil, scales: false),
        ]
    }
}

extension Optional {
    func orThrow(_ why: String) throws -> Wrapped {
        guard let self else { throw BenchError(why) }
        return self
    }
}
