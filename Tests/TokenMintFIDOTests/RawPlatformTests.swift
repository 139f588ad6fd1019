import TokenMintCore
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn
import TokenMintFIDO

/// A platform written here from CTAP 2.1 §6.5.7 (PIN/UV auth protocol 2)
/// with the public primitives only, independent of the session's code: it
/// builds requests byte by byte, including the malformed ones a session
/// would refuse to send.
struct RawPlatform {
    let ctap: CTAP2Authenticator
    let key = try! ECDSA.PrivateKey(curve: .p256)
    var hmacKey = SecureBytes([])
    var aesKey = SecureBytes([])

    init(_ ctap: CTAP2Authenticator) { self.ctap = ctap }

    static func map(_ entries: [(UInt64, CBOR)]) -> CBOR { .map(entries.map { CBORMapEntry(key: .unsigned($0.0), value: $0.1) }) }

    func send(_ command: CTAP2Command, _ entries: [(UInt64, CBOR)]) async -> (status: UInt8, map: CBOR?) {
        let response = await ctap.respond(to: [command.rawValue] + CBOREncoder.encode(Self.map(entries)))
        return (response.first ?? 0xFF, response.count > 1 ? try? CBORDecoder.decode(Array(response.dropFirst())) : nil)
    }

    var coseKey: CBOR {
        let point = key.publicKey.x963Representation
        return .map([CBORMapEntry(key: .int(1), value: .int(2)), CBORMapEntry(key: .int(3), value: .int(-25)),
                     CBORMapEntry(key: .int(-1), value: .int(1)), CBORMapEntry(key: .int(-2), value: .bytes(Array(point[1..<33]))),
                     CBORMapEntry(key: .int(-3), value: .bytes(Array(point[33..<65])))])
    }

    /// getKeyAgreement, then the two protocol 2 keys from HKDF-SHA-256 of the ECDH secret.
    mutating func agree() async throws {
        let answer = await send(.clientPIN, [(0x01, .unsigned(2)), (0x02, .unsigned(2))])
        let peer = try #require(answer.map?[.unsigned(1)])
        let x = try #require(peer[.int(-2)]?.bytesValue), y = try #require(peer[.int(-3)]?.bytesValue)
        let z = try ECDH.sharedSecret(key, try ECDSA.PublicKey(x963Representation: [4] + x + y, curve: .p256))
        let salt = [UInt8](repeating: 0, count: 32)
        hmacKey = try HKDF.deriveKey(inputKeyMaterial: z, salt: salt, info: Array("CTAP2 HMAC key".utf8), outputByteCount: 32)
        aesKey = try HKDF.deriveKey(inputKeyMaterial: z, salt: salt, info: Array("CTAP2 AES key".utf8), outputByteCount: 32)
    }

    func encrypt(_ bytes: [UInt8]) throws -> [UInt8] {
        let iv = SecureRandom.bytes(count: 16)
        return iv + (try AES256CBC.encrypt(SecureBytes(bytes), key: aesKey, iv: iv))
    }

    func decrypt(_ bytes: [UInt8]) throws -> SecureBytes { try AES256CBC.decrypt(bytes.dropFirst(16), key: aesKey, iv: bytes.prefix(16)) }

    static func tag(_ key: SecureBytes, _ message: [UInt8]) throws -> [UInt8] { HMAC.authenticationCode(for: message, using: try HMACKey(secret: key, hash: .sha256)) }

    func authenticate(_ message: [UInt8]) throws -> [UInt8] { try Self.tag(hmacKey, message) }

    static func padded(_ pin: String) -> [UInt8] { Array(pin.utf8) + [UInt8](repeating: 0, count: 64 - pin.utf8.count) }
    static func pinHash(_ pin: String) -> [UInt8] { Array(HashFunction.sha256.hash(Array(pin.utf8)).prefix(16)) }

