public import TokenMintCore
public import TokenMintCrypto
import TokenMintCBOR
import TokenMintStore

extension SoftwareAuthenticator {
    /// makeCredential's extension inputs (CTAP 2.1 §12).
    public struct MakeCredentialExtensions: Sendable {
        /// credProtect: the level to make the credential with (nil: level 1, no output).
        public var credProtect: CredentialProtection?
        /// hmac-secret: give the credential two secrets for the PRF (with and without UV).
        public var hmacSecret: Bool
        /// credBlob: up to ``SoftwareAuthenticator/maximumCredBlobLength`` bytes kept
        /// with the credential (a longer one is not stored, and the output says so).
        public var credBlob: [UInt8]?
        /// minPinLength: report the minimum PIN length (only to RP IDs the
        /// authenticator was configured to tell).
        public var minPinLength: Bool
        /// largeBlobKey: give the credential a key for its large blob
        /// (resident credentials only).
        public var largeBlobKey: Bool
        /// hmac-secret-mc (CTAP 2.2 §12.7): PRF outputs for these salts at
        /// creation already (needs ``hmacSecret``), as getAssertion gives them.
        public var hmacSecretMC: (salt1: [UInt8], salt2: [UInt8]?)?
        /// How the hmac-secret-mc output is sealed in the authenticator data
        /// (see ``GetAssertionExtensions/hmacSecretSealer``).
        public var hmacSecretSealer: (@Sendable (SecureBytes) throws(TokenMintError) -> [UInt8])?

        /// The inputs; none by default.
        public init(credProtect: CredentialProtection? = nil, hmacSecret: Bool = false, credBlob: [UInt8]? = nil,
                    minPinLength: Bool = false, largeBlobKey: Bool = false, hmacSecretMC: (salt1: [UInt8], salt2: [UInt8]?)? = nil,
                    hmacSecretSealer: (@Sendable (SecureBytes) throws(TokenMintError) -> [UInt8])? = nil) {
            self.credProtect = credProtect
            self.hmacSecret = hmacSecret
            self.credBlob = credBlob
            self.minPinLength = minPinLength
            self.largeBlobKey = largeBlobKey
            self.hmacSecretMC = hmacSecretMC
            self.hmacSecretSealer = hmacSecretSealer
        }
    }

    /// getAssertion's extension inputs.
    public struct GetAssertionExtensions: Sendable {
        /// hmac-secret: one or two 32-byte salts; the outputs are
        /// HMAC-SHA-256 of each under the credential's secret (the one for UV
        /// when the user was verified). WebAuthn's `prf` salts are
        /// SHA-256("WebAuthn PRF" ‖ 0x00 ‖ input): see ``prfSalt(_:)``.
        public var hmacSecret: (salt1: [UInt8], salt2: [UInt8]?)?
        /// credBlob: return the blob kept with the credential.
        public var credBlob: Bool
        /// largeBlobKey: return the credential's large-blob key.
        public var largeBlobKey: Bool
        /// How the hmac-secret output is sealed in the authenticator data: a
        /// CTAP platform's shared secret (PIN/UV auth protocol encrypt). Without
        /// it, a fresh key that is dropped (the caller gets the outputs in clear).
        public var hmacSecretSealer: (@Sendable (SecureBytes) throws(TokenMintError) -> [UInt8])?

        /// Whether nothing is asked (the sealer alone asks nothing).
        var isEmpty: Bool { hmacSecret == nil && !credBlob && !largeBlobKey }

        /// The inputs; none by default.
        public init(hmacSecret: (salt1: [UInt8], salt2: [UInt8]?)? = nil, credBlob: Bool = false, largeBlobKey: Bool = false,
                    hmacSecretSealer: (@Sendable (SecureBytes) throws(TokenMintError) -> [UInt8])? = nil) {
            self.hmacSecret = hmacSecret
            self.credBlob = credBlob
            self.largeBlobKey = largeBlobKey
            self.hmacSecretSealer = hmacSecretSealer
        }
    }

