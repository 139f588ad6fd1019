import TokenMintCore

/// The credProtect extension's levels (CTAP 2.1 §12.1): when an
/// authenticator lets a credential be used without user verification.
public enum CredentialProtection: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// userVerificationOptional (1): the default, no restriction.
    case userVerificationOptional = 1
    /// userVerificationOptionalWithCredentialIDList (2): without UV, only
    /// when the RP names the credential in an allow list (not discoverable).
    case userVerificationOptionalWithCredentialIDList = 2
    /// userVerificationRequired (3): only with user verification.
    case userVerificationRequired = 3

    /// The order of the levels: a higher level protects more.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The WebAuthn name of the level (`credentialProtectionPolicy`).
    public var webAuthnName: String {
        switch self {
        case .userVerificationOptional: "userVerificationOptional"
        case .userVerificationOptionalWithCredentialIDList: "userVerificationOptionalWithCredentialIDList"
        case .userVerificationRequired: "userVerificationRequired"
        }
    }

    /// The level of a WebAuthn `credentialProtectionPolicy` name.
    public init?(webAuthnName: String) {
        guard let level = Self.allCases.first(where: { $0.webAuthnName == webAuthnName }) else { return nil }
        self = level
    }
}
