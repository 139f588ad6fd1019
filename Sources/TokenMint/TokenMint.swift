@_exported public import TokenMintCrypto
@_exported public import TokenMintJOSE
@_exported public import TokenMintAztec

/// TokenMint's version.
public enum TokenMintVersion {
    /// The semantic version of this release.
    public static let string = "0.1.0"
}
