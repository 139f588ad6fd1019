import TokenMintCore
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn
import TokenMintFIDO

/// ClientPIN (both PIN/UV auth protocols), tokens with permissions in
/// makeCredential and getAssertion, credential management and hmac-secret
/// over CTAP: the Swift session against the software authenticator in process.
@Suite("CTAP2 ClientPIN, credential management and hmac-secret")
struct ClientPINTests {
    static let rp = "example.org"

    static func expectStatus(_ status: CTAP2Status, _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await body()
            Issue.record("expected \(status)", sourceLocation: sourceLocation)
        } catch let error as TokenMintError {
            #expect(error.code == .fido.ctap(status), "\(error)", sourceLocation: sourceLocation)
        } catch { Issue.record("\(error)", sourceLocation: sourceLocation) }
    }

    static func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    @Test("PIN set, changed, tokens with permissions; retries durable, blocked after 3 in a row and after 8", arguments: PINUVAuthProtocol.allCases)
    func pin(version: PINUVAuthProtocol) async throws {
        let store = InMemoryStore()
        let authenticator = try SoftwareAuthenticator(store: store)  // no built-in UV: a PIN-only key
        let connection = InProcessConnection(CTAP2Authenticator(authenticator))
        let session = try await connection.fido2Session()
        #expect(try await session.getInfo().options["clientPin"] == false)
        #expect(try await session.pinRetries().retries == 8)
        await Self.expectStatus(.pinNotSet) { _ = try await session.pinToken(pin: "1234", permissions: .makeCredential, using: version) }
        await Self.expectStatus(.pinPolicyViolation) { try await session.setPIN("123", using: version) }
        try await session.setPIN("1234", using: version)
        #expect(try await session.getInfo().options["clientPin"] == true)
        await Self.expectStatus(.pinAuthInvalid) { try await session.setPIN("5678", using: version) }

        // Without a token, a discoverable credential needs verification; a plain one does not (makeCredUvNotRqd).
        await Self.expectStatus(.pinUvAuthTokenRequired) {
            _ = try await session.makeCredential(clientDataHash: Self.hash(1), rp: (Self.rp, nil), user: ([1], "a", nil), residentKey: true)
        }
        let plain = try await session.makeCredential(clientDataHash: Self.hash(1), rp: (Self.rp, nil), user: ([1], "a", nil))
        #expect(!plain.authenticatorData.flags.contains(.userVerified))

        // A token: UV set; its permissions are used up by the operation; ga cannot make credentials; another RP is refused.
        let token = try await session.pinToken(pin: "1234", permissions: [.makeCredential, .getAssertion], rpID: Self.rp, using: version)
        let made = try await session.makeCredential(clientDataHash: Self.hash(2), rp: (Self.rp, nil), user: ([2], "b", "B"), residentKey: true,
                                                    pinToken: token)
        #expect(made.authenticatorData.flags.contains(.userVerified))
        await Self.expectStatus(.pinAuthInvalid) {
            _ = try await session.getAssertion(rpID: Self.rp, clientDataHash: Self.hash(3), pinToken: token)
        }
        let gaOnly = try await session.pinToken(pin: "1234", permissions: .getAssertion, using: version)
        await Self.expectStatus(.pinAuthInvalid) {
            _ = try await session.makeCredential(clientDataHash: Self.hash(4), rp: (Self.rp, nil), user: ([3], "c", nil), pinToken: gaOnly)
        }
        let bound = try await session.pinToken(pin: "1234", permissions: .getAssertion, rpID: "other.example", using: version)
        await Self.expectStatus(.pinAuthInvalid) { _ = try await session.getAssertion(rpID: Self.rp, clientDataHash: Self.hash(5), pinToken: bound) }
        let ga = try await session.pinToken(pin: "1234", permissions: .getAssertion, using: version)
        let asserted = try await session.getAssertion(rpID: Self.rp, clientDataHash: Self.hash(6), pinToken: ga)
        #expect(asserted.authenticatorData.flags.contains(.userVerified) && asserted.credentialID == made.credentialID)
        await Self.expectStatus(.invalidParameter) { _ = try await session.pinToken(pin: "1234", permissions: [], using: version) }
        await Self.expectStatus(.unauthorizedPermission) { _ = try await session.pinToken(pin: "1234", permissions: .largeBlobWrite, using: version) }

        // Wrong PINs: each costs a retry before the comparison; the third in a row blocks until a power cycle.
        await Self.expectStatus(.pinInvalid) { _ = try await session.pinToken(pin: "0000", permissions: .getAssertion, using: version) }
        await Self.expectStatus(.pinInvalid) { try await session.changePIN(from: "0000", to: "5678", using: version) }
        await Self.expectStatus(.pinAuthBlocked) { _ = try await session.pinToken(pin: "0000", permissions: .getAssertion, using: version) }
        await Self.expectStatus(.pinAuthBlocked) { _ = try await session.pinToken(pin: "1234", permissions: .getAssertion, using: version) }
        #expect(try await session.pinRetries() == (5, true))
        // Power cycle: a new authenticator over the same store keeps the count, not the block.
        let restarted = try await InProcessConnection(CTAP2Authenticator(try SoftwareAuthenticator(store: store))).fido2Session()
        #expect(try await restarted.pinRetries() == (5, false))
        try await restarted.changePIN(from: "1234", to: "5678", using: version)
        #expect(try await restarted.pinRetries().retries == 8)
        await Self.expectStatus(.pinInvalid) { _ = try await restarted.pinToken(pin: "1234", permissions: .getAssertion, using: version) }
        _ = try await restarted.pinToken(pin: "5678", permissions: .getAssertion, using: version)

        // Eight wrong in all: blocked for good; reset clears the PIN.
        var blocked = restarted
        for attempt in 0..<8 {
            if attempt % 3 == 0 { blocked = try await InProcessConnection(CTAP2Authenticator(try SoftwareAuthenticator(store: store))).fido2Session() }
            do { _ = try await blocked.pinToken(pin: "9999", permissions: .getAssertion, using: version) } catch {}
        }
        await Self.expectStatus(.pinBlocked) { _ = try await blocked.pinToken(pin: "5678", permissions: .getAssertion, using: version) }
        try await blocked.reset()
        #expect(try await blocked.getInfo().options["clientPin"] == false)
        #expect(try await blocked.pinRetries().retries == 8)
    }

    @Test("alwaysUv: nothing without verification; touch-to-select answers PIN_NOT_SET / PIN_INVALID")
    func alwaysUV() async throws {
        let ctap = CTAP2Authenticator(try SoftwareAuthenticator(store: InMemoryStore()), alwaysUV: true)
        let session = try await InProcessConnection(ctap).fido2Session()
        let info = try await session.getInfo()
        #expect(info.options["alwaysUv"] == true && info.options["makeCredUvNotRqd"] == false && info.pinUVAuthProtocols == [2, 1])
        await Self.expectStatus(.pinUvAuthTokenRequired) {
            _ = try await session.makeCredential(clientDataHash: Self.hash(1), rp: (Self.rp, nil), user: ([1], "a", nil))
        }
        try await session.setPIN("2468")
        await Self.expectStatus(.pinUvAuthTokenRequired) {
            _ = try await session.makeCredential(clientDataHash: Self.hash(1), rp: (Self.rp, nil), user: ([1], "a", nil))
        }
        let token = try await session.pinToken(pin: "2468", permissions: .makeCredential)
        _ = try await session.makeCredential(clientDataHash: Self.hash(1), rp: (Self.rp, nil), user: ([1], "a", nil), pinToken: token)
        await Self.expectStatus(.pinUvAuthTokenRequired) { _ = try await session.getAssertion(rpID: Self.rp, clientDataHash: Self.hash(2)) }
        // A zero-length pinUvAuthParam is the platform's "touch to select".
        let request = [CTAP2Command.getAssertion.rawValue] + CBOREncoder.encode(.map([
            CBORMapEntry(key: .unsigned(1), value: .text(Self.rp)), CBORMapEntry(key: .unsigned(2), value: .bytes(Self.hash(3))),
            CBORMapEntry(key: .unsigned(6), value: .bytes([])), CBORMapEntry(key: .unsigned(7), value: .unsigned(2)),
        ]))
        #expect(await ctap.respond(to: request) == [CTAP2Status.pinInvalid.rawValue])
        // Malformed ClientPIN parameters: the statuses CTAP names.
        let bad: [([(UInt64, CBOR)], CTAP2Status)] = [
            ([(0x02, .unsigned(0x02))], .missingParameter),
            ([(0x01, .unsigned(3)), (0x02, .unsigned(0x02))], .invalidParameter),
            ([(0x01, .unsigned(2)), (0x02, .unsigned(0x42))], .invalidSubcommand),
            ([(0x01, .unsigned(2)), (0x02, .unsigned(0x05)), (0x03, .map([])), (0x06, .bytes(Self.hash(0)))], .invalidParameter),
            ([(0x01, .unsigned(2)), (0x02, .text("x"))], .cborUnexpectedType),
        ]
        for (entries, status) in bad {
            let bytes = [CTAP2Command.clientPIN.rawValue] + CBOREncoder.encode(.map(entries.map { CBORMapEntry(key: .unsigned($0.0), value: $0.1) }))
            #expect(await ctap.respond(to: bytes) == [status.rawValue], "\(entries)")
        }
        // An off-curve platform key is refused, not used.
        let offCurve = CBOR.map([CBORMapEntry(key: .int(1), value: .int(2)), CBORMapEntry(key: .int(3), value: .int(-25)),
                                 CBORMapEntry(key: .int(-1), value: .int(1)), CBORMapEntry(key: .int(-2), value: .bytes(Self.hash(1))),
                                 CBORMapEntry(key: .int(-3), value: .bytes(Self.hash(2)))])
        let offCurveRequest = [CTAP2Command.clientPIN.rawValue] + CBOREncoder.encode(.map([
            CBORMapEntry(key: .unsigned(1), value: .unsigned(2)), CBORMapEntry(key: .unsigned(2), value: .unsigned(5)),
            CBORMapEntry(key: .unsigned(3), value: offCurve), CBORMapEntry(key: .unsigned(6), value: .bytes([UInt8](repeating: 0, count: 32))),
        ]))
        #expect(await ctap.respond(to: offCurveRequest) == [CTAP2Status.invalidParameter.rawValue])
        #expect(try await session.pinRetries().retries == 8)
    }

    /// The built-in sensor's answers, changed by the test.
    actor Sensor {
        var accepts = false
        func set(_ value: Bool) { accepts = value }
    }

    @Test("built-in UV: each failure spends a durable retry, 8 block it (UV_BLOCKED) across restarts, a correct PIN unblocks")
    func userVerificationRetries() async throws {
        let store = InMemoryStore()
        let sensor = Sensor()
        func open() async throws -> FIDO2Session {
            let software = try SoftwareAuthenticator(store: store, supportsUserVerification: true, verifyUser: { _ in await sensor.accepts })
            return try await InProcessConnection(CTAP2Authenticator(software)).fido2Session()
        }
        var session = try await open()
        #expect(try await session.userVerificationRetries() == 8)
        await Self.expectStatus(.userVerificationInvalid) { _ = try await session.uvToken(permissions: .getAssertion) }
        await Self.expectStatus(.operationDenied) {
            _ = try await session.makeCredential(clientDataHash: Self.hash(1), rp: (Self.rp, nil), user: ([1], "a", nil), userVerification: true)
        }
        #expect(try await session.userVerificationRetries() == 6)
        // A success gives every retry back.
        await sensor.set(true)
        _ = try await session.uvToken(permissions: .getAssertion)
        #expect(try await session.userVerificationRetries() == 8)
        await sensor.set(false)
        for attempt in 0..<8 {
            if attempt == 4 { session = try await open() }  // the count survives a restart
            do { _ = try await session.uvToken(permissions: .getAssertion) } catch {}
        }
        #expect(try await session.userVerificationRetries() == 0)
        // Blocked: even a sensor that now accepts is not asked.
        await sensor.set(true)
        await Self.expectStatus(.userVerificationBlocked) { _ = try await session.uvToken(permissions: .getAssertion) }
        await Self.expectStatus(.userVerificationBlocked) {
            _ = try await session.getAssertion(rpID: Self.rp, clientDataHash: Self.hash(2), userVerification: true)
        }
        session = try await open()
        await Self.expectStatus(.userVerificationBlocked) { _ = try await session.uvToken(permissions: .getAssertion) }
        // The PIN is the way back.
        try await session.setPIN("1357")
        _ = try await session.pinToken(pin: "1357", permissions: .getAssertion)
        #expect(try await session.userVerificationRetries() == 8)
        _ = try await session.uvToken(permissions: .getAssertion)
        // A PIN-only key has no built-in retries to report.
        let pinOnly = try await InProcessConnection(CTAP2Authenticator(try SoftwareAuthenticator(store: InMemoryStore()))).fido2Session()
        await Self.expectStatus(.invalidSubcommand) { _ = try await pinOnly.userVerificationRetries() }
    }

    @Test("PINs are sent in Normalization Form C: a combining accent and the precomposed letter are one PIN")
    func pinNormalization() async throws {
        let session = try await InProcessConnection(CTAP2Authenticator(try SoftwareAuthenticator(store: InMemoryStore()))).fido2Session()
        let decomposed = "cafe\u{0301}1"  // e + COMBINING ACUTE ACCENT
        let precomposed = "caf\u{00E9}1"
        #expect(Array(decomposed.utf8) != Array(precomposed.utf8))
        try await session.setPIN(decomposed)
        _ = try await session.pinToken(pin: precomposed, permissions: .getAssertion)
        try await session.changePIN(from: precomposed, to: "\u{212B}ngstr\u{00F6}m")  // ANGSTROM SIGN becomes Å
        _ = try await session.pinToken(pin: "\u{00C5}ngstro\u{0308}m", permissions: .getAssertion)
        #expect(try await session.pinRetries().retries == 8)
    }

    @Test("credential management: metadata, RPs, credentials whose keys verify, update user, delete")
    func management() async throws {
        let session = try await InProcessConnection(CTAP2Authenticator(try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)))
            .fido2Session()
        try await session.setPIN("1234")
        var made: [FIDO2Session.Credential] = []
        for (rp, user) in [("a.example", UInt8(1)), ("b.example", 2), ("b.example", 3)] {
            let token = try await session.pinToken(pin: "1234", permissions: .makeCredential)
            made.append(try await session.makeCredential(clientDataHash: Self.hash(user), rp: (rp, nil), user: ([user], "u\(user)", nil),
                                                         algorithms: [user == 2 ? .edDSA : .es256], residentKey: true,
                                                         extensions: .init(largeBlobKey: user == 3), pinToken: token))
        }
        let ga = try await session.pinToken(pin: "1234", permissions: .getAssertion)
        await Self.expectStatus(.pinAuthInvalid) { _ = try await session.credentialMetadata(token: ga) }
        var cm = try await session.pinToken(pin: "1234", permissions: .credentialManagement)
        #expect(try await session.credentialMetadata(token: cm) == (3, SoftwareAuthenticator.defaultMaximumResidentCredentials - 3))
        #expect(try await session.relyingParties(token: cm) == ["a.example", "b.example"])
        let listed = try await session.credentials(rpID: "b.example", token: cm)
        #expect(listed.map(\.userID) == [[2], [3]] && listed.map(\.credentialID) == [made[1].credentialID, made[2].credentialID])
        #expect(listed[0].largeBlobKey == nil && listed[1].largeBlobKey?.count == 32 && listed[0].protection == .userVerificationOptional)
        // The listed key verifies the credential's assertion.
        let assertion = try await session.getAssertion(rpID: "b.example", clientDataHash: Self.hash(9), allowList: [made[1].credentialID])
        #expect(listed[0].publicKey == made[1].authenticatorData.attestedCredential?.publicKey)
        #expect(listed[0].publicKey.isValidSignature(assertion.signature, for: assertion.authenticatorData.bytes + Self.hash(9)))
        // That getAssertion, with user presence, used up the token in use (CTAP 2.1 §6.2.2 step 9).
        await Self.expectStatus(.pinAuthInvalid) { _ = try await session.credentials(rpID: "b.example", token: cm) }
        cm = try await session.pinToken(pin: "1234", permissions: .credentialManagement)
        #expect(try await session.credentials(rpID: "none.example", token: cm).isEmpty)
        // Update the user; a different user handle is refused.
        try await session.updateUser(credentialID: made[2].credentialID, userID: [3], name: "renamed", displayName: "Renamed", token: cm)
        await Self.expectStatus(.invalidParameter) {
            try await session.updateUser(credentialID: made[2].credentialID, userID: [9], name: "x", displayName: nil, token: cm)
        }
        let renamed = try await session.credentials(rpID: "b.example", token: cm)
        #expect(renamed[1].userName == "renamed" && renamed[1].userDisplayName == "Renamed")
        // Delete: gone from the list, the count and getAssertion; the RP goes when its last credential does.
        try await session.deleteCredential(made[0].credentialID, token: cm)
        await Self.expectStatus(.noCredentials) { try await session.deleteCredential(made[0].credentialID, token: cm) }
        #expect(try await session.relyingParties(token: cm) == ["b.example"])
        #expect(try await session.credentialMetadata(token: cm).existing == 2)
        await Self.expectStatus(.noCredentials) {
            _ = try await session.getAssertion(rpID: "a.example", clientDataHash: Self.hash(1), allowList: [made[0].credentialID])
        }
        // A token bound to one RP cannot list RPs or count credentials.
        let bound = try await session.pinToken(pin: "1234", permissions: .credentialManagement, rpID: "b.example")
        await Self.expectStatus(.pinAuthInvalid) { _ = try await session.relyingParties(token: bound) }
        await Self.expectStatus(.pinAuthInvalid) { _ = try await session.credentialMetadata(token: bound) }
        #expect(try await session.credentials(rpID: "b.example", token: bound).count == 2)
    }

    @Test("hmac-secret over CTAP, both protocols: outputs stable per salt, different with UV, sealed on the wire", arguments: PINUVAuthProtocol.allCases)
    func hmacSecret(version: PINUVAuthProtocol) async throws {
        let session = try await InProcessConnection(CTAP2Authenticator(try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)))
            .fido2Session()
        let made = try await session.makeCredential(clientDataHash: Self.hash(1), rp: (Self.rp, nil), user: ([1], "a", nil),
                                                    extensions: .init(hmacSecret: true))
        #expect(made.authenticatorData.extensions?[.text("hmac-secret")] == .bool(true))
        let salt1 = Self.hash(0x11), salt2 = Self.hash(0x22)
        func outputs(_ salts: ([UInt8], [UInt8]?), uv: Bool) async throws -> [UInt8] {
            let token = uv ? try await session.uvToken(permissions: .getAssertion, using: version) : nil
            let assertion = try await session.getAssertion(rpID: Self.rp, clientDataHash: Self.hash(2), allowList: [made.credentialID],
                                                           hmacSecret: salts, pinToken: token, using: version)
            let clear = try #require(assertion.hmacSecret)
            let sealed = try #require(assertion.authenticatorData.extensions?[.text("hmac-secret")]?.bytesValue)
            #expect(sealed.count == clear.count + (version == .two ? 16 : 0))
            #expect(!sealed.contains(subsequence: clear.unsafeCopy))
            return clear.unsafeCopy
        }
        let one = try await outputs((salt1, nil), uv: false)
        #expect(one.count == 32)
        #expect(try await outputs((salt1, nil), uv: false) == one)
        let two = try await outputs((salt1, salt2), uv: false)
        #expect(two.count == 64 && Array(two[0..<32]) == one && Array(two[32...]) != one)
        #expect(try await outputs((salt1, nil), uv: true) != one)
        // hmac-secret-mc: the same outputs at creation as the first getAssertion gives.
        let early = try await session.makeCredential(clientDataHash: Self.hash(3), rp: (Self.rp, nil), user: ([2], "b", nil),
                                                     extensions: .init(hmacSecretMC: (salt1, salt2)))
        let atCreation = try #require(early.hmacSecret)
        let later = try await session.getAssertion(rpID: Self.rp, clientDataHash: Self.hash(4), allowList: [early.credentialID],
                                                   hmacSecret: (salt1, salt2), using: version)
        #expect(atCreation.count == 64 && later.hmacSecret == atCreation && atCreation.unsafeCopy != two)
        // Salts are 32 bytes each.
        await Self.expectStatus(.invalidLength) {
            _ = try await session.getAssertion(rpID: Self.rp, clientDataHash: Self.hash(2), allowList: [made.credentialID], hmacSecret: ([1], nil))
        }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
