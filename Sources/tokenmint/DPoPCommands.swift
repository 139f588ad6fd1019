import ArgumentParser
import Foundation
import TokenMint

/// `tokenmint dpop proof|verify` (RFC 9449).
struct DPoPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dpop", abstract: "Mint and check DPoP proofs (RFC 9449): proof of the key an access token is bound to.",
        subcommands: [Proof.self, Verify.self])

    struct Proof: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mint a proof for one request; prints it (the DPoP header's value).")
        @Option(help: "The private key: a JWK or PEM file (EC, Ed25519, Ed448 or RSA).") var key: String
        @Option(help: "The algorithm (default: the key's).") var alg: Algorithm?
        @Option(help: "The request's method, e.g. POST.") var method: String
        @Option(help: "The request's URL (query and fragment are left out).") var url: String
        @Option(parsing: .unconditional, help: "The access token the request carries (sets ath).") var accessToken: String?
        @Option(parsing: .unconditional, help: "The server's DPoP-Nonce.") var nonce: String?

        func run() throws {
            let jose = try alg.map { a throws -> JWSAlgorithm in
                guard let j = a.jose else { throw CLIError(message: "no JOSE algorithm \(a)") }
                return j
            }
            print(try DPoP.proof(key: try readJWK(key, algorithm: jose), algorithm: jose, method: method, url: url, accessToken: accessToken, nonce: nonce))
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a proof; prints its key's thumbprint (cnf.jkt), jti and iat as JSON.",
            discussion: "Each jti is taken once: it is recorded in the state folder's replay ledger, as payment tokens are.")
        @Argument(help: "The proof.") var proof: String
        @Option(help: "The request's method.") var method: String
        @Option(help: "The request's URL.") var url: String
        @Option(parsing: .unconditional, help: "The access token the request carries (its ath must match).") var accessToken: String?
        @Option(parsing: .unconditional, help: "The thumbprint the access token is bound to (cnf.jkt).") var jkt: String?
        @Option(parsing: .unconditional, help: "The nonce the server gave.") var nonce: String?
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let ledger = try store.open()
            let verified = try await DPoPVerifier().verify(proof, method: method, url: url, accessToken: accessToken, boundThumbprint: jkt, nonce: nonce,
                                                           replay: { (id, expires) async throws(TokenMintError) -> Bool in try await ledger.recordOnce(id, expiresAt: expires) })
            try FIDO2Command.print(json: ["jkt": verified.thumbprint, "jti": verified.identifier, "iat": verified.issuedAt])
        }
    }
}
