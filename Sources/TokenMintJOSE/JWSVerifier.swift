public import TokenMintCore
import TokenMintCrypto

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
    private let cache = HeaderCache()

    /// A verifier over a key set.
    public init(keys: JWKSet, policy: JWSPolicy = JWSPolicy()) {
        self.keys = keys
        self.policy = policy
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
        let cached = cache.lookup(headerSegment)
        if let cached {
            (header, key) = cached
        } else {
            header = try JWSHeader(protected: parseHeader(headerSegment), policy: policy)
            key = try keys.key(for: header.algorithm, keyID: header.keyID)
        }
        let signature = try B64.decode(signatureSegment, "signature")

        let payload: [UInt8]
        let valid: Bool
        if let detachedPayload {
            guard payloadSegment.isEmpty else { throw .malformed("a detached payload was given but the token carries one") }
            payload = detachedPayload
            var input = Array(headerSegment)
            input.append(UInt8(ascii: "."))
            if header.isPayloadBase64URLEncoded { Base64URL.encode(detachedPayload, into: &input) } else { input += detachedPayload }
            valid = input.withUnsafeBytes { key.isValidSignature(signature, over: $0, algorithm: header.algorithm) }
        } else {
            payload = header.isPayloadBase64URLEncoded ? try B64.decode(payloadSegment, "payload") : Array(payloadSegment)
            // The signing input is the token itself up to the second '.'.
            valid = key.isValidSignature(signature, over: UnsafeRawBufferPointer(rebasing: token[0..<second]), algorithm: header.algorithm)
        }
        guard valid else { throw TokenMintError(.jose.invalidSignature, "the \(header.algorithm) signature does not verify") }
        if cached == nil { cache.insert(headerSegment, header: header, key: key) }
        return VerifiedJWS(header: header, payload: payload, key: key)
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
        let key = try keys.key(for: header.algorithm, keyID: header.keyID)
        let valid = input.withUnsafeBytes { key.isValidSignature(signature, over: $0, algorithm: header.algorithm) }
        guard valid else { throw TokenMintError(.jose.invalidSignature, "the \(header.algorithm) signature does not verify") }
        return VerifiedJWS(header: header, payload: payload, key: key)
    }
}
