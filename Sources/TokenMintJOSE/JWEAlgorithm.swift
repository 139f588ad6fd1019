public import TokenMintCore
import TokenMintCrypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JWE key management algorithm (RFC 7518 §4, RFC 8037 §3.2).
///
/// Left out on purpose: `RSA1_5` (PKCS#1 v1.5 key transport invites
/// Bleichenbacher's padding oracle, RFC 7518 §4.2, RFC 8725 §3.4) and
/// `PBES2-*` (password-based: a token names its own iteration count, so a
/// forger picks the receiver's work; nothing here takes passwords). Both are
/// refused as unsupported.
public enum JWEAlgorithm: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// RSAES-OAEP with SHA-1 and MGF1-SHA-1.
    case RSA_OAEP = "RSA-OAEP"
    /// RSAES-OAEP with SHA-256 and MGF1-SHA-256.
    case RSA_OAEP_256 = "RSA-OAEP-256"
    /// AES-128 key wrap (RFC 3394).
    case A128KW
    /// AES-192 key wrap.
    case A192KW
    /// AES-256 key wrap.
    case A256KW
    /// The shared symmetric key is the content key.
    case dir
    /// ECDH-ES: the Concat KDF output is the content key.
    case ECDH_ES = "ECDH-ES"
    /// ECDH-ES, then AES-128 key wrap of a random content key.
    case ECDH_ES_A128KW = "ECDH-ES+A128KW"
    /// ECDH-ES, then AES-192 key wrap.
    case ECDH_ES_A192KW = "ECDH-ES+A192KW"
    /// ECDH-ES, then AES-256 key wrap.
    case ECDH_ES_A256KW = "ECDH-ES+A256KW"
    /// AES-128-GCM key wrap (`iv` and `tag` header members).
    case A128GCMKW
    /// AES-192-GCM key wrap.
    case A192GCMKW
    /// AES-256-GCM key wrap.
    case A256GCMKW

    /// The JOSE name.
    public var description: String { rawValue }

    /// The algorithm for a JOSE name; nil for anything else (RSA1_5, PBES2-*, none).
    public init?(name: String) { self.init(rawValue: name) }

    /// The key type that carries this algorithm (EC keys and X25519 OKP keys both carry ECDH-ES).
    public var keyType: JWK.KeyType {
        switch self {
        case .RSA_OAEP, .RSA_OAEP_256: .rsa
        case .A128KW, .A192KW, .A256KW, .dir, .A128GCMKW, .A192GCMKW, .A256GCMKW: .oct
        case .ECDH_ES, .ECDH_ES_A128KW, .ECDH_ES_A192KW, .ECDH_ES_A256KW: .ec
        }
    }

    /// Whether the algorithm agrees on a key with ECDH-ES.
    public var isKeyAgreement: Bool { [.ECDH_ES, .ECDH_ES_A128KW, .ECDH_ES_A192KW, .ECDH_ES_A256KW].contains(self) }

    /// Whether the content key comes straight from the key (`dir`, `ECDH-ES`):
    /// such JWEs have an empty encrypted key and one recipient only.
    public var isDirect: Bool { self == .dir || self == .ECDH_ES }

    /// The key-encryption key length in bytes for the AES wraps; nil for the others.
    var wrapKeyByteCount: Int? {
        switch self {
        case .A128KW, .A128GCMKW, .ECDH_ES_A128KW: 16
        case .A192KW, .A192GCMKW, .ECDH_ES_A192KW: 24
        case .A256KW, .A256GCMKW, .ECDH_ES_A256KW: 32
        default: nil
        }
    }
}

