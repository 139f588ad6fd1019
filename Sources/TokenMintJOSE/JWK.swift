public import TokenMintCore
public import TokenMintCrypto
public import TokenMintMLDSA

/// A JSON Web Key (RFC 7517, RFC 7518 §6, RFC 8037): RSA, EC (P-256/384/521,
/// secp256k1), OKP (Ed25519, Ed448 and X25519), AKP (ML-DSA, RFC 9964) and
/// `oct` keys, private or public.
///
/// Parsing is strict: canonical base64url, exact coordinate lengths, points
/// on the curve, private halves that match their public halves, RSA moduli of
/// at least 2048 bits without the ROCA fingerprint. Secret members are held in
/// the crypto core's zeroing memory and never appear in `description`.
public struct JWK: Sendable, CustomStringConvertible {
    /// The `kty` values TokenMint handles.
    public enum KeyType: String, Sendable, Hashable {
        /// RSA (RFC 7518 §6.3).
        case rsa = "RSA"
        /// Elliptic curve (RFC 7518 §6.2).
        case ec = "EC"
        /// Octet key pair (RFC 8037): Ed25519, Ed448, X25519.
        case okp = "OKP"
        /// Symmetric key (RFC 7518 §6.4).
        case oct = "oct"
        /// Algorithm key pair (RFC 9964): ML-DSA, the algorithm named by `alg`.
        case akp = "AKP"
    }

    /// What a key is asked to do.
    public enum Operation: String, Sendable {
        /// Make signatures or MACs.
        case sign
        /// Check them.
        case verify
        /// Encrypt content, or agree on or wrap a content key (JWE).
        case encrypt
        /// Decrypt content, or unwrap a content key (JWE).
        case decrypt
    }

    enum Material: Sendable {
        case rsaPublic(RSA.PublicKey)
        case rsaPrivate(RSA.PrivateKey)
        case ecPublic(ECDSA.PublicKey)
        case ecPrivate(ECDSA.PrivateKey)
        case ed25519Public(Ed25519.PublicKey)
        case ed25519Private(Ed25519.PrivateKey)
        case ed448Public(Ed448.PublicKey)
        case ed448Private(Ed448.PrivateKey)
        case x25519Public(X25519.PublicKey)
        case x25519Private(X25519.PrivateKey)
        case mlDSAPublic(MLDSA.PublicKey)
        case mlDSAPrivate(MLDSA.PrivateKey)
        case secret(HMACSecret)
    }

    /// A symmetric key with one HMAC key prepared per hash it may serve.
    struct HMACSecret: Sendable {
        let bytes: SecureBytes
        let keys: [HMACKey]  // SHA-256, -384, -512, where long enough

        init(_ bytes: SecureBytes) {
            self.bytes = bytes
            var keys: [HMACKey] = []
            for hash in [HashFunction.sha256, .sha384, .sha512] {
                if let key = try? bytes.withUnsafeBytes({ b throws(TokenMintError) in try HMACKey(b, hash: hash) }) {
                    keys.append(key)
                }
            }
            self.keys = keys
        }

        func key(for hash: HashFunction) -> HMACKey? { keys.first { $0.hash == hash } }
    }

    let material: Material
    /// `kty`.
    public let keyType: KeyType
    /// `kid`.
    public var keyID: String?
    /// `alg` exactly as given, which may name a non-signature algorithm (such
    /// a key then admits no JWS algorithm).
    public var algorithmName: String?
    /// `use` ("sig" or "enc").
    public var use: String?
    /// `key_ops`.
    public var keyOperations: [String]?

    /// `alg` as a JWS algorithm, when it names one.
    public var algorithm: JWSAlgorithm? { algorithmName.flatMap(JWSAlgorithm.init(name:)) }

    /// Whether the key holds private (or secret) material.
    public var isPrivate: Bool {
        switch material {
        case .rsaPrivate, .ecPrivate, .ed25519Private, .ed448Private, .x25519Private, .mlDSAPrivate, .secret: true
        default: false
        }
    }

