import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR

/// What a relying party accepts.
public struct RelyingPartyPolicy: Sendable {
    /// The RP ID ("example.org").
    public var rpID: String
    /// Origins accepted exactly ("https://example.org"); subdomains are not implied.
    public var origins: Set<String>
    /// Whether calls from cross-origin iframes are accepted.
    public var allowCrossOrigin = false
    /// Top-level origins accepted for cross-origin calls.
    public var topOrigins: Set<String> = []
    /// Whether UV must be set.
    public var requireUserVerification = false
    /// The credential algorithms accepted.
    public var algorithms: Set<COSEAlgorithm> = Set(COSEAlgorithm.allCases)
    /// Whether a signature counter that did not increase rejects the assertion
    /// (true) or is reported in the result as a clone signal (false).
    public var rejectSignCountRollback = true
    /// Root certificates (DER) that anchor attestation certificate chains
    /// (packed with x5c, fido-u2f, apple, android-key, android-safetynet).
    public var attestationRoots: [[UInt8]] = []
    /// The time (Unix seconds) at which attestation certificates must be
    /// valid; nil for now. Set it to re-verify a stored attestation as of
    /// its registration.
    public var attestationTime: Int64?
    /// A verified FIDO metadata BLOB: an authenticator's attestation is also
    /// anchored at the roots its statement lists, and ``metadataPolicy``
    /// decides from its status reports whether it is accepted.
    public var metadata: MetadataBLOB?
    /// What the metadata refuses.
    public var metadataPolicy = MetadataPolicy()
    /// What to do with an attestation whose certificates verify but reach
    /// none of the roots (``attestationRoots`` or the metadata's): refuse it
    /// (the default), or accept the credential with its
    /// `attestationTrust` saying `unanchored`, as an RP does that asks for
    /// attestation to record it, not to gate on it (WebAuthn L3 §7.1 step 24).
    public var unanchoredAttestation = UnanchoredAttestation.refuse

    /// What ``unanchoredAttestation`` does.
    public enum UnanchoredAttestation: String, Sendable, CaseIterable {
        /// `invalidAttestation`.
        case refuse
        /// The credential is registered, marked `unanchored`.
        case accept
    }
    /// Called with the challenge once it matched: returns false when the
    /// challenge was already used (the host keeps the single-use record).
    public var consumeChallenge: (@Sendable ([UInt8]) -> Bool)?

    /// A policy for one RP ID and its origins.
    public init(rpID: String, origins: Set<String>) {
        self.rpID = rpID
        self.origins = origins
    }
}
