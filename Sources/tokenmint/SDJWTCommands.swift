import ArgumentParser
import Foundation
import TokenMint

/// `tokenmint sdjwt issue|present|verify` (RFC 9901).
struct SDJWTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sdjwt", abstract: "Issue, present and verify Selective Disclosure JWTs (RFC 9901, SD-JWT VC).",
        subcommands: [Issue.self, Present.self, Verify.self])

    static func read(_ path: String?) throws -> String {
        String(decoding: try JWECommand.input(path, limit: SDJWT.defaultMaximumBytes), as: UTF8.self)
    }

    struct Issue: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue an SD-JWT from a claims file; prints <JWT>~<disclosure>~…~.",
            discussion: "Each --sd is an RFC 6901 JSON Pointer (/given_name, /address/street_address, /nationalities/1). A pointer may lie inside another (recursive disclosure).")
        @Option(help: "The issuer's private key: a JWK or PEM file.") var key: String
        @Option(help: "The algorithm (default: the key's).") var alg: Algorithm?
        @Option(help: "The claims: a JSON object file, signed as given (put iss, iat, exp, sub in it).") var claims: String
        @Option(help: "A claim to make selectively disclosable (repeatable).") var sd: [String] = []
        @Option(help: "Decoy digests to add.") var decoys: Int = 0
        @Option(help: "The holder's public key (JWK or PEM) for key binding (cnf.jwk).") var holderKey: String?
        @Option(help: "typ header (default: dc+sd-jwt with --vct, else none).") var typ: String?
        @Option(help: "An SD-JWT VC: its vct claim.") var vct: String?

        func run() throws {
            guard (0...64).contains(decoys) else { throw ValidationError("--decoys is 0 to 64") }
            let jose = try alg.map { a throws -> JWSAlgorithm in
                guard let j = a.jose else { throw CLIError(message: "no JOSE algorithm \(a)") }
                return j
            }
            var object = try JSONParser.parse(try readFile(claims, limit: 1 << 20)).objectValue.orThrow("\(claims): not a JSON object")
            if let vct { object.set("vct", .string(vct)) }
            let type = typ ?? (vct != nil ? SDJWT.verifiableCredentialType : nil)
            let issuer = try SDJWTIssuer(key: try readJWK(key, algorithm: jose), algorithm: jose, type: type)
            let holder = try holderKey.map { try readJWK($0) }
            try Output.line(try issuer.issue(object, disclosable: sd, decoys: decoys, holderKey: holder).serialization)
        }
    }

    struct Present: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep the disclosures a verifier needs and, with --holder-key, add a key binding JWT; prints the presentation.")
        @Option(name: .customLong("in"), help: "Read the SD-JWT from this file instead of standard input.") var input: String?
        @Option(help: "A claim to disclose, as a JSON Pointer into the issued claims (repeatable; its parents come along).") var disclose: [String] = []
        @Flag(help: "Keep every disclosure.") var all = false
        @Option(help: "The holder's private key (JWK or PEM): adds a key binding JWT.") var holderKey: String?
        @Option(parsing: .unconditional, help: "The verifier (the KB-JWT's aud).") var aud: String?
        @Option(parsing: .unconditional, help: "The verifier's nonce.") var nonce: String?

        func run() throws {
            guard holderKey == nil || (aud != nil && nonce != nil) else { throw ValidationError("--holder-key needs --aud and --nonce") }
            guard holderKey != nil || (aud == nil && nonce == nil) else { throw ValidationError("--aud and --nonce go with --holder-key") }
            let full = try SDJWT(parsing: try SDJWTCommand.read(input))
            var shown = all ? full.withoutKeyBinding : try full.presenting(disclose)
            if let holderKey, let aud, let nonce {
                shown = try shown.binding(to: try readJWK(holderKey), audience: aud, nonce: nonce, issuedAt: Int64(Date().timeIntervalSince1970))
            }
            try Output.line(shown.serialization)
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify an SD-JWT or a presentation; prints the disclosed claims as JSON.",
            discussion: "A key binding JWT is checked whenever present, and required with --require-kb, --aud or --nonce.")
        @Option(help: "The issuer's public key: a JWK, PEM or JWK set file.") var issuerKey: String
        @Option(name: .customLong("in"), help: "Read the SD-JWT from this file instead of standard input.") var input: String?
        @Option(parsing: .unconditional, help: "This verifier (the KB-JWT's aud must be it).") var aud: String?
        @Option(parsing: .unconditional, help: "The nonce this verifier gave.") var nonce: String?
        @Flag(help: "Refuse a presentation without a key binding JWT.") var requireKB = false
        @Option(help: "The header's typ must be this.") var typ: String?
        @Option(help: "An SD-JWT VC: typ dc+sd-jwt and this vct.") var vct: String?

        func run() throws {
            let text = String(decoding: try readFile(issuerKey, limit: 1 << 20), as: UTF8.self)
            let keys: JWKSet
            if text.contains("\"keys\"") { keys = try JWKSet(json: text) } else { keys = try JWKSet(try readJWK(issuerKey)) }
            var validation = JWTValidation()
            validation.requiredClaims = []
            validation.type = typ
            let verifier = SDJWTVerifier(issuerKeys: keys, validation: validation)
            let verified = try verifier.verify(
                try SDJWTCommand.read(input), audience: aud, nonce: nonce, requireKeyBinding: requireKB, verifiableCredentialType: vct)
            try Output.line(String(decoding: JSONWriter.encode(.object(verified.claims)), as: UTF8.self))
        }
    }
}

extension Optional {
    func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw CLIError(message: message) }
        return self
    }
}