    /// `crv` for EC and OKP keys.
    public var curveName: String? {
        switch material {
        case .ecPublic(let k): k.curve.name
        case .ecPrivate(let k): k.curve.name
        case .ed25519Public, .ed25519Private: "Ed25519"
        case .ed448Public, .ed448Private: "Ed448"
        case .x25519Public, .x25519Private: "X25519"
        default: nil
        }
    }

    /// Never prints key material.
    public var description: String {
        "JWK(\(keyType.rawValue)\(curveName.map { " \($0)" } ?? "")\(isPrivate ? " private" : "")"
            + "\(keyID.map { ", kid \($0)" } ?? "")\(algorithmName.map { ", alg \($0)" } ?? ""))"
    }

    init(material: Material, keyID: String? = nil, algorithm: String? = nil, use: String? = nil, keyOperations: [String]? = nil) {
        self.material = material
        switch material {
        case .rsaPublic, .rsaPrivate: keyType = .rsa
        case .ecPublic, .ecPrivate: keyType = .ec
        case .ed25519Public, .ed25519Private, .ed448Public, .ed448Private, .x25519Public, .x25519Private: keyType = .okp
        case .mlDSAPublic, .mlDSAPrivate: keyType = .akp
        case .secret: keyType = .oct
        }
        self.keyID = keyID
        self.algorithmName = algorithm
        self.use = use
        self.keyOperations = keyOperations
    }

    // MARK: - From the crypto core's keys

    /// An Ed25519 private JWK.
    public init(_ key: Ed25519.PrivateKey, keyID: String? = nil, algorithm: JWSAlgorithm? = .EdDSA) {
        self.init(material: .ed25519Private(key), keyID: keyID, algorithm: algorithm?.rawValue)
    }
    /// An Ed25519 public JWK.
    public init(_ key: Ed25519.PublicKey, keyID: String? = nil, algorithm: JWSAlgorithm? = .EdDSA) {
        self.init(material: .ed25519Public(key), keyID: keyID, algorithm: algorithm?.rawValue)
    }
    /// An X25519 private JWK (RFC 8037), for ECDH-ES.
    public init(_ key: X25519.PrivateKey, keyID: String? = nil, algorithm: JWEAlgorithm? = nil) {
        self.init(material: .x25519Private(key), keyID: keyID, algorithm: algorithm?.rawValue, use: "enc")
    }
    /// An X25519 public JWK.
    public init(_ key: X25519.PublicKey, keyID: String? = nil, algorithm: JWEAlgorithm? = nil) {
        self.init(material: .x25519Public(key), keyID: keyID, algorithm: algorithm?.rawValue, use: "enc")
    }
    /// An Ed448 private JWK (RFC 8037).
    public init(_ key: Ed448.PrivateKey, keyID: String? = nil, algorithm: JWSAlgorithm? = .Ed448) {
        self.init(material: .ed448Private(key), keyID: keyID, algorithm: algorithm?.rawValue)
    }
    /// An Ed448 public JWK.
    public init(_ key: Ed448.PublicKey, keyID: String? = nil, algorithm: JWSAlgorithm? = .Ed448) {
        self.init(material: .ed448Public(key), keyID: keyID, algorithm: algorithm?.rawValue)
    }
    /// An ML-DSA private JWK (`AKP`, RFC 9964); `alg` is the key's parameter set.
    public init(_ key: MLDSA.PrivateKey, keyID: String? = nil) {
        self.init(material: .mlDSAPrivate(key), keyID: keyID, algorithm: key.parameterSet.rawValue)
    }
    /// An ML-DSA public JWK.
    public init(_ key: MLDSA.PublicKey, keyID: String? = nil) {
        self.init(material: .mlDSAPublic(key), keyID: keyID, algorithm: key.parameterSet.rawValue)
    }
    /// An EC private JWK. Throws for a curve JOSE does not name (only P-256/384/521).
    public init(_ key: ECDSA.PrivateKey, keyID: String? = nil, algorithm: JWSAlgorithm? = nil) throws(TokenMintError) {
        let alg = try JWK.algorithm(for: key.curve)
        self.init(material: .ecPrivate(key), keyID: keyID, algorithm: (algorithm ?? alg).rawValue)
    }
    /// An EC public JWK.
    public init(_ key: ECDSA.PublicKey, keyID: String? = nil, algorithm: JWSAlgorithm? = nil) throws(TokenMintError) {
        let alg = try JWK.algorithm(for: key.curve)
        self.init(material: .ecPublic(key), keyID: keyID, algorithm: (algorithm ?? alg).rawValue)
    }
    /// An RSA private JWK (`alg` RS256 unless given).
    public init(_ key: RSA.PrivateKey, keyID: String? = nil, algorithm: JWSAlgorithm? = .RS256) {
        self.init(material: .rsaPrivate(key), keyID: keyID, algorithm: algorithm?.rawValue)
    }
    /// An RSA public JWK.
    public init(_ key: RSA.PublicKey, keyID: String? = nil, algorithm: JWSAlgorithm? = .RS256) {
        self.init(material: .rsaPublic(key), keyID: keyID, algorithm: algorithm?.rawValue)
    }
    /// An `oct` JWK for HMAC. The key must be at least as long as the hash of
    /// `algorithm` (RFC 7518 §3.2).
    public init(secret: some Collection<UInt8>, keyID: String? = nil, algorithm: JWSAlgorithm = .HS256) throws(TokenMintError) {
        guard algorithm.keyType == .oct else { throw .key("\(algorithm) is not an HMAC algorithm") }
        guard secret.count >= algorithm.hash.digestSize, secret.count <= 1 << 16 else {
            throw .key("\(algorithm) needs a key of at least \(algorithm.hash.digestSize) bytes, got \(secret.count)")
        }
        self.init(material: .secret(HMACSecret(SecureBytes(secret))), keyID: keyID, algorithm: algorithm.rawValue)
    }

