import TokenMintCore

/// How far a registration's attestation was trusted.
public enum AttestationTrust: String, Sendable, Hashable, CaseIterable {
    /// No certificate to check: attestation `none`, or packed self attestation.
    case uncertified
    /// Its certificates chain to a configured (or metadata) root.
    case anchored
    /// Its certificates verify but reach no configured root, and the policy
    /// accepts that (`RelyingPartyPolicy.unanchoredAttestation`).
    case unanchored
}
