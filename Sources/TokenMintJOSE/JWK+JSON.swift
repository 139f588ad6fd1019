public import TokenMintCore
public import TokenMintCrypto
import TokenMintMLDSA

extension JWK {
    /// The limits for parsing a single JWK.
    static let jsonLimits: JSONParser.Limits = {
        var limits = JSONParser.Limits()
        limits.maximumBytes = 64 * 1024
        limits.maximumDepth = 4
        limits.maximumMembers = 64
        return limits
    }()

    /// Parses a JWK from JSON text.
    public init(json: String) throws(TokenMintError) {
        try self.init(jsonBytes: Array(json.utf8))
    }

    /// Parses a JWK from UTF-8 JSON.
    public init(jsonBytes: [UInt8]) throws(TokenMintError) {
        let value: JSONValue
        do { value = try JSONParser.parse(jsonBytes, limits: JWK.jsonLimits) } catch {
            throw TokenMintError(.jose.invalidJSON, "JWK: \(error)", underlying: error)
        }
        guard let object = value.objectValue else { throw .key("a JWK must be a JSON object") }
        try self.init(object: object)
    }

    /// Builds a JWK from a parsed JSON object (RFC 7517 §4; unknown members are ignored).
    public init(object: JSONObject) throws(TokenMintError) {
        let members = JWKMembers(object: object)
        let common = try JWK.commonMembers(members)
        let material: Material
        do {
            material = try JWK.keyMaterial(common.keyType, members, algorithm: common.algorithm)
        } catch {
            throw TokenMintError.wrap(error, as: .jose.invalidKey, "invalid \(common.kty) key: \(error.reason)")
        }
        self.init(material: material, keyID: common.keyID, algorithm: common.algorithm, use: common.use, keyOperations: common.operations)
    }

    /// `kty`, `kid`, `alg`, `use` and `key_ops` (RFC 7517 §4.1–4.5), checked in that order.
    private static func commonMembers(_ members: JWKMembers) throws(TokenMintError) -> JWKCommonMembers {
        let kty = try members.required("kty")
        guard let keyType = KeyType(rawValue: kty) else { throw .key("unsupported kty \"\(kty)\"") }
        let keyID = try members.string("kid")
        let alg = try members.string("alg")
        let use = try members.string("use")
        let ops = try parseKeyOperations(members.object["key_ops"])
        if let use, let ops, use == "sig", ops.contains(where: { $0 != "sign" && $0 != "verify" }) {
            throw .key("\"use\" and \"key_ops\" disagree")  // RFC 7517 §4.3
        }
        if let use, let ops, use == "enc", ops.contains(where: { $0 == "sign" || $0 == "verify" }) {
            throw .key("\"use\" and \"key_ops\" disagree")
        }
        return JWKCommonMembers(kty: kty, keyType: keyType, keyID: keyID, algorithm: alg, use: use, operations: ops)
    }

    /// `key_ops`: absent, or a non-empty array of distinct strings.
    private static func parseKeyOperations(_ value: JSONValue?) throws(TokenMintError) -> [String]? {
        guard let value else { return nil }
        guard let array = value.arrayValue, !array.isEmpty else { throw .key("\"key_ops\" must be a non-empty array") }
        var seen: [String] = []
        for item in array {
            guard let op = item.stringValue, !seen.contains(op) else {
                throw .key("\"key_ops\" must hold distinct strings")
            }
            seen.append(op)
        }
        return seen
    }

    /// The key material of a `keyType` key; the caller wraps what fails as `invalidKey`.
    private static func keyMaterial(_ keyType: KeyType, _ members: JWKMembers, algorithm: String?) throws(TokenMintError) -> Material {
        switch keyType {
        case .akp: return try akpMaterial(members, algorithm: algorithm)
        case .oct: return try octMaterial(members)
        case .okp: return try okpMaterial(members)
        case .ec: return try ecMaterial(members)
        case .rsa: return try rsaMaterial(members)
        }
    }

    /// An `oct` key (RFC 7518 §6.4): 1 byte to 64 KiB.
    private static func octMaterial(_ members: JWKMembers) throws(TokenMintError) -> Material {
        let k = try members.requiredBytes("k")
        guard !k.isEmpty else { throw TokenMintError.key("empty oct key") }
        guard k.count <= 1 << 16 else { throw TokenMintError.key("oct key longer than 64 KiB") }
        return .secret(HMACSecret(SecureBytes(k)))
    }

