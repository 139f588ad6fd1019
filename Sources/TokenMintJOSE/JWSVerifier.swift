public import TokenMintCore
public import TokenMintCrypto

/// Verifies JWS against a key set, under a policy.
///
/// A verifier remembers the protected headers (and the key each selected)
/// of tokens that verified, so that the next token from the same issuer skips
/// decoding, parsing and key selection; nothing is remembered from a token
/// that failed. The key set and policy are fixed for the verifier's life.
public struct JWSVerifier: Sendable {
    /// The keys.
    public let keys: JWKSet
    /// The policy.
    public let policy: JWSPolicy
    /// The roots that anchor each token's `x5c` chain, for a verifier made
    /// with ``init(certificateRoots:at:policy:)``; nil for a key-set verifier.
    public let certificateTrust: CertificateTrust?
    private let cache = HeaderCache()

    /// What anchors the key of an `x5c` token (RFC 7515 §4.1.6).
    public struct CertificateTrust: Sendable {
        /// The root certificates.
        public let roots: [X509Certificate]
        /// The time (Unix seconds) every certificate must be valid at; nil for now.
        public let time: Int64?
        /// False only for the package-internal verifier without anchors,
        /// whose caller anchors the chain itself.
        let anchored: Bool
        /// The longest `x5c` accepted.
        public static let maximumChainLength = 8
    }

    /// A verifier over a key set.
    public init(keys: JWKSet, policy: JWSPolicy = JWSPolicy()) {
        self.keys = keys
        self.policy = policy
        self.certificateTrust = nil
    }

    /// A verifier whose key is each token's own: the leaf (first)
    /// certificate of its protected `x5c` header, taken only when the chain
    /// (the rest of `x5c` as intermediates) reaches one of `roots` under
    /// OpenSSL's path validation, every certificate valid at `time` (nil:
    /// now), and the leaf's key usage, if any, allows signing. A self-signed
    /// certificate inside `x5c` anchors nothing. As FIDO MDS3 BLOBs, Android
    /// SafetyNet answers and app-store notifications are signed.
    public init(certificateRoots roots: [X509Certificate], at time: Int64? = nil, policy: JWSPolicy = JWSPolicy()) throws(TokenMintError) {
        guard !roots.isEmpty else { throw TokenMintError(.jose.invalidConfiguration, "an x5c verifier needs at least one root") }
        self.keys = try JWKSet(keys: [])
        self.policy = policy
        self.certificateTrust = CertificateTrust(roots: roots, time: time, anchored: true)
    }

    /// A verifier that takes each token's key from its `x5c` leaf and
    /// leaves the chain to the caller, who must anchor
    /// `VerifiedJWS.certificates` itself (WebAuthn's SafetyNet attestation,
    /// whose roots and trust policy are the relying party's).
    package init(unanchoredCertificatesWith policy: JWSPolicy) throws(TokenMintError) {
        self.keys = try JWKSet(keys: [])
        self.policy = policy
        self.certificateTrust = CertificateTrust(roots: [], time: nil, anchored: false)
    }

    /// The key for `header`: from the key set, or from its trusted `x5c`.
    func key(for header: JWSHeader) throws(TokenMintError) -> (JWK, [X509Certificate]) {
        guard let trust = certificateTrust else { return (try keys.key(for: header.algorithm, keyID: header.keyID), []) }
        func untrusted(_ why: String) -> TokenMintError { TokenMintError(.jose.untrustedCertificate, why) }
        // x5c holds standard base64 DER (RFC 7515 §4.1.6), and must be signed.
        guard let chain = header.protected["x5c"]?.arrayValue, (1...CertificateTrust.maximumChainLength).contains(chain.count) else {
            throw untrusted("the protected header has no x5c of 1 to \(CertificateTrust.maximumChainLength) certificates")
        }
        var certificates: [X509Certificate] = []
        for entry in chain {
            guard let text = entry.stringValue, let der = try? Base64URL.decodeStandard(text),
                let certificate = try? X509Certificate(derRepresentation: der)
            else { throw untrusted("a certificate in x5c does not parse") }
            certificates.append(certificate)
        }
        let leaf = certificates[0]
        guard !trust.anchored || leaf.chains(to: trust.roots, through: Array(certificates.dropFirst()), at: trust.time) else {
            throw untrusted("the x5c chain does not reach a configured root (or a certificate is not valid at the time)")
        }
        guard leaf.allowsDigitalSignature else { throw untrusted("the x5c leaf's key usage does not allow signing") }
        let key: JWK
        do { key = try JWK(pem: try leaf.publicKeyPEM(), algorithm: header.algorithm) } catch {
            throw TokenMintError(.jose.untrustedCertificate, "the x5c leaf's key is not one JOSE uses: \(error.reason)", underlying: error)
        }
        do { try key.admit(header.algorithm, for: .verify) } catch {
            throw TokenMintError(.jose.untrustedCertificate, "the x5c leaf's key does not fit alg \(header.algorithm)", underlying: error)
        }
        return (key, certificates)
    }

