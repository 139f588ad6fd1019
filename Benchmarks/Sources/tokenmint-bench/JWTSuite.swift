import TokenMintCore
import CBenchRaw
import Crypto
import Foundation
import JWTKit
import TokenMintCrypto
import TokenMintJOSE

/// JWT mint and verify of a typical 8-claim token (iss, sub, aud, exp, iat,
/// jti, azp, scope): TokenMint next to the raw signature of the same
/// algorithm over a signing input of the same size, and next to jwt-kit 5.
enum JWTSuite {
    static let now = Int64(Date().timeIntervalSince1970)

    static var claims: JWTClaims {
        var c = JWTClaims(
            issuer: "https://issuer.example", subject: "device-5c2a8b0e", audience: ["cash-desk"],
            expiration: now + 3600, issuedAt: now, jwtID: "1c6f3a0b9d2e4f5a", authorizedParty: "pos-app")
        c.additional.set("scope", "pay refund")
        return c
    }

    struct Payload: JWTPayload {
        var iss: IssuerClaim
        var sub: SubjectClaim
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var iat: IssuedAtClaim
        var jti: IDClaim
        var azp: String
        var scope: String

        func verify(using algorithm: some JWTAlgorithm) async throws {
            try exp.verifyNotExpired()
            try aud.verifyIntendedAudience(includes: "cash-desk")
            guard iss.value == "https://issuer.example" else { throw BenchError("iss") }
        }
    }

    static var payload: Payload {
        Payload(
            iss: "https://issuer.example", sub: "device-5c2a8b0e", aud: AudienceClaim(value: ["cash-desk"]),
            exp: ExpirationClaim(value: Date(timeIntervalSince1970: TimeInterval(now + 3600))),
            iat: IssuedAtClaim(value: Date(timeIntervalSince1970: TimeInterval(now))), jti: "1c6f3a0b9d2e4f5a",
            azp: "pos-app", scope: "pay refund")
    }

    static func validation() -> JWTValidation {
        var v = JWTValidation()
        v.issuer = "https://issuer.example"
        v.audience = "cash-desk"
        return v
    }

    /// Runs an async setup step from synchronous code.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        guard let result = box.result else { throw BenchError("async set-up did not finish") }
        return try result.get()
    }

    static func groups() throws -> [Group] {
        var groups: [Group] = []
        for alg in [JWSAlgorithm.EdDSA, .ES256, .RS256, .PS256, .HS256] {
            groups += try makeGroups(for: alg)
        }
        return groups + (try parts()) + (try cached())
    }

    /// A resource server seeing the same ES256 access token again, with the
    /// optional verified-token cache (issue goal: ≥ 10× the cold verify).
    /// The "raw" column here is TokenMint's own cold verify.
    static func cached() throws -> [Group] {
        let key = try TokenMintJOSE.JWK.generate(for: .ES256, keyID: "bench")
        let token = try JWTSigner(key: key).sign(claims)
        let cold = try JWTVerifier(keys: JWKSet(keys: [key]), validation: validation())
        var warm = cold
        warm.cache = try VerifiedTokenCache()
        guard (try? warm.verify(token)) != nil, (try? warm.verify(token)) != nil else { throw BenchError("cached verify") }
        return [
            Group(name: "JWT ES256 verify, repeated token", cases: [
                Case(implementation: .raw("TokenMint, no cache")) { (try? cold.verify(token)) != nil },
                Case(implementation: .tokenmint) { (try? warm.verify(token)) != nil },
            ], goalToRaw: 10),
        ]
    }

    /// What a JWT costs besides the signature: TokenMint's own steps on the
    /// same 8-claim token, measured alone to explain the mint/verify ratios.
    static func parts() throws -> [Group] {
        let claimsSet = claims
        let json = claimsSet.jsonBytes
        let signature = [UInt8](repeating: 7, count: 64)
        let encoded = Base64URL.encode(json)
        return [
            Group(name: "JWT part: claims → JSON", cases: [
                Case(implementation: .tokenmint) { claimsSet.jsonBytes.count > 100 },
            ], goalToRaw: nil),
            Group(name: "JWT part: base64url claims + sig", cases: [
                Case(implementation: .raw("libsodium bin2base64")) {
                    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 512) { out in
                        CBenchRaw_base64url(json, json.count, out.baseAddress, 512) == 0
                            && CBenchRaw_base64url(signature, signature.count, out.baseAddress, 512) == 0
                    }
                },
                Case(implementation: .tokenmint) { Base64URL.encode(json).utf8.count + Base64URL.encode(signature).utf8.count > 100 },
            ], goalToRaw: nil, scales: false),
            Group(name: "JWT part: decode + parse claims", cases: [
                Case(implementation: .tokenmint) {
                    guard let bytes = try? Base64URL.decode(encoded), let object = try? JSONParser.parse(bytes).objectValue else { return false }
                    return (try? JWTClaims(object: object)) != nil
                },
            ], goalToRaw: nil),
        ]
    }

    static func makeGroups(for alg: JWSAlgorithm) throws -> [Group] {
        let key = try TokenMintJOSE.JWK.generate(for: alg, keyID: "bench")
        let signer = try JWTSigner(key: key)
        let verifier = try JWTVerifier(keys: JWKSet(keys: [key]), validation: validation())
        let token = try signer.sign(claims)
        let signingInput = Array(token.utf8[..<token.utf8.lastIndex(of: UInt8(ascii: "."))!])
        let signatureBytes = try Base64URL.decode(String(token.split(separator: ".")[2]))

        // jwt-kit with the same key material.
        let keys = JWTKeyCollection()
        let pem = alg.keyType == .oct ? "" : try key.pemRepresentation()
        switch alg {
        case .EdDSA:
            let object = key.jsonObject()
            let x = object["x"]?.stringValue ?? "", d = object["d"]?.stringValue ?? ""
            _ = x
            let k = try EdDSA.PrivateKey(d: d, curve: .ed25519)
            _ = try blocking { await keys.add(eddsa: k, kid: "bench") }
        case .ES256:
            let k = try ES256PrivateKey(pem: pem)
            _ = try blocking { await keys.add(ecdsa: k, kid: "bench") }
        case .RS256:
            let k = try Insecure.RSA.PrivateKey(pem: pem)
            _ = try blocking { await keys.add(rsa: k, digestAlgorithm: .sha256, kid: "bench") }
        case .PS256:
            let k = try Insecure.RSA.PrivateKey(pem: pem)
            _ = try blocking { await keys.add(pss: k, digestAlgorithm: .sha256, kid: "bench") }
        default:
            let secret = try Base64URL.decode(key.jsonObject()["k"]?.stringValue ?? "")
            _ = try blocking { await keys.add(hmac: JWTKit.HMACKey(from: secret), digestAlgorithm: .sha256, kid: "bench") }
        }
        let kitToken = try blocking { try await keys.sign(payload, kid: "bench") }
        // Both libraries accept each other's tokens (a sanity check of the comparison).
        guard (try? verifier.verify(kitToken)) != nil else { throw BenchError("TokenMint rejects jwt-kit's \(alg) token") }
        _ = try blocking { try await keys.verify(token, as: Payload.self) }

        // The raw primitive over a signing input of the same size.
        let raw = try RawSigner(alg: alg, key: key)
        let rawSignature = raw.sign(signingInput)
        let claimsSet = claims
        let sample = payload

        return [
            Group(name: "JWT \(alg) mint", cases: [
                Case(implementation: .raw(raw.name)) { raw.sign(signingInput).count > 0 },
                Case(implementation: .tokenmint) { (try? signer.sign(claimsSet)) != nil },
                Case(implementation: .peer("jwt-kit 5")) { (try? await keys.sign(sample, kid: "bench")) != nil },
            ], goalToRaw: alg == .HS256 ? 0.7 : alg == .EdDSA || alg == .ES256 ? 0.95 : 0.9),
            Group(name: "JWT \(alg) verify", cases: [
                Case(implementation: .raw(raw.name)) { raw.verify(rawSignature.isEmpty ? signatureBytes : rawSignature, signingInput) },
                Case(implementation: .tokenmint) { (try? verifier.verify(token)) != nil },
                Case(implementation: .peer("jwt-kit 5")) { (try? await keys.verify(token, as: Payload.self)) != nil },
            ], goalToRaw: alg == .HS256 ? 0.6 : 0.95),
        ]
    }
}

