public import TokenMintCore
public import TokenMintCrypto

// The public API. The BoringSSL calls are in MLDSA_boringssl.swift, built
// with the MLDSA trait; without it every operation throws
// unsupportedAlgorithm.

/// ML-DSA (FIPS 204), the module-lattice signature JOSE names `ML-DSA-44`,
/// `ML-DSA-65` and `ML-DSA-87` (RFC 9964), from the BoringSSL that
/// swift-crypto 4 builds (the `MLDSA` package trait; OpenSSL 3.0 has no
/// ML-DSA). Signatures are FIPS 204's pure ML-DSA, hedged (randomized), with
/// an optional context string of at most 255 bytes.
public enum MLDSA {
    /// Whether this build has ML-DSA (the `MLDSA` trait).
    public static var isAvailable: Bool {
        #if MLDSA
        true
        #else
        false
        #endif
    }

    /// The three parameter sets of FIPS 204.
    public enum ParameterSet: String, Sendable, CaseIterable {
        /// ML-DSA-44 (security category 2).
        case mlDSA44 = "ML-DSA-44"
        /// ML-DSA-65 (category 3).
        case mlDSA65 = "ML-DSA-65"
        /// ML-DSA-87 (category 5).
        case mlDSA87 = "ML-DSA-87"

        /// The encoded public key's length.
        public var publicKeyByteCount: Int {
            switch self {
            case .mlDSA44: 1312
            case .mlDSA65: 1952
            case .mlDSA87: 2592
            }
        }

        /// A signature's length.
        public var signatureByteCount: Int {
            switch self {
            case .mlDSA44: 2420
            case .mlDSA65: 3309
            case .mlDSA87: 4627
            }
        }
    }

    /// The private key's seed length (ξ in FIPS 204), the form keys are kept in.
    public static let seedByteCount = 32
    /// The longest context string FIPS 204 allows.
    public static let maximumContextByteCount = 255

    /// An ML-DSA public key, parsed once.
    public struct PublicKey: Sendable, Equatable {
        /// Its parameter set.
        public let parameterSet: ParameterSet
        /// The FIPS 204 encoding (pkEncode).
        public let rawRepresentation: [UInt8]
        let parsed: ParsedPublicKey

        /// A public key from its FIPS 204 encoding; a wrong length is
        /// `invalidKeySize`.
        public init(rawRepresentation: [UInt8], parameterSet: ParameterSet) throws(TokenMintError) {
            guard rawRepresentation.count == parameterSet.publicKeyByteCount else {
                throw TokenMintError(.crypto.invalidKeySize,
                                     "an \(parameterSet.rawValue) public key is \(parameterSet.publicKeyByteCount) bytes, got \(rawRepresentation.count)")
            }
            self.parameterSet = parameterSet
            self.rawRepresentation = rawRepresentation
            parsed = try ParsedPublicKey(rawRepresentation, parameterSet)
        }

        /// Whether `signature` is valid for `message` under `context`.
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8], context: [UInt8] = []) -> Bool {
            guard signature.count == parameterSet.signatureByteCount, context.count <= MLDSA.maximumContextByteCount else { return false }
            return parsed.verify(signature, message, context)
        }

        /// Keys are equal when their encodings are.
        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.parameterSet == rhs.parameterSet && lhs.rawRepresentation == rhs.rawRepresentation
        }
    }

    /// An ML-DSA signing key: its seed and the expanded key stay in zeroing memory.
    public struct PrivateKey: Sendable {
        /// Its parameter set.
        public let parameterSet: ParameterSet
        /// The 32-byte seed the key is expanded from (FIPS 204 ξ), in zeroing memory.
        public let seedRepresentation: SecureBytes
        let expanded: SecureBytes
        /// The matching public key.
        public let publicKey: PublicKey

        /// A new random key.
        public init(parameterSet: ParameterSet) throws(TokenMintError) {
            try self.init(seedRepresentation: SecureBytes(randomCount: MLDSA.seedByteCount), parameterSet: parameterSet)
        }

        /// The key expanded from a 32-byte seed (ML-DSA.KeyGen_internal).
        public init(seedRepresentation seed: SecureBytes, parameterSet: ParameterSet) throws(TokenMintError) {
            guard seed.count == MLDSA.seedByteCount else {
                throw TokenMintError(.crypto.invalidKeySize, "an ML-DSA seed is \(MLDSA.seedByteCount) bytes, got \(seed.count)")
            }
            self.parameterSet = parameterSet
            seedRepresentation = seed
            let (expanded, publicBytes) = try MLDSA.expand(seed, parameterSet)
            self.expanded = expanded
            publicKey = try PublicKey(rawRepresentation: publicBytes, parameterSet: parameterSet)
        }

        /// A hedged signature over `message` under `context` (at most 255 bytes).
        public func signature(for message: [UInt8], context: [UInt8] = []) throws(TokenMintError) -> [UInt8] {
            guard context.count <= MLDSA.maximumContextByteCount else {
                throw TokenMintError(.crypto.invalidParameter, "an ML-DSA context is at most 255 bytes")
            }
            return try MLDSA.sign(expanded, parameterSet, message, context)
        }
    }
}
