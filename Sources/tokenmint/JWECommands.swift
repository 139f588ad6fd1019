import ArgumentParser
import Foundation
import TokenMint

/// `tokenmint jwe encrypt|decrypt` (RFC 7516).
struct JWECommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwe", abstract: "Encrypt and decrypt JSON Web Encryption objects (RFC 7516).",
        subcommands: [Encrypt.self, Decrypt.self])

    /// The largest plaintext `encrypt` reads, and the largest JWE `decrypt` reads.
    static let plaintextLimit = 2 << 20
    static let jweLimit = 4 << 20

    /// A key file for JWE: a JWK, or a PEM key (whose default JWS `alg` is dropped).
    static func key(_ path: String) throws -> JWK {
        var key = try readJWK(path)
        // A PEM key comes with its type's default JWS alg, which would refuse every JWE algorithm.
        if let name = key.algorithmName, JWSAlgorithm(name: name) != nil, key.use == nil, key.keyOperations == nil,
            String(decoding: try readFile(path, limit: 1 << 20).prefix(16), as: UTF8.self).contains("-----BEGIN")
        {
            key.algorithmName = nil
        }
        return key
    }

    /// `--in FILE`, or standard input.
    static func input(_ path: String?, limit: Int) throws -> [UInt8] {
        if let path { return Array(try readFile(path, limit: limit)) }
        let data = (try? FileHandle.standardInput.read(upToCount: limit + 1)) ?? Data()
        guard data.count <= limit else { throw CLIError(message: "standard input is larger than \(limit) bytes") }
        return Array(data)
    }

    static func algorithm(_ name: String) throws -> JWEAlgorithm {
        guard let algorithm = JWEAlgorithm(name: name) else {
            throw ValidationError("unknown JWE alg \"\(SafeText.escaped(name))\" (one of \(JWEAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")); RSA1_5 and PBES2 are refused)")
        }
        return algorithm
    }

    static func encryption(_ name: String) throws -> JWEEncryption {
        guard let encryption = JWEEncryption(name: name) else {
            throw ValidationError("unknown JWE enc \"\(SafeText.escaped(name))\" (one of \(JWEEncryption.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return encryption
    }

    enum Serialization: String, ExpressibleByArgument, CaseIterable {
        case compact, flattened, general
    }

    struct Encrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Encrypt standard input (or --in) to a key; prints the JWE.",
            discussion: "For a nested JWT, sign it with `tokenmint jwt sign`, then encrypt it here with --cty JWT.")
        @Option(help: "The recipient's key: a public JWK or PEM key, or an oct JWK.") var key: String
        @Option(help: "The key management algorithm (default: the key's alg, else RSA-OAEP-256, ECDH-ES+A256KW or A*KW by key).") var alg: String?
        @Option(help: "The content encryption algorithm.") var enc: String = "A256GCM"
        @Option(name: .customLong("in"), help: "Read the plaintext from this file instead of standard input.") var input: String?
        @Option(help: "cty header (JWT for a nested token).") var cty: String?
        @Option(help: "typ header.") var typ: String?
        @Option(help: "kid header (default: the key's kid).") var kid: String?
        @Option(help: "compact, flattened or general (JSON).") var serialization: Serialization = .compact

        func run() throws {
            let key = try JWECommand.key(self.key)
            let algorithm = try alg.map(JWECommand.algorithm)
            let encryption = try JWECommand.encryption(enc)
            let plaintext = try JWECommand.input(input, limit: JWECommand.plaintextLimit)
            var header = JSONObject()
            if let cty { header.set("cty", .string(cty)) }
            if let typ { header.set("typ", .string(typ)) }
            if let kid { header.set("kid", .string(kid)) }
            let jwe = try JWE.encrypt(plaintext, key: key, algorithm: algorithm, encryption: encryption, header: header)
            switch serialization {
            case .compact: try Output.line(try jwe.compactSerialization)
            case .flattened: try Output.line(try jwe.flattenedJSON)
            case .general: try Output.line(jwe.generalJSON)
            }
        }
    }

    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decrypt a JWE (compact or JSON) from standard input (or --in); writes the plaintext's bytes.",
            discussion: "Only what the key admits is accepted: its alg when it has one. --alg and --enc narrow it further.")
        @Option(help: "The private key: a JWK or PEM key, or an oct JWK.") var key: String
        @Option(help: "Accept this key management algorithm (repeatable; default: any the key admits).") var alg: [String] = []
        @Option(help: "Accept this content encryption algorithm (repeatable; default: all).") var enc: [String] = []
        @Option(name: .customLong("in"), help: "Read the JWE from this file instead of standard input.") var input: String?

        func run() throws {
            let key = try JWECommand.key(self.key)
            var policy = JWEPolicy(maximumBytes: JWECommand.jweLimit)
            if !alg.isEmpty { policy.algorithms = Set(try alg.map(JWECommand.algorithm)) }
            if !enc.isEmpty { policy.encryptions = Set(try enc.map(JWECommand.encryption)) }
            let text = String(decoding: try JWECommand.input(input, limit: JWECommand.jweLimit), as: UTF8.self)
            let opened = try JWE(parsing: text, maximumBytes: JWECommand.jweLimit).decrypt(using: key, policy: policy)
            try Output.write(opened.plaintext)
        }
    }
}
