public import TokenMintCore
public import TokenMintCrypto

/// Signs JWS in compact and JSON serializations with one key and algorithm.
public struct JWSSigner: Sendable {
    /// The signing key.
    public let key: JWK
    /// The algorithm.
    public let algorithm: JWSAlgorithm
    /// How ECDSA nonces are chosen (RFC 6979 deterministic on request).
    public var ecdsaNonce: ECDSA.Nonce = .random

    /// A signer. Without `algorithm`, the key's `alg` decides, or its type:
    /// ES256/384/512/256K by curve, EdDSA for Ed25519 (pass `.Ed25519` for
    /// RFC 9864's fully-specified name), RS256 for RSA, HS256 for `oct`.
    public init(key: JWK, algorithm: JWSAlgorithm? = nil) throws(TokenMintError) {
        let chosen: JWSAlgorithm
        if let algorithm {
            chosen = algorithm
        } else if let named = key.algorithm {
            chosen = named
        } else {
            switch key.keyType {
            case .ec: chosen = ["P-256": .ES256, "P-384": .ES384, "P-521": .ES512, "secp256k1": .ES256K][key.curveName ?? ""] ?? .ES256
            case .okp: chosen = .EdDSA
            case .rsa: chosen = .RS256
            case .oct: chosen = .HS256
            case .akp: chosen = .MLDSA65  // an AKP key always names its algorithm; admit checks it
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