    /// A verifier with one key.
    public init(key: JWK, policy: JWSPolicy = JWSPolicy()) throws(TokenMintError) {
        try self.init(keys: JWKSet(key), policy: policy)
    }

    /// Verifies a compact JWS. `detachedPayload` supplies the payload of a
    /// token whose payload segment is empty.
    public func verify(compact token: String, detachedPayload: [UInt8]? = nil) throws(TokenMintError) -> VerifiedJWS {
        var token = token
        return try token.withUTF8Bytes { utf8 throws(TokenMintError) in
            try verify(compact: utf8, detachedPayload: detachedPayload)
        }
    }

    /// Verifies a compact JWS given as UTF-8 bytes.
    public func verify(compact token: UnsafeRawBufferPointer, detachedPayload: [UInt8]? = nil) throws(TokenMintError) -> VerifiedJWS {
        guard token.count <= policy.maximumTokenBytes else {
            throw TokenMintError(.jose.tooLarge, "token of \(token.count) bytes exceeds the \(policy.maximumTokenBytes)-byte limit")
        }
        guard token.first != UInt8(ascii: "{") else {
            throw .malformed("a JSON-serialized JWS given where compact serialization is expected")
        }
        var first = -1
        var second = -1
        for index in token.indices where token[index] == UInt8(ascii: ".") {
            if first < 0 {
                first = index
            } else if second < 0 {
                second = index
            } else {
                throw .malformed("a compact JWS has exactly three segments")
            }
        }
        guard second > 0 else { throw .malformed("a compact JWS has exactly three segments") }
        let headerSegment = UnsafeRawBufferPointer(rebasing: token[0..<first])
        let payloadSegment = UnsafeRawBufferPointer(rebasing: token[(first + 1)..<second])
        let signatureSegment = UnsafeRawBufferPointer(rebasing: token[(second + 1)...])
        guard !headerSegment.isEmpty else { throw .malformed("empty header segment") }
        guard !signatureSegment.isEmpty else { throw TokenMintError(.jose.invalidSignature, "empty signature segment") }
        guard headerSegment.count <= (policy.maximumHeaderBytes * 4 + 2) / 3 else {
            throw TokenMintError(.jose.tooLarge, "protected header exceeds \(policy.maximumHeaderBytes) bytes")
        }

        let header: JWSHeader
        let key: JWK
        // An x5c verifier checks each token's chain afresh (it may expire), so it keeps no cache.
        let cached = certificateTrust == nil ? cache.lookup(headerSegment) : nil
        var certificates: [X509Certificate] = []
        if let cached {
            (header, key) = cached
        } else {
            header = try JWSHeader(protected: parseHeader(headerSegment), policy: policy)
            (key, certificates) = try self.key(for: header)
        }
        let payload: [UInt8]
        if let detachedPayload {
            guard payloadSegment.isEmpty else { throw .malformed("a detached payload was given but the token carries one") }
            payload = detachedPayload
        } else {
            payload = header.isPayloadBase64URLEncoded ? try B64.decode(payloadSegment, "payload") : Array(payloadSegment)
        }
        // Signatures up to 1 KiB (every algorithm but ML-DSA) are decoded on the stack.
        let valid = try B64.withDecoded(signatureSegment, "signature", stackLimit: 1024) { signature in
            guard let detachedPayload else {
                // The signing input is the token itself up to the second '.'.
                return key.isValidSignature(signature, over: UnsafeRawBufferPointer(rebasing: token[0..<second]), algorithm: header.algorithm)
            }
            var input = Array(headerSegment)
            input.append(UInt8(ascii: "."))
            if header.isPayloadBase64URLEncoded { Base64URL.encode(detachedPayload, into: &input) } else { input += detachedPayload }
            return input.withUnsafeBytes { key.isValidSignature(signature, over: $0, algorithm: header.algorithm) }
        }
        guard valid else { throw TokenMintError(.jose.invalidSignature, "the \(header.algorithm) signature does not verify") }
        if cached == nil, certificateTrust == nil { cache.insert(headerSegment, header: header, key: key) }
        return VerifiedJWS(header: header, payload: payload, key: key, certificates: certificates)
    }

