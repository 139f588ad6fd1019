import TokenMintCore

/// The CTAP2 authenticator commands (CTAP 2.1 §6): the first byte of a
/// CTAPHID CBOR message.
public enum CTAP2Command: UInt8, Sendable, Hashable, CaseIterable {
    /// authenticatorMakeCredential.
    case makeCredential = 0x01
    /// authenticatorGetAssertion.
    case getAssertion = 0x02
    /// authenticatorGetInfo.
    case getInfo = 0x04
    /// authenticatorClientPIN.
    case clientPIN = 0x06
    /// authenticatorReset.
    case reset = 0x07
    /// authenticatorGetNextAssertion.
    case getNextAssertion = 0x08
    /// authenticatorCredentialManagement.
    case credentialManagement = 0x0A
    /// authenticatorSelection.
    case selection = 0x0B
}