    /// A PIN token with `permissions` (and `rpID`), decrypted.
    mutating func token(_ pin: String, permissions: UInt64, rpID: String? = nil) async throws -> SecureBytes {
        try await agree()
        var entries: [(UInt64, CBOR)] = [(0x01, .unsigned(2)), (0x02, .unsigned(9)), (0x03, coseKey),
                                         (0x06, .bytes(try encrypt(Self.pinHash(pin)))), (0x09, .unsigned(permissions))]
        if let rpID { entries.append((0x0A, .text(rpID))) }
        let answer = await send(.clientPIN, entries)
        #expect(answer.status == 0)
        return try decrypt(try #require(answer.map?[.unsigned(2)]?.bytesValue))
    }
}

@Suite("CTAP2 PIN protocol 2 from an independent platform: malformed requests")
struct RawPlatformTests {
    static func authenticator() throws -> (CTAP2Authenticator, SoftwareAuthenticator) {
        let software = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)
        return (CTAP2Authenticator(software), software)
    }

    @Test("setPIN: short, empty and wrong auth params refused; a wrong curve refused; then set, and a token works")
    func setPIN() async throws {
        let (ctap, _) = try Self.authenticator()
        var platform = RawPlatform(ctap)
        try await platform.agree()
        let newPinEnc = try platform.encrypt(RawPlatform.padded("4711"))
        let good = try platform.authenticate(newPinEnc)
        for param in [[], Array(good.prefix(16)), [UInt8](repeating: 0, count: 32), Array(good.dropLast()) + [good.last! ^ 1]] {
            let answer = await platform.send(.clientPIN, [(0x01, .unsigned(2)), (0x02, .unsigned(3)), (0x03, platform.coseKey),
                                                          (0x04, .bytes(param)), (0x05, .bytes(newPinEnc))])
            #expect(answer.status == CTAP2Status.pinAuthInvalid.rawValue, "a \(param.count)-byte pinUvAuthParam")
        }
        var wrongCurve = platform.coseKey
        if case .map(var entries) = wrongCurve {
            entries[2] = CBORMapEntry(key: .int(-1), value: .int(2))
            wrongCurve = .map(entries)
        }
        let curve = await platform.send(.clientPIN, [(0x01, .unsigned(2)), (0x02, .unsigned(3)), (0x03, wrongCurve), (0x04, .bytes(good)),
                                                     (0x05, .bytes(newPinEnc))])
        #expect(curve.status == CTAP2Status.invalidParameter.rawValue)
        let set = await platform.send(.clientPIN, [(0x01, .unsigned(2)), (0x02, .unsigned(3)), (0x03, platform.coseKey),
                                                   (0x04, .bytes(good)), (0x05, .bytes(newPinEnc))])
        #expect(set.status == 0)
        let token = try await platform.token("4711", permissions: 0x02)
        let hash = [UInt8](repeating: 3, count: 32)
        let nothing = await platform.send(.getAssertion, [(0x01, .text("example.org")), (0x02, .bytes(hash)),
                                                          (0x06, .bytes(try RawPlatform.tag(token, hash))), (0x07, .unsigned(2))])
        #expect(nothing.status == CTAP2Status.noCredentials.rawValue, "the token verified; there is just no credential")
    }

