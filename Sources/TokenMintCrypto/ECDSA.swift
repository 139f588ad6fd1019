public import TokenMintCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// The public API. The OpenSSL calls (keys, curve groups, RFC 6979 signing)
// are in ECDSA_libcrypto.swift, the DER signature codec in DER.swift.

/// ECDSA over prime curves through OpenSSL 3.
///
/// P-256, P-384 and P-521 are what JOSE (ES256/384/512) and WebAuthn use; the
/// other named curves are offered because OpenSSL verifies them at no extra
/// cost. Signatures come in IEEE P1363 form (r‖s, JOSE) and DER (X.509,
/// WebAuthn); both are parsed strictly and r, s must lie in [1, n−1].
public enum ECDSA {
    /// How the per-signature nonce k is chosen.
    public enum Nonce: Sendable, Hashable {
        /// From OpenSSL's CSPRNG (the default).
        case random
        /// RFC 6979 deterministic k, derived with HMAC from the key and the
        /// message hash: the same key and message always give the same signature.
        case deterministic
    }

    /// A named prime curve.
    public struct Curve: Hashable, Sendable, CustomStringConvertible {
        /// The common name: "P-256", "secp256k1", "brainpoolP256r1", ...
        public let name: String
        /// The byte length of the group order n: the size of r and of s.
        public let scalarByteCount: Int
        /// The byte length of a field element (a coordinate).
        public let coordinateByteCount: Int
        /// The hash that goes with the curve (SHA-256 for P-256, ...).
        public let defaultHash: HashFunction
        let group: CurveGroup

        private init(_ name: String, _ openSSLName: String, _ bytes: Int, _ hash: HashFunction) {
            self.name = name
            self.scalarByteCount = bytes
            self.coordinateByteCount = bytes
            self.defaultHash = hash
            self.group = CurveGroup(openSSLName)
        }

        /// NIST P-256 (secp256r1, prime256v1).
        public static let p256 = Curve("P-256", "prime256v1", 32, .sha256)
        /// NIST P-384 (secp384r1).
        public static let p384 = Curve("P-384", "secp384r1", 48, .sha384)
        /// NIST P-521 (secp521r1).
        public static let p521 = Curve("P-521", "secp521r1", 66, .sha512)
        /// NIST P-224 (secp224r1).
        public static let p224 = Curve("P-224", "secp224r1", 28, .sha224)
        /// secp256k1 (JOSE ES256K, RFC 8812).
        public static let secp256k1 = Curve("secp256k1", "secp256k1", 32, .sha256)
        /// brainpoolP224r1 (RFC 5639).
        public static let brainpoolP224r1 = Curve("brainpoolP224r1", "brainpoolP224r1", 28, .sha224)
        /// brainpoolP256r1 (RFC 5639).
        public static let brainpoolP256r1 = Curve("brainpoolP256r1", "brainpoolP256r1", 32, .sha256)
        /// brainpoolP320r1 (RFC 5639).
        public static let brainpoolP320r1 = Curve("brainpoolP320r1", "brainpoolP320r1", 40, .sha384)
        /// brainpoolP384r1 (RFC 5639).
        public static let brainpoolP384r1 = Curve("brainpoolP384r1", "brainpoolP384r1", 48, .sha384)
        /// brainpoolP512r1 (RFC 5639).
        public static let brainpoolP512r1 = Curve("brainpoolP512r1", "brainpoolP512r1", 64, .sha512)

        /// Every curve above.
        public static let all: [Curve] = [
            .p256, .p384, .p521, .p224, .secp256k1, .brainpoolP224r1, .brainpoolP256r1,
            .brainpoolP320r1, .brainpoolP384r1, .brainpoolP512r1,
        ]

        /// Looks a curve up by its common, SEC or OpenSSL name ("P-256",
        /// "secp256r1", "prime256v1", ...).
        public init?(name: String) {
            let aliases = ["secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521", "secp224r1": "P-224"]
            let wanted = aliases[name] ?? name
            guard let found = Curve.all.first(where: { $0.name == wanted || $0.openSSLName == wanted }) else {
                return nil
            }
            self = found
        }