    /// The largest credBlob kept (CTAP 2.1 asks for at least 32).
    public static let maximumCredBlobLength = 32

    /// The extensions this authenticator supports, as getInfo lists them.
    public static let supportedExtensions = ["credBlob", "credProtect", "hmac-secret", "hmac-secret-mc", "largeBlobKey", "minPinLength"]

    /// The hmac-secret salt of a WebAuthn `prf` input (WebAuthn L3 §10.1.4):
    /// SHA-256("WebAuthn PRF" ‖ 0x00 ‖ input).
    public static func prfSalt(_ input: some Sequence<UInt8>) -> [UInt8] {
        HashFunction.sha256.hash(Array("WebAuthn PRF".utf8) + [0] + Array(input))
    }

    /// The store names of a credential's extension secrets.
    static func credRandomName(_ id: [UInt8]) -> String { name("hmac", id) }
    static func largeBlobKeyName(_ id: [UInt8]) -> String { name("lbk", id) }

    /// Checks the inputs before anything is made.
    func checkExtensions(_ extensions: MakeCredentialExtensions, residentKey: Bool) throws(TokenMintError) {
        if extensions.largeBlobKey && !residentKey {
            throw TokenMintError(.webAuthn.invalidOption, "largeBlobKey needs a resident credential")
        }
        if extensions.hmacSecretMC != nil && !extensions.hmacSecret {
            throw TokenMintError(.webAuthn.invalidParameter, "hmac-secret-mc needs hmac-secret")
        }
    }

    /// The secrets a new credential's extensions need (stored with it), and
    /// the signed outputs of makeCredential.
    func makeExtensions(_ extensions: MakeCredentialExtensions, rpID: String, credentialID: [UInt8], verified: Bool) throws(TokenMintError)
        -> (secrets: [(String, SecureBytes)], outputs: AuthenticatorExtensionOutputs, largeBlobKey: SecureBytes?, hmacSecret: SecureBytes?)
    {
        var secrets: [(String, SecureBytes)] = []
        var outputs = AuthenticatorExtensionOutputs()
        var clear: SecureBytes?
        outputs.credProtect = extensions.credProtect
        if extensions.hmacSecret {
            // CredRandomWithUV ‖ CredRandomWithoutUV.
            let credRandoms = SecureBytes(randomCount: 64)
            secrets.append((SoftwareAuthenticator.credRandomName(credentialID), credRandoms))
            outputs.hmacSecret = true
            if let salts = extensions.hmacSecretMC {
                let output = try SoftwareAuthenticator.hmacSecret(credRandoms, salts: salts, verified: verified)
                if let seal = extensions.hmacSecretSealer {
                    outputs.hmacSecretMCOutput = try seal(output)
                } else {
                    outputs.hmacSecretMCOutput = try SoftwareAuthenticator.encryptForClient(output)
                }
                clear = output
            }
        }
        if let blob = extensions.credBlob { outputs.credBlobStored = blob.count <= SoftwareAuthenticator.maximumCredBlobLength }
        if extensions.minPinLength, minPinLengthRPIDs.contains(rpID) { outputs.minPinLength = minimumPINLength }
        var largeBlobKey: SecureBytes?
        if extensions.largeBlobKey {
            let key = SecureBytes(randomCount: 32)
            secrets.append((SoftwareAuthenticator.largeBlobKeyName(credentialID), key))
            largeBlobKey = key
        }
        return (secrets, outputs, largeBlobKey, clear)
    }

    /// Whether credProtect lets `record` be used: level 3 only with UV,
    /// level 2 without UV only when the RP named it in an allow list.
    static func usable(_ record: Record, verified: Bool, discoverable: Bool) -> Bool {
        let level = record.credProtect.flatMap(CredentialProtection.init(rawValue:)) ?? .userVerificationOptional
        switch level {
        case .userVerificationOptional: return true
        case .userVerificationOptionalWithCredentialIDList: return verified || !discoverable
        case .userVerificationRequired: return verified
        }
    }

