import Foundation
import Testing
import TokenMintCrypto

/// Keys are `Sendable` and shared by many tasks at once: results must be
/// exactly those of a serial run.
@Suite("Concurrent use of shared keys")
struct ConcurrencyTests {
    @Test func sharedKeysAcrossTasks() async throws {
        let ed = Ed25519.PrivateKey()
        let ec = try ECDSA.PrivateKey(curve: .p256)
        let hmac = try HMACKey(generatingFor: .sha256)
        let messages = (0..<64).map { Array("message \($0)".utf8) }
        let serialEd = try messages.map { try ed.signature(for: $0) }
        let serialEC = try messages.map { try ec.signature(for: $0, nonce: .deterministic) }
        let serialMAC = messages.map { HMAC.authenticationCode(for: $0, using: hmac) }

        let mismatches = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var bad = 0
                    for round in 0..<4 {
                        for (index, message) in messages.enumerated() where (index + worker + round) % 2 == 0 {
                            if (try? ed.signature(for: message)) != serialEd[index] { bad += 1 }
                            if (try? ec.signature(for: message, nonce: .deterministic)) != serialEC[index] { bad += 1 }
                            if HMAC.authenticationCode(for: message, using: hmac) != serialMAC[index] { bad += 1 }
                            if let random = try? ec.signature(for: message), !ec.publicKey.isValidSignature(random, for: message) {
                                bad += 1
                            }
                            if !ed.publicKey.isValidSignature(serialEd[index], for: message) { bad += 1 }
                        }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