    func parseHeader(_ segment: UnsafeRawBufferPointer) throws(TokenMintError) -> JSONObject {
        let json = try B64.decode(segment, "protected header")
        let value: JSONValue
        do { value = try JSONParser.parse(json, limits: policy.headerLimits) } catch {
            throw TokenMintError(.jose.invalidJSON, "protected header: \(error)", underlying: error)
        }
        guard let object = value.objectValue else { throw .header("the protected header is not a JSON object") }
        return object
    }

    /// Verifies a JWS in JSON serialization (flattened or general). For the
    /// general form, the first signature that verifies with a key of the set
    /// is returned; if none does, the last error is thrown.
    public func verify(json text: String, detachedPayload: [UInt8]? = nil) throws(TokenMintError) -> VerifiedJWS {
        guard text.utf8.count <= policy.maximumTokenBytes else {
            throw TokenMintError(.jose.tooLarge, "JWS of \(text.utf8.count) bytes exceeds the \(policy.maximumTokenBytes)-byte limit")
        }
        var limits = JSONParser.Limits()
        limits.maximumBytes = policy.maximumTokenBytes
        limits.maximumDepth = 8
        let root: JSONObject
        do {
            guard let object = try JSONParser.parse(Array(text.utf8), limits: limits).objectValue else {
                throw TokenMintError.malformed("a JSON-serialized JWS is an object")
            }
            root = object
        } catch {
            throw TokenMintError.wrap(error, as: .jose.invalidJSON, "JWS JSON serialization: \(error)")
        }
        let payloadText: String?
        switch root["payload"] {
        case .none: payloadText = nil
        case .some(.string(let text)): payloadText = text
        case .some: throw .malformed("\"payload\" must be a string")
        }
        let entries: [JSONObject]
        if let signatures = root["signatures"] {
            guard root["signature"] == nil, root["protected"] == nil, root["header"] == nil else {
                throw .malformed("a JWS cannot be both general and flattened")
            }
            guard let array = signatures.arrayValue, !array.isEmpty else { throw .malformed("\"signatures\" must be a non-empty array") }
            var objects: [JSONObject] = []
            for item in array {
                guard let object = item.objectValue else { throw .malformed("a \"signatures\" entry is not an object") }
                objects.append(object)
            }
            entries = objects
        } else {
            entries = [root]
        }
        var lastError = TokenMintError(.jose.invalidSignature, "no signature")
        for entry in entries {
            do throws(TokenMintError) {
                return try verifyEntry(entry, payloadText: payloadText, detachedPayload: detachedPayload)
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    private func verifyEntry(_ entry: JSONObject, payloadText: String?, detachedPayload: [UInt8]?) throws(TokenMintError) -> VerifiedJWS {
        let protectedText: String
        switch entry["protected"] {
        case .some(.string(let text)) where !text.isEmpty: protectedText = text
        case .none where policy.allowsUnprotectedAlgorithm: protectedText = ""
        default: throw .header("each signature needs a protected header carrying \"alg\"")
        }
        guard let signatureText = entry["signature"]?.stringValue else { throw .malformed("\"signature\" is missing") }
        var unprotected = JSONObject()
        if let header = entry["header"] {
            guard let object = header.objectValue else { throw .header("\"header\" must be an object") }
            unprotected = object
        }
        let protectedObject = protectedText.isEmpty ? JSONObject() : try Array(protectedText.utf8).withBytes { buffer throws(TokenMintError) in
            try parseHeader(buffer)
        }
        let header = try JWSHeader(protected: protectedObject, unprotected: unprotected, policy: policy)
        let signature = try Array(signatureText.utf8).withBytes { buffer throws(TokenMintError) in try B64.decode(buffer, "signature") }
        var input = Array(protectedText.utf8)
        input.append(UInt8(ascii: "."))
        let payload: [UInt8]
        if let detachedPayload {
            guard payloadText == nil || payloadText == "" else { throw .malformed("a detached payload was given but the JWS carries one") }
            payload = detachedPayload
            if header.isPayloadBase64URLEncoded { Base64URL.encode(detachedPayload, into: &input) } else { input += detachedPayload }
        } else {
            guard let payloadText else { throw .malformed("\"payload\" is missing") }
            if header.isPayloadBase64URLEncoded {
                payload = try Array(payloadText.utf8).withBytes { buffer throws(TokenMintError) in try B64.decode(buffer, "payload") }
            } else {
                payload = Array(payloadText.utf8)
            }
            input += Array(payloadText.utf8)
        }
        let (key, certificates) = try self.key(for: header)
        let valid = input.withUnsafeBytes { key.isValidSignature(signature, over: $0, algorithm: header.algorithm) }
        guard valid else { throw TokenMintError(.jose.invalidSignature, "the \(header.algorithm) signature does not verify") }
        return VerifiedJWS(header: header, payload: payload, key: key, certificates: certificates)
    }
}
