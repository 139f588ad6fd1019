import Foundation
import Testing
import TokenMintCrypto

@Suite("Key import and export")
struct KeyEncodingTests {
    static let rsaKey: RSA.PrivateKey? = try? RSA.PrivateKey(bits: 2048)

    @Test func ed25519RoundTrips() throws {
        let key = Ed25519.PrivateKey()
        let pem = try key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try Ed25519.PrivateKey(pemRepresentation: pem).publicKey == key.publicKey)
        #expect(try Ed25519.PrivateKey(derRepresentation: key.derRepresentation.unsafeCopy).publicKey == key.publicKey)
        #expect(try Ed25519.PrivateKey(rawRepresentation: key.rawRepresentation.unsafeCopy).publicKey == key.publicKey)
        let publicPEM = try key.publicKey.pemRepresentation
        #expect(publicPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        #expect(try Ed25519.PublicKey(pemRepresentation: publicPEM) == key.publicKey)
        #expect(try Ed25519.PublicKey(derRepresentation: key.publicKey.derRepresentation) == key.publicKey)
        // A private PEM yields its public key.
        #expect(try Ed25519.PublicKey(pemRepresentation: pem) == key.publicKey)
        // RFC 8410 §10.3 example: the SPKI DER is the fixed prefix plus the key.
        #expect(try key.publicKey.derRepresentation == Hex.decode("302a300506032b6570032100") + key.publicKey.rawRepresentation)
    }

    @Test(arguments: [ECDSA.Curve.p256, .p384, .p521, .secp256k1])
    func ecdsaRoundTrips(curve: ECDSA.Curve) throws {
        let key = try ECDSA.PrivateKey(curve: curve)
        let d = try key.rawRepresentation
        #expect(d.count == curve.scalarByteCount)
        let rebuilt = try ECDSA.PrivateKey(rawRepresentation: d.unsafeCopy, curve: curve)
        #expect(rebuilt.publicKey == key.publicKey)
        for pem in [try key.pemRepresentation, try key.sec1PEMRepresentation] {
            #expect(try ECDSA.PrivateKey(pemRepresentation: pem).publicKey == key.publicKey)
        }
        #expect(try key.sec1PEMRepresentation.hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
        #expect(try ECDSA.PrivateKey(derRepresentation: key.derRepresentation.unsafeCopy, curve: curve).publicKey == key.publicKey)
        #expect(try ECDSA.PrivateKey(derRepresentation: key.sec1DERRepresentation.unsafeCopy).publicKey == key.publicKey)
        let pub = key.publicKey
        #expect(try ECDSA.PublicKey(pemRepresentation: pub.pemRepresentation) == pub)
        #expect(try ECDSA.PublicKey(derRepresentation: pub.derRepresentation, curve: curve) == pub)
        #expect(try ECDSA.PublicKey(x: pub.x, y: pub.y, curve: curve) == pub)
        #expect(try ECDSA.PublicKey(x963Representation: pub.x963Representation, curve: curve) == pub)
        // Compressed form: 02/03 ‖ x, parity of y.
        let compressed = [UInt8(2 + (pub.y.last ?? 0) & 1)] + pub.x
        #expect(try ECDSA.PublicKey(x963Representation: compressed, curve: curve) == pub)
        // A signature made before export verifies after import.
        let message = SecureRandom.bytes(count: 100)
        let signature = try key.signature(for: message)
        #expect(try ECDSA.PublicKey(pemRepresentation: pub.pemRepresentation).isValidSignature(signature, for: message))
    }

    @Test func rsaRoundTrips() throws {
        let key = try #require(Self.rsaKey)
        #expect(key.keySizeInBits == 2048)
        #expect(key.publicKey.publicExponent == [0x01, 0x00, 0x01])
        for pem in [try key.pemRepresentation, try key.pkcs1PEMRepresentation] {
            #expect(try RSA.PrivateKey(pemRepresentation: pem).publicKey == key.publicKey)
        }
        #expect(try key.pkcs1PEMRepresentation.hasPrefix("-----BEGIN RSA PRIVATE KEY-----"))
        #expect(try RSA.PrivateKey(derRepresentation: key.derRepresentation.unsafeCopy).publicKey == key.publicKey)
        #expect(try RSA.PrivateKey(derRepresentation: key.pkcs1DERRepresentation.unsafeCopy).publicKey == key.publicKey)
        let pub = key.publicKey
        #expect(try RSA.PublicKey(pemRepresentation: pub.pemRepresentation) == pub)
        #expect(try RSA.PublicKey(pemRepresentation: pub.pkcs1PEMRepresentation) == pub)
        #expect(try RSA.PublicKey(derRepresentation: pub.derRepresentation) == pub)
        #expect(try RSA.PublicKey(derRepresentation: pub.pkcs1DERRepresentation) == pub)
        #expect(try RSA.PublicKey(modulus: pub.modulus, publicExponent: pub.publicExponent) == pub)

        // Components: full set, and without the CRT values (computed from p and q).
        let components = key.components
        #expect(components.d != nil && components.p != nil && components.qi != nil)
        let message = Array("components".utf8)
        var reduced = components
        reduced.dp = nil
        reduced.dq = nil
        reduced.qi = nil
        for c in [components, reduced] {
            let rebuilt = try RSA.PrivateKey(components: c)
            #expect(rebuilt.publicKey == pub)
            // PKCS#1 v1.5 is deterministic: the rebuilt key signs identically.
            #expect(try rebuilt.signature(for: message, padding: .pkcs1v15) == key.signature(for: message, padding: .pkcs1v15))
        }
    }

    @Test func rsaPaddingsAndHashes() throws {
        let key = try #require(Self.rsaKey)
        let message = SecureRandom.bytes(count: 64)
        for hash in [HashFunction.sha256, .sha384, .sha512] {
            let paddings: [RSA.Padding] = [.pkcs1v15, .pss, .pss(saltLength: .bytes(0)), .pss(saltLength: .maximum)]
            for padding in paddings {
                let signature = try key.signature(for: message, hash: hash, padding: padding)
                #expect(signature.count == 256)
                let verifyPadding: RSA.Padding = if case .pss(.maximum, _) = padding { .pss(saltLength: .any) } else { padding }
                #expect(key.publicKey.isValidSignature(signature, for: message, hash: hash, padding: verifyPadding))
                #expect(!key.publicKey.isValidSignature(signature, for: message + [0], hash: hash, padding: verifyPadding))
            }
        }
        // PSS with another salt length than expected is rejected.
        let salted = try key.signature(for: message, padding: .pss(saltLength: .bytes(20)))
        #expect(!key.publicKey.isValidSignature(salted, for: message, padding: .pss))
        #expect(key.publicKey.isValidSignature(salted, for: message, padding: .pss(saltLength: .bytes(20))))
    }

    @Test func hashFunctionsMatchKnownDigests() throws {
        // FIPS 180-4 / 202 "abc" examples.
        let abc = Array("abc".utf8)
        #expect(Hex.encode(HashFunction.sha256.hash(abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Hex.encode(HashFunction.sha384.hash(abc)).hasPrefix("cb00753f45a35e8bb5a03d699ac65007"))
        #expect(Hex.encode(HashFunction.sha512.hash(abc)).hasPrefix("ddaf35a193617abacc417349ae204131"))
        #expect(Hex.encode(HashFunction.sha3_256.hash(abc)) == "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
        #expect(HashFunction(name: "sha512") == .sha512)
        #expect(HashFunction(name: "SHA3_256") == .sha3_256)
        #expect(HashFunction(name: "MD5") == nil)
    }
}
