import TokenMintCore
import Foundation
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn
import TokenMintFIDO

/// The YubiKit-shaped client session: the same Swift code against the
/// software authenticator in process and over a UNIX socket of CTAPHID
/// reports, verified by the relying party.
@Suite("FIDO2 sessions over connections")
struct FIDO2SessionTests {
    static let rp = "example.org"
    static let origin = "https://example.org"

    /// Registers, asserts twice, walks discoverable credentials; the RP verifies each answer.
    static func exercise(_ connection: any FIDOConnection) async throws {
        let session = try await connection.fido2Session()
        let info = try await session.getInfo()
        #expect(info.versions.contains("FIDO_2_1") && info.algorithms == [.es256, .edDSA] && info.options["uv"] == true)
        #expect(info.extensions == CTAP2Authenticator.extensions && info.maximumCredBlobLength == 32)
        let verifier = RelyingPartyVerifier(policy: RelyingPartyPolicy(rpID: rp, origins: [origin]))
        var registered: [RegisteredCredential] = []
        for (user, algorithm) in [([UInt8]([1]), COSEAlgorithm.es256), ([2], .edDSA)] {
            let challenge = SecureRandom.bytes(count: 32)
            let clientData = CollectedClientData(type: "webauthn.create", challenge: challenge, origin: origin).json
            let made = try await session.makeCredential(
                clientDataHash: HashFunction.sha256.hash(clientData), rp: (rp, "Example"), user: (user, "user\(user[0])", nil),
                algorithms: [algorithm], residentKey: true, userVerification: true,
                extensions: .init(credProtect: .userVerificationOptionalWithCredentialIDList, credBlob: user, largeBlobKey: true))
            #expect(made.largeBlobKey?.count == 32)
            let credential = try verifier.verifyRegistration(clientDataJSON: clientData, attestationObject: made.attestationObject.bytes,
                                                             challenge: challenge)
            #expect(credential.attestationFormat == "packed" && credential.publicKey.algorithm == algorithm)
            #expect(credential.extensionOutputs.credProtect == .userVerificationOptionalWithCredentialIDList)
            registered.append(credential)
        }
        // Discoverable, with UV (credProtect 2): both, newest first, then the next.
        let challenge = SecureRandom.bytes(count: 32)
        let clientData = CollectedClientData(type: "webauthn.get", challenge: challenge, origin: origin).json
        let first = try await session.getAssertion(rpID: rp, clientDataHash: HashFunction.sha256.hash(clientData), userVerification: true,
                                                   credBlob: true)
        #expect(first.numberOfCredentials == 2 && first.userHandle == [2])
        let result = try verifier.verifyAssertion(
            credential: registered[1], storedSignCount: 0, clientDataJSON: clientData, authenticatorData: first.authenticatorData.bytes,
            signature: first.signature, challenge: challenge)
        #expect(result.signCount == 1 && result.extensionOutputs.credBlob == [2])
        let second = try await session.getNextAssertion()
        #expect(second.userHandle == [1] && second.credentialID == registered[0].credentialID)
        // Without UV, credProtect 2 hides them from discovery, not from an allow list.
        await #expect(throws: TokenMintError.self) {
            _ = try await session.getAssertion(rpID: rp, clientDataHash: [UInt8](repeating: 1, count: 32))
        }
        let listed = try await session.getAssertion(rpID: rp, clientDataHash: [UInt8](repeating: 1, count: 32),
                                                    allowList: [registered[0].credentialID])
        #expect(listed.credentialID == registered[0].credentialID && listed.numberOfCredentials == nil)
        // A refusal carries the CTAP status.
        do {
            _ = try await session.getAssertion(rpID: "other.example", clientDataHash: [UInt8](repeating: 1, count: 32), userVerification: true)
            Issue.record("an unknown RP got an assertion")
        } catch {
            #expect(error.code == .fido.ctap(.noCredentials) && error.code.number == 0x2E)
        }
        // A newer session replaces this one.
        let newer = try await connection.fido2Session()
        do {
            _ = try await session.getInfo()
            Issue.record("the replaced session still answered")
        } catch {
            #expect(error.code == .fido.sessionClosed)
        }
        try await newer.reset()
        await #expect(throws: TokenMintError.self) {
            _ = try await newer.getAssertion(rpID: rp, clientDataHash: [UInt8](repeating: 1, count: 32), userVerification: true)
        }
        connection.close()
        await #expect(throws: TokenMintError.self) { _ = try await newer.getInfo() }
    }

    @Test("in process")
    func inProcess() async throws {
        let authenticator = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)
        try await Self.exercise(InProcessConnection(CTAP2Authenticator(authenticator)))
    }

    @Test("over a UNIX socket of CTAPHID reports, two connections at once")
    func overSocket() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tm-\(UInt32.random(in: 0...UInt32.max)).sock").path
        let authenticator = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true)
        let server = try CTAPHIDSocketServer(path: path, authenticator: CTAP2Authenticator(authenticator))
        let thread = Thread { server.run() }
        thread.start()
        defer { server.stop() }
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600, "the socket is the owner's only")
        let other = try await CTAPHIDConnection(socketPath: path)
        let connection = try await CTAPHIDConnection(socketPath: path)
        #expect(other.channel != connection.channel)
        let echoed = try await other.ping(Array(repeating: 0x5A, count: 3000))
        #expect(echoed == Array(repeating: 0x5A, count: 3000))
        try await Self.exercise(connection)
        // The other connection still works.
        _ = try await other.fido2Session().getInfo()
        other.close()
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: path), "stop removes the socket")
        await #expect(throws: TokenMintError.self) { _ = try await CTAPHIDConnection(socketPath: path) }
    }
}
