#if Server
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TokenMintCore
import TokenMintCrypto
import TokenMintAuth
import TokenMintJOSE
import TokenMintStore
@testable import TokenMintServer

/// The server's records in its `KeyValueStore`, and the upgrade of a state
/// directory an earlier version made (clients and accounts in SQL tables).
@Suite("Server state")
struct ServerStateTests {
    @Test("an earlier version's client and account tables are moved into sealed records, and the tables dropped")
    func legacyTables() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-legacy-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try TokenMintServer.prepareStateDirectory(directory)
        let cost = PasswordKeyDerivation.Cost.interactive
        let hash = { (secret: String, salt: [UInt8]) throws -> [UInt8] in
            try PasswordKeyDerivation.deriveKey(passphrase: Array(secret.utf8), salt: salt, cost: cost).withUnsafeBytes { Array($0) }
        }
        do {
            // What the previous version's directories created and wrote.
            let store = try SQLiteStore(path: directory + "/server.sqlite", masterKey: TokenMintServer.masterKey(stateDirectory: directory))
            let old = SQLiteStore.Schema(
                name: "old", statements: """
                    CREATE TABLE IF NOT EXISTS oauth_clients (id TEXT PRIMARY KEY, secret_salt BLOB, secret_hash BLOB,
                        redirect_uris TEXT NOT NULL, grants TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS oauth_accounts (username TEXT PRIMARY KEY, salt BLOB NOT NULL, hash BLOB NOT NULL);
                    CREATE TABLE IF NOT EXISTS oauth_codes (hash BLOB PRIMARY KEY, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL,
                        username TEXT NOT NULL, challenge TEXT NOT NULL, scope TEXT NOT NULL, expires_at INTEGER NOT NULL);
                    """, clearedOnReset: ["oauth_codes"])
            let (deskSalt, aliceSalt) = (SecureRandom.bytes(count: 16), SecureRandom.bytes(count: 16))
            let (deskHash, aliceHash) = (try hash("a desk secret that is long enough", deskSalt), try hash("correct horse", aliceSalt))
            try store.withTables(old, transaction: true) { db throws(TokenMintError) in
                try db.run("INSERT INTO oauth_clients VALUES (?, ?, ?, ?, ?)",
                           [.text("desk-1"), .blob(deskSalt), .blob(deskHash), .text(""), .text("client_credentials")])
                try db.run("INSERT INTO oauth_clients VALUES (?, NULL, NULL, ?, ?)",
                           [.text("app"), .text("http://127.0.0.1/cb https://app.example/cb"), .text("authorization_code refresh_token")])
                try db.run("INSERT INTO oauth_accounts VALUES (?, ?, ?)", [.text("alice"), .blob(aliceSalt), .blob(aliceHash)])
            }
        }
        let server = try TokenMintServer(configuration: ServerConfiguration(stateDirectory: directory),
                                         logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let desk = try server.clientDirectory.authenticate("desk-1", secret: SecureBytes(Array("a desk secret that is long enough".utf8)))
        #expect(desk?.grants == ["client_credentials"] && desk?.isConfidential == true)
        #expect(try server.clientDirectory.authenticate("desk-1", secret: SecureBytes(Array("another secret, long enough".utf8))) == nil)
        let app = try server.clientDirectory.client("app")
        #expect(app?.redirectURIs == ["http://127.0.0.1/cb", "https://app.example/cb"] && app?.isConfidential == false)
        #expect(app?.grants == ["authorization_code", "refresh_token"])
        #expect(try server.accountDirectory.authenticate(username: "alice", password: SecureBytes(Array("correct horse".utf8))))
        #expect(try !server.accountDirectory.authenticate(username: "alice", password: SecureBytes(Array("wrong horse".utf8))))
        // The tables are gone, and a reset (which emptied oauth_codes) still works.
        let store = try SQLiteStore(path: directory + "/server.sqlite", masterKey: TokenMintServer.masterKey(stateDirectory: directory))
        let left = try store.withTables(ServerState.legacySchema, transaction: false) { db throws(TokenMintError) in
            try db.query("SELECT name FROM sqlite_master WHERE name LIKE 'oauth_%'", []).count
        }
        #expect(left == 0)
        try store.reset()
        // A second start finds nothing to move and keeps what is there.
        let again = try TokenMintServer(configuration: ServerConfiguration(stateDirectory: directory),
                                        logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        #expect(try again.clientDirectory.client("app") == nil, "the reset emptied the records")
    }

    @Test("authorization codes: redeemed once, expired ones dropped as a range, a forged expiry finds nothing")
    func codes() throws {
        let store = InMemoryStore()
        let codes = AuthorizationCodes(store: store, lifetime: 60)
        let code = try codes.issue(clientID: "app", redirectURI: "http://127.0.0.1/cb", username: "alice", challenge: "c", scopes: ["a", "b"], now: 1000)
        let grant = try codes.redeem(code, now: 1059)
        #expect(grant?.clientID == "app" && grant?.scopes == ["a", "b"] && grant?.expiresAt == 1060)
        #expect(try codes.redeem(code, now: 1001) == nil, "redeemed twice")
        let late = try codes.issue(clientID: "app", redirectURI: "http://127.0.0.1/cb", username: "alice", challenge: "c", scopes: [], now: 1000)
        #expect(try codes.redeem(late, now: 1060) == nil, "redeemed at its expiry")
        // A code with its expiry bytes changed names no record.
        let kept = try codes.issue(clientID: "app", redirectURI: "http://127.0.0.1/cb", username: "alice", challenge: "c", scopes: [], now: 2000)
        var bytes = try Base64URL.decode(kept)
        bytes[7] ^= 1
        #expect(try codes.redeem(Base64URL.encode(bytes), now: 2001) == nil)
        // Issuing at 3000 drops every code that expired by then, unredeemed or not.
        let stale = try codes.issue(clientID: "app", redirectURI: "http://127.0.0.1/cb", username: "alice", challenge: "c", scopes: [], now: 2500)
        _ = try codes.issue(clientID: "app", redirectURI: "http://127.0.0.1/cb", username: "alice", challenge: "c", scopes: [], now: 3000)
        let names = try store.transaction { tx in
            try [kept, stale].map { code -> Bool in
                let stamp = try Base64URL.decode(code).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
                return try tx.secret(AuthorizationCodes.name(code, expiresAt: stamp)) != nil
            }
        }
        #expect(names == [false, false])
        for bad in ["", "x", String(repeating: "A", count: 43), String(repeating: "A", count: 300)] {
            #expect(try codes.redeem(bad, now: 1000) == nil)
        }
    }

    @Test("--attestation direct asks for the authenticator's attestation; --attestation-roots reads a PEM bundle or refuses it")
    func attestationOptions() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-attestation-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try TokenMintServer.prepareStateDirectory(directory)
        // Two published roots from the vectors, as PEM with text around them.
        let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/webauthn")
        var ders: [[UInt8]] = []
        for file in ["apple.json", "android-key.json"] {
            let data = try Data(contentsOf: vectors.appendingPathComponent(file))
            let roots = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["roots"] as? [String: String])
            let text = try #require(roots.values.first)
            ders.append([UInt8](try #require(Data(base64Encoded: text))))
        }
        let pem = ders.map { der in
            "subject: a root\n-----BEGIN CERTIFICATE-----\n" + Data(der).base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----\n"
        }.joined()
        let path = directory + "/roots.pem"
        try Data(pem.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try TokenMintServer.certificates(pemFile: path) == ders)
        for (name, text) in [("empty", ""), ("no end", "-----BEGIN CERTIFICATE-----\nMIIB\n"),
                             ("not a certificate", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/bad.pem"))
            let error = #expect(throws: TokenMintError.self, "\(name)") { try TokenMintServer.certificates(pemFile: directory + "/bad.pem") }
            #expect(error?.code == .server.invalidConfiguration)
        }
        #expect(throws: TokenMintError.self) { try TokenMintServer.certificates(pemFile: directory + "/missing.pem") }
        var configuration = ServerConfiguration(stateDirectory: directory)
        configuration.attestation = .direct
        configuration.attestationRootsPath = path
        let server = try TokenMintServer(configuration: configuration, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let app = Application(router: server.router())
        try await app.test(.router) { client in
            let response = try await ServerRouteTests.post(client, "/webauthn/registration/options", "{\"username\":\"dora\"}")
            let options = try ServerRouteTests.json(response)
            #expect(response.status == .ok && options["attestation"]?.stringValue == "direct")
        }
        configuration.attestationRootsPath = directory + "/bad.pem"
        let refused = #expect(throws: TokenMintError.self) { _ = try TokenMintServer(configuration: configuration) }
        #expect(refused?.code == .server.invalidConfiguration)
    }

    @Test("a server first started with a shared store moves its OAuth state there: tokens, refresh families, clients and accounts keep working")
    func moveToSharedStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-move-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let configuration = ServerConfiguration(stateDirectory: directory)
        let (access, refresh): (String, String)
        do {
            let local = try TokenMintServer(configuration: configuration, logger: quiet)
            try local.clientDirectory.add(id: "desk-1", secret: SecureBytes(Array("a desk secret that is long enough".utf8)), redirectURIs: [],
                                          grants: ["client_credentials"])
            try local.accountDirectory.add(username: "alice", password: SecureBytes(Array("correct horse".utf8)))
            let token = try await local.issuer.issue(account: "alice", clientID: "app")
            (access, refresh) = (token.accessToken, try #require(token.refreshToken))
        }
        let shared = InMemoryStore()
        let moved = try TokenMintServer(configuration: configuration, logger: quiet, state: shared)
        #expect(try await moved.issuer.verify(access).claims["sub"]?.stringValue == "alice", "the signing key moved")
        let rotated = try await moved.issuer.refresh(refresh, clientID: "app")
        #expect(rotated.account == "alice", "the refresh family moved")
        #expect(try moved.clientDirectory.authenticate("desk-1", secret: SecureBytes(Array("a desk secret that is long enough".utf8))) != nil)
        #expect(try moved.accountDirectory.authenticate(username: "alice", password: SecureBytes(Array("correct horse".utf8))))
        // The state directory no longer holds it: a server on it alone starts afresh.
        let alone = try TokenMintServer(configuration: configuration, logger: quiet)
        #expect(try alone.clientDirectory.client("desk-1") == nil)
        await #expect(throws: TokenMintError.self) { _ = try await alone.issuer.verify(access) }
        // A second start with the shared store moves nothing more and keeps what is there.
        let again = try TokenMintServer(configuration: configuration, logger: quiet, state: shared)
        #expect(try again.clientDirectory.client("desk-1") != nil)
        #expect(try await again.issuer.verify(rotated.accessToken).claims["sub"]?.stringValue == "alice")
    }
}
#endif