    @Test("hmac-secret: a wrong saltAuth and a short salt are refused by the authenticator")
    func hmacSecret() async throws {
        let (ctap, _) = try Self.authenticator()
        let session = try await InProcessConnection(ctap).fido2Session()
        let made = try await session.makeCredential(clientDataHash: [UInt8](repeating: 1, count: 32), rp: ("example.org", nil), user: ([1], "a", nil),
                                                    extensions: .init(hmacSecret: true))
        var platform = RawPlatform(ctap)
        func assert(saltEnc: [UInt8], saltAuth: [UInt8]) async -> UInt8 {
            let input = CBOR.map([CBORMapEntry(key: .unsigned(1), value: platform.coseKey), CBORMapEntry(key: .unsigned(2), value: .bytes(saltEnc)),
                                  CBORMapEntry(key: .unsigned(3), value: .bytes(saltAuth)), CBORMapEntry(key: .unsigned(4), value: .unsigned(2))])
            let descriptor = CBOR.map([CBORMapEntry(key: .text("id"), value: .bytes(made.credentialID)), CBORMapEntry(key: .text("type"), value: .text("public-key"))])
            return await platform.send(.getAssertion, [(0x01, .text("example.org")), (0x02, .bytes([UInt8](repeating: 2, count: 32))),
                                                       (0x03, .array([descriptor])), (0x04, .map([CBORMapEntry(key: .text("hmac-secret"), value: input)]))]).status
        }
        try await platform.agree()
        let saltEnc = try platform.encrypt([UInt8](repeating: 7, count: 32))
        #expect(await assert(saltEnc: saltEnc, saltAuth: [UInt8](repeating: 0, count: 32)) == CTAP2Status.pinAuthInvalid.rawValue)
        #expect(await assert(saltEnc: saltEnc, saltAuth: Array(try platform.authenticate(saltEnc).prefix(16))) == CTAP2Status.pinAuthInvalid.rawValue)
        let short = try platform.encrypt([UInt8](repeating: 7, count: 16))
        #expect(await assert(saltEnc: short, saltAuth: try platform.authenticate(short)) == CTAP2Status.invalidLength.rawValue)
        #expect(await assert(saltEnc: saltEnc, saltAuth: try platform.authenticate(saltEnc)) == 0)
    }

    @Test("credential management: an interrupted enumeration is dropped by another command; a bound token learns nothing of other RPs")
    func management() async throws {
        let (ctap, _) = try Self.authenticator()
        let session = try await InProcessConnection(ctap).fido2Session()
        try await session.setPIN("4711")
        for (rp, user) in [("a.example", UInt8(1)), ("b.example", 2), ("c.example", 3)] {
            let token = try await session.pinToken(pin: "4711", permissions: .makeCredential)
            _ = try await session.makeCredential(clientDataHash: [UInt8](repeating: user, count: 32), rp: (rp, nil), user: ([user], "u", nil),
                                                 residentKey: true, pinToken: token)
        }
        var platform = RawPlatform(ctap)
        let token = try await platform.token("4711", permissions: 0x04)
        let begin = await platform.send(.credentialManagement, [(0x01, .unsigned(2)), (0x03, .unsigned(2)),
                                                                (0x04, .bytes(try RawPlatform.tag(token, [0x02])))])
        #expect(begin.status == 0 && begin.map?[.unsigned(5)]?.intValue == 3)
        #expect(await platform.send(.credentialManagement, [(0x01, .unsigned(3))]).map?[.unsigned(3)]?[.text("id")]?.textValue == "b.example")
        _ = await platform.send(.getInfo, [])
        #expect(await platform.send(.credentialManagement, [(0x01, .unsigned(3))]).status == CTAP2Status.notAllowed.rawValue,
                "the rest of the enumeration is gone after getInfo")
        // A token bound to a.example: another RP's credentials, known or not, are all PIN_AUTH_INVALID.
        let bound = try await platform.token("4711", permissions: 0x04, rpID: "a.example")
        for rp in ["b.example", "unknown.example"] {
            let params = RawPlatform.map([(0x01, .bytes(HashFunction.sha256.hash(Array(rp.utf8))))])
            let answer = await platform.send(.credentialManagement, [(0x01, .unsigned(4)), (0x02, params), (0x03, .unsigned(2)),
                                                                     (0x04, .bytes(try RawPlatform.tag(bound, [0x04] + CBOREncoder.encode(params))))])
            #expect(answer.status == CTAP2Status.pinAuthInvalid.rawValue, "\(rp)")
        }
        let unknown = RawPlatform.map([(0x02, .map([CBORMapEntry(key: .text("id"), value: .bytes([9, 9])),
                                                    CBORMapEntry(key: .text("type"), value: .text("public-key"))]))])
        let delete = await platform.send(.credentialManagement, [(0x01, .unsigned(6)), (0x02, unknown), (0x03, .unsigned(2)),
                                                                 (0x04, .bytes(try RawPlatform.tag(bound, [0x06] + CBOREncoder.encode(unknown))))])
        #expect(delete.status == CTAP2Status.pinAuthInvalid.rawValue)
    }
}
