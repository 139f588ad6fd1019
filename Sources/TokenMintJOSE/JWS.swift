public import TokenMintCore
public import TokenMintCrypto

/// A JWS whose signature has been verified.
public struct VerifiedJWS: Sendable {
    /// The header (protected, and unprotected for JSON serialization).
    public let header: JWSHeader
    /// The payload bytes.
    public let payload: [UInt8]
    /// The key that verified the signature.
    public let key: JWK
}

/// Header members for signing, besides `alg`.
public struct JWSHeaderFields: Sendable {
    /// `kid`; defaults to the signing key's `kid`.
    public var keyID: String?
    /// `typ`, such as "JWT" or "at+jwt".
    public var type: String?
    /// `cty`.
    public var contentType: String?
    /// RFC 7797: carry the payload unencoded (`b64: false`, listed in `crit`).
    public var unencodedPayload = false
    /// Further members (must not repeat the ones above).
    public var additional = JSONObject()
    /// Further `crit` entries (their members must be in `additional`).
    public var critical: [String] = []

    /// Header fields.
    public init(keyID: String? = nil, type: String? = nil, contentType: String? = nil, unencodedPayload: Bool = false) {
        self.keyID = keyID
        self.type = type
        self.contentType = contentType
        self.unencodedPayload = unencodedPayload
    }
}

/// Signs JWS in compact and JSON serializations with one key and algorithm.
public struct JWSSigner: Sendable {
    /// The signing key.
    public let key: JWK
    /// The algorithm.
    public let algorithm: JWSAlgorithm
    /// How ECDSA nonces are chosen (RFC 6979 deterministic on request).
    public var ecdsaNonce: ECDSA.Nonce = .random

    /// A signer. Without `algorithm`, the key's `alg` decides, or its type:
    /// ES256/384/512 by curve, EdDSA for Ed25519, RS256 for RSA, HS256 for `oct`.
    public init(key: JWK, algorithm: JWSAlgorithm? = nil) throws(TokenMintError) {
        let chosen: JWSAlgorithm
        if let algorithm {
            chosen = algorithm
        } else if let named = key.algorithm {
            chosen = named
        } else {
            switch key.keyType {
            case .ec: chosen = [ "P-256": .ES256, "P-384": .ES384, "P-521": .ES512][key.curveName ?? ""] ?? .ES256
            case .okp: chosen = .EdDSA
            case .rsa: chosen = .RS256
            case .oct: chosen = .HS256
            }
        }
        try key.admit(chosen, for: .sign)
        self.key = key
        self.algorithm = chosen
    }

