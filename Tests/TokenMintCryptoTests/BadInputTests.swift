import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto

/// Runs `body` and records an issue unless it throws a `TokenMintError` with `code`.
private func expectCode(
    _ code: TokenMintError.Code, _ what: String = "", sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("\(what): expected TokenMintError.\(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as TokenMintError {
        #expect(error.code == code, "\(what): expected TokenMintError.\(code), got \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(what): expected TokenMintError.\(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// a − b for big-endian unsigned numbers of the same length, a ≥ b.
private func subtractBigEndian(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
    var result = [UInt8](repeating: 0, count: a.count)
    var borrow = 0
    for i in stride(from: a.count - 1, through: 0, by: -1) {
        let digit = Int(a[i]) - Int(b[i]) - borrow
        borrow = digit < 0 ? 1 : 0
        result[i] = UInt8(digit + 256 * borrow)
    }
    return result
}

/// The content octets of a minimal positive DER INTEGER for a big-endian value.
private func minimalInteger(_ value: [UInt8]) -> [UInt8] {
    var bytes = Array(value.drop(while: { $0 == 0 }))
    if bytes.isEmpty { bytes = [0] }
    if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
    return bytes
}

/// INTEGER with exactly these content octets (short-form length, no normalisation).
private func derInteger(_ content: [UInt8]) -> [UInt8] { [0x02, UInt8(content.count)] + content }
/// SEQUENCE around `body` (short-form length).
private func derSequence(_ body: [UInt8]) -> [UInt8] { [0x30, UInt8(body.count)] + body }

@Suite("Bad inputs give a typed TokenMintError or false, never a trap")
struct BadInputTests {
    /// The order n of the P-256 group.
    static let p256OrderHex = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"
    /// One 2048-bit key for all RSA tests (generation is slow).
    static let rsaKey: RSA.PrivateKey? = try? RSA.PrivateKey(bits: 2048)
    static let message = Array("TokenMint bad-input tests".utf8)

    // MARK: - Ed25519

    @Test("Ed25519: wrong-size raw keys, malformed PEM, empty input, random DER and an EC key are refused")
    func ed25519Keys() throws {
        for count in [0, 31, 33, 64] {
            let bytes = [UInt8](repeating: 0x42, count: count)
            expectCode(.crypto.invalidKeySize, "private \(count)") { _ = try Ed25519.PrivateKey(rawRepresentation: bytes) }
            expectCode(.crypto.invalidKeySize, "public \(count)") { _ = try Ed25519.PublicKey(rawRepresentation: bytes) }
        }
        let malformed = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"
        let random = SecureRandom.bytes(count: 48)
        let ecKey = try ECDSA.PrivateKey(curve: .p256)
        let ecPEM = try ecKey.pemRepresentation
        let ecPublicPEM = try ecKey.publicKey.pemRepresentation
        for pem in [malformed, "", ecPEM, ecPublicPEM] {
            #expect(throws: TokenMintError.self) { _ = try Ed25519.PrivateKey(pemRepresentation: pem) }
            #expect(throws: TokenMintError.self) { _ = try Ed25519.PublicKey(pemRepresentation: pem) }
        }
        for der in [[UInt8](), random] {
            #expect(throws: TokenMintError.self) { _ = try Ed25519.PrivateKey(derRepresentation: der) }
            #expect(throws: TokenMintError.self) { _ = try Ed25519.PublicKey(derRepresentation: der) }
        }
    }

    @Test("Ed25519: wrong-length, bit-flipped and misdirected signatures are false")
    func ed25519Signatures() throws {
        let key = Ed25519.PrivateKey()
        let message = Self.message
        let signature = try key.signature(for: message)
        let publicKey = key.publicKey
        #expect(signature.count == 64)
        #expect(publicKey.isValidSignature(signature, for: message))
        #expect(!publicKey.isValidSignature(Array(signature.prefix(63)), for: message))
        #expect(!publicKey.isValidSignature(signature + [0x00], for: message))
        #expect(!publicKey.isValidSignature([UInt8](), for: message))
        #expect(!publicKey.isValidSignature(signature, for: message + [0x00]))
        #expect(!publicKey.isValidSignature(signature, for: Array("another message".utf8)))
        #expect(!Ed25519.PrivateKey().publicKey.isValidSignature(signature, for: message))
        var accepted: [Int] = []
        for bit in 0..<(64 * 8) {
            var flipped = signature
            flipped[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            if publicKey.isValidSignature(flipped, for: message) { accepted.append(bit) }
        }
        #expect(accepted.isEmpty, "signatures with these bits flipped verified: \(accepted)")
    }

    // MARK: - ECDSA keys

    @Test("ECDSA: off-curve, wrong-length and infinity points are refused")
    func ecdsaPublicPoints() throws {
        let publicKey = try ECDSA.PrivateKey(curve: .p256).publicKey
        var offCurve = publicKey.x963Representation
        offCurve[offCurve.count - 1] ^= 0xFF  // the last byte of y
        expectCode(.crypto.invalidKey, "off-curve 04‖x‖y") { _ = try ECDSA.PublicKey(x963Representation: offCurve, curve: .p256) }
        let y = Array(offCurve.suffix(32))
        expectCode(.crypto.invalidKey, "off-curve (x, y)") { _ = try ECDSA.PublicKey(x: publicKey.x, y: y, curve: .p256) }
        let shortX = Array(publicKey.x.prefix(31))
        expectCode(.crypto.invalidKeySize, "31-byte x") { _ = try ECDSA.PublicKey(x: shortX, y: publicKey.y, curve: .p256) }
        expectCode(.crypto.invalidKeySize, "33-byte y") { _ = try ECDSA.PublicKey(x: publicKey.x, y: [0] + publicKey.y, curve: .p256) }
        func rejectPoint(_ name: String, _ bytes: [UInt8]) {
            expectCode(.crypto.invalidKey, name) { _ = try ECDSA.PublicKey(x963Representation: bytes, curve: .p256) }
        }
        rejectPoint("point at infinity", [0x00])
        rejectPoint("empty", [])
        rejectPoint("x‖y without prefix", publicKey.rawRepresentation)
        rejectPoint("truncated", Array(publicKey.x963Representation.dropLast()))
        rejectPoint("(0, 0)", [0x04] + [UInt8](repeating: 0, count: 64))
        rejectPoint("P-384 length", [0x04] + [UInt8](repeating: 1, count: 96))
    }

    @Test("ECDSA: private scalars 0, n and out-of-size are refused; 1 and n−1 are accepted")
    func ecdsaPrivateScalars() throws {
        let n = try Hex.decode(Self.p256OrderHex)
        var nMinusOne = n
        nMinusOne[31] -= 1  // n ends in 0x51
        var nPlusOne = n
        nPlusOne[31] += 1
        let one = [UInt8](repeating: 0, count: 31) + [0x01]
        expectCode(.crypto.invalidKey, "zero") { _ = try ECDSA.PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 32), curve: .p256) }
        expectCode(.crypto.invalidKey, "n") { _ = try ECDSA.PrivateKey(rawRepresentation: n, curve: .p256) }
        expectCode(.crypto.invalidKey, "n + 1") { _ = try ECDSA.PrivateKey(rawRepresentation: nPlusOne, curve: .p256) }
        expectCode(.crypto.invalidKey, "2^256 − 1") { _ = try ECDSA.PrivateKey(rawRepresentation: [UInt8](repeating: 0xFF, count: 32), curve: .p256) }
        for count in [0, 31, 33, 48] {
            let scalar = [UInt8](repeating: 0x01, count: count)
            expectCode(.crypto.invalidKeySize, "\(count) bytes") { _ = try ECDSA.PrivateKey(rawRepresentation: scalar, curve: .p256) }
        }
        let smallest = try ECDSA.PrivateKey(rawRepresentation: one, curve: .p256)
        let largest = try ECDSA.PrivateKey(rawRepresentation: nMinusOne, curve: .p256)
        // d = n − 1 gives −G: the same x as G.
        #expect(smallest.publicKey.x == largest.publicKey.x)
        #expect(smallest.publicKey != largest.publicKey)
    }

    @Test("ECDSA: keys and signatures on another curve, and keys of another type, are refused")
    func ecdsaWrongCurve() throws {
        let p256 = try ECDSA.PrivateKey(curve: .p256)
        let p384 = try ECDSA.PrivateKey(curve: .p384)
        let p384PEM = try p384.pemRepresentation
        let p384PublicPEM = try p384.publicKey.pemRepresentation
        let ed25519PEM = try Ed25519.PrivateKey().pemRepresentation
        expectCode(.crypto.invalidKey, "P-384 private PEM as P-256") { _ = try ECDSA.PrivateKey(pemRepresentation: p384PEM, curve: .p256) }
        expectCode(.crypto.invalidKey, "P-384 public PEM as P-256") { _ = try ECDSA.PublicKey(pemRepresentation: p384PublicPEM, curve: .p256) }
        #expect(throws: TokenMintError.self) { _ = try ECDSA.PrivateKey(pemRepresentation: ed25519PEM) }
        #expect(throws: TokenMintError.self) { _ = try ECDSA.PrivateKey(derRepresentation: SecureRandom.bytes(count: 64)) }
        // A P-256 signature checked against a P-384 key: false, not a trap or an error.
        let signature = try p256.signature(for: Self.message)
        #expect(p256.publicKey.isValidSignature(signature, for: Self.message))
        #expect(!p384.publicKey.isValidSignature(signature, for: Self.message))
    }

    // MARK: - ECDSA signatures

    @Test("ECDSA: raw signatures of the wrong length or with r, s outside [1, n−1] are invalidSignature")
    func ecdsaRawSignatures() throws {
        let n = try Hex.decode(Self.p256OrderHex)
        var nPlusOne = n
        nPlusOne[31] += 1
        let signature = try ECDSA.PrivateKey(curve: .p256).signature(for: Self.message)
        let (r, s) = (signature.r, signature.s)
        let zero = [UInt8](repeating: 0, count: 32)
        func rejectRaw(_ name: String, _ bytes: [UInt8]) {
            expectCode(.crypto.invalidSignature, name) { _ = try ECDSA.Signature(rawRepresentation: bytes, curve: .p256) }
        }
        rejectRaw("63 bytes", Array(signature.rawRepresentation.prefix(63)))
        rejectRaw("65 bytes", signature.rawRepresentation + [0x01])
        rejectRaw("empty", [])
        rejectRaw("P-384 length", r + s + [UInt8](repeating: 1, count: 32))
        rejectRaw("r = 0", zero + s)
        rejectRaw("s = 0", r + zero)
        rejectRaw("r = n", n + s)
        rejectRaw("s = n", r + n)
        rejectRaw("s = n + 1", r + nPlusOne)
        rejectRaw("s = 2^256 − 1", r + [UInt8](repeating: 0xFF, count: 32))
        let raw = signature.rawRepresentation
        expectCode(.crypto.invalidSignature, "P-256 raw as P-384") { _ = try ECDSA.Signature(rawRepresentation: raw, curve: .p384) }
    }

    @Test("ECDSA: non-canonical DER signatures are invalidSignature")
    func ecdsaDERSignatures() throws {
        let signature = try ECDSA.PrivateKey(curve: .p256).signature(for: Self.message)
        let r = minimalInteger(signature.r)
        let s = minimalInteger(signature.s)
        let body = derInteger(r) + derInteger(s)
        let der = derSequence(body)
        // The hand-built encoding is the library's: the variants below differ in one point each.
        #expect(der == signature.derRepresentation)
        #expect(try ECDSA.Signature(derRepresentation: der, curve: .p256) == signature)

        var negative = Array(signature.r.drop(while: { $0 == 0 }))
        negative[0] |= 0x80
        func rejectDER(_ name: String, _ bytes: [UInt8]) {
            expectCode(.crypto.invalidSignature, name) { _ = try ECDSA.Signature(derRepresentation: bytes, curve: .p256) }
        }
        rejectDER("trailing byte", der + [0x00])
        rejectDER("missing last byte", Array(der.dropLast()))
        rejectDER("non-minimal SEQUENCE length", [0x30, 0x81, UInt8(body.count)] + body)
        rejectDER("indefinite length", [0x30, 0x80] + body + [0x00, 0x00])
        rejectDER("non-minimal INTEGER length", derSequence([0x02, 0x81, UInt8(r.count)] + r + derInteger(s)))
        rejectDER("negative r", derSequence(derInteger(negative) + derInteger(s)))
        rejectDER("unneeded leading 0x00 on r", derSequence(derInteger([0x00] + r) + derInteger(s)))
        rejectDER("unneeded leading 0x00 on s", derSequence(derInteger(r) + derInteger([0x00] + s)))
        rejectDER("s wider than the order", derSequence(derInteger(r) + derInteger([0x01] + signature.s)))
        rejectDER("empty INTEGER", derSequence(derInteger([]) + derInteger(s)))
        rejectDER("r = 0", derSequence(derInteger([0x00]) + derInteger(s)))
        rejectDER("three INTEGERs", derSequence(body + derInteger([0x01])))
        rejectDER("SET instead of SEQUENCE", [0x31] + Array(der.dropFirst()))
        rejectDER("OCTET STRING instead of INTEGER", derSequence([0x04, UInt8(r.count)] + r + derInteger(s)))
        rejectDER("raw r‖s", signature.rawRepresentation)
        rejectDER("empty", [])
    }

    @Test("ECDSA: signing with SHA-1 is unsupportedAlgorithm, on every signing path")
    func ecdsaSHA1() throws {
        let key = try ECDSA.PrivateKey(curve: .p256)
        for nonce in [ECDSA.Nonce.random, .deterministic] {
            expectCode(.crypto.unsupportedAlgorithm, "\(nonce)") { _ = try key.signature(for: Self.message, hash: .sha1, nonce: nonce) }
        }
        let sha1Digest = HashFunction.sha1.hash(Self.message)
        expectCode(.crypto.unsupportedAlgorithm, "deterministicSignature(forDigest:) with SHA-1") {
            _ = try key.deterministicSignature(forDigest: sha1Digest, hash: .sha1)
        }
        let short = [UInt8](repeating: 7, count: 31)
        expectCode(.crypto.invalidParameter, "31-byte SHA-256 digest") { _ = try key.deterministicSignature(forDigest: short, hash: .sha256) }
    }

    /// TokenMint does not enforce low-S: for a valid (r, s), (r, n − s) is a
    /// valid ECDSA signature of the same message too. Pinned so that a change
    /// of policy is a deliberate one (and callers know signatures are malleable).
    @Test("ECDSA: (r, n − s) verifies too — low-S is not enforced")
    func ecdsaMalleability() throws {
        let n = try Hex.decode(Self.p256OrderHex)
        let key = try ECDSA.PrivateKey(curve: .p256)
        for nonce in [ECDSA.Nonce.random, .deterministic] {
            let signature = try key.signature(for: Self.message, nonce: nonce)
            let otherS = subtractBigEndian(n, signature.s)
            #expect(subtractBigEndian(n, otherS) == signature.s)
            let twin = try ECDSA.Signature(rawRepresentation: signature.r + otherS, curve: .p256)
            #expect(twin != signature)
            #expect(key.publicKey.isValidSignature(signature, for: Self.message))
            #expect(key.publicKey.isValidSignature(twin, for: Self.message))
            #expect(!key.publicKey.isValidSignature(twin, for: Array("another message".utf8)))
        }
    }

    // MARK: - RSA

    @Test("RSA: key generation outside 2048...16384 bits or not a multiple of 8 is invalidKeySize")
    func rsaKeyGenerationSizes() {
        for bits in [0, 512, 1024, 2047, 2049, 2050, 16392] {
            expectCode(.crypto.invalidKeySize, "\(bits) bits") { _ = try RSA.PrivateKey(bits: bits) }
        }
    }

    @Test("RSA: public keys with an even modulus, a bad exponent or 512 bits are refused")
    func rsaPublicComponents() throws {
        let publicKey = try #require(Self.rsaKey).publicKey
        let n = publicKey.modulus
        let e = publicKey.publicExponent
        var evenModulus = n
        evenModulus[evenModulus.count - 1] &= 0xFE
        var modulus512 = [UInt8](repeating: 0x5A, count: 64)
        modulus512[0] = 0xC3
        modulus512[63] = 0x01
        expectCode(.crypto.invalidKey, "even modulus") { _ = try RSA.PublicKey(modulus: evenModulus, publicExponent: e) }
        let badExponents: [(String, [UInt8])] = [("e = 1", [0x01]), ("e = 2", [0x02]), ("e = 65536", [0x01, 0x00, 0x00])]
        for (name, badE) in badExponents {
            expectCode(.crypto.invalidKey, name) { _ = try RSA.PublicKey(modulus: n, publicExponent: badE) }
        }
        expectCode(.crypto.invalidKey, "empty e") { _ = try RSA.PublicKey(modulus: n, publicExponent: [UInt8]()) }
        expectCode(.crypto.invalidKeySize, "512-bit modulus") { _ = try RSA.PublicKey(modulus: modulus512, publicExponent: e) }
        expectCode(.crypto.invalidKeySize, "empty modulus") { _ = try RSA.PublicKey(modulus: [UInt8](), publicExponent: e) }
        // Leading zero bytes are not bits: the same key.
        #expect(try RSA.PublicKey(modulus: [0x00] + n, publicExponent: [0x00] + e) == publicKey)
    }

    @Test("RSA: a signature of the wrong length or the other padding is false")
    func rsaSignatures() throws {
        let key = try #require(Self.rsaKey)
        let publicKey = key.publicKey
        let message = Self.message
        let pkcs1 = try key.signature(for: message, padding: .pkcs1v15)
        let pss = try key.signature(for: message, padding: .pss)
        #expect(pkcs1.count == 256 && pss.count == 256)
        #expect(publicKey.isValidSignature(pkcs1, for: message, padding: .pkcs1v15))
        #expect(publicKey.isValidSignature(pss, for: message, padding: .pss))
        #expect(!publicKey.isValidSignature(Array(pkcs1.dropLast()), for: message, padding: .pkcs1v15))
        #expect(!publicKey.isValidSignature([0x00] + pkcs1, for: message, padding: .pkcs1v15))
        #expect(!publicKey.isValidSignature([UInt8](), for: message, padding: .pkcs1v15))
        #expect(!publicKey.isValidSignature(pkcs1, for: message, padding: .pss))
        #expect(!publicKey.isValidSignature(pkcs1, for: message, padding: .pss(saltLength: .any)))
        #expect(!publicKey.isValidSignature(pss, for: message, padding: .pkcs1v15))
        #expect(!publicKey.isValidSignature(pkcs1, for: message, hash: .sha384, padding: .pkcs1v15))
        #expect(!publicKey.isValidSignature(pkcs1, for: message + [0x00], padding: .pkcs1v15))
        var flipped = pss
        flipped[100] ^= 0x01
        #expect(!publicKey.isValidSignature(flipped, for: message, padding: .pss))
    }

    @Test("RSA: PSS salt .any and SHA-1 are refused for signing")
    func rsaSigningParameters() throws {
        let key = try #require(Self.rsaKey)
        expectCode(.crypto.invalidParameter, "PSS salt .any") { _ = try key.signature(for: Self.message, padding: .pss(saltLength: .any)) }
        expectCode(.crypto.unsupportedAlgorithm, "SHA-1 PKCS#1") { _ = try key.signature(for: Self.message, hash: .sha1, padding: .pkcs1v15) }
        expectCode(.crypto.unsupportedAlgorithm, "SHA-1 PSS") { _ = try key.signature(for: Self.message, hash: .sha1, padding: .pss) }
    }

    // MARK: - HMAC

    @Test("HMAC: keys shorter than the hash output are invalidKeySize")
    func hmacKeySizes() throws {
        let minimums: [(HashFunction, Int)] = [(.sha256, 32), (.sha384, 48), (.sha512, 64)]
        for (hash, size) in minimums {
            for short in [1, 16, size - 1] {
                let bytes = [UInt8](repeating: 0x0B, count: short)
                expectCode(.crypto.invalidKeySize, "\(hash) \(short) bytes") { _ = try HMACKey(bytes, hash: hash) }
            }
            let key = try HMACKey([UInt8](repeating: 0x0B, count: size), hash: hash)
            #expect(key.bytes.count == size && key.hash == hash)
        }
        expectCode(.crypto.invalidKeySize, "empty, short allowed") { _ = try HMACKey(allowingShortKey: [UInt8](), hash: .sha256) }
        expectCode(.crypto.invalidKeySize, "empty") { _ = try HMACKey([UInt8](), hash: .sha256) }
        #expect(try HMACKey(allowingShortKey: [UInt8](repeating: 1, count: 16), hash: .sha256).bytes.count == 16)
        expectCode(.crypto.unsupportedAlgorithm, "SHA-1") { _ = try HMACKey([UInt8](repeating: 1, count: 32), hash: .sha1) }
    }

    @Test("HMAC: truncated, empty, over-long and bit-flipped tags are false")
    func hmacTags() throws {
        let key = try HMACKey(generatingFor: .sha256)
        let otherKey = try HMACKey(generatingFor: .sha256)
        let message = Self.message
        let tag = HMAC.authenticationCode(for: message, using: key)
        let half = Array(tag.prefix(16))
        let empty = [UInt8]()
        #expect(tag.count == 32)
        #expect(HMAC.isValidAuthenticationCode(tag, for: message, using: key))
        #expect(!HMAC.isValidAuthenticationCode(half, for: message, using: key))
        #expect(HMAC.isValidAuthenticationCode(half, for: message, using: key, minimumLength: 16))
        #expect(!HMAC.isValidAuthenticationCode(Array(tag.prefix(15)), for: message, using: key, minimumLength: 16))
        #expect(!HMAC.isValidAuthenticationCode(empty, for: message, using: key))
        #expect(!HMAC.isValidAuthenticationCode(empty, for: message, using: key, minimumLength: 0))
        #expect(!HMAC.isValidAuthenticationCode(tag + [0x00], for: message, using: key))
        #expect(!HMAC.isValidAuthenticationCode(tag, for: message + [0x00], using: key))
        #expect(!HMAC.isValidAuthenticationCode(tag, for: message, using: otherKey))
        var accepted: [Int] = []
        for bit in 0..<(32 * 8) {
            var flipped = tag
            flipped[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            if HMAC.isValidAuthenticationCode(flipped, for: message, using: key) { accepted.append(bit) }
            if bit < 16 * 8, HMAC.isValidAuthenticationCode(Array(flipped.prefix(16)), for: message, using: key, minimumLength: 16) {
                accepted.append(bit)
            }
        }
        #expect(accepted.isEmpty, "tags with these bits flipped verified: \(accepted)")
    }

    // MARK: - PEM

    /// An Ed25519 key encrypted with PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc).
    static let encryptedPKCS8PEM = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhFDcWGE2f0SQICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEOm9j2lZXCaGw9abLrY7taAEQDs/
        QYy84qTtMoVeaodsMeUThKj5ssgimC3Wu+HhVaq6g+YJgM80O4XRzwX5uiCsJaLr
        OnlzsMxjalnWl+lQHAY=
        -----END ENCRYPTED PRIVATE KEY-----
        """

    @Test("PEM: an encrypted private key is unsupportedAlgorithm")
    func encryptedPEM() {
        let pem = Self.encryptedPKCS8PEM
        expectCode(.crypto.unsupportedAlgorithm, "Ed25519") { _ = try Ed25519.PrivateKey(pemRepresentation: pem) }
        expectCode(.crypto.unsupportedAlgorithm, "ECDSA") { _ = try ECDSA.PrivateKey(pemRepresentation: pem) }
        expectCode(.crypto.unsupportedAlgorithm, "RSA") { _ = try RSA.PrivateKey(pemRepresentation: pem) }
    }

    @Test("PEM and DER: input over 64 KiB is refused before parsing")
    func oversizedInput() {
        let line = String(repeating: "A", count: 64) + "\n"
        let pem = "-----BEGIN PRIVATE KEY-----\n" + String(repeating: line, count: 70 * 1024 / 65 + 1)
            + "-----END PRIVATE KEY-----\n"
        #expect(pem.utf8.count > 70 * 1024)
        let der = [UInt8](repeating: 0x30, count: 70 * 1024)
        expectCode(.crypto.invalidEncoding, "Ed25519 PEM") { _ = try Ed25519.PrivateKey(pemRepresentation: pem) }
        expectCode(.crypto.invalidEncoding, "ECDSA public PEM") { _ = try ECDSA.PublicKey(pemRepresentation: pem) }
        expectCode(.crypto.invalidEncoding, "RSA PEM") { _ = try RSA.PrivateKey(pemRepresentation: pem) }
        expectCode(.crypto.invalidEncoding, "Ed25519 DER") { _ = try Ed25519.PrivateKey(derRepresentation: der) }
        expectCode(.crypto.invalidEncoding, "ECDSA DER") { _ = try ECDSA.PrivateKey(derRepresentation: der) }
        expectCode(.crypto.invalidEncoding, "RSA DER") { _ = try RSA.PublicKey(derRepresentation: der) }
    }
}
