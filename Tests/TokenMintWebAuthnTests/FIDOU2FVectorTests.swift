import TokenMintCore
import Foundation
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintWebAuthn

/// fido-u2f attestation (W3C WebAuthn L3 §8.6) against py_webauthn's
/// published registrations (`Vectors/webauthn/fido-u2f.json`): a YubiKey's
/// attestation chains to Yubico's U2F root; the FIDO conformance tool's
/// verifies its signature but has no trusted root here; and every one-byte
/// change of the signature, a second certificate, or a missing root fails.
@Suite("fido-u2f attestation vectors")
struct FIDOU2FVectorTests {
    struct Case {
        let name: String
        let clientDataJSON: [UInt8]
        let attestationObject: [UInt8]
        let rawID: [UInt8]
        let challenge: [UInt8]
        let rpID: String
        let origin: String
    }

    static func load() throws -> (cases: [Case], yubicoRoot: [UInt8]) {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/webauthn/fido-u2f.json")
        let data = try #require(try? Data(contentsOf: url), "Vectors/webauthn/fido-u2f.json is absent: the repository ships it")
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let roots = try #require(root["roots"] as? [String: String])
        let rootText = try #require(roots["yubico-u2f-457200631"])
        let yubico = try #require(Data(base64Encoded: rootText))
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
                rpID: try text(item, "rpId"), origin: try text(item, "origin")))
        }
        #expect(cases.count == 4)
        return (cases, [UInt8](yubico))
    }

    static func verify(_ item: Case, roots: [[UInt8]], attestationObject: [UInt8]? = nil) throws(TokenMintError) -> RegisteredCredential {
        var policy = RelyingPartyPolicy(rpID: item.rpID, origins: [item.origin])
        policy.attestationRoots = roots
        return try RelyingPartyVerifier(policy: policy).verifyRegistration(
            clientDataJSON: item.clientDataJSON, attestationObject: attestationObject ?? item.attestationObject, challenge: item.challenge,
            rawID: item.rawID)
    }

    static func failure(_ body: () throws(TokenMintError) -> RegisteredCredential) -> TokenMintError? {
        do { _ = try body() } catch { return error }
        return nil
    }

    /// The attestation object with its statement's `sig` replaced.
    static func replacingSignature(_ object: [UInt8], _ change: ([UInt8]) -> CBOR) throws -> [UInt8] {
        let parsed = try CBORDecoder.decode(object, requireCanonical: false)
        guard case .map(let entries) = parsed else {
            Issue.record("the attestation object is not a map")
            return object
        }
        let rebuilt = entries.map { entry -> CBORMapEntry in
            guard entry.key == .text("attStmt"), case .map(let statement) = entry.value else { return entry }
            return CBORMapEntry(key: entry.key, value: .map(statement.map { inner in
                inner.key == .text("sig") ? CBORMapEntry(key: inner.key, value: change(inner.value.bytesValue ?? [])) : inner
            }))
        }
        return CBOREncoder.encode(.map(rebuilt))
    }

    @Test("a YubiKey's fido-u2f registration verifies and chains to Yubico's U2F root; without the root it is refused")
    func yubikey() throws {
        let (cases, yubico) = try Self.load()
        let item = try #require(cases.first { $0.name == "test_verify_attestation_from_yubikey_firefox" })
        let credential = try Self.verify(item, roots: [yubico])
        #expect(credential.attestationFormat == "fido-u2f")
        #expect(credential.credentialID == item.rawID)
        #expect(credential.publicKey.algorithm == .es256)
        let untrusted = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: []) }
        #expect(untrusted?.code == .webAuthn.invalidAttestation && untrusted?.reason.contains("trusted root") == true)
    }

    @Test("the FIDO conformance tool's registration: its signature verifies, its test root is not trusted here")
    func conformance() throws {
        let (cases, yubico) = try Self.load()
        let item = try #require(cases.first { $0.name == "test_verify_attestation_from_fido_conformance" })
        let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [yubico]) }
        #expect(error?.code == .webAuthn.invalidAttestation)
        #expect(error?.reason.contains("does not chain to a trusted root") == true, "the signature check passed first: \(String(describing: error))")
    }

    @Test("every one-byte change of the signature, a second certificate, and an empty statement are refused")
    func tampering() throws {
        let (cases, yubico) = try Self.load()
        let item = try #require(cases.first { $0.name == "test_verify_attestation_from_yubikey_firefox" })
        let decoded = try CBORDecoder.decode(item.attestationObject, requireCanonical: false)
        let signature = try #require(decoded[.text("attStmt")]?[.text("sig")]?.bytesValue)
        for index in signature.indices {
            var changed = signature
            changed[index] ^= 0x01
            let object = try Self.replacingSignature(item.attestationObject) { _ in .bytes(changed) }
            let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [yubico], attestationObject: object) }
            #expect(error?.code == .webAuthn.invalidAttestation, "byte \(index)")
        }
        // Two certificates, or none: refused before any signature is checked.
        let parsed = try CBORDecoder.decode(item.attestationObject, requireCanonical: false)
        let statement = try #require(parsed[.text("attStmt")])
        let leaf = try #require(statement[.text("x5c")]?.arrayValue?.first)
        for x5c in [CBOR.array([leaf, leaf]), CBOR.array([])] {
            guard case .map(let entries) = parsed else { return }
            let object = CBOREncoder.encode(.map(entries.map { entry in
                guard entry.key == .text("attStmt"), case .map(let inner) = entry.value else { return entry }
                return CBORMapEntry(key: entry.key, value: .map(inner.map { $0.key == .text("x5c") ? CBORMapEntry(key: $0.key, value: x5c) : $0 }))
            }))
            let error = Self.failure { () throws(TokenMintError) in try Self.verify(item, roots: [yubico], attestationObject: object) }
            #expect(error?.code == .webAuthn.invalidAttestation && error?.reason.contains("exactly one certificate") == true)
        }
    }

    /// WebAuthn L3 keeps `tokenBinding` reserved (no longer used); TokenMint
    /// refuses only `status: "present"` (it cannot check a TLS binding) and a
    /// member that is not the dictionary L2 defined. py_webauthn decides the
    /// other way round on these two, so they are checked here as TokenMint's
    /// own rule, not as py_webauthn's result.
    @Test("token binding: an unknown status of the reserved member is ignored; a tokenBinding that is not a dictionary is malformed")
    func tokenBinding() throws {
        let (cases, yubico) = try Self.load()
        let status = try #require(cases.first { $0.name == "test_verify_attestation_with_unsupported_token_binding_status" })
        #expect(try Self.verify(status, roots: [yubico]).attestationFormat == "fido-u2f")
        let string = try #require(cases.first { $0.name == "test_verify_attestation_with_unsupported_token_binding" })
        let error = Self.failure { () throws(TokenMintError) in try Self.verify(string, roots: [yubico]) }
        #expect(error?.code == .webAuthn.invalidClientData)
    }
}
