import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR

/// The CTAP2 PIN/UV auth protocols (CTAP 2.1 §6.5.6 and §6.5.7): how a
/// platform and an authenticator agree a shared secret over ECDH P-256, then
/// encrypt PINs and tokens (AES-256-CBC) and authenticate requests
/// (HMAC-SHA-256) with it. Both sides of both protocols are here: the
/// authenticator's (``CTAP2Authenticator``) and the platform's
/// (``FIDO2Session``).
public enum PINUVAuthProtocol: Int, Sendable, Hashable, CaseIterable {
    /// Protocol 1: SHA-256 of the ECDH secret; a zero IV; 16-byte tags.
    case one = 1
    /// Protocol 2: HKDF-SHA-256 HMAC and AES keys; random IVs; 32-byte tags.
    case two = 2

    /// The protocol a request names, or the CTAP error for a missing or unknown one.
    static func named(_ value: CBOR?) throws(TokenMintError) -> PINUVAuthProtocol {
        guard let value else { throw .ctap(.missingParameter, "pinUvAuthProtocol is missing") }
        guard let number = value.intValue else { throw .ctap(.cborUnexpectedType, "pinUvAuthProtocol is an integer") }
        guard let known = PINUVAuthProtocol(rawValue: Int(number)) else { throw .ctap(.invalidParameter, "PIN/UV auth protocol \(number) is not supported") }
        return known
    }

    /// The shared secret from the ECDH secret `z`: 32 bytes (protocol 1), or
    /// the HMAC key ‖ the AES key (protocol 2, 64 bytes).
    func kdf(_ z: SecureBytes) throws(TokenMintError) -> SecureBytes {
        switch self {
        case .one:
            return try HashFunction.sha256.secretHash(z)
        case .two:
            let salt = [UInt8](repeating: 0, count: 32)
            let hmacKey = try HKDF.deriveKey(inputKeyMaterial: z, salt: salt, info: Array("CTAP2 HMAC key".utf8), outputByteCount: 32)
            let aesKey = try HKDF.deriveKey(inputKeyMaterial: z, salt: salt, info: Array("CTAP2 AES key".utf8), outputByteCount: 32)
            return SecureBytes.concatenating(hmacKey, aesKey)
        }
    }

    /// The shared secret of `own` and the peer's COSE key agreement key.
    func sharedSecret(_ own: ECDSA.PrivateKey, peer: CBOR) throws(TokenMintError) -> SecureBytes {
        let key = try Self.publicKey(peer)
        return try kdf(try ECDH.sharedSecret(own, key))
    }

    /// The AES key of a shared secret.
    private func aesKey(_ key: SecureBytes) -> SecureBytes { self == .two && key.count == 64 ? key.slice(32..<64) : key }
    /// The HMAC key of a shared secret or token.
    private func hmacKey(_ key: SecureBytes) -> SecureBytes { self == .two && key.count == 64 ? key.slice(0..<32) : key }

    /// encrypt(key, demPlaintext): AES-256-CBC, zero IV (1) or IV ‖ ciphertext (2).
    func encrypt(_ key: SecureBytes, _ plaintext: SecureBytes) throws(TokenMintError) -> [UInt8] {
        switch self {
        case .one: return try AES256CBC.encrypt(plaintext, key: aesKey(key), iv: [UInt8](repeating: 0, count: 16))
        case .two:
            let iv = SecureRandom.bytes(count: 16)
            return iv + (try AES256CBC.encrypt(plaintext, key: aesKey(key), iv: iv))
        }
    }

    /// decrypt(key, demCiphertext); a ciphertext of the wrong length is `invalidParameter`.
    func decrypt(_ key: SecureBytes, _ ciphertext: [UInt8]) throws(TokenMintError) -> SecureBytes {
        let ivCount = self == .two ? 16 : 0
        guard ciphertext.count >= ivCount, (ciphertext.count - ivCount) % 16 == 0, ciphertext.count <= 1024 else {
            throw .ctap(.invalidParameter, "a PIN protocol \(rawValue) ciphertext is whole AES blocks")
        }
        let iv = self == .two ? Array(ciphertext.prefix(16)) : [UInt8](repeating: 0, count: 16)
        do { return try AES256CBC.decrypt(ciphertext.dropFirst(ivCount), key: aesKey(key), iv: iv) } catch {
            throw TokenMintError(.fido.ctap(.invalidParameter), "decryption failed", underlying: error)
        }
    }

