import ArgumentParser
import Foundation
import TokenMint

/// Reads a key file as a JWK: JWK JSON, or a PEM key.
func readJWK(_ path: String, algorithm: JWSAlgorithm? = nil, keyID: String? = nil) throws -> JWK {
    let text = String(decoding: try readFile(path, limit: 1 << 20), as: UTF8.self)
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    if trimmed.hasPrefix("{") {
        var key = try JWK(json: trimmed)
        if let keyID { key.keyID = keyID }
        return key
    }
    if trimmed.hasPrefix("-----BEGIN ") { return try JWK(pem: trimmed, keyID: keyID, algorithm: algorithm) }
    throw CLIError(message: "\(path): neither a JWK (JSON) nor a PEM key")
}

func prettyJSON(_ object: JSONObject) -> String {
    let data = Data(JSONWriter.encode(.object(object)))
    guard let any = try? JSONSerialization.jsonObject(with: data),
        let pretty = try? JSONSerialization.data(withJSONObject: any, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    else { return String(decoding: data, as: UTF8.self) }
    return String(decoding: pretty, as: UTF8.self)
}

struct JWKCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwk", abstract: "Inspect JSON Web Keys.", subcommands: [Public.self, Thumbprint.self])

    struct Public: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the public JWK of a JWK or PEM key file.")
        @Argument(help: "A JWK (JSON) or PEM key.") var file: String

        func run() throws {
            let key = try readJWK(file)
            guard let publicKey = key.publicKey else { throw CLIError(message: "an oct key has no public half") }
            print(publicKey.json)
        }
    }

    struct Thumbprint: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the RFC 7638 SHA-256 thumbprint of a key.")
        @Argument(help: "A JWK (JSON) or PEM key.") var file: String

        func run() throws { print(try readJWK(file).thumbprint()) }
    }
}

struct JWTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwt", abstract: "Mint, verify and decode JSON Web Tokens.",
        subcommands: [SignJWT.self, VerifyJWT.self, DecodeJWT.self])

    struct SignJWT: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sign", abstract: "Mint a JWT; prints the compact token.")

        @Option(help: "The signing key: a private JWK (JSON) or PEM key.") var key: String
        @Option(help: "The algorithm (default: the key's alg, or its type's default).") var alg: Algorithm?
        @Option(help: "kid header (default: the key's kid).") var kid: String?
        @Option(help: "typ header.") var typ: String = "JWT"
        @Option(help: "Claims as a JSON object.") var claims: String = "{}"
        @Option(help: "Lifetime in seconds: sets iat to now and exp to now + ttl.") var ttl: Int64?
        @Option(help: "iss claim.") var iss: String?
        @Option(help: "sub claim.") var sub: String?
        @Option(help: "aud claim.") var aud: String?
        @Option(help: "azp claim.") var azp: String?
        @Option(help: "Current time as seconds since the epoch (for reproducible tokens).") var now: Int64?
        @Flag(help: "ECDSA: RFC 6979 deterministic signatures.") var deterministic = false

        func run() throws {
            let jose = try alg.map { a throws -> JWSAlgorithm in
                guard let j = JWSAlgorithm(name: a.rawValue) else { throw CLIError(message: "no JOSE algorithm \(a)") }
                return j
            }
            let jwk = try readJWK(key, algorithm: jose)
            guard let object = try JSONParser.parse(Array(claims.utf8)).objectValue else {
                throw CLIError(message: "--claims must be a JSON object")
            }
            var set = try JWTClaims(object: object)
            if let iss { set.issuer = iss }
            if let sub { set.subject = sub }
            if let aud { set.audience = [aud] }
            if let azp { set.authorizedParty = azp }
            if let ttl {
                // Ten years at most: a lifetime past that is a typo or an attack on the sum.
                guard (1...315_360_000).contains(ttl) else { throw CLIError(message: "--ttl is 1 to 315360000 seconds (ten years)") }
                let time = now ?? Int64(Date().timeIntervalSince1970)
                let (expiration, overflow) = time.addingReportingOverflow(ttl)
                guard !overflow else { throw CLIError(message: "--now + --ttl is past the largest time a JWT can carry") }
                set.issuedAt = time
                set.expiration = expiration
            }
            let signer = try JWTSigner(key: jwk, algorithm: jose, type: typ, keyID: kid,
                                       ecdsaNonce: deterministic ? .deterministic : .random)
            print(try signer.sign(set))
        }
    }

    struct VerifyJWT: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify", abstract: "Verify a JWT: prints the claims and exits 0, or exits 1 with the reason.")

        @Option(help: "A JWK (JSON) or PEM key.") var key: String?
        @Option(help: "A JWK Set file ({\"keys\":[…]}).") var jwks: String?
        @Option(help: "Expected iss.") var iss: String?
        @Option(help: "This verifier's audience (required when the token names audiences).") var aud: String?
        @Option(help: "Expected azp.") var azp: String?
        @Option(help: "Expected typ.") var typ: String?
        @Option(help: "Clock skew allowed, in seconds (0 to 600).") var leeway: Int64 = 0
        @Option(help: "Current time as seconds since the epoch.") var now: Int64?
        @Flag(help: "Do not require exp.") var noExp = false
        @Argument(help: "The compact JWT.") var token: String

        func validate() throws {
            guard (key == nil) != (jwks == nil) else { throw ValidationError("give exactly one of --key or --jwks") }
        }

        func run() throws {
            let keys: JWKSet
            if let jwks {
                keys = try JWKSet(json: String(decoding: try readFile(jwks, limit: 1 << 20), as: UTF8.self))
            } else {
                keys = try JWKSet(readJWK(key ?? ""))
            }
            var validation = JWTValidation()
            validation.issuer = iss
            validation.audience = aud
            validation.authorizedParty = azp
            validation.type = typ
            validation.leeway = leeway
            if noExp { validation.requiredClaims = [] }
            if let now { validation.clock = { now } }
            try refusing {
                let verified = try JWTVerifier(keys: keys, validation: validation).verify(token.trimmingCharacters(in: .whitespacesAndNewlines))
                print(prettyJSON(verified.claims.jsonObject))
            }
        }
    }

    struct DecodeJWT: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decode", abstract: "Show a JWT's header and claims WITHOUT verifying anything.")
        @Argument(help: "The compact JWT.") var token: String

        func run() throws {
            let (header, claims) = try UnverifiedJWT.decode(token.trimmingCharacters(in: .whitespacesAndNewlines))
            print("UNVERIFIED — the signature was not checked; do not trust these values.")
            print("header: \(prettyJSON(header))")
            print("claims: \(prettyJSON(claims))")
        }
    }
}