    /// A new random key for `algorithm` (RSA: 2048 bits for RS256/PS256, 3072 for *384, 4096 for *512).
    public static func generate(for algorithm: JWSAlgorithm, keyID: String? = nil) throws(TokenMintError) -> JWK {
        func crypto<T>(_ body: () throws(TokenMintError) -> T) throws(TokenMintError) -> T {
            do throws(TokenMintError) { return try body() } catch {
                throw TokenMintError(.jose.signingFailed, "key generation failed: \(error.reason)", underlying: error)
            }
        }
        switch algorithm {
        case .EdDSA, .Ed25519:
            return JWK(Ed25519.PrivateKey(), keyID: keyID, algorithm: algorithm)
        case .Ed448:
            return JWK(try crypto { () throws(TokenMintError) in try Ed448.PrivateKey() }, keyID: keyID, algorithm: algorithm)
        case .ES256, .ES384, .ES512, .ES256K:
            let key = try crypto { () throws(TokenMintError) in try ECDSA.PrivateKey(curve: algorithm.curve ?? .p256) }
            return try JWK(key, keyID: keyID, algorithm: algorithm)
        case .RS256, .RS384, .RS512, .PS256, .PS384, .PS512:
            let bits = [HashFunction.sha256: 2048, .sha384: 3072, .sha512: 4096][algorithm.hash] ?? 2048
            return JWK(try crypto { () throws(TokenMintError) in try RSA.PrivateKey(bits: bits) }, keyID: keyID, algorithm: algorithm)
        case .HS256, .HS384, .HS512:
            return try JWK(secret: SecureRandom.bytes(count: algorithm.hash.digestSize), keyID: keyID, algorithm: algorithm)
        case .MLDSA44, .MLDSA65, .MLDSA87:
            let set = algorithm.mlDSAParameterSet ?? .mlDSA65
            return JWK(try crypto { () throws(TokenMintError) in try MLDSA.PrivateKey(parameterSet: set) }, keyID: keyID)
        }
    }

