import Testing
import TokenMintCore
import TokenMintCrypto

/// AES-GCM, AES key wrap, AES-CBC-HMAC-SHA2, RSA-OAEP, X25519 and Concat KDF
/// against their specifications' published examples.
@Suite("AES modes, RSA-OAEP, X25519, Concat KDF")
struct AESTests {
    func hex(_ text: String) throws -> [UInt8] { try Hex.decode(text) }

    @Test("AES-GCM: the GCM specification's test case 4 byte-exact; any changed bit fails the tag")
    func gcm() throws {
        let key = SecureBytes(try hex("feffe9928665731c6d6a8f9467308308"))
        let iv = try hex("cafebabefacedbaddecaf888")
        let aad = try hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let plaintext = try hex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let sealed = try AES.GCM.seal(plaintext, key: key, nonce: iv, authenticating: aad)
        #expect(Hex.encode(sealed.ciphertext) == "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091")
        #expect(Hex.encode(sealed.tag) == "5bc94fbc3221a5db94fae95ae7121a47")
        #expect(try AES.GCM.open(sealed.ciphertext, key: key, nonce: iv, tag: sealed.tag, authenticating: aad).unsafeCopy == plaintext)
        var tag = sealed.tag
        tag[0] ^= 1
        #expect(throws: TokenMintError.self) { _ = try AES.GCM.open(sealed.ciphertext, key: key, nonce: iv, tag: tag, authenticating: aad) }
        #expect(throws: TokenMintError.self) { _ = try AES.GCM.open(sealed.ciphertext, key: key, nonce: iv, tag: sealed.tag, authenticating: [UInt8]()) }
        #expect(throws: TokenMintError.self) { _ = try AES.GCM.open(sealed.ciphertext, key: key, nonce: iv, tag: sealed.tag.prefix(12), authenticating: aad) }
        #expect(throws: TokenMintError.self) { _ = try AES.GCM.seal(plaintext, key: SecureBytes([1, 2, 3]), nonce: iv, authenticating: aad) }
    }

    @Test("AES key wrap: RFC 3394 §4.1 and §4.6 byte-exact; a changed byte fails the check")
    func keyWrap() throws {
        let kek = SecureBytes(try hex("000102030405060708090A0B0C0D0E0F"))
        let wrapped = try AES.KeyWrap.wrap(SecureBytes(try hex("00112233445566778899AABBCCDDEEFF")), using: kek)
        #expect(Hex.encode(wrapped) == "1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5")
        let kek256 = SecureBytes(try hex("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"))
        let key256 = SecureBytes(try hex("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F"))
        let wrapped256 = try AES.KeyWrap.wrap(key256, using: kek256)
        #expect(Hex.encode(wrapped256) == "28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326cbc7f0e71a99f43bfb988b9b7a02dd21")
        #expect(try AES.KeyWrap.unwrap(wrapped256, using: kek256) == key256)
        var bad = wrapped
        bad[5] ^= 0x80
        #expect(throws: TokenMintError.self) { _ = try AES.KeyWrap.unwrap(bad, using: kek) }
        #expect(throws: TokenMintError.self) { _ = try AES.KeyWrap.unwrap(wrapped.prefix(20), using: kek) }
    }

