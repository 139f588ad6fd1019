import TokenMintCore
import TokenMintCrypto


/// A JWT whose signature and claims have been verified.
public struct VerifiedJWT: Sendable {
    /// The header.
    public let header: JWSHeader
    /// The claims.
    public let claims: JWTClaims
    /// The payload bytes (the claims set as received).
    public let payload: [UInt8]
    /// The key that verified it.
    public let key: JWK
}