    static func algorithm(for curve: ECDSA.Curve) throws(TokenMintError) -> JWSAlgorithm {
        switch curve {
        case .p256: .ES256
        case .p384: .ES384
        case .p521: .ES512
        case .secp256k1: .ES256K
        default: throw .key("curve \(curve) has no JOSE name")
        }
    }

    // MARK: - The public half

    /// The public half (same `kid`, `alg`, `use`; `key_ops` limited to "verify"),
    /// or nil for an `oct` key, which has none.
    public var publicKey: JWK? {
        let ops = keyOperations.map { $0.filter { $0 == "verify" || $0 == "encrypt" || $0 == "wrapKey" } }
        let material: Material
        switch self.material {
        case .rsaPrivate(let k): material = .rsaPublic(k.publicKey)
        case .ecPrivate(let k): material = .ecPublic(k.publicKey)
        case .ed25519Private(let k): material = .ed25519Public(k.publicKey)
        case .ed448Private(let k): material = .ed448Public(k.publicKey)
        case .x25519Private(let k): material = .x25519Public(k.publicKey)
        case .mlDSAPrivate(let k): material = .mlDSAPublic(k.publicKey)
        case .secret: return nil
        default: return self
        }
        return JWK(material: material, keyID: keyID, algorithm: algorithmName, use: use, keyOperations: ops)
    }

    // MARK: - Admission

    /// Checks that this key may `operation` with `algorithm`: the key type and
    /// curve carry the algorithm, `alg` (when present) names it, `use` (when
    /// present) is "sig", `key_ops` (when present) lists the operation, and the
    /// key is large enough. A key without `alg` is bound to its family by its
    /// type; nothing in a token can widen that.
    public func admit(_ algorithm: JWSAlgorithm, for operation: Operation) throws(TokenMintError) {
        func refuse(_ why: String) -> TokenMintError { TokenMintError(.jose.algorithmNotAllowed, "\(algorithm) refused by \(description): \(why)") }
        guard algorithm.keyType == keyType else { throw refuse("\(algorithm) needs a \(algorithm.keyType.rawValue) key") }
        if let name = algorithmName, name != algorithm.rawValue { throw refuse("the key is for \(name)") }
        if let use, use != "sig" { throw refuse("the key's use is \"\(use)\"") }
        if let ops = keyOperations, !ops.contains(operation.rawValue) {
            throw refuse("key_ops does not list \"\(operation.rawValue)\"")
        }
        switch material {
        case .ecPublic(let k) where k.curve != algorithm.curve: throw refuse("wrong curve \(k.curve)")
        case .ecPrivate(let k) where k.curve != algorithm.curve: throw refuse("wrong curve \(k.curve)")
        case .x25519Public, .x25519Private: throw refuse("an X25519 key agrees on keys, it does not sign")
        case .ed25519Public, .ed25519Private: if algorithm == .Ed448 { throw refuse("Ed448 needs an Ed448 key") }
        case .ed448Public, .ed448Private: if algorithm == .Ed25519 { throw refuse("Ed25519 needs an Ed25519 key") }
        case .mlDSAPublic(let k) where k.parameterSet != algorithm.mlDSAParameterSet: throw refuse("the key is \(k.parameterSet.rawValue)")
        case .mlDSAPrivate(let k) where k.parameterSet != algorithm.mlDSAParameterSet: throw refuse("the key is \(k.parameterSet.rawValue)")
        case .rsaPublic(let k) where k.keySizeInBits < RSA.minimumSigningBits:
            throw refuse("RSA keys under \(RSA.minimumSigningBits) bits are refused (RFC 7518 §3.3)")
        case .rsaPrivate(let k) where k.keySizeInBits < RSA.minimumSigningBits:
            throw refuse("RSA keys under \(RSA.minimumSigningBits) bits are refused (RFC 7518 §3.3)")
        case .secret(let s) where s.key(for: algorithm.hash) == nil:
            throw refuse("HMAC keys must be at least \(algorithm.hash.digestSize) bytes (RFC 7518 §3.2)")
        default: break
        }
        if operation == .sign, !isPrivate { throw refuse("a public key cannot sign") }
    }
}
