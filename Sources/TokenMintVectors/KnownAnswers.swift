import TokenMintCore
import Foundation
import TokenMintCrypto

/// TokenMint's own known-answer files (`tokenmint_kat_v1`, described in
/// Vectors/README.md): deterministic algorithms checked byte-exact, and each
/// expected output also checked to verify.
enum KnownAnswers {
    struct File<Test: Decodable>: Decodable {
        var tests: [Test]
    }

    static func run(_ data: Data, algorithm: String, into report: inout VectorReport) throws {
        switch algorithm {
        case "Ed25519": try ed25519(data, into: &report)
        case "ECDSA-deterministic": try ecdsa(data, into: &report)
        case "HMAC": try hmac(data, into: &report)
        default: throw TokenMintError(.vectors.invalidFile, "unknown known-answer algorithm \(algorithm)")
        }
    }

    static func hex(_ text: String) throws -> [UInt8] { try VectorRunner.hex(text) }

    struct Ed25519Test: Decodable {
        var tcId: Int
        var comment: String, secretKey: String, publicKey: String, msg: String, sig: String
    }

    static func ed25519(_ data: Data, into report: inout VectorReport) throws {
        for test in try JSONDecoder().decode(File<Ed25519Test>.self, from: data).tests {
            let key = try Ed25519.PrivateKey(rawRepresentation: hex(test.secretKey))
            let msg = try hex(test.msg)
            let expected = try hex(test.sig)
            let ok = try key.publicKey.rawRepresentation == hex(test.publicKey)
                && key.signature(for: msg) == expected
                && key.publicKey.isValidSignature(expected, for: msg)
            report.record(test.tcId, expected: "valid", accepted: ok, comment: test.comment)
        }
    }

    struct ECDSATest: Decodable {
        var tcId: Int
        var comment: String, curve: String, hash: String, privateKey: String, publicKeyX: String, publicKeyY: String, msg: String, r: String, s: String
    }

    static func ecdsa(_ data: Data, into report: inout VectorReport) throws {
        for test in try JSONDecoder().decode(File<ECDSATest>.self, from: data).tests {
            guard let curve = ECDSA.Curve(name: test.curve), let hash = HashFunction(name: test.hash) else {
                throw TokenMintError(.vectors.invalidFile, "unknown curve or hash in tcId \(test.tcId)")
            }
            let key = try ECDSA.PrivateKey(rawRepresentation: hex(test.privateKey), curve: curve)
            let msg = try hex(test.msg)
            let signature = try key.signature(for: msg, hash: hash, nonce: .deterministic)
            let ok = try key.publicKey.x == hex(test.publicKeyX) && key.publicKey.y == hex(test.publicKeyY)
                && signature.r == hex(test.r) && signature.s == hex(test.s)
                && key.publicKey.isValidSignature(signature, for: msg, hash: hash)
            report.record(test.tcId, expected: "valid", accepted: ok, comment: test.comment)
        }
    }

    struct HMACTest: Decodable {
        var tcId: Int
        var comment: String, hash: String, key: String, msg: String, tag: String
        var truncatedBits: Int
    }

    static func hmac(_ data: Data, into report: inout VectorReport) throws {
        for test in try JSONDecoder().decode(File<HMACTest>.self, from: data).tests {
            guard let hash = HashFunction(name: test.hash) else {
                throw TokenMintError(.vectors.invalidFile, "unknown hash in tcId \(test.tcId)")
            }
            let key = try HMACKey(allowingShortKey: hex(test.key), hash: hash)
            let expected = try hex(test.tag)
            let msg = try hex(test.msg)
            let full = HMAC.authenticationCode(for: msg, using: key)
            let length = test.truncatedBits > 0 ? test.truncatedBits / 8 : hash.digestSize
            let ok = expected.count == length && Array(full.prefix(length)) == expected
                && HMAC.isValidAuthenticationCode(expected, for: msg, using: key, minimumLength: length)
            report.record(test.tcId, expected: "valid", accepted: ok, comment: test.comment)
        }
    }
}
