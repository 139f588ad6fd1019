#if Server
import TokenMintCore
import TokenMintAuth
import TokenMintJOSE
import TokenMintPay
import Hummingbird
import HTTPTypes
import Foundation

/// Checks the access token a request carries (RFC 6750 `Bearer`, or RFC
/// 9449 `DPoP`): a token bound to a key (`cnf.jkt`) is taken only under the
/// DPoP scheme with a proof of that key for this very request (method, URL,
/// the token's hash), each proof once; an unbound token only as `Bearer`.
struct AccessTokenAuthenticator: Sendable {
    let issuer: LocalTokenIssuer
    let ledger: any VerifierStore
    /// The server's public base URL: proofs name `base + path`.
    let baseURL: String
    let clock: @Sendable () -> Int64

    /// The verified token.
    func verify(_ request: Request) async throws(TokenMintError) -> VerifiedJWT {
        let (scheme, token) = try Self.credentials(request)
        let verified: VerifiedJWT
        do { verified = try await issuer.verify(token) } catch {
            throw TokenMintError(.server.unauthorized, "the access token does not verify: \(error.reason)", underlying: error)
        }
        guard let jkt = verified.claims.additional["cnf"]?.objectValue?["jkt"]?.stringValue else {
            guard scheme == .bearer else { throw TokenMintError(.server.unauthorized, "the DPoP scheme is for DPoP-bound tokens") }
            return verified
        }
        guard scheme == .dpop else {
            throw TokenMintError(.server.unauthorized, "the token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof")
        }
        let proof = try Self.proof(request)
        do {
            _ = try await dpopVerifier().verify(proof, method: request.method.rawValue, url: baseURL + request.uri.path, accessToken: token,
                                               boundThumbprint: jkt, replay: replay)
        } catch {
            throw TokenMintError(.server.unauthorized, "the DPoP proof does not hold: \(error.reason)", underlying: error)
        }
        return verified
    }

    func dpopVerifier() -> DPoPVerifier {
        var verifier = DPoPVerifier()
        verifier.clock = clock
        return verifier
    }

    /// Records a proof's identifier once in the payment verifier's replay ledger.
    var replay: @Sendable ([UInt8], Int64) async throws(TokenMintError) -> Bool {
        { [ledger] (id, expires) async throws(TokenMintError) -> Bool in try await ledger.recordOnce(id, expiresAt: expires) }
    }

    enum Scheme { case bearer, dpop }

    /// The scheme and the token of the Authorization header.
    static func credentials(_ request: Request) throws(TokenMintError) -> (Scheme, String) {
        guard let header = request.headers[.authorization] else { throw TokenMintError(.server.unauthorized, "no Authorization header") }
        guard header.utf8.count <= 4096 else { throw TokenMintError(.server.unauthorized, "the Authorization header is too long") }
        let lower = header.lowercased()
        for (prefix, scheme) in [("bearer ", Scheme.bearer), ("dpop ", .dpop)] where lower.hasPrefix(prefix) && header.utf8.count > prefix.utf8.count {
            return (scheme, String(header.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces))
        }
        throw TokenMintError(.server.unauthorized, "the Authorization header is neither Bearer nor DPoP")
    }

    /// The request's one `DPoP` header (RFC 9449 §4.3: exactly one).
    static func proof(_ request: Request) throws(TokenMintError) -> String {
        let values = request.headers[values: HTTPField.Name("DPoP")!]
        guard values.count == 1, let proof = values.first, !proof.isEmpty else {
            throw TokenMintError(.server.unauthorized, "a DPoP request carries exactly one DPoP header")
        }
        return proof
    }
}
#endif
