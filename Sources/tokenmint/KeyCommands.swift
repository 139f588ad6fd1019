import ArgumentParser
import Foundation
import TokenMint
import TokenMintVectors

/// A key read from a file: any of the kinds the CLI handles.
enum LoadedKey {
    case ed25519Private(Ed25519.PrivateKey)
    case ed25519Public(Ed25519.PublicKey)
    case ecPrivate(ECDSA.PrivateKey)
    case ecPublic(ECDSA.PublicKey)
    case rsaPrivate(RSA.PrivateKey)
    case rsaPublic(RSA.PublicKey)
    case hmac(HMACKey)

    /// Reads a PEM key (private or public) for `algorithm`, or a base64url HMAC key.
    static func read(_ path: String, for algorithm: Algorithm?) throws -> LoadedKey {
        let data = try readFile(path, limit: 1 << 20)
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let algorithm, algorithm.isHMAC {
            let bytes = try Base64URL.decode(text, padding: .either)
            return .hmac(try HMACKey(bytes, hash: algorithm.hash))
        }
        guard text.hasPrefix("-----BEGIN ") else { throw CLIError(message: "\(path): not a PEM key") }
        let isPrivate = text.hasPrefix("-----BEGIN PRIVATE KEY-----") || text.hasPrefix("-----BEGIN EC PRIVATE KEY-----")
            || text.hasPrefix("-----BEGIN RSA PRIVATE KEY-----")
        var lastError: (any Error)?
        let kinds: [() throws -> LoadedKey] = [
            { .ed25519Private(try Ed25519.PrivateKey(pemRepresentation: text)) },
            { .ecPrivate(try ECDSA.PrivateKey(pemRepresentation: text, curve: algorithm?.curve)) },
            { .rsaPrivate(try RSA.PrivateKey(pemRepresentation: text)) },
        ]
        let publicKinds: [() throws -> LoadedKey] = [
            { .ed25519Public(try Ed25519.PublicKey(pemRepresentation: text)) },
            { .ecPublic(try ECDSA.PublicKey(pemRepresentation: text, curve: algorithm?.curve)) },
            { .rsaPublic(try RSA.PublicKey(pemRepresentation: text)) },
        ]
        for make in isPrivate ? kinds : publicKinds {
            do { return try make() } catch { lastError = error }
        }
        throw CLIError(message: "\(path): not a usable key\(lastError.map { " (\($0))" } ?? "")")
    }

    var publicPEM: String {
        get throws {
            switch self {
            case .ed25519Private(let k): try k.publicKey.pemRepresentation
            case .ed25519Public(let k): try k.pemRepresentation
            case .ecPrivate(let k): try k.publicKey.pemRepresentation
            case .ecPublic(let k): try k.pemRepresentation
            case .rsaPrivate(let k): try k.publicKey.pemRepresentation
            case .rsaPublic(let k): try k.pemRepresentation
            case .hmac: throw CLIError(message: "an HMAC key has no public half")
            }
        }
    }
}

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate a key: PKCS#8 PEM, or base64url for HMAC.")

    @Option(help: "EdDSA, ES256, ES384, ES512, RS256…RS512, PS256…PS512, HS256…HS512.")
    var alg: Algorithm

    @Option(help: "RSA modulus size (default 2048 for RS256/PS256, 3072 for *384, 4096 for *512).")
    var bits: Int?

    @Option(help: "Write the key to FILE (mode 0600) instead of stdout.")
    var out: String?

    @Flag(help: "Write a private JWK (JSON) instead of PEM.")
    var jwk = false

    @Option(help: "With --jwk: the kid (default: the RFC 7638 thumbprint).")
    var kid: String?

    func run() throws {
        if bits != nil, alg.rsaPadding == nil { throw ValidationError("--bits applies to RSA only") }
        if kid != nil, !jwk { throw ValidationError("--kid applies to --jwk") }
        if jwk {
            guard let jose = JWSAlgorithm(name: alg.rawValue) else { throw CLIError(message: "no JOSE name for \(alg)") }
            var key: JWK
            if let bits, jose.keyType == .rsa {
                key = JWK(try RSA.PrivateKey(bits: bits), algorithm: jose)
            } else {
                key = try JWK.generate(for: jose)
            }
            key.keyID = kid ?? key.thumbprint()
            try writeOutput(key.json + "\n", to: out)
            return
        }
        let pem: String
        switch alg {
        case .EdDSA:
            pem = try Ed25519.PrivateKey().pemRepresentation
        case .ES256, .ES384, .ES512:
            pem = try ECDSA.PrivateKey(curve: alg.curve ?? .p256).pemRepresentation
        case .RS256, .PS256, .RS384, .PS384, .RS512, .PS512:
            let fallback = [HashFunction.sha256: 2048, .sha384: 3072, .sha512: 4096][alg.hash] ?? 2048
            pem = try RSA.PrivateKey(bits: bits ?? fallback).pemRepresentation
        case .HS256, .HS384, .HS512:
            let key = try HMACKey(generatingFor: alg.hash)
            pem = key.bytes.withUnsafeBytes { Base64URL.encode($0) } + "\n"
        }
        try writeOutput(pem, to: out)
    }
}

