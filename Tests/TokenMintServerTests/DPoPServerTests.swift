#if Server
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Logging
import Testing
import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
import TokenMintAuth
@testable import TokenMintServer

/// RFC 9449 at `tokenmint serve`: a proof at the token endpoint binds the
/// access token (`cnf.jkt`, `token_type` DPoP); the resource routes then take
/// it only under the DPoP scheme with a fresh proof of that key.
@Suite("DPoP-bound tokens")
struct DPoPServerTests {
    static let base = "http://127.0.0.1:8080"
    static let form = "grant_type=client_credentials&client_id=desk-1&client_secret=desk+secret+of+24+bytes%21"

    static func tokenRequest(_ client: any TestClientProtocol, proof: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let proof { headers[HTTPField.Name("DPoP")!] = proof }
        return try await client.execute(uri: "/oauth/token", method: .post, headers: headers, body: ByteBuffer(string: form))
    }

    static func transactions(_ client: any TestClientProtocol, scheme: String, token: String, proof: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "\(scheme) \(token)"]
        if let proof { headers[HTTPField.Name("DPoP")!] = proof }
        return try await client.execute(uri: "/wlp/v1/transactions", method: .get, headers: headers)
    }

    @Test("client credentials with a proof: a DPoP token; Bearer, replayed, foreign-key and wrong-URL proofs refused; an unbound token is no DPoP token")
    func clientCredentials() async throws {
        try await ServerRouteTests.withServer { server, client in
            try server.clientDirectory.add(id: "desk-1", secret: SecureBytes(Array("desk secret of 24 bytes!".utf8)), redirectURIs: [],
                                           grants: ["client_credentials"])
            let key = try JWK.generate(for: .ES256)
            // A proof for another URL is refused at the token endpoint.
            let wrong = try await Self.tokenRequest(client, proof: try DPoP.proof(key: key, method: "POST", url: Self.base + "/oauth/other"))
            #expect(wrong.status == .badRequest)
            #expect(try ServerRouteTests.json(wrong)["error"]?.stringValue == "invalid_dpop_proof")
            let issued = try await Self.tokenRequest(client, proof: try DPoP.proof(key: key, method: "POST", url: Self.base + "/oauth/token"))
            #expect(issued.status == .ok)
            let body = try ServerRouteTests.json(issued)
            #expect(body["token_type"]?.stringValue == "DPoP")
            let token = try #require(body["access_token"]?.stringValue)
            let claims = try UnverifiedJWT.decode(token).claims
            #expect(claims["cnf"]?.objectValue?["jkt"]?.stringValue == key.thumbprint())

            let url = Self.base + "/wlp/v1/transactions"
            // As a bearer token it is refused.
            #expect(try await Self.transactions(client, scheme: "Bearer", token: token, proof: nil).status == .unauthorized)
            // Under DPoP with a proof of its key for this request: accepted, once.
            let proof = try DPoP.proof(key: key, method: "GET", url: url, accessToken: token)
            #expect(try await Self.transactions(client, scheme: "DPoP", token: token, proof: proof).status == .ok)
            #expect(try await Self.transactions(client, scheme: "DPoP", token: token, proof: proof).status == .unauthorized)
            // Without a proof, with another key's proof, with a proof for another method or without ath.
            #expect(try await Self.transactions(client, scheme: "DPoP", token: token, proof: nil).status == .unauthorized)
            let other = try JWK.generate(for: .ES256)
            #expect(try await Self.transactions(client, scheme: "DPoP", token: token,
                                                proof: try DPoP.proof(key: other, method: "GET", url: url, accessToken: token)).status == .unauthorized)
            #expect(try await Self.transactions(client, scheme: "DPoP", token: token,
                                                proof: try DPoP.proof(key: key, method: "POST", url: url, accessToken: token)).status == .unauthorized)
            #expect(try await Self.transactions(client, scheme: "DPoP", token: token,
                                                proof: try DPoP.proof(key: key, method: "GET", url: url)).status == .unauthorized)
            // A token issued without a proof is a bearer token, and not a DPoP one.
            let plain = try #require(try ServerRouteTests.json(try await Self.tokenRequest(client, proof: nil))["access_token"]?.stringValue)
            #expect(try await Self.transactions(client, scheme: "Bearer", token: plain, proof: nil).status == .ok)
            #expect(try await Self.transactions(client, scheme: "DPoP", token: plain,
                                                proof: try DPoP.proof(key: key, method: "GET", url: url, accessToken: plain)).status == .unauthorized)
            let metadata = try ServerRouteTests.json(try await ServerRouteTests.get(client, "/.well-known/oauth-authorization-server"))
            #expect(metadata["dpop_signing_alg_values_supported"]?.arrayValue?.isEmpty == false)
        }
    }

    @Test("a refresh family bound to a DPoP key rotates only with a proof of that key; a refusal spends nothing")
    func boundRefresh() async throws {
        try await ServerRouteTests.withServer { server, _ in
            let issuer = server.issuer
            let first = try await issuer.issue(account: "ada", clientID: "app", scopes: ["read"], dpopThumbprint: "jkt-A")
            let access = try UnverifiedJWT.decode(first.accessToken).claims
            #expect(access["cnf"]?.objectValue?["jkt"]?.stringValue == "jkt-A")
            // The user-token exchange has no proof to check, so it takes no bound token.
            await #expect(throws: TokenMintError.self) { _ = try await UserTokenRoutes.subject(of: first.accessToken, issuer: issuer) }
            let unbound = try await issuer.issue(account: "ada", clientID: "app")
            #expect(try await UserTokenRoutes.subject(of: unbound.accessToken, issuer: issuer) == "ada")
            let refresh = try #require(first.refreshToken)
            await #expect(throws: TokenMintError.self) { _ = try await issuer.refresh(refresh, clientID: "app", dpopThumbprint: nil) }
            await #expect(throws: TokenMintError.self) { _ = try await issuer.refresh(refresh, clientID: "app", dpopThumbprint: "jkt-B") }
            await #expect(throws: TokenMintError.self) { _ = try await issuer.refresh(refresh, clientID: "app") }
            let next = try await issuer.refresh(refresh, clientID: "app", dpopThumbprint: "jkt-A")
            #expect(try UnverifiedJWT.decode(next.accessToken).claims["cnf"]?.objectValue?["jkt"]?.stringValue == "jkt-A")
            // A confidential client's family stays unbound: a proof at refresh binds the new access token only.
            let loose = try await issuer.issue(account: "ada", clientID: "app", dpopThumbprint: "jkt-C", bindsRefreshToken: false)
            #expect(try UnverifiedJWT.decode(loose.accessToken).claims["cnf"]?.objectValue?["jkt"]?.stringValue == "jkt-C")
            let bound = try await issuer.refresh(try #require(loose.refreshToken), clientID: "app", dpopThumbprint: "jkt-D", bindsRefreshToken: false)
            #expect(try UnverifiedJWT.decode(bound.accessToken).claims["cnf"]?.objectValue?["jkt"]?.stringValue == "jkt-D")
            let again = try await issuer.refresh(try #require(bound.refreshToken), clientID: "app")
            #expect(try UnverifiedJWT.decode(again.accessToken).claims["cnf"] == nil)
            // A public client's unbound family shown a proof is bound from then on.
            let open = try await issuer.issue(account: "ada", clientID: "app")
            let nowBound = try await issuer.refresh(try #require(open.refreshToken), clientID: "app", dpopThumbprint: "jkt-E")
            await #expect(throws: TokenMintError.self) { _ = try await issuer.refresh(try #require(nowBound.refreshToken), clientID: "app") }
            _ = try await issuer.refresh(try #require(nowBound.refreshToken), clientID: "app", dpopThumbprint: "jkt-E")
        }
    }
}
#endif
