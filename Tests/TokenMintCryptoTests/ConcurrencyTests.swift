import Foundation
import Testing
import TokenMintCrypto

/// Keys are `Sendable` and shared by many tasks at once: results must be
/// exactly those of a serial run.
@Suite("Concurrent use of shared keys")
struct ConcurrencyTests {
    /// Empty base64url (a `dir` JWE's encrypted key) and zero random bytes
    /// from many tasks at once. An array made with no capacity is the shared
    /// empty one; writing its count from two threads was a race that
    /// ThreadSanitizer caught in CI (this test under TSan fails on that code).
    @Test func emptyResultsFromManyTasks() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    for _ in 0..<200 {
                        let empty = try [UInt8]().withUnsafeBytes { try Base64URL.decodePublic($0) }
                        guard empty.isEmpty, SecureRandom.bytes(count: 0).isEmpty else { return false }
                    }
                    return true
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }

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

    /// ECDSA and RSA keys keep the digest contexts they signed and verified
    /// with and re-arm them with no key: every reuse must behave as a fresh
    /// context. Signatures are checked by a copy of the public key that has
    /// never been used (fresh contexts); bad signatures are refused between
    /// good ones on the same kept contexts; PSS set-ups that differ only in
    /// MGF1 hash or salt length never share a context.
    @Test func reusedSignatureContexts() async throws {
        let message = Array("reused digest contexts".utf8)
        let paddings: [RSA.Padding] = [.pkcs1v15, .pss, .pss(saltLength: .bytes(0)), .pss(mgf1Hash: .sha512), .pkcs1v15]
        // A key per hash: its 8 sign and verify set-ups fit the 8 contexts a key keeps, so every one is reused.
        for hash in [HashFunction.sha256, .sha384] {
            let rsa = try RSA.PrivateKey(bits: 2048)
            for round in 0..<2 {
                for padding in paddings {
                    let signature = try rsa.signature(for: message, hash: hash, padding: padding)
                    let unused = try RSA.PublicKey(derRepresentation: rsa.publicKey.derRepresentation)
                    #expect(unused.isValidSignature(signature, for: message, hash: hash, padding: padding), "\(hash) \(padding)")
                    var bad = signature
                    bad[round + 7] ^= 1
                    #expect(!rsa.publicKey.isValidSignature(bad, for: message, hash: hash, padding: padding))
                    #expect(rsa.publicKey.isValidSignature(signature, for: message, hash: hash, padding: padding))
                    let flipped: RSA.Padding = padding == .pkcs1v15 ? .pss : .pkcs1v15
                    #expect(!rsa.publicKey.isValidSignature(signature, for: message, hash: hash, padding: flipped))
                }
            }
        }
        let ec = try ECDSA.PrivateKey(curve: .p256)
        for round in 0..<20 {
            let hash = [HashFunction.sha256, .sha384, .sha512][round % 3]
            let signature = try ec.signature(for: message, hash: hash)
            let unused = try ECDSA.PublicKey(x963Representation: ec.publicKey.x963Representation, curve: .p256)
            #expect(unused.isValidSignature(signature, for: message, hash: hash))
            #expect(!ec.publicKey.isValidSignature(signature, for: message + [1], hash: hash))
            #expect(ec.publicKey.isValidSignature(signature, for: message, hash: hash))
        }
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var bad = 0
                    for round in 0..<40 {
                        let text = message + [UInt8(task), UInt8(round)]
                        guard let signature = try? ec.signature(for: text) else { bad += 1; continue }
                        if !ec.publicKey.isValidSignature(signature, for: text) { bad += 1 }
                        if ec.publicKey.isValidSignature(signature, for: message) { bad += 1 }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }

    /// The DER form of r‖s, written in one buffer, against the plain
    /// definition (minimal INTEGERs, a 0 byte before a set high bit) for
    /// values with leading zero bytes and high bits in every combination.
    @Test func signatureDERAgreesWithTheDefinition() throws {
        func integer(_ value: [UInt8]) -> [UInt8] {
            var bytes = Array(value.drop(while: { $0 == 0 }))
            if bytes.isEmpty { bytes = [0] }
            if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
            return [0x02, UInt8(bytes.count)] + bytes
        }
        for curve in [ECDSA.Curve.p256, .p384, .p521] {
            let size = curve.scalarByteCount
            for pattern in 0..<64 {
                func scalar(_ bits: Int) -> [UInt8] {
                    var value = [UInt8](repeating: 0x5A, count: size)
                    let zeros = [0, 1, 2, size / 2][bits & 3]
                    for index in 0..<zeros { value[index] = 0 }
                    if zeros < size { value[zeros] = bits & 4 != 0 ? 0xC1 : 0x31 }
                    if curve == .p521 { value[0] &= 0x01 }  // below the order (P-256 and P-384 orders start 0xFF)
                    return value
                }
                let r = scalar(pattern), s = scalar(pattern >> 3)
                let signature = try ECDSA.Signature(rawRepresentation: r + s, curve: curve)
                let body = integer(r) + integer(s)
                let expected = [0x30] + (body.count < 0x80 ? [UInt8(body.count)] : [0x81, UInt8(body.count)]) + body
                #expect(signature.derRepresentation == expected, "\(curve) \(pattern)")
                #expect(try ECDSA.Signature(derRepresentation: expected, curve: curve) == signature)
            }
        }
    }
}