        /// The common name.
        public var description: String { name }
        /// Compares by name.
        public static func == (lhs: Curve, rhs: Curve) -> Bool { lhs.name == rhs.name }
        /// Hashes the name.
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    /// An ECDSA signature: the pair (r, s), each in [1, n−1].
    public struct Signature: Sendable, Hashable {
        /// The curve the signature belongs to.
        public let curve: Curve
        /// r, big-endian, exactly `curve.scalarByteCount` bytes.
        public let r: [UInt8]
        /// s, big-endian, exactly `curve.scalarByteCount` bytes.
        public let s: [UInt8]

        /// The IEEE P1363 form r‖s (JOSE).
        public var rawRepresentation: [UInt8] { r + s }

        /// The DER form (`SEQUENCE { INTEGER r, INTEGER s }`, X.509 and WebAuthn).
        public var derRepresentation: [UInt8] { DER.encodeSignature(r: r, s: s) }

        /// Parses r‖s. Exactly two scalars of the curve's size; r and s in [1, n−1].
        public init(rawRepresentation raw: some DataProtocol, curve: Curve) throws(TokenMintError) {
            try self.init(p1363: Array(raw), curve: curve)
        }

        /// Parses r‖s (the non-generic entry point).
        public init(rawRepresentation bytes: [UInt8], curve: Curve) throws(TokenMintError) {
            try self.init(p1363: bytes, curve: curve)
        }

        /// Parses r‖s. Named apart from the public initializers: a generic
        /// one calling `init(rawRepresentation:)` with an array bound to itself.
        init(p1363 bytes: [UInt8], curve: Curve) throws(TokenMintError) {
            let size = curve.scalarByteCount
            guard bytes.count == 2 * size else {
                throw TokenMintError(.crypto.invalidSignature, "\(curve) signature must be \(2 * size) bytes (r‖s), got \(bytes.count)")
            }
            try self.init(curve: curve, r: Array(bytes[0..<size]), s: Array(bytes[size...]))
        }

        /// Parses strict DER: definite minimal lengths, minimal positive
        /// INTEGERs, nothing after the SEQUENCE; r and s in [1, n−1].
        public init(derRepresentation der: some DataProtocol, curve: Curve) throws(TokenMintError) {
            let (r, s) = try DER.decodeSignature(Array(der), scalarByteCount: curve.scalarByteCount)
            try self.init(curve: curve, r: r, s: s)
        }

        init(curve: Curve, r: [UInt8], s: [UInt8]) throws(TokenMintError) {
            let order = curve.group.order
            func check(_ name: String, _ value: [UInt8]) throws(TokenMintError) {
                guard value.contains(where: { $0 != 0 }) else {
                    throw TokenMintError(.crypto.invalidSignature, "\(curve) signature: \(name) is zero")
                }
                guard compareBigEndian(value, order) < 0 else {
                    throw TokenMintError(.crypto.invalidSignature, "\(curve) signature: \(name) is not below the group order")
                }
            }
            try check("r", r)
            try check("s", s)
            self.curve = curve
            self.r = r
            self.s = s
        }
    }

    /// A signing key.
    public struct PrivateKey: Sendable {
        let key: ECKeyPair
        /// The curve.
        public var curve: Curve { key.curve }
        /// The matching public key.
        public let publicKey: PublicKey

        /// A new random key on `curve`.
        public init(curve: Curve = .p256) throws(TokenMintError) {
            let pkey = try PrivateKey.openSSLGenerate(curve: curve)
            try self.init(validated: pkey, curve: curve, check: false)
        }

        /// The key for the private scalar d (big-endian; at most the order's
        /// size; must lie in [1, n−1]). The public point is computed.
        public init(rawRepresentation d: some DataProtocol, curve: Curve) throws(TokenMintError) {
            let pkey = try d.withContiguousBytes(throwing: { (scalar) throws(TokenMintError) in try PrivateKey.pkey(scalar: scalar, curve: curve) })
            try self.init(validated: pkey, curve: curve, check: false)
        }

        /// The key for a private scalar held in secure memory: read in
        /// place, never copied into ordinary memory.
        public init(rawRepresentation d: SecureBytes, curve: Curve) throws(TokenMintError) {
            let pkey = try d.withUnsafeBytes { (scalar) throws(TokenMintError) in try PrivateKey.pkey(scalar: scalar, curve: curve) }
            try self.init(validated: pkey, curve: curve, check: false)
        }