struct Pubkey: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the SPKI PEM public key of a PEM key file.")

    @Argument(help: "A PEM private or public key.")
    var file: String

    func run() throws {
        try writeOutput(try LoadedKey.read(file, for: nil).publicPEM, to: nil)
    }
}

struct Sign: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sign a message; prints the signature as hex.")

    @Option(help: "The private key (PKCS#8/SEC1/PKCS#1 PEM, or base64url for HMAC).")
    var key: String

    @Option(help: "The algorithm.")
    var alg: Algorithm

    @Flag(help: "ECDSA: RFC 6979 deterministic nonce.")
    var deterministic = false

    @Flag(help: "ECDSA: DER signature instead of raw r‖s.")
    var der = false

    @OptionGroup var message: MessageOptions

    func run() throws {
        let bytes = try message.message()
        let signature: [UInt8]
        switch try LoadedKey.read(key, for: alg) {
        case .ed25519Private(let k) where alg == .EdDSA:
            signature = try k.signature(for: bytes)
        case .ecPrivate(let k) where alg.curve != nil:
            let s = try k.signature(for: bytes, hash: alg.hash, nonce: deterministic ? .deterministic : .random)
            signature = der ? s.derRepresentation : s.rawRepresentation
        case .rsaPrivate(let k):
            guard let padding = alg.rsaPadding else { throw CLIError(message: "an RSA key cannot sign \(alg)") }
            signature = try k.signature(for: bytes, hash: alg.hash, padding: padding)
        case .hmac(let k):
            signature = HMAC.authenticationCode(for: bytes, using: k)
        default:
            throw CLIError(message: "\(key) is not a private key for \(alg)")
        }
        print(Hex.encode(signature))
    }
}

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a signature: exit 0 valid, 1 invalid, 2 usage or input error.")

    @Option(help: "The key (private or public PEM, or base64url for HMAC).")
    var key: String

    @Option(help: "The algorithm.")
    var alg: Algorithm

    @Option(help: "The signature as hex.")
    var sig: String

    @Flag(help: "ECDSA: the signature is DER instead of raw r‖s.")
    var der = false

    @OptionGroup var message: MessageOptions

    func run() throws {
        let bytes = try message.message()
        let signature = try Hex.decode(sig.trimmingCharacters(in: .whitespacesAndNewlines))
        let valid: Bool
        switch try LoadedKey.read(key, for: alg) {
        case .ed25519Private(let k) where alg == .EdDSA:
            valid = k.publicKey.isValidSignature(signature, for: bytes)
        case .ed25519Public(let k) where alg == .EdDSA:
            valid = k.isValidSignature(signature, for: bytes)
        case .ecPrivate(let k) where alg.curve != nil:
            valid = Self.verify(k.publicKey, signature, bytes, der: der, hash: alg.hash)
        case .ecPublic(let k) where alg.curve != nil:
            valid = Self.verify(k, signature, bytes, der: der, hash: alg.hash)
        case .rsaPrivate(let k) where alg.rsaPadding != nil:
            valid = k.publicKey.isValidSignature(signature, for: bytes, hash: alg.hash, padding: alg.rsaPadding ?? .pkcs1v15)
        case .rsaPublic(let k) where alg.rsaPadding != nil:
            valid = k.isValidSignature(signature, for: bytes, hash: alg.hash, padding: alg.rsaPadding ?? .pkcs1v15)
        case .hmac(let k):
            valid = HMAC.isValidAuthenticationCode(signature, for: bytes, using: k)
        default:
            throw CLIError(message: "\(key) is not a key for \(alg)")
        }
        guard valid else { throw CLIError(message: "invalid signature", status: 1) }
        print("valid")
    }

    static func verify(_ key: ECDSA.PublicKey, _ signature: [UInt8], _ message: [UInt8], der: Bool, hash: HashFunction) -> Bool {
        let parsed = try? (der
            ? ECDSA.Signature(derRepresentation: signature, curve: key.curve)
            : ECDSA.Signature(rawRepresentation: signature, curve: key.curve))
        guard let parsed else { return false }
        return key.isValidSignature(parsed, for: message, hash: hash)
    }
}

struct Vectors: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run Wycheproof and TokenMint vector files; ends with `N passed, M failed`.")

    @Argument(help: "Vector files (JSON).")
    var files: [String]

    @Flag(help: "List every failed case, not only the first ten per file.")
    var verbose = false

    func run() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one vector file") }
        var passed = 0, failed = 0, accepted = 0, rejected = 0, broken = 0
        for file in files {
            do {
                let report = try VectorRunner.run(path: file)
                print(report.summary)
                for line in report.failures.prefix(verbose ? Int.max : 10) { print("  FAIL \(line)") }
                for line in report.exceptions { print("  EXCEPTION \(line)") }
                passed += report.passed
                failed += report.failed
                accepted += report.acceptableAccepted
                rejected += report.acceptableRejected
            } catch {
                print("ERROR \(error)")
                broken += 1
            }
        }
        if accepted + rejected > 0 { print("acceptable cases: \(accepted) accepted, \(rejected) rejected") }
        if broken > 0 { print("\(broken) file(s) could not be run") }
        print("\(passed) passed, \(failed + broken) failed")
        if failed + broken > 0 { throw ExitCode(1) }
    }
}
