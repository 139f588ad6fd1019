import TokenMintCrypto
import TokenMintPay
import TokenMintStore
import TokenMintAztec
import Dispatch

/// Holds a result across threads for ``blocking(_:)``.
final class ResultBox<T>: @unchecked Sendable { var value: T? }

/// Runs async work to the end from libFuzzer's synchronous callback.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    guard let value = box.value else { violated("async work finished without a value") }
    return value
}

/// The device key of the pay seeds: Ed25519 from the seed 0x00…1f (the
/// seeds in Fuzz/Corpus/pay-tokens are signed with it).
nonisolated(unsafe) var payEnrolment: EnrolmentToken?
nonisolated(unsafe) var payVerifier: PaymentTokenVerifier?

func preparePayFixtures() {
    guard let key = try? Ed25519.PrivateKey(rawRepresentation: Array(UInt8(0)...UInt8(31))) else { return }
    payEnrolment = EnrolmentToken(tenant: "fuzz", publicKey: key.publicKey, referenceID: "00000000-0000-4000-8000-000000000000")
    // A clock at the seeds' time, and a ledger that forgets nothing: a token
    // that verifies once must be refused the second time.
    payVerifier = try? PaymentTokenVerifier(store: InMemoryStore(), lifetime: 600, skew: 30, clock: WhitelabelPayClock { 1_800_000_000 })
}

/// WhitelabelPay enrolment and payment tokens: parsing, the canonical form
/// round trip, and verification (a second verify of the same token must fail).
func fuzzPayTokens(_ input: [UInt8]) {
    let text = String(decoding: input, as: UTF8.self)
    if let enrolment = try? EnrolmentToken(parsing: text, allowLegacyTenant: true) {
        guard let again = try? EnrolmentToken(parsing: enrolment.description, allowLegacyTenant: true), again == enrolment else {
            violated("an enrolment token does not survive its own description")
        }
    }
    _ = try? EnrolmentToken(parsing: text)
    if let token = try? PaymentToken(parsing: text) {
        guard let again = try? PaymentToken(parsing: token.description), again == token else {
            violated("a payment token does not survive its own description")
        }
    }
    if let payVerifier, let payEnrolment {
        let accepted = blocking {
            [(try? await payVerifier.verify(text, enrolment: payEnrolment)) != nil,
             (try? await payVerifier.verify(text, enrolment: payEnrolment)) != nil]
        }
        if accepted == [true, true] { violated("a payment token verified twice") }
    }
}

/// Aztec options and payloads: byte 0 picks the level, byte 1 the size,
/// byte 2 the ECI, the rest is the payload. An encoded symbol must be square
/// with the side its layer count gives and at least the error correction asked.
func fuzzAztec(_ input: [UInt8]) {
    guard input.count >= 3 else { return }
    let level = AztecOptions.ErrorCorrection(rawValue: Int(input[0] % 4) + 1) ?? .level2
    let size: AztecOptions.Size
    switch input[1] % 4 {
    case 0: size = .automatic
    case 1: size = .compactOnly
    case 2: size = .compact(layers: Int(input[1] >> 2) % 6)
    default: size = .full(layers: Int(input[1] >> 2) % 34)
    }
    let eci: Int? = input[2] == 0 ? nil : Int(input[2]) * 3 - 50
    let options = AztecOptions(errorCorrection: level, size: size, eci: eci)
    let payload = input.dropFirst(3)
    if let symbol = try? AztecEncoder.encode(payload, options: options) {
        guard symbol.matrix.count == symbol.size, symbol.matrix.allSatisfy({ $0.count == symbol.size }) else {
            violated("an Aztec symbol is not square")
        }
        let side = symbol.isCompact ? 11 + 4 * symbol.layers : 15 + 4 * symbol.layers
        guard symbol.isCompact ? symbol.size == side : symbol.size >= side else { violated("the symbol's side does not match its layers") }
        guard symbol.eccPercent >= Double(level.percent) else { violated("the symbol has less error correction than asked") }
    }
    _ = try? AztecEncoder.encode(String(decoding: payload, as: UTF8.self), options: options)
}
