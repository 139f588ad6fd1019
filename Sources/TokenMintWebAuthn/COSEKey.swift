public import TokenMintCore
public import TokenMintCrypto
import TokenMintCBOR

/// A credential public key in COSE form (RFC 9052/9053), encoded as CTAP2
/// canonical CBOR: EC2 `{1:2, 3:alg, -1:crv, -2:x, -3:y}`, OKP
/// `{1:1, 3:-8, -1:6, -2:x}`, RSA `{1:3, 3:-257, -1:n, -2:e}`.
public struct COSEKey: Sendable, Hashable {
    enum Material: Sendable, Hashable {
        case ec(ECDSA.PublicKey)
        case ed25519(Ed25519.PublicKey)
        case rsa(RSA.PublicKey)
    }

    /// The algorithm.
    public let algorithm: COSEAlgorithm
    let material: Material

    /// An EC2 key for ES256/384/512.
    public init(_ key: ECDSA.PublicKey) throws(TokenMintError) {
        switch key.curve {
        case .p256: algorithm = .es256
        case .p384: algorithm = .es384
        case .p521: algorithm = .es512
        default: throw TokenMintError(.webAuthn.unsupportedAlgorithm, "no COSE algorithm for curve \(key.curve)")
        }
        material = .ec(key)
    }

    /// An OKP key for EdDSA.
    public init(_ key: Ed25519.PublicKey) {
        algorithm = .edDSA
        material = .ed25519(key)
    }

    /// An RSA key for RS256.
    public init(_ key: RSA.PublicKey) {
        algorithm = .rs256
        material = .rsa(key)
    }

    /// The canonical CBOR encoding.
    public var cbor: [UInt8] {
        var entries: [CBORMapEntry] = []
        func add(_ key: Int64, _ value: CBOR) { entries.append(CBORMapEntry(key: .int(key), value: value)) }
        switch material {
        case .ec(let key):
            add(1, .int(2))
            add(3, .int(algorithm.rawValue))
            add(-1, .int(key.curve == .p256 ? 1 : key.curve == .p384 ? 2 : 3))
            add(-2, .bytes(key.x))
            add(-3, .bytes(key.y))
        case .ed25519(let key):
            add(1, .int(1))
            add(3, .int(-8))
            add(-1, .int(6))
            add(-2, .bytes(key.rawRepresentation))
        case .rsa(let key):
            add(1, .int(3))
            add(3, .int(-257))
            add(-1, .bytes(key.modulus))
            add(-2, .bytes(key.publicExponent))
        }
        return CBOREncoder.encode(.map(entries))
    }

    /// Parses a COSE key strictly: canonical CBOR, exactly the members of its
    /// type, a supported algorithm, a point on the curve.
    public init(cbor bytes: [UInt8]) throws(TokenMintError) {
        let item: CBOR
        do { item = try CBORDecoder.decode(bytes, requireCanonical: true) } catch {
            throw TokenMintError(.webAuthn.invalidPublicKey, "COSE key: \(error)", underlying: error)
        }
        try self.init(item: item)
    }

    init(item: CBOR) throws(TokenMintError) {
        guard let entries = item.mapValue else { throw TokenMintError(.webAuthn.invalidPublicKey, "a COSE key is a CBOR map") }
        var fields: [Int64: CBOR] = [:]
        for entry in entries {
            guard let label = entry.key.intValue else { throw TokenMintError(.webAuthn.invalidPublicKey, "COSE key labels are integers here") }
            fields[label] = entry.value
        }
        guard let kty = fields[1]?.intValue, let alg = fields[3]?.intValue, let algorithm = COSEAlgorithm(rawValue: alg) else {
            throw TokenMintError(.webAuthn.unsupportedAlgorithm, "COSE key without a supported kty/alg")
        }
        func bytes(_ label: Int64) throws(TokenMintError) -> [UInt8] {
            guard let value = fields[label]?.bytesValue else { throw TokenMintError(.webAuthn.invalidPublicKey, "COSE key member \(label) missing") }
            return value
        }
        self.algorithm = algorithm
        do {
            switch (kty, algorithm) {
            case (2, .es256), (2, .es384), (2, .es512):
                guard Set(fields.keys) == [1, 3, -1, -2, -3] else { throw TokenMintError(.webAuthn.invalidPublicKey, "EC2 key members must be 1, 3, -1, -2, -3") }
                let crv = fields[-1]?.intValue
                guard let curve = algorithm.curve, crv == (curve == .p256 ? 1 : curve == .p384 ? 2 : 3) else {
                    throw TokenMintError(.webAuthn.invalidPublicKey, "EC2 curve does not match the algorithm")
                }
                material = .ec(try ECDSA.PublicKey(x: bytes(-2), y: bytes(-3), curve: curve))
            case (1, .edDSA):
                guard Set(fields.keys) == [1, 3, -1, -2], fields[-1]?.intValue == 6 else {
                    throw TokenMintError(.webAuthn.invalidPublicKey, "OKP keys are Ed25519 (crv 6) with members 1, 3, -1, -2")
                }
                material = .ed25519(try Ed25519.PublicKey(rawRepresentation: bytes(-2)))
            case (3, .rs256):
                guard Set(fields.keys) == [1, 3, -1, -2] else { throw TokenMintError(.webAuthn.invalidPublicKey, "RSA key members must be 1, 3, -1, -2") }
                let key = try RSA.PublicKey(modulus: bytes(-1), publicExponent: bytes(-2))
                guard key.keySizeInBits >= RSA.minimumSigningBits else { throw TokenMintError(.webAuthn.invalidPublicKey, "RSA keys under 2048 bits are refused") }
                material = .rsa(key)
            default:
                throw TokenMintError(.webAuthn.unsupportedAlgorithm, "kty \(kty) with alg \(alg) is not supported")
            }
        } catch {
            throw TokenMintError.wrap(error, as: .webAuthn.invalidPublicKey, "COSE key: \(error)")
        }
    }

    /// Verifies a WebAuthn signature (DER for ECDSA, raw for EdDSA, PKCS#1 v1.5 for RS256).
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        switch material {
        case .ec(let key):
            guard let parsed = try? ECDSA.Signature(derRepresentation: signature, curve: key.curve) else { return false }
            return key.isValidSignature(parsed, for: message, hash: algorithm.hash)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: message)
        case .rsa(let key):
            return key.isValidSignature(signature, for: message, hash: .sha256, padding: .pkcs1v15)
        }
    }
}