    /// An `OKP` key (RFC 8037): Ed25519, Ed448 or X25519; a private `d` must match `x`.
    private static func okpMaterial(_ members: JWKMembers) throws(TokenMintError) -> Material {
        let crv = try members.required("crv")
        if crv == "X25519" {
            let publicKey = try X25519.PublicKey(rawRepresentation: try members.requiredBytes("x"))
            guard let d = try members.bytes("d") else { return .x25519Public(publicKey) }
            let privateKey = try X25519.PrivateKey(rawRepresentation: SecureBytes(d))
            guard privateKey.publicKey == publicKey else { throw TokenMintError.key("OKP \"d\" does not match \"x\"") }
            return .x25519Private(privateKey)
        }
        if crv == "Ed448" {
            let publicKey = try Ed448.PublicKey(rawRepresentation: try members.requiredBytes("x"))
            guard let d = try members.bytes("d") else { return .ed448Public(publicKey) }
            let privateKey = try Ed448.PrivateKey(rawRepresentation: SecureBytes(d))
            guard privateKey.publicKey == publicKey else { throw TokenMintError.key("OKP \"d\" does not match \"x\"") }
            return .ed448Private(privateKey)
        }
        guard crv == "Ed25519" else { throw TokenMintError.key("unsupported OKP curve \"\(crv)\"") }
        let x = try members.requiredBytes("x")
        let publicKey = try Ed25519.PublicKey(rawRepresentation: x)
        guard let d = try members.bytes("d") else { return .ed25519Public(publicKey) }
        let privateKey = try Ed25519.PrivateKey(rawRepresentation: d)
        guard privateKey.publicKey == publicKey else { throw TokenMintError.key("OKP \"d\" does not match \"x\"") }
        return .ed25519Private(privateKey)
    }

    /// An `AKP` key (RFC 9964): `alg` names the ML-DSA parameter set, `pub`
    /// is the FIPS 204 public key and a private `priv` is the 32-byte seed,
    /// which must give `pub`.
    private static func akpMaterial(_ members: JWKMembers, algorithm: String?) throws(TokenMintError) -> Material {
        guard let algorithm else { throw TokenMintError.key("an AKP key needs \"alg\" (RFC 9964)") }
        guard let set = MLDSA.ParameterSet(rawValue: algorithm) else { throw TokenMintError.key("unsupported AKP algorithm \"\(algorithm)\"") }
        let publicKey = try MLDSA.PublicKey(rawRepresentation: try members.requiredBytes("pub"), parameterSet: set)
        guard let seed = try members.bytes("priv") else { return .mlDSAPublic(publicKey) }
        let privateKey = try MLDSA.PrivateKey(seedRepresentation: SecureBytes(seed), parameterSet: set)
        guard privateKey.publicKey == publicKey else { throw TokenMintError.key("AKP \"priv\" does not give \"pub\"") }
        return .mlDSAPrivate(privateKey)
    }

    /// An `EC` key (RFC 7518 §6.2): P-256, P-384, P-521 or secp256k1 (RFC 8812); a private `d` must match `x`, `y`.
    private static func ecMaterial(_ members: JWKMembers) throws(TokenMintError) -> Material {
        let crv = try members.required("crv")
        let curve: ECDSA.Curve
        switch crv {
        case "P-256": curve = .p256
        case "P-384": curve = .p384
        case "P-521": curve = .p521
        case "secp256k1": curve = .secp256k1
        default: throw TokenMintError.key("unsupported EC curve \"\(crv)\"")
        }
        // RFC 7518 §6.2.1.2–3: coordinates are exactly the field size.
        let publicKey = try ECDSA.PublicKey(x: members.requiredBytes("x"), y: members.requiredBytes("y"), curve: curve)
        guard let d = try members.bytes("d") else { return .ecPublic(publicKey) }
        let privateKey = try ECDSA.PrivateKey(rawRepresentation: d, curve: curve)
        guard privateKey.publicKey == publicKey else { throw TokenMintError.key("EC \"d\" does not match x, y") }
        return .ecPrivate(privateKey)
    }

