import TokenMintCore
import Testing
import TokenMintCrypto
@testable import TokenMintPay
import TokenMintStore

/// The payment token's one-pass byte parser and the verifier's byte-level
/// reading of the unsigned part, against the String-splitting code they
/// replaced (kept here as the reference): the same tokens accepted with the
/// same fields, the same refused with the same code, and the ledger's
/// identifiers and slots the same bytes as before.
@Suite("Payment token parsing")
struct TokenParsingTests {
    /// The parser before the byte rewrite, verbatim in behaviour.
    static func referenceParse(_ text: String) throws(TokenMintError) -> PaymentToken {
        guard text.utf8.count <= 512 else { throw TokenMintError(.pay.malformedToken, "long") }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == "02" else { throw TokenMintError(.pay.malformedToken, "shape") }
        guard !parts[1].isEmpty, parts[1].utf8.count <= 256, parts[1].utf8.allSatisfy(WhitelabelPayFormat.isTokenCharacter) else {
            throw TokenMintError(.pay.malformedToken, "unsigned")
        }
        let digits = parts[2].utf8
        guard (1...12).contains(digits.count), digits.allSatisfy({ (48...57).contains($0) }),
            digits.count == 1 || digits.first != UInt8(ascii: "0"), let epoch = Int64(parts[2])
        else { throw TokenMintError(.pay.malformedToken, "time") }
        guard let signature = try? Base64URL.decode(parts[3], padding: .either), signature.count == 64 else {
            throw TokenMintError(.pay.malformedToken, "signature")
        }
        return PaymentToken(unsignedPart: parts[1], epochSeconds: epoch, signature: signature)
    }

    /// `kind(of:)` before the byte rewrite.
    static func referenceKind(_ unsigned: String) throws(TokenMintError) -> PaymentTokenVerifier.Kind {
        let parts = unsigned.split(separator: ".", omittingEmptySubsequences: false)
        guard parts[0] == "off" else {
            if parts[0].lowercased() == "off" { throw TokenMintError(.pay.malformedToken, "case") }
            return .online
        }
        var counter: Int64?
        if parts.count > 2 {
            let digits = parts[2].utf8
            if (1...18).contains(digits.count), digits.first != UInt8(ascii: "0"), digits.allSatisfy({ (48...57).contains($0) }) {
                counter = Int64(parts[2])
            }
        }
        guard parts.count == 4, PaymentMeans.isValidID(parts[1]), let counter,
            (1...64).contains(parts[3].utf8.count), parts[3].utf8.allSatisfy(PaymentTokenVerifier.isBase64URLCharacter)
        else { throw TokenMintError(.pay.malformedToken, "offline") }
        return .offline(counter: counter)
    }

    /// Every one-character change of `text`: each position replaced by, and
    /// preceded by, each probe, and each position deleted.
    static func mutations(of text: String, probes: [String]) -> [String] {
        let characters = Array(text)
        var result = [text]
        for index in 0...characters.count {
            for probe in probes {
                var inserted = characters
                inserted.insert(contentsOf: Array(probe), at: index)
                result.append(String(inserted))
                guard index < characters.count else { continue }
                var replaced = characters
                replaced.replaceSubrange(index...index, with: Array(probe))
                result.append(String(replaced))
            }
            if index < characters.count {
                var deleted = characters
                deleted.remove(at: index)
                result.append(String(deleted))
            }
        }
        return result
    }

    static let probes = ["/", ".", "=", "==", "0", "1", "9", "A", "a", "O", "F", "o", "f", "-", "_", "~", "+", " ", "é", "\u{301}", "\r\n", "ＯＦＦ"]

    /// Parses with both, and expects the same token or the same refusal code.
    static func expectSameParse(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let old = Result { () throws(TokenMintError) in try referenceParse(text) }
        let new = Result { () throws(TokenMintError) in try PaymentToken.parse(text, messagePrefix: [7, 7]) }
        switch (old, new) {
        case (.success(let expected), .success(let parsed)):
            #expect(parsed.token == expected, "\(text.debugDescription)", sourceLocation: sourceLocation)
            #expect(parsed.message == [7, 7] + expected.signedMessage, "\(text.debugDescription)", sourceLocation: sourceLocation)
        case (.failure(let expected), .failure(let error)):
            #expect(error.code == expected.code, "\(text.debugDescription)", sourceLocation: sourceLocation)
        default:
            Issue.record("\(text.debugDescription): reference \(old), new \(new)", sourceLocation: sourceLocation)
        }
    }

