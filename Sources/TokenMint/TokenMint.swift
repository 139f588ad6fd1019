@_exported public import TokenMintCore
@_exported public import TokenMintCrypto
@_exported public import TokenMintJOSE
@_exported public import TokenMintMLDSA
@_exported public import TokenMintAztec
@_exported public import TokenMintStore
@_exported public import TokenMintPay
@_exported public import TokenMintCBOR
@_exported public import TokenMintWebAuthn
@_exported public import TokenMintFIDO
@_exported public import TokenMintAuth

/// TokenMint's version.
public enum TokenMintVersion {
    /// The semantic version of this release.
    public static let string = "0.2.0"
}
