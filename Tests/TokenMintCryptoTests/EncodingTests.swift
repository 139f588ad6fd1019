import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto

/// Decodes `text` and records an issue unless it fails with `TokenMintError.invalidEncoding`.
private func expectRejected(
    _ text: String, _ padding: Base64URL.Padding, sourceLocation: SourceLocation = #_sourceLocation
) {
    expectInvalidEncoding("base64url \(text.debugDescription) (\(padding))", sourceLocation: sourceLocation) {
        try Base64URL.decode(text, padding: padding)
    }
}

/// Runs `decode` and records an issue unless it throws a `TokenMintError` with
/// code `.invalidEncoding`.
private func expectInvalidEncoding(
    _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ decode: () throws -> [UInt8]
) {
    do {
        let decoded = try decode()
        Issue.record("\(what) was accepted as \(Hex.encode(decoded)); expected invalidEncoding", sourceLocation: sourceLocation)
    } catch let error as TokenMintError {
        #expect(error.code == .crypto.invalidEncoding, "\(what): expected invalidEncoding, got \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(what): expected TokenMintError.invalidEncoding, got \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("Base64URL, Hex, ConstantTime and SecureBytes")
struct EncodingTests {
    /// RFC 4648 §10, in base64url form: (input, unpadded, padded).
    static let rfcVectors: [(String, String, String)] = [
        ("", "", ""),
        ("f", "Zg", "Zg=="),
        ("fo", "Zm8", "Zm8="),
        ("foo", "Zm9v", "Zm9v"),
        ("foob", "Zm9vYg", "Zm9vYg=="),
        ("fooba", "Zm9vYmE", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy", "Zm9vYmFy"),
    ]

    // MARK: - Base64URL: known answers

    @Test("RFC 4648 §10 vectors encode and decode, unpadded and padded")
    func rfc4648Vectors() throws {
        for (input, unpadded, padded) in Self.rfcVectors {
            let bytes = Array(input.utf8)
            #expect(Base64URL.encode(bytes) == unpadded, "encode \(input.debugDescription)")
            #expect(Base64URL.encode(bytes, padding: .none) == unpadded, "encode \(input.debugDescription) (.none)")
            #expect(Base64URL.encode(bytes, padding: .padded) == padded, "encode \(input.debugDescription) (.padded)")
            #expect(try Base64URL.decode(unpadded) == bytes, "decode \(unpadded.debugDescription)")
            #expect(try Base64URL.decode(unpadded, padding: .none) == bytes)
            #expect(try Base64URL.decode(padded, padding: .padded) == bytes, "decode \(padded.debugDescription)")
            #expect(try Base64URL.decode(unpadded, padding: .either) == bytes)
            #expect(try Base64URL.decode(padded, padding: .either) == bytes)
        }
    }

    @Test("The URL-safe alphabet: 0xfb 0xff is \"-_8\"; '+' and '/' are rejected")
    func urlSafeAlphabet() throws {
        let bytes: [UInt8] = [0xfb, 0xff]
        #expect(Base64URL.encode(bytes) == "-_8")
        #expect(Base64URL.encode(bytes, padding: .padded) == "-_8=")
        #expect(try Base64URL.decode("-_8") == bytes)
        #expect(try Base64URL.decode("-_8=", padding: .padded) == bytes)
        #expect(try Base64URL.decode("-_8", padding: .either) == bytes)
        for padding in [Base64URL.Padding.none, .either] {
            expectRejected("+/8", padding)
            expectRejected("Zm9v+/8", padding)
        }
        expectRejected("+/8=", .padded)
        expectRejected("+/8=", .either)
        expectRejected("Zm9v+/8=", .padded)

        // Every byte value: the output never contains '+', '/' or (unpadded) '='.
        let all: [UInt8] = Array(UInt8.min...UInt8.max)
        let encoded = Base64URL.encode(all)
        #expect(!encoded.contains("+") && !encoded.contains("/") && !encoded.contains("="))
        #expect(try Base64URL.decode(encoded) == all)
    }

    // MARK: - Base64URL: strict decoding

    @Test("Padding is refused in .none mode and required in .padded mode")
    func paddingModes() {
        for text in ["Zg==", "Zm8=", "Zm9vYg==", "Zm9vYmE=", "="] {
            expectRejected(text, .none)
        }
        for text in ["Zg", "Zm8", "Zm9vYg", "Zm9vYmE", "Zg=", "Zg==="] {
            expectRejected(text, .padded)
        }
    }

    @Test("Non-zero unused trailing bits are rejected (\"Zh\" is not a second spelling of \"f\")")
    func nonCanonicalTrailingBits() {
        // A lax decoder reads "Zh" as "f" (0x66) and ignores the low 4 bits of 'h';
        // likewise "Zm9" as "fo" with 2 stray bits.
        expectRejected("Zh", .none)
        expectRejected("Zh==", .padded)
        expectRejected("Zm9", .none)
        expectRejected("Zm9=", .padded)
        expectRejected("Zm9vYmF", .none)
        expectRejected("Zm9vYmF=", .padded)
    }

    @Test("A length no encoder produces is rejected")
    func impossibleLength() {
        for padding in [Base64URL.Padding.none, .padded, .either] {
            expectRejected("Zm9vY", padding)
            expectRejected("Z", padding)
        }
        expectRejected("Zm9vY===", .padded)
        expectRejected("Z===", .padded)
        expectRejected("====", .padded)
    }

    @Test("White space and line breaks anywhere are rejected")
    func whiteSpace() {
        for text in ["Zm9v YmFy", "Zm9v\nYmFy", "Zm9v\r\nYmFy", "Zm9vYmFy\n", " Zg", "\tZg", "Zg ", "Zm9v\u{0}"] {
            expectRejected(text, .none)
            expectRejected(text, .either)
        }
        expectRejected("Zg==\n", .padded)
        expectRejected("Zg==\n", .either)
        expectRejected("Zm8= Zm8=", .padded)
    }

    @Test("'=' anywhere but the end is rejected")
    func paddingInTheMiddle() {
        expectRejected("Zg==Zg==", .padded)
        expectRejected("Zm8=Zm8=", .either)
        expectRejected("Zg=Zg", .none)
        expectRejected("Zg==Zg", .either)
        expectRejected("Zm9v=Zm9", .none)
        expectRejected("Zm=vYmFy", .padded)
    }

    /// Non-ASCII input. Several of these have a plausible length and zero
    /// trailing bits, so only a character check rejects them: libsodium 1.0.18
    /// reads each input byte as a (signed) `char`, and its constant-time
    /// character classification then takes every byte 0x80...0xFF for '_' (63)
    /// where `char` is signed (x86_64 Linux, Apple platforms).
    @Test("Non-ASCII characters are rejected", arguments: [
        "Zm\u{E9}", "Zm9vYmFy\u{E9}\u{E9}", "\u{FF3A}\u{FF2D}\u{FF19}\u{FF56}", "Zm9v\u{FC}", "Zg\u{20AC}", "\u{E9}\u{E9}\u{E9}\u{E9}",
    ])
    func nonASCII(text: String) {
        expectRejected(text, .none)
        expectRejected(text, .either)
        if text.utf8.count % 4 == 0 { expectRejected(text, .padded) }
    }

    @Test(".either accepts both canonical forms and nothing else")
    func eitherMode() throws {
        #expect(try Base64URL.decode("Zm8", padding: .either) == Array("fo".utf8))
        #expect(try Base64URL.decode("Zm8=", padding: .either) == Array("fo".utf8))
        #expect(try Base64URL.decode("", padding: .either) == [])
        for text in ["Zm9", "Zm9=", "Zh", "Zh==", "Zg=", "Zg===", "Zm9vY", "Zm8==", "="] {
            expectRejected(text, .either)
        }
    }

    @Test("Round trip over random lengths 0...300, both padding modes")
    func roundTripProperty() throws {
        let lengths = [0, 1, 2, 3, 4, 5, 299, 300] + (0..<200).map { _ in Int.random(in: 0...300) }
        for length in lengths {
            let bytes = SecureRandom.bytes(count: length)
            #expect(bytes.count == length)
            let unpadded = Base64URL.encode(bytes, padding: .none)
            let padded = Base64URL.encode(bytes, padding: .padded)

            // Shape: no '=' unpadded; a multiple of 4 padded; padded = unpadded + '='s.
            #expect(!unpadded.contains("="))
            #expect(padded.utf8.count % 4 == 0)
            #expect(padded == unpadded + String(repeating: "=", count: (4 - unpadded.utf8.count % 4) % 4))
            // Independent oracle: Foundation's standard base64 with the URL-safe alphabet.
            let standard = Data(bytes).base64EncodedString()
            let converted = String(standard.map { (c: Character) -> Character in c == "+" ? "-" : (c == "/" ? "_" : c) })
            #expect(padded == converted, "length \(length): \(Hex.encode(bytes))")

            #expect(try Base64URL.decode(unpadded, padding: .none) == bytes, "length \(length)")
            #expect(try Base64URL.decode(padded, padding: .padded) == bytes, "length \(length)")
            #expect(try Base64URL.decode(unpadded, padding: .either) == bytes, "length \(length)")
            #expect(try Base64URL.decode(padded, padding: .either) == bytes, "length \(length)")
            if padded != unpadded {
                expectRejected(padded, .none)
                expectRejected(unpadded, .padded)
            }
        }
    }

    // MARK: - Hex

    @Test("Hex round trip, lowercase output, either case accepted")
    func hexRoundTrip() throws {
        let known: [UInt8] = [0x00, 0x01, 0x7f, 0x80, 0xab, 0xcd, 0xef, 0xff]
        #expect(Hex.encode(known) == "00017f80abcdefff")
        #expect(try Hex.decode("00017f80abcdefff") == known)
        #expect(try Hex.decode("00017F80ABCDEFFF") == known)
        #expect(try Hex.decode("00017f80AbCdEfFf") == known)
        #expect(try Hex.decode("DEADBEEF") == [0xde, 0xad, 0xbe, 0xef])
        #expect(Hex.encode([UInt8]()) == "")
        #expect(try Hex.decode("") == [])
        for length in [1, 2, 31, 32, 33, 100] {
            let bytes = SecureRandom.bytes(count: length)
            let text = Hex.encode(bytes)
            #expect(text.utf8.count == 2 * length)
            #expect(text == text.lowercased())
            #expect(try Hex.decode(text) == bytes)
            #expect(try Hex.decode(text.uppercased()) == bytes)
        }
    }

    @Test("Hex: odd length and non-hex characters are rejected")
    func hexRejections() {
        for text in ["0", "abc", "00112", "zz", "0g", "g0", " 00", "00 ", "0x00", "-1", "\u{E9}0", "０１", "00\n"] {
            expectInvalidEncoding("hex \(text.debugDescription)") { try Hex.decode(text) }
        }
    }

    // MARK: - ConstantTime and SecureBytes

    @Test("ConstantTime.equals: equal, unequal, different lengths")
    func constantTimeEquals() {
        let a: [UInt8] = [1, 2, 3, 4]
        let same: [UInt8] = [1, 2, 3, 4]
        let lastDiffers: [UInt8] = [1, 2, 3, 5]
        let firstDiffers: [UInt8] = [0, 2, 3, 4]
        let shorter: [UInt8] = [1, 2, 3]
        let longer: [UInt8] = [1, 2, 3, 4, 0]
        let empty: [UInt8] = []
        #expect(ConstantTime.equals(a, same))
        #expect(ConstantTime.equals(a, Data(same)))
        #expect(!ConstantTime.equals(a, lastDiffers))
        #expect(!ConstantTime.equals(a, firstDiffers))
        #expect(!ConstantTime.equals(a, shorter))
        #expect(!ConstantTime.equals(a, longer))
        #expect(!ConstantTime.equals(a, empty))
        #expect(!ConstantTime.equals(empty, a))
        #expect(ConstantTime.equals(empty, [UInt8]()))
        let raw = a.withUnsafeBytes { l in same.withUnsafeBytes { r in ConstantTime.equals(l, r) } }
        #expect(raw)
        let rawDiffers = a.withUnsafeBytes { l in lastDiffers.withUnsafeBytes { r in ConstantTime.equals(l, r) } }
        #expect(!rawDiffers)
    }

    @Test("SecureBytes: equality, and descriptions never show the bytes")
    func secureBytes() throws {
        let bytes: [UInt8] = [0xAB, 0xCD]
        let secret = SecureBytes(bytes)
        #expect(secret.count == 2)
        #expect(secret.unsafeCopy == bytes)
        #expect(secret == SecureBytes(bytes))
        #expect(secret != SecureBytes([0xAB, 0xCE] as [UInt8]))
        #expect(secret != SecureBytes([0xAB] as [UInt8]))
        #expect(secret != SecureBytes([0xAB, 0xCD, 0x00] as [UInt8]))
        #expect(SecureBytes([UInt8]()) == SecureBytes([UInt8]()))
        #expect(SecureBytes([UInt8]()).count == 0)

        let random = SecureBytes(randomCount: 32)
        #expect(random.count == 32)
        #expect(random != SecureBytes(randomCount: 32))

        let texts = [secret.description, secret.debugDescription, String(describing: secret),
                     String(reflecting: secret), "\(secret)"]
        for text in texts {
            for leak in ["ab", "AB", "cd", "CD", "171", "205", "0xab", "43981"] {
                #expect(!text.contains(leak), "\(text.debugDescription) shows \(leak)")
            }
        }
        // The same for an HMAC key, which holds SecureBytes.
        let key = try HMACKey(generatingFor: .sha256)
        #expect(!key.description.contains(Hex.encode(key.bytes.unsafeCopy)))
    }
}
