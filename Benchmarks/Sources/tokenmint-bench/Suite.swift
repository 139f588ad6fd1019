import CBenchRaw
import Crypto
import _CryptoExtras
import Foundation
import TokenMintCrypto

/// The groups measured in this release: every TokenMint signer and verifier
/// next to the raw C call it wraps and, where it has the algorithm, swift-crypto.
enum Suite {
    static let message = Array("02/5c2a8b0e-1d4f-4f8e-9a51-2b7c3d9e0f11/1763776800/payment-token-benchmark-message".utf8)

    static func groups() throws -> [Group] {
        var groups: [Group] = []
        groups += try ed25519()
        for (curve, name, md, hash) in [
            (ECDSA.Curve.p256, "P-256", "SHA2-256", TokenMintCrypto.HashFunction.sha256),
            (.p384, "P-384", "SHA2-384", .sha384), (.p521, "P-521", "SHA2-512", .sha512),
        ] {
            groups += try ecdsa(curve, name: name, md: md, hash: hash)
        }
        groups += try rsa()
        groups += hmac()
        groups += try JWTSuite.groups()
        groups += try AztecSuite.groups()
        groups += try PaySuite.groups()
        groups += try FIDO2Suite.groups()
        groups += try JOSESuite.groups()
        return groups
    }

    static func ed25519() throws -> [Group] {
        let seed = SecureRandom.bytes(count: 32)
        let key = try Ed25519.PrivateKey(rawRepresentation: seed)
        var pk = [UInt8](repeating: 0, count: 32)
        var sk = [UInt8](repeating: 0, count: 64)
        CBenchRaw_ed25519_seed_keypair(&pk, &sk, seed)
        let peer = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        let signature = try key.signature(for: message)
        let peerSignature = try peer.signature(for: message)
        var out = [UInt8](repeating: 0, count: 64)
        let msg = message
        return [
            Group(name: "Ed25519 sign", cases: [
                Case(implementation: .raw("libsodium")) { CBenchRaw_ed25519_sign(&out, msg, msg.count, sk) == 0 },
                Case(implementation: .tokenmint) { msg.withUnsafeBytes { key.signature(for: $0).count == 64 } },
                Case(implementation: .peer("swift-crypto")) { (try? peer.signature(for: msg))?.count == 64 },
            ], rawParallel: { n, t in CBenchRaw_parallel_sign(0, nil, nil, 0, msg, msg.count, sk, sk.count, n, Int32(t)) }),
            Group(name: "Ed25519 verify", cases: [
                Case(implementation: .raw("libsodium")) { CBenchRaw_ed25519_verify(signature, msg, msg.count, pk) == 0 },
                Case(implementation: .tokenmint) { key.publicKey.isValidSignature(signature, for: msg) },
                Case(implementation: .peer("swift-crypto")) { peer.publicKey.isValidSignature(peerSignature, for: msg) },
            ]),
        ]
    }

    static func ecdsa(_ curve: ECDSA.Curve, name: String, md: String, hash: TokenMintCrypto.HashFunction) throws -> [Group] {
        // The scalar from libsodium's generator, which the instruction gate fixes: the same key on every run.
        var scalar = SecureRandom.bytes(count: curve.scalarByteCount)
        scalar[0] &= curve == .p521 ? 0x01 : 0x7f  // below the curve's order
        let key = try ECDSA.PrivateKey(rawRepresentation: scalar, curve: curve)
        let der = try key.derRepresentation.unsafeCopy
        let publicDER = try key.publicKey.derRepresentation
        guard let raw = CBenchRaw_private_key(der, der.count), let rawPublic = CBenchRaw_public_key(publicDER, publicDER.count)
        else { throw BenchError("cannot load the \(name) key in C") }
        let signature = try key.signature(for: message)
        let derSignature = signature.derRepresentation
        var out = [UInt8](repeating: 0, count: 160)
        let msg = message
        // A valid nonce for the floor row: any value in [1, n−1] costs the same.
        let fixedK = [UInt8](repeating: 0x5A, count: curve.scalarByteCount - 1)
        let peerSign: () -> Bool
        let peerVerify: () -> Bool
        switch curve {
        case .p256:
            let peer = try P256.Signing.PrivateKey(derRepresentation: der)
            let peerSig = try P256.Signing.ECDSASignature(derRepresentation: derSignature)
            peerSign = { (try? peer.signature(for: msg)) != nil }
            peerVerify = { peer.publicKey.isValidSignature(peerSig, for: msg) }
        case .p384:
            let peer = try P384.Signing.PrivateKey(derRepresentation: der)
            let peerSig = try P384.Signing.ECDSASignature(derRepresentation: derSignature)
            peerSign = { (try? peer.signature(for: msg)) != nil }
            peerVerify = { peer.publicKey.isValidSignature(peerSig, for: msg) }
        default:
            let peer = try P521.Signing.PrivateKey(derRepresentation: der)
            let peerSig = try P521.Signing.ECDSASignature(derRepresentation: derSignature)
            peerSign = { (try? peer.signature(for: msg)) != nil }
            peerVerify = { peer.publicKey.isValidSignature(peerSig, for: msg) }
        }
        return [
            Group(name: "ECDSA \(name) sign", cases: [
                Case(implementation: .raw("OpenSSL EVP")) {
                    var length = out.count
                    return CBenchRaw_sign(raw, md, 0, msg, msg.count, &out, &length) == 0
                },
                Case(implementation: .tokenmint) { (try? key.signature(for: msg, hash: hash)) != nil },
                Case(implementation: .peer("swift-crypto")) { peerSign() },
            ], rawParallel: { n, t in CBenchRaw_parallel_sign(1, raw, md, 0, msg, msg.count, nil, 0, n, Int32(t)) }),
            Group(name: "ECDSA \(name) sign RFC 6979", cases: [
                Case(implementation: .raw("OpenSSL EVP, random k")) {
                    var length = out.count
                    return CBenchRaw_sign(raw, md, 0, msg, msg.count, &out, &length) == 0
                },
                Case(implementation: .raw("OpenSSL, k given: the floor")) {
                    CBenchRaw_ecdsa_sign_given_k(raw, md, msg, msg.count, fixedK, fixedK.count, &out, 2 * curve.scalarByteCount) == 0
                },
                Case(implementation: .tokenmint) { (try? key.signature(for: msg, hash: hash, nonce: .deterministic)) != nil },
            ], goalToRaw: nil, rawParallel: { n, t in CBenchRaw_parallel_sign(1, raw, md, 0, msg, msg.count, nil, 0, n, Int32(t)) }),
            Group(name: "ECDSA \(name) verify", cases: [
                Case(implementation: .raw("OpenSSL EVP")) {
                    CBenchRaw_verify(rawPublic, md, 0, derSignature, derSignature.count, msg, msg.count) == 0
                },
                Case(implementation: .tokenmint) { key.publicKey.isValidSignature(signature, for: msg, hash: hash) },
                Case(implementation: .peer("swift-crypto")) { peerVerify() },
            ]),
        ]
    }