        /// An EC key from its scalar, checked to lie in [1, n−1].
        static func pkey(scalar: UnsafeRawBufferPointer, curve: Curve) throws(TokenMintError) -> PKey {
            guard scalar.count == curve.scalarByteCount else {
                throw TokenMintError(.crypto.invalidKeySize, "\(curve) private key must be \(curve.scalarByteCount) bytes, got \(scalar.count)")
            }
            guard scalar.contains(where: { $0 != 0 }), compareBigEndian(scalar, curve.group.order) < 0 else {
                throw TokenMintError(.crypto.invalidKey, "\(curve) private key is not in [1, n-1]")
            }
            return try openSSLKey(validScalar: scalar, curve: curve)
        }

        /// A PEM key: PKCS#8 (`PRIVATE KEY`) or SEC1 (`EC PRIVATE KEY`). When
        /// `curve` is given, a key on another curve is refused.
        public init(pemRepresentation pem: String, curve: Curve? = nil) throws(TokenMintError) {
            let pkey = try PrivateKey.openSSLDecode(Array(pem.utf8), format: .pem)
            try self.init(validated: pkey, curve: curve, check: true)
        }

        /// A DER key: PKCS#8 or SEC1.
        public init(derRepresentation der: some DataProtocol, curve: Curve? = nil) throws(TokenMintError) {
            let pkey = try PrivateKey.openSSLDecode(Array(der), format: .der)
            try self.init(validated: pkey, curve: curve, check: true)
        }

        /// The private scalar d, big-endian, padded to the order's size.
        public var rawRepresentation: SecureBytes {
            get throws(TokenMintError) { try openSSLPrivateScalar() }
        }

