import Testing
import TokenMintCore
@testable import TokenMintCrypto

/// RFC 6979 signing on P-256 hands its k to OpenSSL's own ECDSA set-up (for
/// the curve's constant-time inverse); every other curve, and any failure of
/// that hand-over, computes k⁻¹ in the shim. Both must give the same bytes.
@Suite("Deterministic ECDSA: OpenSSL's set-up and the shim's agree")
struct DeterministicECDSATests {
    /// Random keys and messages, every hash whose size is below, at and above
    /// P-256's 32 bytes (so bits2int truncates, keeps and pads), each signed
    /// through OpenSSL's set-up and through the shim's own k⁻¹, from four
    /// threads at once (the armed nonce is per thread).
    @Test("P-256 signatures are byte-identical either way, and verify")
    func curveSetupMatchesShim() async throws {
        // OpenSSL's P-256 (nistz256, on x86-64 and arm64) draws nothing but k
        // in its set-up; a build without it falls back, which is safe but slower.
        #if arch(x86_64) || arch(arm64)
        #expect(ECKeyPair.curveSetupLive, "the nonce source could not be built on this libcrypto")
        #endif
        let setupsBefore = ECKeyPair.curveSetups
        let hashes: [HashFunction] = [.sha224, .sha256, .sha384, .sha512]
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<40 {
                        let key = try ECDSA.PrivateKey(curve: .p256)
                        let message = (0..<(round + worker * 7)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ worker) }
                        let hash = hashes[(round + worker) % hashes.count]
                        let digest = hash.hash(message)
                        let viaOpenSSL = try key.key.deterministicSignature(digest: digest, hash: hash, curveSetup: true)
                        let viaShim = try key.key.deterministicSignature(digest: digest, hash: hash, curveSetup: false)
                        if viaOpenSSL != viaShim || !key.publicKey.isValidSignature(viaOpenSSL, for: message, hash: hash) {
                            mismatches += 1
                        }
                    }
                    return mismatches
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #if arch(x86_64) || arch(arm64)
        // Still live (no signature fell back for an unexpected draw), and each
        // of the 160 signatures through OpenSSL's set-up really took it.
        #expect(ECKeyPair.curveSetupLive)
        #expect(ECKeyPair.curveSetups - setupsBefore >= 160)
        #endif
    }

    /// RFC 6979 A.1.2, the detailed example: K-163, SHA-256, "sample". Its
    /// first two candidates for k are ≥ q, so §3.2 h.3's retry (K and V
    /// stepped with the context's key kept) runs twice before
    /// k = 23AF4074C90A02B3FE61D286D5C87F425E6BDD81B. The prime curves' orders
    /// are too close to 2^qlen for any vector to reach that path.
    @Test("RFC 6979 A.1.2: K-163 takes the retry and comes out byte-exact")
    func retryPath() throws {
        let x = try hex("009A4D6792295A7F730FC3F2B49CBC0F62E862272F")
        let digest = HashFunction.sha256.hash(Array("sample".utf8))
        let signature: [UInt8]
        do {
            signature = try ECKeyPair.deterministicSignature(curveNamed: "sect163k1", privateKey: x, digest: digest, hash: .sha256)
        } catch let error where error.code == .crypto.unsupportedAlgorithm {
            return  // a libcrypto built without binary curves
        }
        #expect(signature == (try hex("0113A63990598A3828C407C0F4D2438D990DF99A7F" + "01313A2E03F5412DDB296A22E2C455335545672D9F")))
    }

    /// HMAC contexts are restarted without their key only where libcrypto
    /// does that (3.0.3 and later, as here); the test is the shim's own.
    @Test("this libcrypto restarts an HMAC context from its key")
    func hmacRestarts() {
        #expect(KeyedMAC.restarts)
    }

    private func hex(_ text: String) throws -> [UInt8] {
        let digits = Array(text.utf8)
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            try #require(UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16))
        }
    }
}