    @Test("the byte parser accepts and refuses exactly what the String parser did, on every one-character change of real tokens")
    func parserMatchesReference() throws {
        let key = Ed25519.PrivateKey()
        let offline = PaymentToken.sign("off.card-1.123.AbCdEfGhIjKl", at: 1_763_776_800, with: key)
        let online = PaymentToken.sign("Xy9_~.-zz", at: 7, with: key)
        let padded = offline.description
        #expect(padded.hasSuffix("=="))
        let unpadded = String(padded.dropLast(2))
        var accepted = 0
        for token in [padded, unpadded, online.description] {
            for text in Self.mutations(of: token, probes: Self.probes) {
                Self.expectSameParse(text)
                if (try? Self.referenceParse(text)) != nil { accepted += 1 }
            }
        }
        // Both accepted more than the three originals (digits and letters changed in place).
        #expect(accepted > 100)
        let signature = String(unpadded.split(separator: "/").last ?? "")
        let edges: [String] = [
            "", "02", "02///", "02/a/0/",
            "02/a/1/" + String(repeating: "A", count: 86),
            "02/a/1/" + String(repeating: "A", count: 85) + "=",
            "02/a/000000000001/" + signature,
            "02/a/999999999999/" + signature,
            "02/a/1/" + signature + "=",
            "02/a/1/" + String(repeating: "A", count: 84) + "====",
            "02/" + String(repeating: "a", count: 256) + "/1/" + signature,
            "02/" + String(repeating: "a", count: 257) + "/1/" + signature,
            "02/" + String(repeating: "a", count: 420) + "/1/" + signature,
        ]
        for text in edges { Self.expectSameParse(text) }
    }

    @Test("the byte reading of the unsigned part gives the same kind, counter and refusals as the String one")
    func kindMatchesReference() {
        var offline = 0
        for base in ["off.card-1.123.AbCd", "off.A.1.x", "abc.def", "OFF.card.1.x", "off", "on.x.1.y"] {
            // What a parsed token can carry: its unsigned part is ASCII token
            // characters (the String code split "." + a combining mark as one
            // character; no token reaches the verifier with one).
            let texts = Self.mutations(of: base, probes: Self.probes + ["", "00", "123456789012345678", "1234567890123456789"])
            for text in texts where text.utf8.allSatisfy(WhitelabelPayFormat.isTokenCharacter) || text.isEmpty {
                let old = Result { () throws(TokenMintError) in try Self.referenceKind(text) }
                let new = Result { () throws(TokenMintError) in try PaymentTokenVerifier.kind(of: text) }
                switch (old, new) {
                case (.success(let expected), .success(let kind)):
                    #expect(kind == expected, "\(text.debugDescription)")
                    if case .offline = kind { offline += 1 }
                case (.failure(let expected), .failure(let error)):
                    #expect(error.code == expected.code, "\(text.debugDescription)")
                default:
                    Issue.record("\(text.debugDescription): reference \(old), new \(new)")
                }
            }
        }
        #expect(offline > 50)
    }

    @Test("the ledger identifier and slot are the same bytes as before the rewrite (stored ledgers stay valid)")
    func identifiersUnchanged() throws {
        let key = Ed25519.PrivateKey()
        let enrolment = EnrolmentToken(tenant: "t", publicKey: key.publicKey, referenceID: "r")
        let token = PaymentToken.sign("off.card-1.42.AbCd", at: 1_763_776_800, with: key)
        let verifier = try PaymentTokenVerifier(store: InMemoryStore(), lifetime: 86_400, clock: WhitelabelPayClock { 1_763_776_801 })
        let (verified, identifier) = try verifier.check(token.description, enrolment: enrolment)
        #expect(verified.token == token)
        #expect(identifier == HashFunction.sha256.hash(key.publicKey.rawRepresentation + token.signedMessage))
        let slot = PaymentTokenVerifier.slot(enrolment, "off", "42")
        #expect(slot == HashFunction.sha256.hash(Array("tokenmint.pay.slot.v1\u{0}".utf8) + key.publicKey.rawRepresentation + Array("off\u{0}42".utf8)))
    }
}
