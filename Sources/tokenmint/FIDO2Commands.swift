import ArgumentParser
import Foundation
import TokenMint

struct FIDO2Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fido2", abstract: "A software FIDO2 authenticator and a WebAuthn relying-party verifier.",
        discussion: "Authenticator state lives in fido2.sqlite and RP state in rp.sqlite in the --store folder. The CLI's authenticator treats the local user as present, and as verified when --uv is given.",
        subcommands: [Register.self, Assert.self, VerifyRegistration.self, VerifyAssertion.self, Device.self, FIDO2KeyCommand.self])

    struct Device: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the software authenticator as a CTAP2 security key on a UNIX socket of 64-byte CTAPHID reports.",
            discussion: """
                Prints "listening on PATH" once it accepts connections, and runs until SIGTERM or SIGINT, which remove the \
                socket. Credentials and the PIN live in fido2.sqlite in the --state folder (mode 0700), sealed with its master.key. \
                The local user is taken as present and, unless --no-builtin-uv, verified (built-in user verification; \
                --refuse-uv makes every attempt fail, spending one of 8 durable retries); a PIN set with ClientPIN works either way. Restarting the command is the key's power cycle.
                """)
        @Option(help: "The socket to create (mode 0600).") var socket: String
        @Option(help: "The state folder (created with mode 0700).") var state: String
        @Flag(help: "No built-in user verification: a PIN-only key, as most security keys are.") var noBuiltinUv = false
        @Flag(help: "Require user verification for every makeCredential and getAssertion (alwaysUv).") var alwaysUv = false
        @Flag(help: "The built-in sensor refuses every user, to test how a platform handles UV_INVALID and, after 8, UV_BLOCKED.")
        var refuseUv = false

        func run() throws {
            let refuse = refuseUv
            let authenticator = try SoftwareAuthenticator(store: try StoreOptions.open(folder: state, "fido2.sqlite"),
                                                          supportsUserVerification: !noBuiltinUv, verifyUser: { _ in !refuse })
            let server = try CTAPHIDSocketServer(path: socket, authenticator: CTAP2Authenticator(authenticator, alwaysUV: alwaysUv))
            var sources: [any DispatchSourceSignal] = []
            for number in [SIGTERM, SIGINT] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { server.stop() }
                source.resume()
                sources.append(source)
            }
            Swift.print("listening on \(socket)")
            fflush(standardOutputStream)
            server.run()
            sources.forEach { $0.cancel() }
        }
    }


    struct Common: ParsableArguments {
        @OptionGroup var store: StoreOptions
        @Option(help: "The RP ID, e.g. example.org.") var rp: String
        @Option(help: "The origin, e.g. https://example.org.") var origin: String
        @Option(parsing: .unconditional, help: "The challenge, base64url.") var challenge: String

        func challengeBytes() throws -> [UInt8] {
            let bytes = try Base64URL.decode(challenge, padding: .either)
            guard bytes.count >= 16 else { throw ValidationError("challenges must be at least 16 bytes") }
            return bytes
        }

        /// The authenticator; it tells its minimum PIN length to `--rp`
        /// when `minPinLength` is asked (the CLI's user owns it).
        func session(minPinLength: Bool = false) throws -> SoftwareAuthenticator {
            try SoftwareAuthenticator(store: try store.open("fido2.sqlite"), supportsUserVerification: true,
                             minPinLengthRPIDs: minPinLength ? [rp] : [])
        }
    }

    static func print(json object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        Swift.print(String(decoding: data, as: UTF8.self))
    }

    static func b64(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a credential; prints the registration JSON (as toJSON()).")
        @OptionGroup var common: Common
        @Option(help: "The user handle, hex.") var userId: String
        @Option(help: "The user name.") var userName: String
        @Option(help: "ES256 or EdDSA.") var alg: String = "ES256"
        @Option(help: "none or packed (self attestation).") var attestation: String = "none"
        @Flag(help: "A discoverable (resident) credential.") var resident = false
        @Flag(help: "Verify the user.") var uv = false
        @Option(help: "credProtect level: 1, 2 (no discovery without UV) or 3 (UV always).") var credProtect: Int?
        @Flag(help: "The prf extension: give the credential an hmac-secret.") var prf = false
        @Option(help: "credBlob: up to 32 bytes kept with the credential, hex.") var credBlob: String?
        @Flag(help: "minPinLength: report the minimum PIN length to --rp.") var minPinLength = false
        @Flag(help: "largeBlob: give the (resident) credential a large-blob key.") var largeBlob = false
        @Flag(help: "credProps: report whether the credential is discoverable.") var credProps = false

        func run() async throws {
            guard let algorithm: COSEAlgorithm = ["ES256": .es256, "EdDSA": .edDSA][alg] else { throw ValidationError("--alg must be ES256 or EdDSA") }
            guard let format = SoftwareAuthenticator.Attestation(rawValue: attestation) else { throw ValidationError("--attestation must be none or packed") }
            var extensions = SoftwareAuthenticator.MakeCredentialExtensions(hmacSecret: prf, minPinLength: minPinLength, largeBlobKey: largeBlob)
            if let credProtect {
                guard let level = CredentialProtection(rawValue: credProtect) else { throw ValidationError("--cred-protect must be 1, 2 or 3") }
                extensions.credProtect = level
            }
            if let credBlob {
                guard let blob = try? Hex.decode(credBlob), blob.count <= 64 else { throw ValidationError("--cred-blob must be at most 64 bytes of hex") }
                extensions.credBlob = blob
            }
            let clientData = CollectedClientData(type: "webauthn.create", challenge: try common.challengeBytes(), origin: common.origin).json
            let made = try await common.session(minPinLength: minPinLength).makeCredential(
                clientDataHash: HashFunction.sha256.hash(clientData), rp: (common.rp, common.rp), user: (try Hex.decode(userId), userName, userName),
                pubKeyCredParams: [algorithm], options: .init(residentKey: resident, userVerification: uv, extensions: extensions), attestation: format)
            // What a client reports beside the signed outputs (WebAuthn §10).
            var results: [String: Any] = [:]
            if credProps { results["credProps"] = ["rk": resident] }
            if prf { results["prf"] = ["enabled": made.extensionOutputs.hmacSecret == true] }
            if largeBlob { results["largeBlob"] = ["supported": made.largeBlobKey != nil] }
            let id = FIDO2Command.b64(made.credentialID)
            try FIDO2Command.print(json: [
                "id": id, "rawId": id, "type": "public-key", "authenticatorAttachment": "cross-platform", "clientExtensionResults": results,
                "response": [
                    "clientDataJSON": FIDO2Command.b64(clientData), "attestationObject": FIDO2Command.b64(made.attestationObject.bytes),
                    "transports": ["usb"],
                ],
            ])
        }
    }

    struct Assert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Get an assertion; prints the authentication JSON.")
        @OptionGroup var common: Common
        @Option(parsing: .unconditional, help: "The credential ID, base64url (default: a discoverable credential).") var credential: String?
        @Flag(help: "Verify the user.") var uv = false
        @Option(parsing: .unconditionalSingleValue, help: "A prf input, base64url (give it twice for two outputs).") var prf: [String] = []
        @Flag(help: "getCredBlob: return the credential's credBlob.") var credBlob = false

        func run() async throws {
            guard prf.count <= 2 else { throw ValidationError("--prf takes one or two inputs") }
            let salts = try prf.map { text -> [UInt8] in
                guard let input = try? Base64URL.decode(text, padding: .either), input.count <= 1024 else {
                    throw ValidationError("--prf inputs are base64url, at most 1024 bytes")
                }
                return SoftwareAuthenticator.prfSalt(input)
            }
            let extensions = SoftwareAuthenticator.GetAssertionExtensions(hmacSecret: salts.first.map { ($0, salts.count > 1 ? salts[1] : nil) }, credBlob: credBlob)
            let clientData = CollectedClientData(type: "webauthn.get", challenge: try common.challengeBytes(), origin: common.origin).json
            let allow = try credential.map { [try Base64URL.decode($0, padding: .either)] } ?? []
            let response = try await common.session().getAssertion(
                clientDataHash: HashFunction.sha256.hash(clientData), rpID: common.rp, allowList: allow,
                options: .init(userVerification: uv, extensions: extensions))
            var results: [String: Any] = [:]
            if let outputs = response.hmacSecret {
                // The PRF outputs are the client's: this command prints them as a browser hands them to the page.
                let bytes = outputs.withUnsafeBytes { Array($0) }
                var prfResults = ["first": FIDO2Command.b64(Array(bytes[0..<32]))]
                if bytes.count == 64 { prfResults["second"] = FIDO2Command.b64(Array(bytes[32...])) }
                results["prf"] = ["results": prfResults]
            }
            if credBlob { results["getCredBlob"] = FIDO2Command.b64(response.extensionOutputs.credBlob ?? []) }
            let id = FIDO2Command.b64(response.credentialID)
            try FIDO2Command.print(json: [
                "id": id, "rawId": id, "type": "public-key", "authenticatorAttachment": "cross-platform", "clientExtensionResults": results,
                "response": [
                    "clientDataJSON": FIDO2Command.b64(clientData), "authenticatorData": FIDO2Command.b64(response.authenticatorData.bytes),
                    "signature": FIDO2Command.b64(response.signature),
                    "userHandle": response.userHandle.map { FIDO2Command.b64($0) as Any } ?? NSNull(),
                ],
            ])
        }
    }

    struct Input: ParsableArguments {
        @Option(name: .customLong("in"), help: "Read the JSON from FILE.") var input: String?
        @Argument(help: "The JSON.") var json: String?
        @Flag(help: "Require user verification.") var requireUv = false

        func object() throws -> [String: Any] {
            let data: Data
            if let input { data = try readFile(input, limit: 1 << 20) } else if let json { data = Data(json.utf8) } else {
                throw ValidationError("give the JSON or --in FILE")
            }
            return try untrustedJSONObject(data)
        }
    }

    static func field(_ object: [String: Any], _ path: String...) throws -> [UInt8] {
        var current: Any? = object
        for key in path { current = (current as? [String: Any])?[key] }
        guard let text = current as? String, let bytes = try? Base64URL.decode(text, padding: .either) else {
            throw CLIError(message: "missing or malformed \(path.joined(separator: "."))", status: 1)
        }
        return bytes
    }

    /// The relying party over the RP store: every challenge is single use
    /// (recorded in the store before the verification goes on).
    static func verifier(
        _ common: Common, store: SQLiteStore, requireUV: Bool, metadata: MetadataBLOB? = nil,
        unanchored: RelyingPartyPolicy.UnanchoredAttestation = .refuse
    ) -> RelyingPartyVerifier {
        var policy = RelyingPartyPolicy(rpID: common.rp, origins: [common.origin])
        policy.unanchoredAttestation = unanchored
        policy.metadata = metadata
        policy.requireUserVerification = requireUV
        policy.consumeChallenge = singleUse(store, prefix: "rp.challenge.")
        return RelyingPartyVerifier(policy: policy)
    }

    /// A challenge check that lets each challenge through once: the first
    /// call records a hash of it durably and returns true, every later call
    /// (in this process or another) returns false.
    static func singleUse(_ store: SQLiteStore, prefix: String) -> @Sendable ([UInt8]) -> Bool {
        { challenge in
            let name = prefix + Base64URL.encode(HashFunction.sha256.hash(challenge))
            let first = try? store.transaction { tx -> Bool in
                guard try tx.value(name) == nil else { return false }
                try tx.setValue(name, [1])
                return true
            }
            return first == true
        }
    }

    /// The typed extension outputs as JSON: credProtect, hmacSecret (true,
    /// or the encrypted output's length), credBlob, minPinLength, others.
    static func describe(_ outputs: AuthenticatorExtensionOutputs) -> [String: Any] {
        var described: [String: Any] = [:]
        if let level = outputs.credProtect { described["credProtect"] = level.rawValue }
        if let hmac = outputs.hmacSecret { described["hmacSecret"] = hmac }
        if let output = outputs.hmacSecretOutput { described["hmacSecretOutputLength"] = output.count }
        if let stored = outputs.credBlobStored { described["credBlob"] = stored }
        if let blob = outputs.credBlob { described["credBlob"] = Hex.encode(blob) }
        if let length = outputs.minPinLength { described["minPinLength"] = length }
        if !outputs.otherExtensions.isEmpty { described["other"] = outputs.otherExtensions }
        return described
    }

    /// A Foundation JSON value as the strict JSON model, for the typed readers.
    static func jsonValue(_ value: Any?) throws -> JSONValue? {
        guard let value, !(value is NSNull) else { return nil }
        let data = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
        return try JSONParser.parse(Array(data))
    }

    struct VerifyRegistration: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-registration", abstract: "RP side: verify a registration and record the credential; exit 1 with the reason.")
        @OptionGroup var common: Common
        @OptionGroup var input: Input
        @Option(name: .customLong("mds-root"),
                help: "Apply the metadata BLOB kept by `webauthn mds load`, verified again against the root(s) in this PEM file.")
        var mdsRoot: String?
        @Flag(name: .customLong("accept-unanchored"),
              help: "Accept an attestation whose certificates verify but reach no root (reported as attestationTrust unanchored).")
        var acceptUnanchored = false

        func run() async throws {
            let object = try input.object()
            let store = try common.store.open("rp.sqlite")
            var metadata: MetadataBLOB?
            if let mdsRoot {
                metadata = try MetadataBLOB.load(from: store, roots: try WebAuthnCommand.roots(mdsRoot))
                guard metadata != nil else { throw CLIError(message: "no metadata BLOB is kept: run `tokenmint webauthn mds load` first", status: 2) }
            }
            do {
                let verifier = FIDO2Command.verifier(common, store: store, requireUV: input.requireUv, metadata: metadata,
                                                     unanchored: acceptUnanchored ? .accept : .refuse)
                let credential = try verifier.verifyRegistration(
                    clientDataJSON: try FIDO2Command.field(object, "response", "clientDataJSON"),
                    attestationObject: try FIDO2Command.field(object, "response", "attestationObject"), challenge: try common.challengeBytes(),
                    rawID: try FIDO2Command.field(object, "rawId"))
                let results = try ClientExtensionResults(try FIDO2Command.jsonValue(object["clientExtensionResults"])).refusingClientSecrets()
                var record: [String: Any] = [
                    "publicKey": FIDO2Command.b64(credential.publicKey.cbor), "signCount": Int(credential.signCount),
                    "backupEligible": credential.backupEligible, "backupState": credential.backupState, "userVerified": credential.userVerified,
                    "fmt": credential.attestationFormat, "aaguid": FIDO2Command.b64(credential.aaguid),
                    "extensions": FIDO2Command.describe(credential.extensionOutputs), "attestationTrust": credential.attestationTrust.rawValue,
                ]
                if let rk = results.residentKey { record["discoverable"] = rk }
                if let prf = results.prfEnabled { record["prfEnabled"] = prf }
                let data = try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])
                let name = "rp.cred." + FIDO2Command.b64(credential.credentialID)
                // WebAuthn §7.1: a credential ID that is registered already is refused, never replaced.
                let added = try store.transaction { tx -> Bool in
                    guard try tx.value(name) == nil else { return false }
                    try tx.setValue(name, Array(data))
                    return true
                }
                guard added else { throw CLIError(message: "credentialExists: this credential ID is registered already", status: 1) }
                try FIDO2Command.print(json: record.merging([
                    "credentialId": FIDO2Command.b64(credential.credentialID), "alg": Int(credential.publicKey.algorithm.rawValue),
                ]) { $1 })
            } catch let error as TokenMintError where error.code.domain == "webauthn" {
                throw CLIError(message: "\(error)", status: 1)
            }
        }
    }

    struct VerifyAssertion: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-assertion", abstract: "RP side: verify an assertion for a recorded credential; exit 1 with the reason.")
        @OptionGroup var common: Common
        @OptionGroup var input: Input

        func run() async throws {
            let object = try input.object()
            let id = try FIDO2Command.field(object, "rawId")
            let store = try common.store.open("rp.sqlite")
            let name = "rp.cred." + FIDO2Command.b64(id)
            guard let saved = try store.transaction({ tx in try tx.value(name) }),
                var record = try JSONSerialization.jsonObject(with: Data(saved)) as? [String: Any],
                let keyText = record["publicKey"] as? String, let stored = record["signCount"] as? Int
            else { throw CLIError(message: "\(TokenMintError.Code.webAuthn.unknownCredential): the credential is not registered", status: 1) }
            do {
                let credential = RegisteredCredential(
                    credentialID: id, publicKey: try COSEKey(cbor: try Base64URL.decode(keyText)), signCount: UInt32(stored),
                    backupEligible: record["backupEligible"] as? Bool ?? false, backupState: record["backupState"] as? Bool ?? false,
                    userVerified: record["userVerified"] as? Bool ?? false, attestationFormat: record["fmt"] as? String ?? "none", aaguid: [])
                let result = try FIDO2Command.verifier(common, store: store, requireUV: input.requireUv).verifyAssertion(
                    credential: credential, storedSignCount: UInt32(stored),
                    clientDataJSON: try FIDO2Command.field(object, "response", "clientDataJSON"),
                    authenticatorData: try FIDO2Command.field(object, "response", "authenticatorData"),
                    signature: try FIDO2Command.field(object, "response", "signature"), challenge: try common.challengeBytes())
                record["signCount"] = Int(result.signCount)
                let data = try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])
                try store.transaction { tx in try tx.setValue(name, Array(data)) }
                try FIDO2Command.print(json: [
                    "credentialId": FIDO2Command.b64(id), "signCount": Int(result.signCount), "userVerified": result.userVerified,
                    "possibleClone": result.possibleClone, "extensions": FIDO2Command.describe(result.extensionOutputs),
                ])
            } catch let error as TokenMintError where error.code.domain == "webauthn" {
                throw CLIError(message: "\(error)", status: 1)
            }
        }
    }
}