    /// getAssertion's extension outputs for `id`: the signed ones, the
    /// hmac-secret outputs in clear (returned beside the authenticator data,
    /// as a platform returns them to its client) and the large-blob key.
    func assertionExtensions(_ extensions: GetAssertionExtensions, id: [UInt8], record: Record, verified: Bool)
        throws(TokenMintError) -> (outputs: AuthenticatorExtensionOutputs, hmacSecret: SecureBytes?, largeBlobKey: SecureBytes?)
    {
        var outputs = AuthenticatorExtensionOutputs()
        if extensions.credBlob { outputs.credBlob = record.credBlob ?? [] }
        var clear: SecureBytes?
        if let salts = extensions.hmacSecret, record.hmacSecret == true {
            guard let secrets = try storeCall({ tx in try tx.secret(SoftwareAuthenticator.credRandomName(id)) }), secrets.count == 64 else {
                throw TokenMintError(.webAuthn.invalidCredential, "the credential's hmac-secret is missing")
            }
            let output = try SoftwareAuthenticator.hmacSecret(secrets, salts: salts, verified: verified)
            if let seal = extensions.hmacSecretSealer {
                outputs.hmacSecretOutput = try seal(output)
            } else {
                outputs.hmacSecretOutput = try SoftwareAuthenticator.encryptForClient(output)
            }
            clear = output
        }
        var largeBlobKey: SecureBytes?
        if extensions.largeBlobKey {
            largeBlobKey = try storeCall { tx in try tx.secret(SoftwareAuthenticator.largeBlobKeyName(id)) }
        }
        return (outputs, clear, largeBlobKey)
    }

    /// HMAC-SHA-256(CredRandom, salt1) [‖ HMAC-SHA-256(CredRandom, salt2)],
    /// CredRandom being the first half of `secrets` with UV, the second without.
    static func hmacSecret(_ secrets: SecureBytes, salts: (salt1: [UInt8], salt2: [UInt8]?), verified: Bool) throws(TokenMintError) -> SecureBytes {
        guard salts.salt1.count == 32, salts.salt2.map({ $0.count == 32 }) ?? true else {
            throw TokenMintError(.webAuthn.invalidParameter, "hmac-secret salts are 32 bytes")
        }
        let half = verified ? 0..<32 : 32..<64
        let credRandom = SecureBytes(count: 32, initializingWith: { out in
            secrets.withUnsafeBytes { all in out.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[half])) }
        })
        let key: HMACKey
        do { key = try HMACKey(secret: credRandom, hash: .sha256) } catch { throw TokenMintError(.webAuthn.other, "hmac-secret key", underlying: error) }
        let first = try HMAC.secretAuthenticationCode(for: salts.salt1, using: key)
        guard let salt2 = salts.salt2 else { return first }
        let second = try HMAC.secretAuthenticationCode(for: salt2, using: key)
        return SecureBytes(count: 64, initializingWith: { out in
            first.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[0..<32]).copyMemory(from: $0) }
            second.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[32...]).copyMemory(from: $0) }
        })
    }

    /// The hmac-secret output as the authenticator data carries it under
    /// PIN/UV auth protocol 2: IV ‖ AES-256-CBC. In process, the client is
    /// this session's caller, which gets the outputs in clear; the key is a
    /// fresh one that is then dropped, so what the RP sees reveals nothing.
    static func encryptForClient(_ output: SecureBytes) throws(TokenMintError) -> [UInt8] {
        let iv = SecureRandom.bytes(count: AES256CBC.blockByteCount)
        do { return iv + (try AES256CBC.encrypt(output, key: SecureBytes(randomCount: AES256CBC.keyByteCount), iv: iv)) } catch {
            throw TokenMintError(.webAuthn.other, "hmac-secret encryption failed", underlying: error)
        }
    }
}
