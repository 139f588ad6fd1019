import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR

/// A credential the RP registered.
public struct RegisteredCredential: Sendable, Hashable {
    /// The credential ID.
    public let credentialID: [UInt8]
    /// The public key.
    public let publicKey: COSEKey
    /// The signature counter at registration.
    public let signCount: UInt32
    /// Whether the credential may be backed up (BE), constant for its life.
    public let backupEligible: Bool
    /// Whether it was backed up at registration (BS).
    public let backupState: Bool
    /// Whether the user was verified at registration.
    public let userVerified: Bool
    /// The attestation format ("none" or "packed").
    public let attestationFormat: String
    /// The authenticator model (AAGUID).
    public let aaguid: [UInt8]
    /// The signed extension outputs of the registration (credProtect,
    /// hmac-secret, credBlob, minPinLength); empty for a stored credential
    /// unless the RP sets it.
    public var extensionOutputs = AuthenticatorExtensionOutputs()
    /// How far the attestation was trusted at registration.
    public var attestationTrust = AttestationTrust.uncertified

    /// A stored credential (for example, read back from the RP's database).
    public init(credentialID: [UInt8], publicKey: COSEKey, signCount: UInt32, backupEligible: Bool, backupState: Bool,
                userVerified: Bool, attestationFormat: String, aaguid: [UInt8]) {
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.userVerified = userVerified
        self.attestationFormat = attestationFormat
        self.aaguid = aaguid
    }
}