    @Test("AES-CBC-HMAC-SHA2: RFC 7518 Appendix B.1 (A128CBC-HS256) byte-exact; tag and padding failures look alike")
    func cbcHMAC() throws {
        let key = SecureBytes(Array(0x00...0x1f) as [UInt8])
        let plaintext = Array("A cipher system must not be required to be secret, and it must be able to fall into the hands of the enemy without inconvenience".utf8)
        let iv = try hex("1af38c2dc2b96ffdd86694092341bc04")
        let aad = Array("The second principle of Auguste Kerckhoffs".utf8)
        let sealed = try AES.CBCHMAC.seal(plaintext, key: key, iv: iv, authenticating: aad)
        #expect(Hex.encode(sealed.ciphertext) == "c80edfa32ddf39d5ef00c0b468834279a2e46a1b8049f792f76bfe54b903a9c9a94ac9b47ad2655c5f10f9aef71427e2fc6f9b3f399a221489f16362c703233609d45ac69864e3321cf82935ac4096c86e133314c54019e8ca7980dfa4b9cf1b384c486f3a54c51078158ee5d79de59fbd34d848b3d69550a67646344427ade54b8851ffb598f7f80074b9473c82e2db")
        #expect(Hex.encode(sealed.tag) == "652c3fa36b0a7c5b3219fab3a30bc1c4")
        #expect(try AES.CBCHMAC.open(sealed.ciphertext, key: key, iv: iv, tag: sealed.tag, authenticating: aad).unsafeCopy == plaintext)
        var tag = sealed.tag
        tag[15] ^= 1
        #expect(throws: TokenMintError.self) { _ = try AES.CBCHMAC.open(sealed.ciphertext, key: key, iv: iv, tag: tag, authenticating: aad) }
        #expect(throws: TokenMintError.self) { _ = try AES.CBCHMAC.open(sealed.ciphertext, key: key, iv: iv, tag: sealed.tag + [0], authenticating: aad) }
        #expect(throws: TokenMintError.self) { _ = try AES.CBCHMAC.seal(plaintext, key: SecureBytes(randomCount: 40), iv: iv, authenticating: aad) }
    }

    @Test("RSA-OAEP SHA-1 and SHA-256 round trips; a changed byte and the wrong hash fail alike")
    func rsaOAEP() throws {
        let key = try RSA.PrivateKey(bits: 2048)
        let secret = SecureBytes(randomCount: 32)
        for hash in [HashFunction.sha1, .sha256] {
            var ciphertext = try key.publicKey.encrypt(secret, oaepHash: hash)
            #expect(ciphertext.count == 256)
            #expect(try key.decrypt(ciphertext, oaepHash: hash) == secret)
            #expect(throws: TokenMintError.self) { _ = try key.decrypt(ciphertext, oaepHash: hash == .sha1 ? .sha256 : .sha1) }
            ciphertext[100] ^= 1
            #expect(throws: TokenMintError.self) { _ = try key.decrypt(ciphertext, oaepHash: hash) }
        }
        #expect(throws: TokenMintError.self) { _ = try key.publicKey.encrypt(SecureBytes(randomCount: 200), oaepHash: .sha256) }
    }

    @Test("X25519: RFC 7748 §6.1 byte-exact, both directions; a small-order peer is refused")
    func x25519() throws {
        let alice = try X25519.PrivateKey(rawRepresentation: SecureBytes(try hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")))
        let bob = try X25519.PrivateKey(rawRepresentation: SecureBytes(try hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")))
        #expect(Hex.encode(alice.publicKey.rawRepresentation) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        let shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
        #expect(Hex.encode(try alice.sharedSecret(with: bob.publicKey).unsafeCopy) == shared)
        #expect(Hex.encode(try bob.sharedSecret(with: alice.publicKey).unsafeCopy) == shared)
        #expect(throws: TokenMintError.self) { _ = try alice.sharedSecret(with: try X25519.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32))) }
        #expect(throws: TokenMintError.self) { _ = try X25519.PublicKey(rawRepresentation: [UInt8](repeating: 9, count: 31)) }
    }

    @Test("Concat KDF: RFC 7518 Appendix C's shared secret gives its derived key")
    func concatKDF() throws {
        let z = SecureBytes([158, 86, 217, 29, 129, 113, 53, 211, 114, 131, 66, 131, 191, 132, 38, 156, 251, 49, 110, 163, 218, 128, 106, 72, 246, 218, 167, 121, 140, 254, 144, 196] as [UInt8])
        var info: [UInt8] = [0, 0, 0, 7] + Array("A128GCM".utf8) + [0, 0, 0, 5] + Array("Alice".utf8) + [0, 0, 0, 3] + Array("Bob".utf8)
        info += [0, 0, 0, 128]
        let key = try ConcatKDF.deriveKey(sharedSecret: z, otherInfo: info, outputByteCount: 16)
        #expect(key.unsafeCopy == [86, 170, 141, 234, 248, 35, 109, 32, 92, 34, 40, 205, 113, 167, 16, 26])
        #expect(throws: TokenMintError.self) { _ = try ConcatKDF.deriveKey(sharedSecret: z, otherInfo: info, outputByteCount: 0) }
    }
}
