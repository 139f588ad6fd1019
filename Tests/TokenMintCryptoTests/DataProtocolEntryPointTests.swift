import Foundation
import Testing
import TokenMintCrypto

/// Every public `some DataProtocol` / `some Sequence` entry point takes
/// `[UInt8]`, `Data`, an `ArraySlice` (also one that does not start at
/// index 0) and gives the same result. A generic entry point that forwards
/// to itself instead of its array overload overflows the stack here.
@Suite("DataProtocol entry points")
struct DataProtocolEntryPointTests {
    /// The same bytes four ways.
    static func forms(_ bytes: [UInt8]) -> (array: [UInt8], data: Data, slice: ArraySlice<UInt8>, offsetSlice: ArraySlice<UInt8>) {
        (bytes, Data(bytes), bytes[...], ([0xEE] + bytes)[1...])
    }

    /// Calls `body` with each form and checks every result equals the array's.
    static func same<R: Equatable>(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation,
                                   _ body: (any DataProtocol) throws -> R) rethrows {
        let f = forms(bytes)
        let expected = try body(f.array)
        #expect(try body(f.data) == expected, sourceLocation: sourceLocation)
        #expect(try body(f.slice) == expected, sourceLocation: sourceLocation)
        #expect(try body(f.offsetSlice) == expected, sourceLocation: sourceLocation)
    }

    @Test func encodingsAndDigests() throws {
        let bytes = Array(0...200).map(UInt8.init)
        Self.same(bytes) { Base64URL.encode($0) }
        Self.same(bytes) { Base64URL.encode($0, padding: .padded) }
        Self.same(bytes) { input -> [UInt8] in
            var out: [UInt8] = []
            Base64URL.encode(input, into: &out)
            return out
        }
        Self.same(bytes) { Hex.encode($0) }
        for hash in [HashFunction.sha256, .sha384, .sha512] { Self.same(bytes) { hash.hash($0) } }
        Self.same(bytes) { ConstantTime.equals($0, bytes) }
        Self.same(bytes) { SecureBytes($0) }
    }

    @Test func ecdsa() throws {
        let key = try ECDSA.PrivateKey(curve: .p256)
        let message = Array("entry points".utf8)
        let signature = try key.signature(for: message, nonce: .deterministic)
        try Self.same(signature.rawRepresentation) { try ECDSA.Signature(rawRepresentation: $0, curve: .p256) }
        try Self.same(signature.derRepresentation) { try ECDSA.Signature(derRepresentation: $0, curve: .p256) }
        Self.same(message) { key.publicKey.isValidSignature(signature, for: $0) }
        try Self.same(key.rawRepresentation.unsafeCopy) { try ECDSA.PrivateKey(rawRepresentation: $0, curve: .p256).publicKey }
        try Self.same(key.derRepresentation.unsafeCopy) { try ECDSA.PrivateKey(derRepresentation: $0).publicKey }
        try Self.same(HashFunction.sha256.hash(message)) { try key.deterministicSignature(forDigest: $0, hash: .sha256) }
        let point = key.publicKey.x963Representation
        try Self.same(point) { try ECDSA.PublicKey(x963Representation: $0, curve: .p256) }
        try Self.same(key.publicKey.derRepresentation) { try ECDSA.PublicKey(derRepresentation: $0) }
        try Self.same(Array(point[1...32])) { try ECDSA.PublicKey(x: $0, y: Array(point[33...]), curve: .p256) }
    }

    @Test func eddsaRSAAndHMAC() throws {
        let seed = SecureRandom.bytes(count: 32)
        let message = Array("entry points".utf8)
        try Self.same(seed) { try Ed25519.PrivateKey(rawRepresentation: $0).publicKey }
        let key = try Ed25519.PrivateKey(rawRepresentation: seed)
        try Self.same(message) { try key.signature(for: $0) }
        let signature = try key.signature(for: message)
        Self.same(signature) { key.publicKey.isValidSignature($0, for: message) }
        Self.same(message) { key.publicKey.isValidSignature(signature, for: $0) }
        try Self.same(Array(key.publicKey.rawRepresentation)) { try Ed25519.PublicKey(rawRepresentation: $0) }
        try Self.same(key.publicKey.derRepresentation) { try Ed25519.PublicKey(derRepresentation: $0) }
        try Self.same(key.derRepresentation.unsafeCopy) { try Ed25519.PrivateKey(derRepresentation: $0).publicKey }

        let rsa = try RSA.PrivateKey(bits: 2048)
        try Self.same(message) { rsa.publicKey.isValidSignature(try rsa.signature(for: $0, hash: .sha256, padding: .pkcs1v15), for: message, hash: .sha256, padding: .pkcs1v15) }
        try Self.same(rsa.publicKey.derRepresentation) { try RSA.PublicKey(derRepresentation: $0) }
        try Self.same(rsa.publicKey.modulus) { try RSA.PublicKey(modulus: $0, publicExponent: rsa.publicKey.publicExponent) }
        try Self.same(rsa.derRepresentation.unsafeCopy) { try RSA.PrivateKey(derRepresentation: $0).publicKey }

        let macKey = SecureRandom.bytes(count: 32)
        try Self.same(macKey) { try HMACKey($0, hash: .sha256) }
        try Self.same(Array(macKey.prefix(8))) { try HMACKey(allowingShortKey: $0, hash: .sha256) }
        let hmac = try HMACKey(macKey, hash: .sha256)
        Self.same(message) { HMAC.authenticationCode(for: $0, using: hmac) }

        // Ed448 is verification only: the entry points must at least agree (and not recurse).
        let ed448 = Array(repeating: UInt8(0), count: 56) + [0x80]
        Self.same(ed448) { (try? Ed448.PublicKey(rawRepresentation: $0)) != nil }
        if let verifier = try? Ed448.PublicKey(rawRepresentation: ed448) {
            Self.same(Array(repeating: UInt8(1), count: 114)) { verifier.isValidSignature($0, for: message) }
            Self.same(message) { verifier.isValidSignature(Array(repeating: UInt8(1), count: 114), for: $0) }
        }
        let passphrase = Array("correct horse".utf8)
        let salt = SecureRandom.bytes(count: PasswordKeyDerivation.saltByteCount)
        let cheap = PasswordKeyDerivation.Cost(operations: 1, memory: 8 * 1024)
        try Self.same(passphrase) { try PasswordKeyDerivation.deriveKey(passphrase: $0, salt: salt, cost: cheap) }
        try Self.same(salt) { try PasswordKeyDerivation.deriveKey(passphrase: passphrase, salt: $0, cost: cheap) }

        let box = SecureBytes(randomCount: 32)
        let sealed = try XChaCha20Poly1305.seal(message, key: box, associatedData: [1, 2])
        try Self.same(sealed) { try XChaCha20Poly1305.open($0, key: box, associatedData: [1, 2]) }
        try Self.same([UInt8]([1, 2])) { try XChaCha20Poly1305.open(sealed, key: box, associatedData: $0) }
    }
}
