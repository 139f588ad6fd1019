import TokenMintCore
import Testing
import TokenMintCrypto

@Suite("AES-256-CBC")
struct AES256CBCTests {
    // NIST SP 800-38A, appendix F.2.5 and F.2.6 (CBC-AES256).
    static let key = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"
    static let iv = "000102030405060708090a0b0c0d0e0f"
    static let plaintext = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
        + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"
    static let ciphertext = "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
        + "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b"

    @Test("SP 800-38A F.2.5/F.2.6 byte-exact both ways")
    func knownAnswer() throws {
        let key = SecureBytes(try Hex.decode(Self.key))
        let iv = try Hex.decode(Self.iv)
        let encrypted = try AES256CBC.encrypt(SecureBytes(try Hex.decode(Self.plaintext)), key: key, iv: iv)
        #expect(Hex.encode(encrypted) == Self.ciphertext)
        let decrypted = try AES256CBC.decrypt(try Hex.decode(Self.ciphertext), key: key, iv: iv)
        #expect(Hex.encode(decrypted.unsafeCopy) == Self.plaintext)
        #expect(try AES256CBC.encrypt(SecureBytes([UInt8]()), key: key, iv: iv).isEmpty)
    }

    @Test("wrong key, IV or length sizes are typed errors")
    func badSizes() throws {
        let key = SecureBytes(randomCount: 32)
        let iv = [UInt8](repeating: 0, count: 16)
        #expect(throws: TokenMintError.self) { try AES256CBC.encrypt(SecureBytes(randomCount: 16), key: SecureBytes(randomCount: 16), iv: iv) }
        #expect(throws: TokenMintError.self) { try AES256CBC.encrypt(SecureBytes(randomCount: 16), key: key, iv: [0, 1]) }
        #expect(throws: TokenMintError.self) { try AES256CBC.encrypt(SecureBytes(randomCount: 15), key: key, iv: iv) }
        #expect(throws: TokenMintError.self) { try AES256CBC.decrypt([UInt8](repeating: 0, count: 17), key: key, iv: iv) }
        #expect(throws: TokenMintError.self) { try HMACKey(secret: SecureBytes(randomCount: 16), hash: .sha256) }
        let mac = try HMACKey(secret: SecureBytes(randomCount: 32), hash: .sha256)
        #expect(try HMAC.secretAuthenticationCode(for: [1, 2, 3], using: mac).unsafeCopy == HMAC.authenticationCode(for: [1, 2, 3], using: mac))
    }
}