    static func rsa() throws -> [Group] {
        let key = try RSA.PrivateKey(bits: 2048)
        let der = try key.derRepresentation.unsafeCopy
        let publicDER = try key.publicKey.derRepresentation
        guard let raw = CBenchRaw_private_key(der, der.count), let rawPublic = CBenchRaw_public_key(publicDER, publicDER.count)
        else { throw BenchError("cannot load the RSA key in C") }
        let peer = try _RSA.Signing.PrivateKey(derRepresentation: der)
        let msg = message
        var out = [UInt8](repeating: 0, count: 512)
        var groups: [Group] = []
        for (label, padding, rawPadding, peerPadding) in [
            ("PKCS#1 v1.5", RSA.Padding.pkcs1v15, Int32(1), _RSA.Signing.Padding.insecurePKCS1v1_5),
            ("PSS", .pss, Int32(6), .PSS),
        ] {
            let signature = try key.signature(for: msg, padding: padding)
            let peerSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            groups.append(Group(name: "RSA-2048 \(label) sign", cases: [
                Case(implementation: .raw("OpenSSL EVP")) {
                    var length = out.count
                    return CBenchRaw_sign(raw, "SHA2-256", rawPadding, msg, msg.count, &out, &length) == 0
                },
                Case(implementation: .tokenmint) { (try? key.signature(for: msg, padding: padding)) != nil },
                Case(implementation: .peer("swift-crypto")) { (try? peer.signature(for: msg, padding: peerPadding)) != nil },
            ], rawParallel: { n, t in CBenchRaw_parallel_sign(1, raw, "SHA2-256", rawPadding, msg, msg.count, nil, 0, n, Int32(t)) }))
            groups.append(Group(name: "RSA-2048 \(label) verify", cases: [
                Case(implementation: .raw("OpenSSL EVP")) {
                    CBenchRaw_verify(rawPublic, "SHA2-256", rawPadding, signature, signature.count, msg, msg.count) == 0
                },
                Case(implementation: .tokenmint) { key.publicKey.isValidSignature(signature, for: msg, padding: padding) },
                Case(implementation: .peer("swift-crypto")) {
                    peer.publicKey.isValidSignature(peerSignature, for: msg, padding: peerPadding)
                },
            ]))
        }
        return groups
    }

    static func hmac() -> [Group] {
        let keyBytes = SecureRandom.bytes(count: 32)
        // 32 random bytes always make a valid HS256 key.
        guard let key = try? HMACKey(keyBytes, hash: .sha256) else { return [] }
        let peerKey = SymmetricKey(data: keyBytes)
        let msg = message
        var out = [UInt8](repeating: 0, count: 32)
        let tag = TokenMintCrypto.HMAC.authenticationCode(for: msg, using: key)
        return [
            Group(name: "HMAC-SHA-256", cases: [
                Case(implementation: .raw("OpenSSL HMAC()")) { CBenchRaw_hmac_sha256(keyBytes, 32, msg, msg.count, &out) == 0 },
                Case(implementation: .tokenmint) { TokenMintCrypto.HMAC.authenticationCode(for: msg, using: key).count == 32 },
                Case(implementation: .peer("swift-crypto")) {
                    Crypto.HMAC<SHA256>.authenticationCode(for: msg, using: peerKey).byteCount == 32
                },
            ], rawParallel: { n, t in CBenchRaw_parallel_sign(2, nil, nil, 0, msg, msg.count, keyBytes, keyBytes.count, n, Int32(t)) }),
            Group(name: "HMAC-SHA-256 verify", cases: [
                Case(implementation: .raw("OpenSSL HMAC()")) {
                    CBenchRaw_hmac_sha256(keyBytes, 32, msg, msg.count, &out) == 0 && out == tag
                },
                Case(implementation: .tokenmint) { TokenMintCrypto.HMAC.isValidAuthenticationCode(tag, for: msg, using: key) },
                Case(implementation: .peer("swift-crypto")) {
                    Crypto.HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: msg, using: peerKey)
                },
            ]),
        ]
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
