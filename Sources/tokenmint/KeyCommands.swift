import ArgumentParser
import Foundation
import TokenMint
import TokenMintVectors

/// A key read from a file: any of the kinds the CLI handles.
enum LoadedKey {
    case ed25519Private(Ed25519.PrivateKey)
    case ed25519Public(Ed25519.PublicKey)
    case ed448Private(Ed448.PrivateKey)
    case ed448Public(Ed448.PublicKey)
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
            { .ed448Private(try Ed448.PrivateKey(pemRepresentation: text)) },
            { .ecPrivate(try ECDSA.PrivateKey(pemRepresentation: text, curve: algorithm?.curve)) },
            { .rsaPrivate(try RSA.PrivateKey(pemRepresentation: text)) },
        ]
        let publicKinds: [() throws -> LoadedKey] = [
            { .ed25519Public(try Ed25519.PublicKey(pemRepresentation: text)) },
            { .ed448Public(try Ed448.PublicKey(pemRepresentation: text)) },
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
            case .ed448Private(let k): try k.publicKey.pemRepresentation
            case .ed448Public(let k): try k.pemRepresentation
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

    @Option(help: "EdDSA (or Ed25519), Ed448, ES256, ES384, ES512, ES256K, RS256…RS512, PS256…PS512, HS256…HS512, ML-DSA-44/65/87 (with --jwk and the MLDSA trait).")
    var alg: Algorithm

    @Option(help: "RSA modulus size (default 2048 for RS256/PS256, 3072 for *384, 4096 for *512).")
    var bits: Int?

    @Option(help: "Write the key to FILE (mode 0600 from the first byte) instead of stdout.")
    var out: String?

    @Flag(help: "With --out: replace an existing file, or write through a symbolic link.")
    var force = false

    @Flag(help: "Write a private JWK (JSON) instead of PEM.")
    var jwk = false

    @Option(help: "With --jwk: the kid (default: the RFC 7638 thumbprint).")
    var kid: String?

    func run() throws {
        if bits != nil, alg.rsaPadding == nil { throw ValidationError("--bits applies to RSA only") }
        if kid != nil, !jwk { throw ValidationError("--kid applies to --jwk") }
        if let out { try OutputFile.check(out, kind: .secret, force: force) }
        if jwk {
            guard let jose = JWSAlgorithm(name: alg.rawValue) else { throw CLIError(message: "no JOSE name for \(alg)") }
            var key: JWK
            if let bits, jose.keyType == .rsa {
                key = JWK(try RSA.PrivateKey(bits: bits), algorithm: jose)
            } else {
                key = try JWK.generate(for: jose)
            }
            key.keyID = kid ?? key.thumbprint()
            try writeOutput(key.json + "\n", to: out, force: force)
            return
        }
        let pem: String
        switch alg {
        case .EdDSA, .Ed25519:
            pem = try Ed25519.PrivateKey().pemRepresentation
        case .Ed448:
            pem = try Ed448.PrivateKey().pemRepresentation
        case .ES256, .ES384, .ES512, .ES256K:
            pem = try ECDSA.PrivateKey(curve: alg.curve ?? .p256).pemRepresentation
        case .RS256, .PS256, .RS384, .PS384, .RS512, .PS512:
            let fallback = [HashFunction.sha256: 2048, .sha384: 3072, .sha512: 4096][alg.hash] ?? 2048
            pem = try RSA.PrivateKey(bits: bits ?? fallback).pemRepresentation
        case .HS256, .HS384, .HS512:
            let key = try HMACKey(generatingFor: alg.hash)
            pem = key.bytes.withUnsafeBytes { Base64URL.encode($0) } + "\n"
        case .MLDSA44, .MLDSA65, .MLDSA87:
            throw ValidationError("ML-DSA keys are written as AKP JWKs (RFC 9964): add --jwk")
        }
        try writeOutput(pem, to: out, force: force)
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
        case .ed25519Private(let k) where alg.isEd25519:
            signature = try k.signature(for: bytes)
        case .ed448Private(let k) where alg.isEd448:
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
        case .ed25519Private(let k) where alg.isEd25519:
            valid = k.publicKey.isValidSignature(signature, for: bytes)
        case .ed25519Public(let k) where alg.isEd25519:
            valid = k.isValidSignature(signature, for: bytes)
        case .ed448Private(let k) where alg.isEd448:
            valid = k.publicKey.isValidSignature(signature, for: bytes)
        case .ed448Public(let k) where alg.isEd448:
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
        abstract: "Run Wycheproof and TokenMint vector files; ends with `N passed, M failed`.",
        discussion: """
            With no files, runs every vector file the repository ships: the project's own Vectors/*.json and \
            the files in Vectors/wycheproof/ whose schema the runner supports (any other file is listed as \
            skipped). The folder is --dir if given, else Vectors/ under the current directory.
            """)

    @Argument(help: "Vector files (JSON). None: every shipped file in the Vectors folder.")
    var files: [String] = []

    @Option(help: "The repository's Vectors folder, for a run without file arguments (default: ./Vectors).")
    var dir: String?

    @Flag(help: "List every failed case, not only the first ten per file.")
    var verbose = false

    func run() throws {
        var paths = files
        if files.isEmpty {
            paths = try Self.shippedFiles(in: try vectorsFolder())
        } else if dir != nil {
            throw ValidationError("--dir is for a run without file arguments")
        }
        var passed = 0, failed = 0, accepted = 0, rejected = 0, broken = 0
        for file in paths {
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

    /// The folder a run without file arguments reads: `--dir`, else
    /// `Vectors/` under the current directory.
    func vectorsFolder() throws -> String {
        if let dir {
            guard Self.isFolder(dir) else { throw CLIError(message: "--dir \(dir): no such folder") }
            return dir
        }
        let here = (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent("Vectors")
        guard Self.isFolder(here) else {
            throw CLIError(message: "no vector files given and no Vectors folder in \(FileManager.default.currentDirectoryPath): "
                + "run from the repository root, pass --dir PATH/TO/Vectors, or name the files")
        }
        return here
    }

    /// The project's own `*.json` at the top of `folder`, then
    /// `wycheproof/*.json`: each file whose schema the runner supports, in
    /// name order. Any other file is printed as skipped. A file whose
    /// schema cannot be read at all is kept, so the run reports it.
    static func shippedFiles(in folder: String) throws -> [String] {
        let wycheproof = (folder as NSString).appendingPathComponent("wycheproof")
        guard isFolder(wycheproof) else {
            throw CLIError(message: "\(wycheproof): no such folder (the repository ships the Wycheproof files there)")
        }
        var result: [String] = []
        var skipped = 0
        for sub in [folder, wycheproof] {
            let names = try FileManager.default.contentsOfDirectory(atPath: sub).filter { $0.hasSuffix(".json") }.sorted()
            for name in names {
                let path = (sub as NSString).appendingPathComponent(name)
                if let found = Self.schema(of: path), !VectorRunner.schemas.contains(found) {
                    print("SKIP \(path): schema \"\(found)\" is not one the runner supports")
                    skipped += 1
                } else {
                    result.append(path)
                }
            }
        }
        guard !result.isEmpty else { throw CLIError(message: "\(folder): no vector files with a supported schema") }
        print("\(result.count) vector file(s) in \(folder)\(skipped > 0 ? ", \(skipped) skipped" : "")")
        return result
    }

    /// The file's `schema`, normalised as ``VectorRunner`` does (no `.json`
    /// suffix; pre-`_v1` names mapped to their `_v1` name), or nil when the
    /// file is not JSON with a string `schema`.
    static func schema(of path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let declared = object["schema"] as? String
        else { return nil }
        var name = declared.hasSuffix(".json") ? String(declared.dropLast(5)) : declared
        if !name.hasSuffix("_v1"), VectorRunner.schemas.contains(name + "_v1") { name += "_v1" }
        return name
    }

    static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
