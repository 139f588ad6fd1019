import TokenMintCore

/// What a PIN/UV auth token may be used for (CTAP 2.1 §6.5.5.7).
public struct PINUVAuthPermissions: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt8
    /// Permissions from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// mc: authenticatorMakeCredential.
    public static let makeCredential = PINUVAuthPermissions(rawValue: 0x01)
    /// ga: authenticatorGetAssertion.
    public static let getAssertion = PINUVAuthPermissions(rawValue: 0x02)
    /// cm: authenticatorCredentialManagement.
    public static let credentialManagement = PINUVAuthPermissions(rawValue: 0x04)
    /// be: authenticatorBioEnrollment (not served by the software authenticator).
    public static let bioEnrollment = PINUVAuthPermissions(rawValue: 0x08)
    /// lbw: authenticatorLargeBlobs writes (not served).
    public static let largeBlobWrite = PINUVAuthPermissions(rawValue: 0x10)
    /// acfg: authenticatorConfig (not served).
    public static let authenticatorConfiguration = PINUVAuthPermissions(rawValue: 0x20)

    /// The permissions the software authenticator grants: mc, ga and cm.
    public static let served: PINUVAuthPermissions = [.makeCredential, .getAssertion, .credentialManagement]
}
