import Testing
import TokenMintCore
import TokenMintCrypto

/// ECDH P-256 and HKDF-SHA-256, as the CTAP2 PIN/UV auth protocols use them.
@Suite("Key agreement: ECDH and HKDF")
struct KeyAgreementTests {
    @Test("ECDH P-256: RFC 5903 §8.1 byte-exact, both directions; curves must match")
    func ecdh() throws {
        let i = try ECDSA.PrivateKey(rawRepresentation: try Hex.decode("c88f01f510d9ac3f70a292daa2316de544e9aab8afe84049c62a9c57862d1433"), curve: .p256)
        let r = try ECDSA.PrivateKey(rawRepresentation: try Hex.decode("c6ef9c5d78ae012a011164acb397ce2088685d8f06bf9be0b283ab46476bee53"), curve: .p256)
        #expect(Hex.encode(i.publicKey.x963Representation) == "04dad0b65394221cf9b051e1feca5787d098dfe637fc90b9ef945d0c3772581180"
                + "5271a0461cdb8252d61f1c456fa3e59ab1f45b33accf5f58389e0577b8990bb3")
        let expected = "d6840f6b42f6edafd13116e0e12565202fef8e9ece7dce03812464d04b9442de"
        #expect(Hex.encode(try ECDH.sharedSecret(i, r.publicKey).unsafeCopy) == expected)
        #expect(Hex.encode(try ECDH.sharedSecret(r, i.publicKey).unsafeCopy) == expected)
        let other = try ECDSA.PrivateKey(curve: .p384)
        #expect(throws: TokenMintError.self) { _ = try ECDH.sharedSecret(i, other.publicKey) }
    }

    @Test("HKDF-SHA-256: RFC 5869 A.1 and A.3 byte-exact; lengths checked")
    func hkdf() throws {
        let ikm = SecureBytes([UInt8](repeating: 0x0B, count: 22))
        let a1 = try HKDF.deriveKey(inputKeyMaterial: ikm, salt: Array(0...12) as [UInt8], info: Array(0xF0...0xF9) as [UInt8], outputByteCount: 42)
        #expect(Hex.encode(a1.unsafeCopy) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        let a3 = try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](), outputByteCount: 42)
        #expect(Hex.encode(a3.unsafeCopy) == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
        #expect(throws: TokenMintError.self) { _ = try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](), outputByteCount: 0) }
        #expect(throws: TokenMintError.self) { _ = try HKDF.deriveKey(inputKeyMaterial: ikm, salt: [UInt8](), info: [UInt8](), outputByteCount: 255 * 32 + 1) }
    }
}
