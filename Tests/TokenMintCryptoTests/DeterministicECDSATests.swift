import Testing
import TokenMintCore
@testable import TokenMintCrypto

/// RFC 6979 signing on P-256 hands its k to OpenSSL's own ECDSA set-up (for
/// the curve's constant-time inverse); every other curve, and any failure of
/// that hand-over, has the shim make k·G and k⁻¹. Both must give the same
/// bytes, and so must the DRBG whether its steps restart their HMAC key or
/// key it afresh (as libcrypto 3.0.0–3.0.2 needs).
@Suite("Deterministic ECDSA and HMAC: every path a libcrypto may take agrees")
struct DeterministicECDSATests {
    typealias Options = ECKeyPair.DeterministicOptions

    /// Random keys and messages, every hash whose size is below, at and above
    /// P-256's 32 bytes (so bits2int truncates, keeps and pads), each signed
    /// through OpenSSL's set-up, through the shim's own k⁻¹, and with every
    /// DRBG step rekeyed, from four tasks at once (the armed nonce is per
    /// thread). Each call reports which path it took.
    @Test("P-256 signatures are byte-identical on every path, and verify")
    func pathsAgree() async throws {
        // OpenSSL's P-256 (nistz256, on x86-64 and arm64) draws nothing but k
        // in its set-up; a build without it falls back, which is safe but slower.
        #if arch(x86_64) || arch(arm64)
        let expectsCurveSetup = true
        #else
        let expectsCurveSetup = false
        #endif
        let hashes: [HashFunction] = [.sha224, .sha256, .sha384, .sha512]
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var failures: [String] = []
                    for round in 0..<40 {
                        let key = try ECDSA.PrivateKey(curve: .p256)
                        let message = (0..<(round + worker * 7)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ worker) }
                        let hash = hashes[(round + worker) % hashes.count]
                        let digest = hash.hash(message)
                        let viaOpenSSL = try key.key.deterministicSignatureTrace(digest: digest, hash: hash, options: Options())
                        let viaShim = try key.key.deterministicSignatureTrace(digest: digest, hash: hash, options: Options(curveSetup: false))
                        let rekeyed = try key.key.deterministicSignatureTrace(
                            digest: digest, hash: hash, options: Options(curveSetup: false, rekeyEveryStep: true))
                        let what = "worker \(worker) round \(round) \(hash.name)"
                        if viaOpenSSL.tookCurveSetup != expectsCurveSetup || viaShim.tookCurveSetup || rekeyed.tookCurveSetup {
                            failures.append("\(what): paths taken \(viaOpenSSL.tookCurveSetup), \(viaShim.tookCurveSetup), \(rekeyed.tookCurveSetup)")
                        }
                        if viaOpenSSL.signature != viaShim.signature || viaShim.signature != rekeyed.signature {
                            failures.append("\(what): signatures differ")
                        }
                        if !key.publicKey.isValidSignature(viaOpenSSL.signature, for: message, hash: hash) {
                            failures.append("\(what): does not verify")
                        }
                    }
                    return failures
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        if expectsCurveSetup { #expect(ECKeyPair.curveSetupLive) }
    }

    /// RFC 6979 A.1.2, the detailed example: K-163, SHA-256, "sample". Its
    /// first two candidates for k are ≥ q, so §3.2 h.3's retry runs twice
    /// before k = 23AF4074C90A02B3FE61D286D5C87F425E6BDD81B; with the DRBG's
    /// keys restarted and with every step rekeyed. The prime curves' orders
    /// are too close to 2^qlen for any vector to reach that path.
    @Test("RFC 6979 A.1.2: K-163 takes the retry and comes out byte-exact",
          .enabled(if: ECKeyPair.knowsCurve(named: "sect163k1"), "this libcrypto has no binary curves"),
          arguments: [false, true])
    func retryPath(rekeyEveryStep: Bool) throws {
        let x = try hex("009A4D6792295A7F730FC3F2B49CBC0F62E862272F")
        let digest = HashFunction.sha256.hash(Array("sample".utf8))
        let signature = try ECKeyPair.deterministicSignature(
            curveNamed: "sect163k1", privateKey: x, digest: digest, hash: .sha256, options: Options(rekeyEveryStep: rekeyEveryStep))
        #expect(signature == (try hex("0113A63990598A3828C407C0F4D2438D990DF99A7F" + "01313A2E03F5412DDB296A22E2C455335545672D9F")))
    }

    /// The shim's self-test finds the restart on every libcrypto that has it
    /// (3.0.3 and later; an older one may have the fix backported).
    @Test("the HMAC restart self-test finds the restart from OpenSSL 3.0.3")
    func hmacRestartsByVersion() {
        #expect(KeyedMAC.restarts || OpenSSL.versionNumber < 0x3000_0030)
    }

    /// A keyed HMAC gives the same tags whether it keeps and restarts its
    /// contexts or duplicates its template for every tag (the path of a
    /// libcrypto that cannot restart): RFC 4231 test case 2, then tags in a
    /// row (the second and later on a kept context, when kept).
    @Test("keyed HMAC tags agree with and without kept contexts", arguments: [false, true])
    func keyedMACPaths(keepsContexts: Bool) throws {
        let mac = try KeyedMAC(key: SecureBytes(Array("Jefe".utf8)), hash: .sha256, keepsContexts: keepsContexts)
        let fresh = try KeyedMAC(key: SecureBytes(Array("Jefe".utf8)), hash: .sha256, keepsContexts: false)
        func tag(_ mac: KeyedMAC, _ message: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 64)
            let length = message.withUnsafeBytes { input in out.withUnsafeMutableBytes { mac.tag(input, into: $0) } }
            return Array(out.prefix(length))
        }
        #expect(tag(mac, Array("what do ya want for nothing?".utf8))
            == (try hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")))
        for length in [0, 1, 55, 64, 200] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            #expect(tag(mac, message) == tag(fresh, message))
        }
    }

    private func hex(_ text: String) throws -> [UInt8] {
        let digits = Array(text.utf8)
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            try #require(UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16))
        }
    }
}
