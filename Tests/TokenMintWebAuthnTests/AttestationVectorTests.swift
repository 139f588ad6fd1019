import TokenMintCore
import Foundation
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn

/// Certificate-based attestation against vector files in `Vectors/webauthn/`:
/// how a chain is anchored (`attestation-chains.json`, made with
/// pyca/cryptography and python-fido2), Apple's anonymous attestation
/// (`apple.json`) and Android key attestation (`android-key.json`), both
/// from py_webauthn's published tests.
@Suite("Attestation vectors")
struct AttestationVectorTests {
    struct Case {
        let name: String
        let clientDataJSON: [UInt8]
        let attestationObject: [UInt8]
        let rawID: [UInt8]
        let challenge: [UInt8]
        let rpID: String
        let origin: String
        let item: [String: Any]
    }

    static func load(_ file: String) throws -> (cases: [Case], roots: [String: [UInt8]]) {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/webauthn/" + file)
        let data = try #require(try? Data(contentsOf: url), "Vectors/webauthn/\(file) is absent: the repository ships it")
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var roots: [String: [UInt8]] = [:]
        for (name, text) in root["roots"] as? [String: String] ?? [:] { roots[name] = [UInt8](try #require(Data(base64Encoded: text))) }
        func text(_ object: [String: Any], _ name: String) throws -> String {
            guard let value = object[name] as? String else { throw TokenMintError(.webAuthn.invalidParameter, "\(name) is missing") }
            return value
        }
        var cases: [Case] = []
        for item in root["cases"] as? [[String: Any]] ?? [] {
            let credential = item["credential"] as? [String: Any] ?? [:]
            let response = credential["response"] as? [String: Any] ?? [:]
            cases.append(Case(
                name: try text(item, "name"), clientDataJSON: try Base64URL.decode(try text(response, "clientDataJSON")),
                attestationObject: try Base64URL.decode(try text(response, "attestationObject")),
                rawID: try Base64URL.decode(try text(credential, "rawId")), challenge: try Base64URL.decode(try text(item, "challenge")),
                rpID: try text(item, "rpId"), origin: try text(item, "origin"), item: item))
        }
        return (cases, roots)
    }

    static func verify(
        _ item: Case, roots: [[UInt8]], at time: Int64? = nil, attestationObject: [UInt8]? = nil,
        unanchored: RelyingPartyPolicy.UnanchoredAttestation = .refuse
    ) throws(TokenMintError) -> RegisteredCredential {
        var policy = RelyingPartyPolicy(rpID: item.rpID, origins: [item.origin])
        policy.unanchoredAttestation = unanchored
        policy.attestationRoots = roots
        policy.attestationTime = time
        return try RelyingPartyVerifier(policy: policy).verifyRegistration(
            clientDataJSON: item.clientDataJSON, attestationObject: attestationObject ?? item.attestationObject, challenge: item.challenge,
            rawID: item.rawID)
    }

    static func failure(_ body: () throws(TokenMintError) -> RegisteredCredential) -> TokenMintError? {
        do { _ = try body() } catch { return error }
        return nil
    }

    @Test("chains: a self-signed root sent in x5c anchors nothing (GHSA-6hxq-p678-4hr2); intermediates; validity time")
    func chains() throws {
        let (cases, roots) = try Self.load("attestation-chains.json")
        #expect(cases.count == 6)
        for item in cases {
            let time = (item.item["validAt"] as? NSNumber)?.int64Value
            for name in item.item["acceptedWithRoots"] as? [String] ?? [] {
                let root = try #require(roots[name])
                #expect(throws: Never.self, "\(item.name) with root \(name)") { _ = try Self.verify(item, roots: [root], at: time) }
            }
            for name in item.item["refusedWithRoots"] as? [String] ?? [] {
                let root = try #require(roots[name])
                let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [root], at: time) }
                #expect(error?.code == .webAuthn.invalidAttestation, "\(item.name) with root \(name): \(String(describing: error))")
            }
        }
        // The expired leaf: valid at its registration, not now, not after its end.
        let expired = try #require(cases.first { $0.name == "expired leaf" })
        let trusted = try #require(roots["trusted"])
        let until = try #require((expired.item["validUntil"] as? NSNumber)?.int64Value)
        #expect(Self.failure { () throws(TokenMintError) in try Self.verify(expired, roots: [trusted]) }?.code == .webAuthn.invalidAttestation)
        #expect(Self.failure { () throws(TokenMintError) in try Self.verify(expired, roots: [trusted], at: until + 1) }?.code == .webAuthn.invalidAttestation)
        // A compound attestation of one statement, or one nested in another, is malformed.
        let compound = try #require(cases.first { $0.name == "compound of two packed statements" })
        let parsed = try CBORDecoder.decode(compound.attestationObject, requireCanonical: false)
        let statements = try #require(parsed[.text("attStmt")]?.arrayValue)
        let authData = try #require(parsed[.text("authData")]?.bytesValue)
        for (label, statement) in [("one statement", CBOR.array([statements[0]])),
                                   ("nested", .array([statements[0], .map([CBORMapEntry(key: .text("fmt"), value: .text("compound")),
                                                                             CBORMapEntry(key: .text("attStmt"), value: .array(statements))])])),
                                   ("a none inside", .array([statements[0], .map([CBORMapEntry(key: .text("fmt"), value: .text("none")),
                                                                                    CBORMapEntry(key: .text("attStmt"), value: .map([]))])]))] {
            let object = CBOREncoder.encode(.map([CBORMapEntry(key: .text("fmt"), value: .text("compound")), CBORMapEntry(key: .text("attStmt"), value: statement),
                                                  CBORMapEntry(key: .text("authData"), value: .bytes(authData))]))
            let error = Self.failure { () throws(TokenMintError) in try Self.verify(compound, roots: [trusted], attestationObject: object) }
            #expect(error?.code == .webAuthn.invalidAttestation, "compound, \(label)")
        }
        // A packed statement whose attStmt is an array is malformed too.
        let packedArray = CBOREncoder.encode(.map([CBORMapEntry(key: .text("fmt"), value: .text("packed")), CBORMapEntry(key: .text("attStmt"), value: .array(statements)),
                                                   CBORMapEntry(key: .text("authData"), value: .bytes(authData))]))
        #expect(Self.failure { () throws(TokenMintError) in try Self.verify(compound, roots: [trusted], attestationObject: packedArray) }?.code == .webAuthn.invalidAttestation)
        // No root configured: nothing anchors.
        let first = try #require(cases.first)
        #expect(Self.failure { () throws(TokenMintError) in try Self.verify(first, roots: []) }?.code == .webAuthn.invalidAttestation)
    }