/// A JWE content encryption algorithm (RFC 7518 §5).
public enum JWEEncryption: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// AES-128-CBC with HMAC-SHA-256 truncated to 128 bits.
    case A128CBC_HS256 = "A128CBC-HS256"
    /// AES-192-CBC with HMAC-SHA-384 truncated to 192 bits.
    case A192CBC_HS384 = "A192CBC-HS384"
    /// AES-256-CBC with HMAC-SHA-512 truncated to 256 bits.
    case A256CBC_HS512 = "A256CBC-HS512"
    /// AES-128-GCM.
    case A128GCM
    /// AES-192-GCM.
    case A192GCM
    /// AES-256-GCM.
    case A256GCM

    /// The JOSE name.
    public var description: String { rawValue }

    /// The algorithm for a JOSE name; nil for anything else.
    public init?(name: String) { self.init(rawValue: name) }

    /// The content key length in bytes (both halves for the CBC-HMAC composites).
    public var keyByteCount: Int {
        switch self {
        case .A128GCM: 16
        case .A192GCM: 24
        case .A256GCM, .A128CBC_HS256: 32
        case .A192CBC_HS384: 48
        case .A256CBC_HS512: 64
        }
    }

    /// The IV length in bytes.
    public var ivByteCount: Int { isGCM ? AES.GCM.nonceByteCount : AES.CBCHMAC.ivByteCount }

    var isGCM: Bool { self == .A128GCM || self == .A192GCM || self == .A256GCM }

    /// Encrypts with a fresh random IV.
    func seal(_ plaintext: some DataProtocol, key: SecureBytes, aad: [UInt8]) throws(TokenMintError) -> (iv: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        let iv = SecureRandom.bytes(count: ivByteCount)
        let sealed = isGCM
            ? try AES.GCM.seal(plaintext, key: key, nonce: iv, authenticating: aad)
            : try AES.CBCHMAC.seal(plaintext, key: key, iv: iv, authenticating: aad)
        return (iv, sealed.ciphertext, sealed.tag)
    }

    /// Checks the tag and decrypts.
    func open(_ ciphertext: [UInt8], key: SecureBytes, iv: [UInt8], tag: [UInt8], aad: [UInt8]) throws(TokenMintError) -> SecureBytes {
        isGCM
            ? try AES.GCM.open(ciphertext, key: key, nonce: iv, tag: tag, authenticating: aad)
            : try AES.CBCHMAC.open(ciphertext, key: key, iv: iv, tag: tag, authenticating: aad)
    }
}

extension JWK {
    /// Checks that this key may `operation` (``Operation/encrypt`` or
    /// ``Operation/decrypt``) with the JWE `algorithm` and `encryption`:
    /// the key type and curve carry it, `alg` (when present) names it, `use`
    /// (when present) is "enc", `key_ops` (when present) allows it, and
    /// symmetric keys have the exact length. A signing key never passes:
    /// its `alg` names a JWS algorithm, or its `use` is "sig".
    public func admit(_ algorithm: JWEAlgorithm, encryption: JWEEncryption, for operation: Operation) throws(TokenMintError) {
        func refuse(_ why: String) -> TokenMintError { TokenMintError(.jose.algorithmNotAllowed, "\(algorithm) refused by \(description): \(why)") }
        guard operation == .encrypt || operation == .decrypt else { throw refuse("JWE keys encrypt or decrypt") }
        let typeFits = algorithm.keyType == keyType || (algorithm.isKeyAgreement && curveName == "X25519")
        guard typeFits else { throw refuse("\(algorithm) needs an \(algorithm.keyType.rawValue) key\(algorithm.isKeyAgreement ? " or an X25519 key" : "")") }
        if let name = algorithmName, name != algorithm.rawValue { throw refuse("the key is for \(name)") }
        if let use, use != "enc" { throw refuse("the key's use is \"\(use)\"") }
        if let ops = keyOperations {
            let allowed = operation == .encrypt ? ["encrypt", "wrapKey", "deriveKey", "deriveBits"] : ["decrypt", "unwrapKey", "deriveKey", "deriveBits"]
            guard ops.contains(where: allowed.contains) else { throw refuse("key_ops does not allow \(operation.rawValue)") }
        }
        switch material {
        case .ecPublic(let k) where ![.p256, .p384, .p521].contains(k.curve): throw refuse("ECDH-ES runs on P-256, P-384, P-521 and X25519")
        case .ecPrivate(let k) where ![.p256, .p384, .p521].contains(k.curve): throw refuse("ECDH-ES runs on P-256, P-384, P-521 and X25519")
        case .ed25519Public, .ed25519Private, .ed448Public, .ed448Private: throw refuse("Edwards keys sign; ECDH-ES needs X25519")
        case .rsaPublic(let k) where k.keySizeInBits < RSA.minimumSigningBits: throw refuse("RSA keys under \(RSA.minimumSigningBits) bits are refused")
        case .rsaPrivate(let k) where k.keySizeInBits < RSA.minimumSigningBits: throw refuse("RSA keys under \(RSA.minimumSigningBits) bits are refused")
        case .secret(let s):
            let want = algorithm == .dir ? encryption.keyByteCount : (algorithm.wrapKeyByteCount ?? 0)
            guard s.bytes.count == want else { throw refuse("\(algorithm == .dir ? encryption.rawValue : algorithm.rawValue) needs a \(want)-byte key, not \(s.bytes.count)") }
        default: break
        }
        if operation == .decrypt, !isPrivate { throw refuse("a public key cannot decrypt") }
    }
}