    /// An `RSA` key (RFC 7518 §6.3): two primes only, minimal `n` and `e`, not ROCA-weak.
    private static func rsaMaterial(_ members: JWKMembers) throws(TokenMintError) -> Material {
        if members.object["oth"] != nil { throw TokenMintError.key("multi-prime RSA keys (\"oth\") are not supported") }
        let n = try members.requiredBytes("n")
        let e = try members.requiredBytes("e")
        // RFC 7518 §6.3.1: minimal big-endian, no leading zero octets.
        guard n.first != 0, e.first != 0 else { throw TokenMintError.key("RSA \"n\" and \"e\" must not have leading zero octets") }
        try RSAFingerprint.checkNotROCA(modulus: n)
        let publicKey = try RSA.PublicKey(modulus: n, publicExponent: e)
        guard let d = try members.bytes("d") else { return .rsaPublic(publicKey) }
        return try rsaPrivateMaterial(members, n: n, e: e, d: d, publicKey: publicKey)
    }

    /// The private part of an `RSA` key: `p` and `q` required, the CRT values optional; it must match `n`, `e`.
    private static func rsaPrivateMaterial(
        _ members: JWKMembers, n: [UInt8], e: [UInt8], d: [UInt8], publicKey: RSA.PublicKey
    ) throws(TokenMintError) -> Material {
        guard let p = try members.bytes("p"), let q = try members.bytes("q") else {
            throw TokenMintError.key("RSA private JWKs need \"p\" and \"q\"")
        }
        let crt = try [members.bytes("dp"), members.bytes("dq"), members.bytes("qi")]
        let components = RSA.Components(
            n: n, e: e, d: SecureBytes(d), p: SecureBytes(p), q: SecureBytes(q),
            dp: crt[0].map { SecureBytes($0) }, dq: crt[1].map { SecureBytes($0) },
            qi: crt[2].map { SecureBytes($0) })
        let privateKey = try RSA.PrivateKey(components: components)
        guard privateKey.publicKey == publicKey else { throw TokenMintError.key("RSA private part does not match n, e") }
        return .rsaPrivate(privateKey)
    }

    /// The JWK as a JSON object: public members always, private members only
    /// when `includingPrivate` is true and the key has them.
    public func jsonObject(includingPrivate: Bool = true) -> JSONObject {
        var object = JSONObject()
        object.set("kty", .string(keyType.rawValue))
        if let keyID { object.set("kid", .string(keyID)) }
        if let use { object.set("use", .string(use)) }
        if let keyOperations { object.set("key_ops", .array(keyOperations.map { .string($0) })) }
        if let algorithmName { object.set("alg", .string(algorithmName)) }
        for (name, value) in requiredMembers { object.set(name, .string(value)) }
        if includingPrivate {
            for (name, value) in privateMembers { object.set(name, .string(value)) }
        }
        return object
    }

    /// The JWK as compact JSON text (private members included for a private key).
    public var json: String { String(decoding: JSONWriter.encode(.object(jsonObject())), as: UTF8.self) }

    /// The public members RFC 7638 §3.2 lists for this key type, in name order.
    var requiredMembers: [(String, String)] {
        switch material {
        case .rsaPublic(let k): return [("e", B64.encode(k.publicExponent)), ("kty", "RSA"), ("n", B64.encode(k.modulus))]
        case .rsaPrivate(let k):
            return [("e", B64.encode(k.publicKey.publicExponent)), ("kty", "RSA"), ("n", B64.encode(k.publicKey.modulus))]
        case .ecPublic(let k): return [("crv", k.curve.name), ("kty", "EC"), ("x", B64.encode(k.x)), ("y", B64.encode(k.y))]
        case .ecPrivate(let k):
            let p = k.publicKey
            return [("crv", p.curve.name), ("kty", "EC"), ("x", B64.encode(p.x)), ("y", B64.encode(p.y))]
        case .ed25519Public(let k): return [("crv", "Ed25519"), ("kty", "OKP"), ("x", B64.encode(k.rawRepresentation))]
        case .ed25519Private(let k):
            return [("crv", "Ed25519"), ("kty", "OKP"), ("x", B64.encode(k.publicKey.rawRepresentation))]
        case .ed448Public(let k): return [("crv", "Ed448"), ("kty", "OKP"), ("x", B64.encode(k.rawRepresentation))]
        case .ed448Private(let k): return [("crv", "Ed448"), ("kty", "OKP"), ("x", B64.encode(k.publicKey.rawRepresentation))]
        case .x25519Public(let k): return [("crv", "X25519"), ("kty", "OKP"), ("x", B64.encode(k.rawRepresentation))]
        case .x25519Private(let k): return [("crv", "X25519"), ("kty", "OKP"), ("x", B64.encode(k.publicKey.rawRepresentation))]
        case .mlDSAPublic(let k): return [("alg", k.parameterSet.rawValue), ("kty", "AKP"), ("pub", B64.encode(k.rawRepresentation))]
        case .mlDSAPrivate(let k):
            return [("alg", k.parameterSet.rawValue), ("kty", "AKP"), ("pub", B64.encode(k.publicKey.rawRepresentation))]
        case .secret(let s): return [("k", s.bytes.withUnsafeBytes { Base64URL.encode($0) }), ("kty", "oct")]
        }
    }

