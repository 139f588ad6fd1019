import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR

/// The COSE algorithms WebAuthn credentials use here.
public enum COSEAlgorithm: Int64, Sendable, Hashable, CaseIterable {
    /// ECDSA P-256 with SHA-256.
    case es256 = -7
    /// Ed25519.
    case edDSA = -8
    /// ECDSA P-384 with SHA-384.
    case es384 = -35
    /// ECDSA P-521 with SHA-512.
    case es512 = -36
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = -257

    var hash: HashFunction {
        switch self {
        case .es256, .rs256, .edDSA: .sha256
        case .es384: .sha384
        case .es512: .sha512
        }
    }

    var curve: ECDSA.Curve? {
        switch self {
        case .es256: .p256
        case .es384: .p384
        case .es512: .p521
        default: nil
        }
    }
}