    /// The length of authenticate's tags: 16 bytes (1) or 32 (2).
    var tagByteCount: Int { self == .one ? 16 : 32 }

    /// authenticate(key, message): HMAC-SHA-256, its first 16 bytes under protocol 1.
    /// - Throws: when OpenSSL fails (never a short or empty tag).
    func authenticate(_ key: SecureBytes, _ message: [UInt8]) throws(TokenMintError) -> [UInt8] {
        let tag: SecureBytes
        do { tag = try HMAC.secretAuthenticationCode(for: message, using: try HMACKey(secret: hmacKey(key), hash: .sha256)) } catch {
            throw TokenMintError(.fido.ctap(.other), "HMAC-SHA-256 failed", underlying: error)
        }
        guard tag.count == 32 else { throw .ctap(.other, "HMAC-SHA-256 failed") }
        return tag.withUnsafeBytes { Array($0.prefix(tagByteCount)) }  // a tag, not a key: it goes on the wire
    }

    /// verify(key, message, signature): a tag of exactly this protocol's
    /// length, compared in constant time.
    func verify(_ key: SecureBytes, _ message: [UInt8], _ signature: [UInt8]) throws(TokenMintError) -> Bool {
        guard signature.count == tagByteCount else { return false }
        let expected = try authenticate(key, message)
        return expected.count == tagByteCount && ConstantTime.equals(expected, signature)
    }

    /// The COSE key agreement key (kty EC2, alg ECDH-ES+HKDF-256, crv P-256) of `key`.
    static func coseKey(_ key: ECDSA.PublicKey) -> CBOR {
        let point = key.x963Representation
        return .map([
            CBORMapEntry(key: .int(1), value: .int(2)),
            CBORMapEntry(key: .int(3), value: .int(-25)),
            CBORMapEntry(key: .int(-1), value: .int(1)),
            CBORMapEntry(key: .int(-2), value: .bytes(Array(point[1..<33]))),
            CBORMapEntry(key: .int(-3), value: .bytes(Array(point[33..<65]))),
        ])
    }

    /// A peer's COSE key agreement key: a P-256 point OpenSSL checks is on
    /// the curve (an off-curve point is `invalidParameter`).
    static func publicKey(_ cose: CBOR) throws(TokenMintError) -> ECDSA.PublicKey {
        guard cose.mapValue != nil else { throw .ctap(.cborUnexpectedType, "keyAgreement is a COSE_Key map") }
        guard cose[.int(1)]?.intValue == 2, cose[.int(-1)]?.intValue == 1, let x = cose[.int(-2)]?.bytesValue,
            let y = cose[.int(-3)]?.bytesValue, x.count == 32, y.count == 32
        else { throw .ctap(.invalidParameter, "keyAgreement is an EC2 P-256 COSE key") }
        do { return try ECDSA.PublicKey(x963Representation: [4] + x + y, curve: .p256) } catch {
            throw TokenMintError(.fido.ctap(.invalidParameter), "keyAgreement is not a point on P-256", underlying: error)
        }
    }
}

extension SecureBytes {
    /// Bytes `range` of this buffer, copied into new zeroing memory.
    func slice(_ range: Range<Int>) -> SecureBytes {
        withUnsafeBytes { all in SecureBytes(count: range.count, initializingWith: { (out: UnsafeMutableRawBufferPointer) in out.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[range])) }) }
    }

    /// `first` ‖ `second` in new zeroing memory.
    static func concatenating(_ first: SecureBytes, _ second: SecureBytes) -> SecureBytes {
        SecureBytes(count: first.count + second.count, initializingWith: { (out: UnsafeMutableRawBufferPointer) in
            first.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[0..<first.count]).copyMemory(from: $0) }
            second.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[first.count...]).copyMemory(from: $0) }
        })
    }
}