    private var privateMembers: [(String, String)] {
        func b64(_ bytes: SecureBytes?) -> String? { bytes?.withUnsafeBytes { Base64URL.encode($0) } }
        switch material {
        case .rsaPrivate(let k):
            let c = k.components
            return [("d", c.d), ("p", c.p), ("q", c.q), ("dp", c.dp), ("dq", c.dq), ("qi", c.qi)]
                .compactMap { name, value in b64(value).map { (name, $0) } }
        case .ecPrivate(let k): return (try? k.rawRepresentation).flatMap(b64).map { [("d", $0)] } ?? []
        case .ed25519Private(let k): return b64(k.rawRepresentation).map { [("d", $0)] } ?? []
        case .ed448Private(let k): return b64(try? k.rawRepresentation).map { [("d", $0)] } ?? []
        case .x25519Private(let k): return b64(try? k.rawRepresentation).map { [("d", $0)] } ?? []
        case .mlDSAPrivate(let k): return b64(k.seedRepresentation).map { [("priv", $0)] } ?? []
        default: return []
        }
    }

    /// The RFC 7638 thumbprint: base64url of the hash of the required public
    /// members, in name order, with no white space. For an `oct` key it
    /// covers the secret, so it must be treated as sensitive.
    public func thumbprint(using hash: HashFunction = .sha256) -> String {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        for (name, value) in requiredMembers { writer.member(name, value) }
        writer.endObject()
        return B64.encode(hash.hash(writer.bytes))
    }

    /// The RFC 7638 thumbprint URI (RFC 9278): `urn:ietf:params:oauth:jwk-thumbprint:sha-256:…`.
    public var thumbprintURI: String { "urn:ietf:params:oauth:jwk-thumbprint:sha-256:\(thumbprint())" }
}

