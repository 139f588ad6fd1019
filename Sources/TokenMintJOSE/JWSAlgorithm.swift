public import TokenMintCrypto
public import TokenMintMLDSA

/// A JWS signature algorithm (RFC 7518 §3, RFC 8037, RFC 8812, RFC 9864, RFC 9964).
/// `none` is not one of these: unsecured tokens go through ``UnsecuredJWS`` only.
public enum JWSAlgorithm: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// HMAC with SHA-256.
    case HS256
    /// HMAC with SHA-384.
    case HS384
    /// HMAC with SHA-512.
    case HS512
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case RS256
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    case RS384
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    case RS512
    /// RSASSA-PSS with SHA-256, MGF1 SHA-256, 32-byte salt.
    case PS256
    /// RSASSA-PSS with SHA-384, MGF1 SHA-384, 48-byte salt.
    case PS384
    /// RSASSA-PSS with SHA-512, MGF1 SHA-512, 64-byte salt.
    case PS512
    /// ECDSA P-256 with SHA-256, signature r‖s.
    case ES256
    /// ECDSA P-384 with SHA-384, signature r‖s.
    case ES384
    /// ECDSA P-521 with SHA-512, signature r‖s.
    case ES512
    /// EdDSA with Ed25519 keys (RFC 8037; RFC 9864 deprecates the name,
    /// which does not say the curve).
    case EdDSA
    /// ECDSA secp256k1 with SHA-256, signature r‖s (RFC 8812).
    case ES256K
    /// Ed25519, fully specified (RFC 9864): the same signature as `EdDSA`
    /// with an Ed25519 key, under a name that says so. A key whose JWK `alg`
    /// is one of the two names signs and verifies only under that name.
    case Ed25519
    /// Ed448, fully specified (RFC 9864). `EdDSA` also names Ed448 keys (RFC 8037).
    case Ed448
    /// ML-DSA-44 (FIPS 204, RFC 9964) with an `AKP` key; needs the MLDSA trait.
    case MLDSA44 = "ML-DSA-44"
    /// ML-DSA-65 (FIPS 204, RFC 9964); needs the MLDSA trait.
    case MLDSA65 = "ML-DSA-65"
    /// ML-DSA-87 (FIPS 204, RFC 9964); needs the MLDSA trait.
    case MLDSA87 = "ML-DSA-87"

    /// The JOSE name.
    public var description: String { rawValue }

    /// The key type that carries this algorithm.
    public var keyType: JWK.KeyType {
        switch self {
        case .HS256, .HS384, .HS512: .oct
        case .RS256, .RS384, .RS512, .PS256, .PS384, .PS512: .rsa
        case .ES256, .ES384, .ES512, .ES256K: .ec
        case .EdDSA, .Ed25519, .Ed448: .okp
        case .MLDSA44, .MLDSA65, .MLDSA87: .akp
        }
    }

    /// The hash function (SHA-512 for EdDSA, where it is internal to the
    /// scheme; ML-DSA hashes with SHAKE256 inside the scheme, and SHA-512 is
    /// named for it only to size things).
    public var hash: HashFunction {
        switch self {
        case .HS256, .RS256, .PS256, .ES256, .ES256K: .sha256
        case .HS384, .RS384, .PS384, .ES384: .sha384
        case .HS512, .RS512, .PS512, .ES512, .EdDSA, .Ed25519, .Ed448, .MLDSA44, .MLDSA65, .MLDSA87: .sha512
        }
    }

    /// The ML-DSA parameter set of the ML-DSA algorithms.
    public var mlDSAParameterSet: MLDSA.ParameterSet? { MLDSA.ParameterSet(rawValue: rawValue) }

    /// The curve for ES algorithms.
    public var curve: ECDSA.Curve? {
        switch self {
        case .ES256: .p256
        case .ES384: .p384
        case .ES512: .p521
        case .ES256K: .secp256k1
        default: nil
        }
    }

    var rsaPadding: RSA.Padding? {
        switch self {
        case .RS256, .RS384, .RS512: .pkcs1v15
        case .PS256, .PS384, .PS512: .pss
        default: nil
        }
    }

    /// The algorithm whose JOSE name is exactly `name` (case-sensitive, RFC 7515 §4.1.1).
    public init?(name: String) { self.init(rawValue: name) }
}