        /// PKCS#8 PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem, sec1: false), as: UTF8.self) }
        }
        /// PKCS#8 DER.
        public var derRepresentation: SecureBytes {
            get throws(TokenMintError) { SecureBytes(try openSSLEncoded(.der, sec1: false)) }
        }
        /// SEC1 PEM (`-----BEGIN EC PRIVATE KEY-----`).
        public var sec1PEMRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem, sec1: true), as: UTF8.self) }
        }
        /// SEC1 DER.
        public var sec1DERRepresentation: SecureBytes {
            get throws(TokenMintError) { SecureBytes(try openSSLEncoded(.der, sec1: true)) }
        }

        /// Signs `message` hashed with `hash` (default: the curve's hash).
        /// - Throws: `unsupportedAlgorithm` for SHA-1; `libraryFailure` if OpenSSL fails.
        public func signature(
            for message: some DataProtocol, hash: HashFunction? = nil, nonce: Nonce = .random
        ) throws(TokenMintError) -> Signature {
            try message.withContiguousBytes(throwing: { bytes throws(TokenMintError) in
                try signature(for: bytes, hash: hash, nonce: nonce)
            })
        }

        /// Signs the bytes in `message`.
        public func signature(
            for message: UnsafeRawBufferPointer, hash: HashFunction? = nil, nonce: Nonce = .random
        ) throws(TokenMintError) -> Signature {
            let hash = hash ?? curve.defaultHash
            guard hash.isAllowedForSigning else { throw TokenMintError(.crypto.unsupportedAlgorithm, "ECDSA signing with \(hash.name) is refused") }
            switch nonce {
            case .random:
                let der = try key.pkey.sign(message, hash: hash, reuse: .ecdsa)
                return try Signature(derRepresentation: der, curve: curve)
            case .deterministic:
                return try key.deterministicSignature(digest: hash.hash(message), hash: hash)
            }
        }

        /// Signs a digest computed by the caller, with an RFC 6979 nonce
        /// derived with `hash` (which must be the hash that made `digest`).
        public func deterministicSignature(forDigest digest: some DataProtocol, hash: HashFunction) throws(TokenMintError) -> Signature {
            guard hash.isAllowedForSigning else { throw TokenMintError(.crypto.unsupportedAlgorithm, "ECDSA signing with \(hash.name) is refused") }
            guard digest.count == hash.digestSize else {
                throw TokenMintError(.crypto.invalidParameter, "digest must be \(hash.digestSize) bytes for \(hash.name)")
            }
            return try key.deterministicSignature(digest: Array(digest), hash: hash)
        }
    }

    /// A verification key: a point on the curve, checked on creation.
    public struct PublicKey: Sendable, Hashable {
        let pkey: PKey
        /// The curve.
        public let curve: Curve
        /// The uncompressed SEC1 point 04‖x‖y.
        public let x963Representation: [UInt8]

        /// The x coordinate, big-endian, padded to the field size.
        public var x: [UInt8] { Array(x963Representation[1...curve.coordinateByteCount]) }
        /// The y coordinate.
        public var y: [UInt8] { Array(x963Representation[(1 + curve.coordinateByteCount)...]) }
        /// x‖y without the 04 prefix.
        public var rawRepresentation: [UInt8] { Array(x963Representation.dropFirst()) }

        /// The key for the affine point (x, y), each padded to the field size.
        /// - Throws: `invalidKey` when the point is not on the curve.
        public init(x: some DataProtocol, y: some DataProtocol, curve: Curve) throws(TokenMintError) {
            let n = curve.coordinateByteCount
            guard x.count == n, y.count == n else {
                throw TokenMintError(.crypto.invalidKeySize, "\(curve) coordinates must be \(n) bytes each")
            }
            try self.init(x963Representation: [0x04] + Array(x) + Array(y), curve: curve)
        }

        /// The key for a SEC1 point: uncompressed (04‖x‖y) or compressed (02/03‖x).
        /// - Throws: `invalidKey` when the point is not on the curve or is the point at infinity.
        public init(x963Representation point: some DataProtocol, curve: Curve) throws(TokenMintError) {
            let bytes = Array(point)
            let n = curve.coordinateByteCount
            let validLength = (bytes.first == 0x04 && bytes.count == 1 + 2 * n)
                || ((bytes.first == 0x02 || bytes.first == 0x03) && bytes.count == 1 + n)
            guard validLength else { throw TokenMintError(.crypto.invalidKey, "not a SEC1 point encoding for \(curve)") }
            let pkey = try PublicKey.openSSLKey(point: bytes, curve: curve)
            try self.init(pkey: pkey, curve: curve)
        }

        /// An SPKI PEM key (a private key PEM yields its public key).
        public init(pemRepresentation pem: String, curve: Curve? = nil) throws(TokenMintError) {
            let pkey = try PublicKey.openSSLDecode(Array(pem.utf8), format: .pem)
            try self.init(pkey: pkey, curve: ECDSA.curve(of: pkey, expected: curve))
        }

        /// An SPKI DER key.
        public init(derRepresentation der: some DataProtocol, curve: Curve? = nil) throws(TokenMintError) {
            let pkey = try PublicKey.openSSLDecode(Array(der), format: .der)
            try self.init(pkey: pkey, curve: ECDSA.curve(of: pkey, expected: curve))
        }

        /// SPKI PEM.
        public var pemRepresentation: String {
            get throws(TokenMintError) { String(decoding: try openSSLEncoded(.pem), as: UTF8.self) }
        }
        /// SPKI DER.
        public var derRepresentation: [UInt8] {
            get throws(TokenMintError) { try openSSLEncoded(.der) }
        }

        /// Verifies `signature` over `message` hashed with `hash` (default: the
        /// curve's hash). `false` for a signature on another curve.
        public func isValidSignature(_ signature: Signature, for message: some DataProtocol, hash: HashFunction? = nil) -> Bool {
            message.withContiguousBytes { isValidSignature(signature, for: $0, hash: hash) }
        }

        /// Verifies over the bytes in `message`.
        public func isValidSignature(_ signature: Signature, for message: UnsafeRawBufferPointer, hash: HashFunction? = nil) -> Bool {
            guard signature.curve == curve else { return false }
            let der = signature.derRepresentation
            return der.withUnsafeBytes { pkey.verify($0, message: message, hash: hash ?? curve.defaultHash, reuse: .ecdsa) }
        }

        /// Compares the points.
        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.curve == rhs.curve && lhs.x963Representation == rhs.x963Representation
        }
        /// Hashes the point.
        public func hash(into hasher: inout Hasher) { hasher.combine(x963Representation) }
    }
}