    /// The attestation object with one member of its statement or its
    /// authenticator data changed by `change`.
    static func changing(_ object: [UInt8], member: String, inStatement: Bool, _ change: ([UInt8]) -> [UInt8]) throws -> [UInt8] {
        let parsed = try CBORDecoder.decode(object, requireCanonical: false)
        guard case .map(let entries) = parsed else {
            Issue.record("the attestation object is not a map")
            return object
        }
        let rebuilt = entries.map { entry -> CBORMapEntry in
            if !inStatement, entry.key == .text(member) { return CBORMapEntry(key: entry.key, value: .bytes(change(entry.value.bytesValue ?? []))) }
            guard inStatement, entry.key == .text("attStmt"), case .map(let statement) = entry.value else { return entry }
            return CBORMapEntry(key: entry.key, value: .map(statement.map { inner in
                inner.key == .text(member) ? CBORMapEntry(key: inner.key, value: .bytes(change(inner.value.bytesValue ?? []))) : inner
            }))
        }
        return CBOREncoder.encode(.map(rebuilt))
    }

    /// One published registration of `file`: accepted at the time its test
    /// set, refused now (a certificate has expired since), without its root,
    /// with its signature counter changed (what the attestation covers), and
    /// with another root.
    func published(_ file: String, format: String, otherRoot: [UInt8]) throws {
        let (cases, roots) = try Self.load(file)
        #expect(cases.count == 1 && roots.count == 1)
        let item = try #require(cases.first)
        let root = try #require(roots.values.first)
        let time = try #require((item.item["validationTime"] as? NSNumber)?.int64Value)
        let credential = try Self.verify(item, roots: [root], at: time)
        #expect(credential.attestationFormat == format)
        #expect(credential.credentialID == item.rawID)
        let now = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [root]) }
        #expect(now?.code == .webAuthn.invalidAttestation, "\(String(describing: now))")
        #expect(Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [], at: time) }?.code == .webAuthn.invalidAttestation)
        #expect(Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [otherRoot], at: time) }?.code == .webAuthn.invalidAttestation)
        // signCount is bytes 33 to 36 of authData: covered by the nonce (apple) or the signature (android-key).
        for offset in 33..<37 {
            let changed = try Self.changing(item.attestationObject, member: "authData", inStatement: false) { bytes in
                var copy = bytes
                copy[offset] ^= 0x01
                return copy
            }
            let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [root], at: time, attestationObject: changed) }
            #expect(error?.code == .webAuthn.invalidAttestation, "authData byte \(offset): \(String(describing: error))")
        }
    }

    @Test("apple: py_webauthn's passkey registration verifies against Apple's WebAuthn root; changes and other roots refused")
    func apple() throws {
        let other = try #require(try Self.load("android-key.json").roots.values.first)
        try published("apple.json", format: "apple", otherRoot: other)
    }

    @Test("android-key: py_webauthn's hardware-backed registration verifies against Google's root; a changed signature is refused")
    func androidKey() throws {
        let other = try #require(try Self.load("apple.json").roots.values.first)
        try published("android-key.json", format: "android-key", otherRoot: other)
        let (cases, roots) = try Self.load("android-key.json")
        let item = try #require(cases.first)
        let root = try #require(roots.values.first)
        let time = try #require((item.item["validationTime"] as? NSNumber)?.int64Value)
        for index in [0, 10, 40, 70] {
            let changed = try Self.changing(item.attestationObject, member: "sig", inStatement: true) { bytes in
                var copy = bytes
                if index < copy.count { copy[index] ^= 0x01 }
                return copy
            }
            let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [root], at: time, attestationObject: changed) }
            #expect(error?.code == .webAuthn.invalidAttestation, "sig byte \(index)")
        }
    }

    @Test("android-safetynet: py_webauthn's registrations at the time Google signed them; late, now, rootless and changed ones refused")
    func safetyNet() throws {
        let (cases, roots) = try Self.load("android-safetynet.json")
        #expect(!cases.isEmpty)
        let anchors = Array(roots.values)
        for item in cases {
            let stamp = try #require((item.item["timestampMs"] as? NSNumber)?.int64Value)
            let time = stamp / 1000
            let expected = item.item["pyWebauthnResult"] as? String ?? ""
            guard expected == "accepted" else {
                let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: anchors, at: time) }
                #expect(error?.code == .webAuthn.invalidAttestation, "\(item.name): py_webauthn says \(expected)")
                continue
            }
            let credential = try Self.verify(item, roots: anchors, at: time)
            #expect(credential.attestationFormat == "android-safetynet")
            for (label, late) in [("61 s after it was signed", time + 61), ("61 s before", time - 61), ("now", Int64(Date().timeIntervalSince1970))] {
                let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: anchors, at: late) }
                #expect(error?.code == .webAuthn.invalidAttestation, "\(item.name) \(label)")
            }
            #expect(Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [], at: time) }?.code == .webAuthn.invalidAttestation)
            let changed = try Self.changing(item.attestationObject, member: "authData", inStatement: false) { bytes in
                var copy = bytes
                copy[33] ^= 0x01
                return copy
            }
            let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: anchors, at: time, attestationObject: changed) }
            #expect(error?.code == .webAuthn.invalidAttestation, "a changed signCount leaves the nonce wrong")
            let response = try Self.changing(item.attestationObject, member: "response", inStatement: true) { bytes in
                var copy = bytes
                copy[copy.count - 5] = copy[copy.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
                return copy
            }
            let tampered = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: anchors, at: time, attestationObject: response) }
            #expect(tampered?.code == .webAuthn.invalidAttestation, "a changed JWS signature")
        }
    }

    @Test("tpm: py_webauthn's Windows Hello registrations (RSA and ECC, RS1) chain to Microsoft's TPM root; changes refused")
    func tpm() throws {
        let (cases, roots) = try Self.load("tpm.json")
        #expect(cases.count == 4)
        let root = try #require(roots["microsoft-tpm-root-2014"])
        for item in cases {
            let time = try #require((item.item["validationTime"] as? NSNumber)?.int64Value)
            let credential = try Self.verify(item, roots: [root], at: time)
            #expect(credential.attestationFormat == "tpm")
            #expect(Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [], at: time) }?.code == .webAuthn.invalidAttestation)
            // authData is hashed into certInfo's extraData; certInfo and pubArea are what the AIK signed.
            for (member, inStatement, offset) in [("authData", false, 34), ("certInfo", true, 10), ("pubArea", true, 40), ("sig", true, 20)] {
                let changed = try Self.changing(item.attestationObject, member: member, inStatement: inStatement) { bytes in
                    var copy = bytes
                    if offset < copy.count { copy[offset] ^= 0x01 }
                    return copy
                }
                let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [root], at: time, attestationObject: changed) }
                #expect(error?.code == .webAuthn.invalidAttestation, "\(item.name): \(member) changed")
            }
        }
    }

    @Test("unanchored attestation, when the policy accepts it: every published format registers as unanchored; anchored with its root; nothing else is relaxed")
    func unanchoredAccepted() async throws {
        var checked = 0
        for file in ["apple.json", "android-key.json", "android-safetynet.json", "tpm.json"] {
            let (cases, roots) = try Self.load(file)
            for item in cases where (item.item["pyWebauthnResult"] as? String ?? "accepted") == "accepted" {
                // SafetyNet is checked at the time Google signed it, the others at their test's time.
                let stamp = (item.item["timestampMs"] as? NSNumber).map { $0.int64Value / 1000 }
                let at = try #require(stamp ?? (item.item["validationTime"] as? NSNumber).map(\.int64Value))
                #expect(try Self.verify(item, roots: Array(roots.values), at: at).attestationTrust == .anchored, "\(item.name)")
                #expect(try Self.verify(item, roots: [], at: at, unanchored: .accept).attestationTrust == .unanchored, "\(item.name)")
                // Only the anchor is let go: a changed signature counter still fails, and so does an expired certificate.
                let changed = try Self.changing(item.attestationObject, member: "authData", inStatement: false) { bytes in
                    var copy = bytes
                    copy[34] ^= 0x01
                    return copy
                }
                let error = Self.failure { () throws(TokenMintError) in
                    try Self.verify(item, roots: [], at: at, attestationObject: changed, unanchored: .accept)
                }
                #expect(error?.code == .webAuthn.invalidAttestation, "\(item.name): \(String(describing: error))")
                let expired = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [], at: at + 40 * 365 * 86_400, unanchored: .accept) }
                #expect(expired?.code == .webAuthn.invalidAttestation, "\(item.name) 40 years on")
                checked += 1
            }
        }
        #expect(checked >= 6)
        // Attestation none and packed self have no certificate.
        let session = try SoftwareAuthenticator(store: InMemoryStore())
        for attestation in [SoftwareAuthenticator.Attestation.none, .packed] {
            let credential = try await SoftwareAuthenticatorTests.register(session, alg: .es256, attestation: attestation)
            #expect(credential.attestationTrust == .uncertified)
        }
    }
}
