import Testing
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
        #expect(ECKeyPair.curveSetupLive, "the nonce source could not be built on this libcrypto")
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
        // Still live: no signature above fell back for an unexpected draw.
        #expect(ECKeyPair.curveSetupLive)
    }
}
