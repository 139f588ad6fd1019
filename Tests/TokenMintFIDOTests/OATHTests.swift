import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn
import TokenMintFIDO

/// OATH: the RFC 4226 and RFC 6238 vectors byte for byte, `otpauth://`
/// URIs, the software OATH application (durable HOTP counters, touch), the
/// server-side verifier (windows, resynchronization, replay) and sessions
/// on a connection.
@Suite("OATH (HOTP/TOTP)")
struct OATHTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/oath")

    /// The `tests` of a file in Vectors/oath/.
    static func tests(_ file: String) throws -> [[String: Any]] {
        let data = try #require(try? Data(contentsOf: vectors.appendingPathComponent(file)), "Vectors/oath/\(file) is absent: the repository ships it")
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "Vectors/oath/\(file) is not a JSON object")
        #expect(root["schema"] as? String == "tokenmint_oath_kat_v1")
        return try #require(root["tests"] as? [[String: Any]])
    }

    static let seed20 = SecureBytes(Array("12345678901234567890".utf8))

    static func totp(_ name: String = "alice", issuer: String? = "Example", digits: Int = 8, touch: Bool = false) throws -> OATHCredential {
        try OATHCredential(issuer: issuer, account: name, secret: seed20, kind: .totp(period: 30), algorithm: .sha1, digits: digits,
                           requiresTouch: touch)
    }

    static func hotp(_ name: String = "bob", counter: UInt64 = 0) throws -> OATHCredential {
        try OATHCredential(issuer: "Example", account: name, secret: seed20, kind: .hotp(counter: counter))
    }

    // MARK: Vectors

    @Test("RFC 4226 appendix D: all ten HOTP values, and the HMAC-SHA-1 and truncation under them")
    func rfc4226() throws {
        let tests = try Self.tests("rfc4226.json")
        #expect(tests.count == 10)
        for test in tests {
            let secretHex = try #require(test["secret"] as? String)
            let counter = UInt64(try #require(test["counter"] as? Int))
            let expected = try #require(test["hotp"] as? String)
            let hmacHex = try #require(test["hmac"] as? String)
            let truncated = try #require(test["truncatedDecimal"] as? Int)
            let secret = SecureBytes(try Hex.decode(secretHex))
            #expect(try OATH.hotp(secret: secret, counter: counter, algorithm: .sha1, digits: 6) == expected)
            let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * $0)) }
            let key = try HMACKey(allowingShortKey: try Hex.decode(secretHex), hash: .sha1)
            #expect(Hex.encode(HMAC.authenticationCode(for: message, using: key)).lowercased() == hmacHex)
            #expect(truncated % 1_000_000 == Int(expected))
        }
    }

    @Test("RFC 6238 appendix B: all 18 TOTP rows (SHA1/SHA256/SHA512 seeds of 20/32/64 bytes, 8 digits)")
    func rfc6238() throws {
        let tests = try Self.tests("rfc6238.json")
        #expect(tests.count == 18)
        var seen: [OATH.Algorithm: Int] = [:]
        for test in tests {
            let mode = try #require(test["mode"] as? String)
            let algorithm = try #require(OATH.Algorithm(rawValue: mode))
            let secret = SecureBytes(try Hex.decode(try #require(test["secret"] as? String)))
            let time = Int64(try #require(test["time"] as? Int))
            let expected = try #require(test["totp"] as? String)
            let step = try #require(test["step"] as? String)
            #expect(secret.count == algorithm.hash.digestSize)
            #expect(try OATH.totp(secret: secret, time: time, period: 30, algorithm: algorithm, digits: 8) == expected,
                    "\(test["comment"] as? String ?? "")")
            let t = String(try OATH.timeStep(time: time, period: 30), radix: 16, uppercase: true)
            #expect(String(repeating: "0", count: 16 - t.count) + t == step)
            seen[algorithm, default: 0] += 1
        }
        #expect(seen == [.sha1: 6, .sha256: 6, .sha512: 6])
    }

    @Test("bad code arguments are typed errors, never traps")
    func badArguments() {
        #expect(throws: TokenMintError.self) { _ = try OATH.hotp(secret: Self.seed20, counter: 0, digits: 5) }
        #expect(throws: TokenMintError.self) { _ = try OATH.hotp(secret: Self.seed20, counter: 0, digits: 9) }
        #expect(throws: TokenMintError.self) { _ = try OATH.totp(secret: Self.seed20, time: -1) }
        #expect(throws: TokenMintError.self) { _ = try OATH.totp(secret: Self.seed20, time: 59, period: 0) }
        #expect(throws: TokenMintError.self) { _ = try OATH.totp(secret: Self.seed20, time: .max, period: -30) }
        #expect(throws: TokenMintError.self) { _ = try OATH.hotp(secret: SecureBytes(randomCount: 129), counter: 0) }
        #expect(throws: TokenMintError.self) { _ = try OATH.hotp(secret: SecureBytes([UInt8]()), counter: 0) }
        #expect((try? OATH.totp(secret: Self.seed20, time: .max, period: 1))?.count == 6)
        #expect((try? OATH.hotp(secret: Self.seed20, counter: .max, digits: 7))?.count == 7)
        #expect(throws: TokenMintError.self) { _ = try OATHCredential(issuer: "a:b", account: "c", secret: Self.seed20) }
        #expect(throws: TokenMintError.self) { _ = try OATHCredential(issuer: nil, account: "a:b", secret: Self.seed20) }
        #expect(throws: TokenMintError.self) { _ = try OATHCredential(issuer: "x", account: "a\u{202E}b", secret: Self.seed20) }
        #expect(throws: TokenMintError.self) { _ = try OATHCredential(issuer: nil, account: "a", secret: Self.seed20, kind: .hotp(counter: .max)) }
    }

    // MARK: URIs

    @Test("otpauth:// URIs: the Key Uri Format's example, every parameter, a round trip")
    func uris() throws {
        let google = try OTPAuthURI.parse("otpauth://totp/Example:alice@google.com?secret=JBSWY3DPEHPK3PXP&issuer=Example")
        #expect(google.issuer == "Example" && google.account == "alice@google.com" && google.name == "Example:alice@google.com")
        #expect(google.kind == .totp(period: 30) && google.algorithm == .sha1 && google.digits == 6)
        #expect(google.secret == SecureBytes(try Hex.decode("48656c6c6f21deadbeef")))
        #expect(!google.description.contains("JBSW") && !"\(google.info)".contains("JBSW"))

        let secret = SecureBytes(try Hex.decode("48656c6c6f21deadbeef"))
        let credential = try OATHCredential(issuer: "ACME Co", account: "alice@example.org", secret: secret, kind: .hotp(counter: 5),
                                            algorithm: .sha256, digits: 8)
        let uri = OTPAuthURI.encode(credential)
        #expect(uri == "otpauth://hotp/ACME%20Co:alice%40example.org?secret=JBSWY3DPEHPK3PXP&issuer=ACME%20Co&algorithm=SHA256&digits=8&counter=5")
        let back = try OTPAuthURI.parse(uri)
        #expect(back.info == credential.info && back.secret == credential.secret)

        let totp = try OATHCredential(issuer: nil, account: "solo", secret: SecureBytes(randomCount: 64), kind: .totp(period: 60),
                                      algorithm: .sha512, digits: 7)
        let again = try OTPAuthURI.parse(OTPAuthURI.encode(totp))
        #expect(again.info == totp.info && again.secret == totp.secret && again.issuer == nil)

        // Lenient where readers are: case, padding, `+` in the query, spaces after the colon, unknown parameters.
        let loose = try OTPAuthURI.parse("OTPAUTH://TOTP/ACME%20Co:%20%20bob?SECRET=gezdgnbvgy%3D%3D%3D%3D%3D%3D&issuer=ACME+Co&image=https%3A%2F%2Fx.example%2Fi.png&algorithm=sha256&period=60")
        #expect(loose.issuer == "ACME Co" && loose.account == "bob" && loose.kind == .totp(period: 60) && loose.algorithm == .sha256)
        #expect(loose.secret == SecureBytes(Array("123456".utf8)))
        let issuerOnly = try OTPAuthURI.parse("otpauth://totp/carol?secret=GEZDGNBV&issuer=Corp")
        #expect(issuerOnly.name == "Corp:carol")
        let colons = try OTPAuthURI.parse("otpauth://hotp/a:b:c?secret=GEZDGNBV&counter=0")
        #expect(colons.issuer == "a" && colons.account == "b:c")
    }

    @Test("malformed otpauth:// URIs are .oath.invalidURI")
    func malformedURIs() {
        let s = "secret=JBSWY3DPEHPK3PXP"
        let malformed = [
            "http://totp/a?\(s)", "otpauth://motp/a?\(s)", "otpauth://totp", "otpauth://totp/a", "otpauth://totp/a?secret=",
            "otpauth://totp/a?secret=JBSWY3DP1", "otpauth://totp/a?secret=JBSWY3DPE", "otpauth://totp/a?secret=JBSW Y3DP",
            "otpauth://totp/a?secret=" + String(repeating: "A", count: 208), "otpauth://totp/a?secret=JBSWY3DPEHPK3PXP=======",
            "otpauth://totp/a?\(s)&algorithm=MD5", "otpauth://totp/a?\(s)&algorithm=",
            "otpauth://totp/a?\(s)&digits=9", "otpauth://totp/a?\(s)&digits=5", "otpauth://totp/a?\(s)&digits=six",
            "otpauth://totp/a?\(s)&digits=+6", "otpauth://totp/a?\(s)&digits=99999999999999999999999",
            "otpauth://totp/a?\(s)&period=0", "otpauth://totp/a?\(s)&period=86401", "otpauth://totp/a?\(s)&period=-30",
            "otpauth://hotp/a?\(s)", "otpauth://hotp/a?\(s)&counter=9223372036854775808", "otpauth://hotp/a?\(s)&counter=-1",
            "otpauth://totp/a?\(s)&\(s)", "otpauth://totp/a?\(s)&Secret=GEZDGNBV", "otpauth://totp/A:b?\(s)&issuer=B",
            "otpauth://totp/b?\(s)&issuer=a%3Ab", "otpauth://totp/a%G1?\(s)", "otpauth://totp/a%?\(s)", "otpauth://totp/a%F?\(s)",
            "otpauth://totp/a%FF?\(s)", "otpauth://totp/a%0Ab?\(s)", "otpauth://totp/a\u{7}b?\(s)", "otpauth://totp/?\(s)",
            "otpauth://totp/Example:?\(s)", "otpauth://totp/a?\(s)#x",
            "otpauth://totp/" + String(repeating: "a", count: 65) + "?\(s)",
            "otpauth://totp/a?\(s)&x=" + String(repeating: "y", count: 4096),
        ]
        for uri in malformed {
            do throws(TokenMintError) {
                _ = try OTPAuthURI.parse(uri)
                Issue.record("accepted: \(uri.prefix(120))")
            } catch {
                #expect(error.code == .oath.invalidURI, "\(uri.prefix(120)): \(error)")
                #expect(!error.reason.contains("JBSWY3DP"), "a secret in a message: \(error.reason)")
            }
        }
    }

    // MARK: The application

    actor Answers {
        var presence = true
        var verification = true
        private(set) var asked: [String] = []

        func set(presence: Bool, verification: Bool) {
            self.presence = presence
            self.verification = verification
        }

        func confirm(_ request: OATHApplication.Request) -> Bool {
            asked.append("touch \(request.name)")
            return presence
        }

        func verify(_ request: OATHApplication.Request) -> Bool {
            asked.append("verify \(request.name)")
            return verification
        }
    }

    @Test("put, list, calculate, calculateAll, rename, delete, reset; touch asked and refused")
    func application() async throws {
        let answers = Answers()
        let oath = try OATHApplication(store: InMemoryStore(), confirmPresence: { await answers.confirm($0) },
                                       verifyUser: { await answers.verify($0) })
        try await oath.put(try Self.totp())
        try await oath.put(try Self.hotp())
        #expect(try await oath.list().map(\.name) == ["Example:alice", "Example:bob"])

        let code = try await oath.calculate("Example:alice", time: 59)
        #expect(code.value == "94287082" && code.validFrom == 30 && code.validUntil == 60)
        #expect(try await oath.calculate("Example:bob").value == "755224")
        #expect(try await oath.calculate("Example:bob").value == "287082")
        #expect(try await oath.list().last?.kind == .hotp(counter: 2))

        // A touch-required credential: listed without a code, calculated only with presence.
        try await oath.put(try Self.totp("carol", digits: 6, touch: true))
        let all = try await oath.calculateAll(time: 59)
        #expect(all.map(\.credential.name) == ["Example:alice", "Example:bob", "Example:carol"])
        #expect(all.map { $0.code?.value } == ["94287082", nil, nil])
        #expect(try await oath.calculate("Example:carol", time: 59).value == "287082")
        await answers.set(presence: false, verification: true)
        do {
            _ = try await oath.calculate("Example:carol", time: 59)
            Issue.record("a code without presence")
        } catch {
            #expect(error.code == .oath.operationDenied)
        }
        #expect(await answers.asked == ["touch Example:carol", "touch Example:carol"])
        #expect(try await oath.calculate("Example:alice", time: 59).value == "94287082", "no touch asked for alice")

        // Verification-required: verifyUser is asked.
        var verified = try Self.totp("dave")
        verified.requiresVerification = true
        try await oath.put(verified)
        await answers.set(presence: true, verification: false)
        await #expect(throws: TokenMintError.self) { _ = try await oath.calculate("Example:dave", time: 59) }
        #expect(try await oath.calculateAll(time: 59).last?.code == nil)

        // Replace keeps one entry; rename moves secret, counter and flags.
        try await oath.put(try Self.hotp(counter: 7))
        #expect(try await oath.list().count == 4)
        try await oath.rename("Example:bob", issuer: "Other", account: "bobby")
        do {
            _ = try await oath.calculate("Example:bob")
            Issue.record("the old name still answered")
        } catch {
            #expect(error.code == .oath.noSuchCredential)
        }
        #expect(try await oath.calculate("Other:bobby").value == "162583", "counter 7 kept")
        do {
            try await oath.rename("Other:bobby", issuer: "Example", account: "alice")
            Issue.record("renamed onto an existing name")
        } catch {
            #expect(error.code == .oath.credentialExists)
        }
        await #expect(throws: TokenMintError.self) { try await oath.rename("Other:bobby", issuer: "a:b", account: "c") }

        try await oath.delete("Example:alice")
        #expect(try await oath.list().map(\.name) == ["Other:bobby", "Example:carol", "Example:dave"])
        do {
            try await oath.delete("Example:alice")
            Issue.record("deleted twice")
        } catch {
            #expect(error.code == .oath.noSuchCredential)
        }
        try await oath.reset()
        #expect(try await oath.list().isEmpty)
    }

    @Test("at most maximumCredentials; replacing one at the cap is fine")
    func cap() async throws {
        let oath = try OATHApplication(store: InMemoryStore(), maximumCredentials: 2)
        try await oath.put(try Self.totp("a"))
        try await oath.put(try Self.totp("b"))
        do {
            try await oath.put(try Self.totp("c"))
            Issue.record("a third credential was kept")
        } catch let error as TokenMintError {
            #expect(error.code == .oath.storeFull)
        }
        try await oath.put(try Self.totp("b", digits: 6))
        #expect(try await oath.list().map(\.digits) == [8, 6])
        #expect(throws: TokenMintError.self) { _ = try OATHApplication(store: InMemoryStore(), maximumCredentials: 0) }
        #expect(OATHApplication.defaultMaximumCredentials == 64)
    }

    @Test("the HOTP counter is committed before a code leaves: another application over the same store goes on")
    func durableCounter() async throws {
        let store = InMemoryStore()
        let first = try OATHApplication(store: store)
        try await first.put(try Self.hotp())
        #expect(try await first.calculate("Example:bob").value == "755224")
        #expect(try await first.calculate("Example:bob").value == "287082")
        let second = try OATHApplication(store: store)
        #expect(try await second.calculate("Example:bob").value == "359152")

        // The same over a SQLite file, reopened.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("oath-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("oath.sqlite").path
        let key = SecureBytes(randomCount: 32)
        do {
            let oath = try OATHApplication(store: try SQLiteStore(path: path, masterKey: .key(key)))
            try await oath.put(try Self.hotp(counter: 3))
            #expect(try await oath.calculate("Example:bob").value == "969429")
        }
        let reopened = try OATHApplication(store: try SQLiteStore(path: path, masterKey: .key(key)))
        #expect(try await reopened.calculate("Example:bob").value == "338314")
        #expect(try await reopened.list().first?.kind == .hotp(counter: 5))
    }

    // MARK: The verifier

    @Test("HOTP: look-ahead window, replay refused, resynchronization with two codes")
    func verifierHOTP() throws {
        let store = InMemoryStore()
        let verifier = try OTPVerifier(store: store, lookAhead: 3, resynchronizationWindow: 20)
        let credential = try Self.hotp()
        let codes = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        #expect(try verifier.verify(codes[0], credential: credential, id: "bob") == 0)
        func refused(_ code: String, _ expected: TokenMintError.Code, _ verifier: OTPVerifier) {
            do {
                _ = try verifier.verify(code, credential: credential, id: "bob")
                Issue.record("\(code) was accepted")
            } catch {
                #expect(error.code == expected, "\(code): \(error)")
            }
        }
        // The same code twice: the second is a replay (a regression test).
        refused(codes[0], .oath.replayedCode, verifier)
        #expect(try verifier.verify(codes[2], credential: credential, id: "bob") == 2, "one counter skipped")
        refused(codes[1], .oath.replayedCode, verifier)
        refused(codes[8], .oath.invalidCode, verifier)
        refused("12345", .oath.invalidCode, verifier)
        refused("12345a", .oath.invalidCode, verifier)
        // Too far ahead for the window: two consecutive codes resynchronize.
        #expect(throws: TokenMintError.self) { _ = try verifier.resynchronize(codes[8], codes[7], credential: credential, id: "bob") }
        #expect(try verifier.resynchronize(codes[8], codes[9], credential: credential, id: "bob") == 9)
        #expect(try verifier.nextAccepted(id: "bob") == 10)
        refused(codes[9], .oath.replayedCode, verifier)
        // The state is in the store: a new verifier over it refuses the replay too.
        refused(codes[9], .oath.replayedCode, try OTPVerifier(store: store))
        // Another id counts on its own.
        #expect(try verifier.verify(codes[0], credential: credential, id: "other") == 0)
        try verifier.forget(id: "other")
        #expect(try verifier.verify(codes[0], credential: credential, id: "other") == 0)
    }

    @Test("TOTP: ±1 step, each step accepted once, earlier steps refused after a later one")
    func verifierTOTP() throws {
        let store = InMemoryStore()
        let verifier = try OTPVerifier(store: store)
        let credential = try Self.totp()
        let now: Int64 = 1_111_111_109  // step 0x23523EC
        let step = try OATH.timeStep(time: now, period: 30)
        func code(_ offset: Int64) throws -> String { try credential.code(at: now + offset * 30) }
        #expect(try code(0) == "07081804")
        #expect(try verifier.verify("07081804", credential: credential, id: "alice", time: now) == step)
        do {
            _ = try verifier.verify("07081804", credential: credential, id: "alice", time: now)
            Issue.record("the same TOTP code was accepted twice")
        } catch {
            #expect(error.code == .oath.replayedCode)
        }
        do {
            _ = try verifier.verify(try code(-1), credential: credential, id: "alice", time: now)
            Issue.record("an earlier step was accepted after a later one")
        } catch let error as TokenMintError {
            #expect(error.code == .oath.replayedCode)
        }
        #expect(try verifier.verify(try code(1), credential: credential, id: "alice", time: now) == step + 1, "one step of drift")
        do {
            _ = try verifier.verify(try code(2), credential: credential, id: "alice", time: now)
            Issue.record("two steps ahead was accepted")
        } catch let error as TokenMintError {
            #expect(error.code == .oath.invalidCode)
        }
        #expect(try verifier.verify(try code(2), credential: credential, id: "alice", time: now + 30) == step + 2)
        #expect(throws: TokenMintError.self) { _ = try verifier.verify("0708180", credential: credential, id: "alice", time: now) }
        #expect(throws: TokenMintError.self) { _ = try verifier.verify("07081804", credential: credential, id: "", time: now) }
        #expect(throws: TokenMintError.self) { _ = try OTPVerifier(store: store, lookAhead: -1) }
        #expect(throws: TokenMintError.self) { _ = try OTPVerifier(store: store, totpSteps: 11) }
    }

    // MARK: Sessions

    @Test("oathSession on a connection: the calls, then a newer session (OATH or FIDO2) ends it")
    func sessions() async throws {
        let authenticator = CTAP2Authenticator(try SoftwareAuthenticator(store: InMemoryStore()))
        let connection = InProcessConnection(authenticator, oath: try OATHApplication(store: InMemoryStore()))
        let first = try await connection.oathSession()
        try await first.put(try OTPAuthURI.parse("otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example&digits=8"))
        try await first.put(try Self.hotp())
        #expect(try await first.calculate("Example:alice", time: 59).value == "94287082")
        #expect(try await first.calculate("Example:bob").value == "755224")
        #expect(try await first.calculateAll(time: 1_111_111_109).first?.code?.value == "07081804")
        try await first.rename("Example:bob", issuer: nil, account: "bob")
        #expect(try await first.list().map(\.name) == ["Example:alice", "bob"])

        let second = try await connection.oathSession()
        do {
            _ = try await first.list()
            Issue.record("the replaced session still answered")
        } catch {
            #expect(error.code == .fido.sessionClosed)
        }
        #expect(try await second.calculate("bob").value == "287082")
        try await second.delete("bob")
        #expect(try await second.list().count == 1)

        _ = try await connection.fido2Session()
        do {
            _ = try await second.calculate("Example:alice", time: 59)
            Issue.record("an OATH session outlived a FIDO2 session opened after it")
        } catch {
            #expect(error.code == .fido.sessionClosed)
        }
        connection.close()
        await #expect(throws: TokenMintError.self) { _ = try await connection.oathSession() }

        // A connection without an OATH application says so.
        do {
            _ = try await InProcessConnection(authenticator).oathSession()
            Issue.record("an OATH session without an application")
        } catch {
            #expect(error.code == .oath.notSupported)
        }
    }
}
