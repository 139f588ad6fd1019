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

    /// A key keeps finished HMAC contexts and re-arms them: every reuse must
    /// start from the key again (RFC 4231 test case 2, over and over, with
    /// other messages and a failed check in between), serially and from many
    /// tasks at once, more tasks than a key keeps contexts.
    @Test func reusedMACContextsStartFromTheKey() async throws {
        let key = try HMACKey(allowingShortKey: Array("Jefe".utf8), hash: .sha256)
        let message = Array("what do ya want for nothing?".utf8)
        let expected = try Hex.decode("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        for round in 0..<40 {
            #expect(HMAC.authenticationCode(for: message, using: key) == expected, "round \(round)")
            _ = HMAC.authenticationCode(for: [UInt8](repeating: UInt8(round), count: round * 7), using: key)
            #expect(!HMAC.isValidAuthenticationCode([UInt8](repeating: 0, count: 32), for: message, using: key))
        }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    var bad = 0
                    for round in 0..<200 {
                        if HMAC.authenticationCode(for: message, using: key) != expected { bad += 1 }
                        _ = HMAC.authenticationCode(for: [UInt8](repeating: 1, count: round), using: key)
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}
