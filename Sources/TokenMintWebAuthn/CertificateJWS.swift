import TokenMintCore
import TokenMintCrypto

/// A compact JWS signed by the first certificate of its `x5c` header, as
/// Android SafetyNet answers and FIDO MDS3 BLOBs are: parsed strictly, the
/// signature (RS256 or ES256) verified with that certificate. The chain is
/// the caller's to anchor (``certificates``).
struct CertificateJWS {
    /// The protected header.
    let header: JSONObject
    /// The payload, a JSON object.
    let payload: JSONObject
    /// `x5c`: the signing certificate first.
    let certificates: [X509Certificate]

    /// Parses `compact` and verifies its signature with its x5c leaf; every
    /// failure is `error` with the reason.
    init(_ compact: [UInt8], maximumBytes: Int, error code: TokenMintError.Code, _ what: String) throws(TokenMintError) {
        func fail(_ why: String) -> TokenMintError { TokenMintError(code, "\(what): \(why)") }
        guard compact.count <= maximumBytes else { throw fail("the JWS is over \(maximumBytes) bytes") }
        var limits = JSONParser.Limits()
        limits.maximumBytes = maximumBytes
        limits.maximumStringBytes = maximumBytes
        limits.maximumMembers = 1 << 16
        let parts = compact.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = try? Base64URL.decode(String(decoding: parts[0], as: UTF8.self)),
            let payloadBytes = try? Base64URL.decode(String(decoding: parts[1], as: UTF8.self)),
            let signature = try? Base64URL.decode(String(decoding: parts[2], as: UTF8.self)),
            let header = (try? JSONParser.parse(headerBytes))?.objectValue,
            let payload = (try? JSONParser.parse(payloadBytes, limits: limits))?.objectValue
        else { throw fail("not a compact JWS with a JSON header and payload") }
        // x5c holds standard base64 (RFC 7515 §4.1.6).
        guard let chain = header["x5c"]?.arrayValue, (1...8).contains(chain.count) else { throw fail("the JWS header has no x5c") }
        var certificates: [X509Certificate] = []
        for entry in chain {
            guard let text = entry.stringValue,
                let der = try? Base64URL.decodeStandard(text),
                let certificate = try? X509Certificate(derRepresentation: der)
            else { throw fail("a certificate in x5c does not parse") }
            certificates.append(certificate)
        }
        let leaf = certificates[0]
        let signingInput = Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1])
        let valid: Bool
        switch header["alg"]?.stringValue {
        case "RS256":
            valid = leaf.isValidSignature(signature, for: signingInput, hash: .sha256)
        case "ES256":
            guard let raw = try? ECDSA.Signature(rawRepresentation: signature, curve: .p256) else { throw fail("an ES256 signature is 64 bytes") }
            valid = leaf.isValidSignature(raw.derRepresentation, for: signingInput, hash: .sha256)
        default:
            throw fail("the JWS alg is not RS256 or ES256")
        }
        guard valid else { throw fail("the JWS signature does not verify with its certificate") }
        self.header = header
        self.payload = payload
        self.certificates = certificates
    }
}
