import Testing
import TokenMintCore
import TokenMintCrypto
import TokenMintStore
@testable import TokenMintPay

/// The one error type: codes namespaced by domain, equality on the code, and
/// a lower layer's failure kept as the cause when a module wraps it.
@Suite("One error type")
struct ErrorTests {
    @Test("codes of different domains with the same name are different codes")
    func domainsKeepCodesApart() {
        #expect(TokenMintError.Code.crypto.invalidKey != .pay.tampered)
        #expect(TokenMintError.Code.pay.invalidSignature != .crypto.invalidSignature)
        #expect(TokenMintError.Code.store.invalidArgument != .crypto.invalidParameter)
        #expect(TokenMintError.Code.json.tooLarge != .json.malformed)
        #expect(TokenMintError.Code.pay.replayedToken == .pay.replayedToken)
        #expect(TokenMintError.Code.pay.expiredToken.description == "pay.expiredToken")
        #expect(TokenMintError.Code.pay.replayedToken.number == nil)
    }

    @Test("equality is on the code; the reason and the place are for people")
    func equalityOnTheCode() {
        let a = TokenMintError(.store.diskFull, "one reason")
        let b = TokenMintError(.store.diskFull, "another reason")
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        #expect(a != TokenMintError(.store.readOnly, "one reason"))
        #expect(a.file.hasSuffix("ErrorTests.swift"))
        #expect(a.description == "store.diskFull: one reason")
        #expect(TokenMintError(.json.malformed, "x", offset: 3).description == "json.malformed at byte 3: x")
        // Untrusted text in a reason is escaped before it is kept.
        #expect(!TokenMintError(.pay.malformedToken, "kid \u{1B}[2J\n").reason.contains("\u{1B}"))
    }

    @Test("a store failure under a payment keeps its cause; a payment error passes unchanged")
    func wrappingKeepsTheCause() {
        let store = InMemoryStore()
        do {
            _ = try WhitelabelPay.storeCall(store) { _ in throw TokenMintError(.store.diskFull, "full") }
            Issue.record("the store failure vanished")
        } catch {
            #expect(error.code == .pay.storeFailure)
            #expect((error.underlying as? TokenMintError)?.code == .store.diskFull)
        }
        do {
            _ = try WhitelabelPay.storeCall(store) { _ in throw TokenMintError(.pay.tampered, "edited") }
            Issue.record("the payment error vanished")
        } catch {
            #expect(error.code == .pay.tampered)
            #expect(error.underlying == nil)
        }
        let wrapped = TokenMintError.wrap(TokenMintError(.crypto.invalidKey, "bad"), as: .pay.tampered, "record")
        #expect(wrapped.code == .pay.tampered)
        #expect((wrapped.underlying as? TokenMintError)?.code == .crypto.invalidKey)
    }
}