/// The raw C call behind each JWS algorithm.
struct RawSigner {
    let name: String
    let sign: ([UInt8]) -> [UInt8]
    let verify: ([UInt8], [UInt8]) -> Bool

    init(alg: JWSAlgorithm, key: TokenMintJOSE.JWK) throws {
        switch alg {
        case .EdDSA:
            let seed = try Base64URL.decode(key.jsonObject()["d"]?.stringValue ?? "")
            var pk = [UInt8](repeating: 0, count: 32), sk = [UInt8](repeating: 0, count: 64)
            CBenchRaw_ed25519_seed_keypair(&pk, &sk, seed)
            name = "libsodium"
            sign = { m in
                var sig = [UInt8](repeating: 0, count: 64)
                _ = CBenchRaw_ed25519_sign(&sig, m, m.count, sk)
                return sig
            }
            verify = { s, m in CBenchRaw_ed25519_verify(s, m, m.count, pk) == 0 }
        case .HS256:
            let secret = try Base64URL.decode(key.jsonObject()["k"]?.stringValue ?? "")
            name = "OpenSSL HMAC()"
            sign = { m in
                var out = [UInt8](repeating: 0, count: 32)
                _ = CBenchRaw_hmac_sha256(secret, secret.count, m, m.count, &out)
                return out
            }
            verify = { s, m in
                var out = [UInt8](repeating: 0, count: 32)
                _ = CBenchRaw_hmac_sha256(secret, secret.count, m, m.count, &out)
                return out == s
            }
        default:
            let pem = try key.pemRepresentation()
            let der: [UInt8]
            let publicDER: [UInt8]
            if alg == .ES256 {
                let k = try ECDSA.PrivateKey(pemRepresentation: pem)
                der = try k.derRepresentation.unsafeCopy
                publicDER = try k.publicKey.derRepresentation
            } else {
                let k = try RSA.PrivateKey(pemRepresentation: pem)
                der = try k.derRepresentation.unsafeCopy
                publicDER = try k.publicKey.derRepresentation
            }
            guard let privateHandle = CBenchRaw_private_key(der, der.count),
                let publicHandle = CBenchRaw_public_key(publicDER, publicDER.count)
            else { throw BenchError("cannot load \(alg) key in C") }
            let padding: Int32 = alg == .RS256 ? 1 : alg == .PS256 ? 6 : 0
            name = "OpenSSL EVP"
            // ES256 here signs DER (what EVP produces); verification gets DER too.
            sign = { m in
                var sig = [UInt8](repeating: 0, count: 512)
                var length = sig.count
                _ = CBenchRaw_sign(privateHandle, "SHA2-256", padding, m, m.count, &sig, &length)
                return Array(sig.prefix(length))
            }
            verify = { s, m in CBenchRaw_verify(publicHandle, "SHA2-256", padding, s, s.count, m, m.count) == 0 }
        }
    }
}

final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