    /// The protected header JSON for `fields`.
    func headerJSON(_ fields: JWSHeaderFields, unprotected: JSONObject = JSONObject()) throws(TokenMintError) -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        writer.member("alg", algorithm.rawValue)
        var names: Set<String> = ["alg"]
        // The key's kid goes in the protected header unless the caller put one in the unprotected header.
        if let kid = fields.keyID ?? (unprotected["kid"] == nil ? key.keyID : nil) {
            writer.member("kid", kid)
            names.insert("kid")
        }
        if let type = fields.type {
            writer.member("typ", type)
            names.insert("typ")
        }
        if let cty = fields.contentType {
            writer.member("cty", cty)
            names.insert("cty")
        }
        var critical = fields.critical
        if fields.unencodedPayload {
            critical.insert("b64", at: 0)
            writer.member("b64", false)
            names.insert("b64")
        }
        if !critical.isEmpty {
            writer.key("crit")
            writer.value(.array(critical.map { .string($0) }))
            names.insert("crit")
        }
        for member in fields.additional {
            guard !names.contains(member.name) else { throw .header("header member \"\(member.name)\" given twice") }
            writer.member(member.name, member.value)
        }
        writer.endObject()
        return writer.bytes
    }

    /// The raw signature of a signing input built by the caller (for
    /// reproducing published examples whose headers carry their own spacing).
    public func signature(forSigningInput input: some Collection<UInt8>) throws(TokenMintError) -> [UInt8] {
        try Array(input).withBytes { buffer throws(TokenMintError) in
            try key.signature(over: buffer, algorithm: algorithm, nonce: ecdsaNonce)
        }
    }

    /// The compact serialization of `payload`. With `detached`, the payload
    /// segment is left empty (RFC 7515 appendix F) and must be supplied to verify.
    public func sign(_ payload: some Collection<UInt8>, header fields: JWSHeaderFields = JWSHeaderFields(), detached: Bool = false) throws(TokenMintError) -> String {
        let headerSegment = B64.encode(try headerJSON(fields))
        var input = Array(headerSegment.utf8)
        input.append(UInt8(ascii: "."))
        let payloadBytes = Array(payload)
        if fields.unencodedPayload {
            guard !payloadBytes.contains(UInt8(ascii: ".")) || detached else {
                throw .malformed("an unencoded compact payload cannot contain '.' unless detached (RFC 7797 §5.2)")
            }
            input += payloadBytes
        } else {
            Base64URL.encode(payloadBytes, into: &input)
        }
        let signature = try input.withBytes { buffer throws(TokenMintError) in
            try key.signature(over: buffer, algorithm: algorithm, nonce: ecdsaNonce)
        }
        if detached {
            var out = Array(headerSegment.utf8)
            out += [UInt8(ascii: "."), UInt8(ascii: ".")]
            Base64URL.encode(signature, into: &out)
            return String(decoding: out, as: UTF8.self)
        }
        input.append(UInt8(ascii: "."))
        Base64URL.encode(signature, into: &input)
        return String(decoding: input, as: UTF8.self)
    }

    /// The JSON serialization (RFC 7515 §7.2): flattened, or general with one signature.
    public func signJSON(
        _ payload: some Collection<UInt8>, header fields: JWSHeaderFields = JWSHeaderFields(),
        unprotected: JSONObject = JSONObject(), flattened: Bool = true
    ) throws(TokenMintError) -> String {
        let protectedSegment = B64.encode(try headerJSON(fields, unprotected: unprotected))
        let payloadBytes = Array(payload)
        let payloadText = fields.unencodedPayload ? String(decoding: payloadBytes, as: UTF8.self) : B64.encode(payloadBytes)
        if fields.unencodedPayload, String(decoding: payloadBytes, as: UTF8.self).utf8.elementsEqual(payloadBytes) == false {
            throw .malformed("an unencoded JSON payload must be valid UTF-8")
        }
        var input = Array(protectedSegment.utf8)
        input.append(UInt8(ascii: "."))
        input += fields.unencodedPayload ? payloadBytes : Array(payloadText.utf8)
        let signature = try input.withBytes { buffer throws(TokenMintError) in
            try key.signature(over: buffer, algorithm: algorithm, nonce: ecdsaNonce)
        }
        var entry = JSONObject()
        entry.set("protected", .string(protectedSegment))
        if unprotected.count > 0 { entry.set("header", .object(unprotected)) }
        entry.set("signature", .string(B64.encode(signature)))
        var root = JSONObject()
        root.set("payload", .string(payloadText))
        if flattened {
            for member in entry { root.set(member.name, member.value) }
        } else {
            root.set("signatures", .array([.object(entry)]))
        }
        return String(decoding: JSONWriter.encode(.object(root)), as: UTF8.self)
    }
}

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
            throw TokenMintError(.jose.invalidJSON, "protected header: \(error)")
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

/// Unsecured JWS (`alg: none`, RFC 7515 appendix A.5): a separately named API
/// so that no verifier can be talked into accepting one.
public enum UnsecuredJWS {
    /// `base64url({"alg":"none",…}).base64url(payload).` — no signature.
    public static func encode(_ payload: some Collection<UInt8>, type: String? = nil) -> String {
        var header = JSONObject()
        header.set("alg", "none")
        if let type { header.set("typ", .string(type)) }
        return B64.encode(JSONWriter.encode(.object(header))) + "." + B64.encode(Array(payload)) + "."
    }

    /// Reads an unsecured JWS: the header must say `alg: none` and the signature must be empty.
    public static func decode(_ token: String) throws(TokenMintError) -> (header: JSONObject, payload: [UInt8]) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].isEmpty else { throw .malformed("an unsecured JWS has an empty third segment") }
        let headerBytes = try B64.decode(parts[0], "header")
        guard let header = try? JSONParser.parse(headerBytes).objectValue, header["alg"] == .string("none") else {
            throw .header("not an alg \"none\" header")
        }
        return (header, try B64.decode(parts[1], "payload"))
    }
}

/// The protected headers of tokens that verified, with the key each selected.
/// Bounded; guarded by a lock, so one verifier serves many threads.
final class HeaderCache: @unchecked Sendable {
    private struct Entry {
        var segment: [UInt8]
        var header: JWSHeader
        var key: JWK
    }

    private static let capacity = 16
    private var entries: [Entry] = []
    private var next = 0
    private let lock = Lock()

    func lookup(_ segment: UnsafeRawBufferPointer) -> (JWSHeader, JWK)? {
        lock.withLock {
            for entry in entries where entry.segment.count == segment.count {
                if entry.segment.withUnsafeBytes({ $0.elementsEqual(segment) }) { return (entry.header, entry.key) }
            }
            return nil
        }
    }

    func insert(_ segment: UnsafeRawBufferPointer, header: JWSHeader, key: JWK) {
        let entry = Entry(segment: Array(segment), header: header, key: key)
        lock.withLock {
            if entries.count < HeaderCache.capacity {
                entries.append(entry)
            } else {
                entries[next] = entry
                next = (next + 1) % HeaderCache.capacity
            }
        }
    }
}