extension JWK {
    /// Reads a PEM key: PKCS#8, SEC1 or PKCS#1 private keys, SPKI or PKCS#1
    /// public keys. Without `algorithm`, an Ed25519 or Ed448 key takes `EdDSA`
    /// and its fully-specified name (RFC 9864), an EC key the algorithm of
    /// its curve, an RSA key RS256.
    public init(pem: String, keyID: String? = nil, algorithm: JWSAlgorithm? = nil) throws(TokenMintError) {
        let trimmed = pem.trimmingWhitespace
        let isPrivate = trimmed.hasPrefix("-----BEGIN PRIVATE KEY-----") || trimmed.hasPrefix("-----BEGIN EC PRIVATE KEY-----")
            || trimmed.hasPrefix("-----BEGIN RSA PRIVATE KEY-----")
        // Ed25519, Ed448, then EC, then RSA: each parser refuses the others' keys.
        // An Edwards key without `algorithm` is bound to its curve, not to one
        // of its names: it takes EdDSA and its RFC 9864 name, as a JWK without `alg` does.
        let edwards: JWK? = isPrivate
            ? (try? Ed25519.PrivateKey(pemRepresentation: trimmed)).map { JWK($0, keyID: keyID, algorithm: algorithm) }
            : (try? Ed25519.PublicKey(pemRepresentation: trimmed)).map { JWK($0, keyID: keyID, algorithm: algorithm) }
        if let edwards { self = edwards; return }
        let ed448: JWK? = isPrivate
            ? (try? Ed448.PrivateKey(pemRepresentation: trimmed)).map { JWK($0, keyID: keyID, algorithm: algorithm) }
            : (try? Ed448.PublicKey(pemRepresentation: trimmed)).map { JWK($0, keyID: keyID, algorithm: algorithm) }
        if let ed448 { self = ed448; return }
        if isPrivate, let key = try? ECDSA.PrivateKey(pemRepresentation: trimmed) { self = try JWK(key, keyID: keyID, algorithm: algorithm); return }
        if !isPrivate, let key = try? ECDSA.PublicKey(pemRepresentation: trimmed) { self = try JWK(key, keyID: keyID, algorithm: algorithm); return }
        let rsa: JWK? = isPrivate
            ? (try? RSA.PrivateKey(pemRepresentation: trimmed)).map { JWK($0, keyID: keyID, algorithm: algorithm ?? .RS256) }
            : (try? RSA.PublicKey(pemRepresentation: trimmed)).map { JWK($0, keyID: keyID, algorithm: algorithm ?? .RS256) }
        if let rsa { self = rsa; return }
        throw .key("not a PEM key TokenMint can use as a JWK")
    }

    /// The key as PEM: PKCS#8 for private keys, SPKI for public keys. `oct` keys have no PEM form.
    public func pemRepresentation() throws(TokenMintError) -> String {
        let result: Result<String, TokenMintError>
        switch material {
        case .rsaPublic(let k): result = Result { () throws(TokenMintError) in try k.pemRepresentation }
        case .rsaPrivate(let k): result = Result { () throws(TokenMintError) in try k.pemRepresentation }
        case .ecPublic(let k): result = Result { () throws(TokenMintError) in try k.pemRepresentation }
        case .ecPrivate(let k): result = Result { () throws(TokenMintError) in try k.pemRepresentation }
        case .ed25519Public(let k): result = Result { () throws(TokenMintError) in try k.pemRepresentation }
        case .ed25519Private(let k): result = Result { () throws(TokenMintError) in try k.pemRepresentation }
        case .ed448Public(let k): result = Result { () throws(TokenMintError) in try k.pemRepresentation }
        case .ed448Private(let k): result = Result { () throws(TokenMintError) in try k.pemRepresentation }
        case .x25519Public, .x25519Private: throw .key("X25519 JWKs are not written as PEM here")
        case .mlDSAPublic, .mlDSAPrivate: throw .key("ML-DSA JWKs are not written as PEM here")
        case .secret: throw .key("an oct key has no PEM form")
        }
        do throws(TokenMintError) { return try result.get() } catch {
            throw .key("cannot encode the key as PEM: \(error.reason)")
        }
    }
}

extension String {
    var trimmingWhitespace: String {
        let bytes = Array(utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }), let end = bytes.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(decoding: bytes[start...end], as: UTF8.self)
    }
}

/// A JWK's members, each read with the checks every member gets.
private struct JWKMembers {
    let object: JSONObject

    /// A string member, or nil when absent.
    func string(_ name: String) throws(TokenMintError) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value.stringValue else { throw .key("\"\(name)\" must be a string") }
        return text
    }

    /// A string member that must be present.
    func required(_ name: String) throws(TokenMintError) -> String {
        guard let text = try string(name) else { throw .key("\"\(name)\" is missing") }
        return text
    }

    /// A base64url member, or nil when absent.
    func bytes(_ name: String) throws(TokenMintError) -> [UInt8]? {
        guard let text = try string(name) else { return nil }
        return try B64.decode(text, "JWK member \"\(name)\"")
    }

    /// A base64url member that must be present.
    func requiredBytes(_ name: String) throws(TokenMintError) -> [UInt8] {
        guard let value = try bytes(name) else { throw .key("\"\(name)\" is missing") }
        return value
    }
}

/// The members every JWK has or may have, whatever its key type.
private struct JWKCommonMembers {
    let kty: String
    let keyType: JWK.KeyType
    let keyID: String?
    let algorithm: String?
    let use: String?
    let operations: [String]?
}
