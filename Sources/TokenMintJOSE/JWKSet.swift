public import TokenMintCore
import TokenMintMLDSA

/// A JWK Set (RFC 7517 §5) used to verify: keys are chosen by `kid`, and the
/// chosen key must admit the token's algorithm.
///
/// A set is refused when it cannot choose without guessing: two keys with the
/// same `kid`, or secret (`oct`) keys mixed with asymmetric ones (a key
/// confusion waiting to happen). Private asymmetric keys are reduced to their
/// public halves. Keys of a `kty` TokenMint does not know are skipped, as
/// RFC 7517 §5 asks; malformed keys of a known type are an error.
public struct JWKSet: Sendable {
    /// The keys, public halves for asymmetric keys.
    public let keys: [JWK]

    /// A set of keys.
    public init(keys: [JWK]) throws(TokenMintError) {
        var reduced: [JWK] = []
        for key in keys {
            guard let verifying = key.publicKey ?? (key.keyType == .oct ? key : nil) else { continue }
            reduced.append(verifying)
        }
        let ids = reduced.compactMap(\.keyID)
        guard Set(ids).count == ids.count else {
            throw TokenMintError(.jose.ambiguousKey, "the key set has two keys with the same kid")
        }
        let secret = reduced.contains { $0.keyType == .oct }
        let asymmetric = reduced.contains { $0.keyType != .oct }
        guard !(secret && asymmetric) else {
            throw TokenMintError(.jose.ambiguousKey, "the key set mixes secret (oct) and public keys")
        }
        self.keys = reduced
    }

    /// One key.
    public init(_ key: JWK) throws(TokenMintError) { try self.init(keys: [key]) }

    /// Parses `{"keys":[…]}`.
    public init(json: String) throws(TokenMintError) {
        var limits = JSONParser.Limits()
        limits.maximumBytes = 1 << 20
        limits.maximumDepth = 5
        let value: JSONValue
        do { value = try JSONParser.parse(Array(json.utf8), limits: limits) } catch {
            throw TokenMintError(.jose.invalidJSON, "JWK Set: \(error)", underlying: error)
        }
        guard let array = value.objectValue?["keys"]?.arrayValue else {
            throw TokenMintError.key("a JWK Set is an object with a \"keys\" array")
        }
        var keys: [JWK] = []
        for item in array {
            guard let object = item.objectValue else { throw TokenMintError.key("a JWK Set member is not an object") }
            if let kty = object["kty"]?.stringValue, JWK.KeyType(rawValue: kty) == nil { continue }
            // An AKP key this build cannot use (no MLDSA trait, or an alg it
            // does not know) is skipped like an unknown kty: an issuer adding
            // an ML-DSA key must not break its set for everyone else.
            if object["kty"]?.stringValue == JWK.KeyType.akp.rawValue,
                !MLDSA.isAvailable || object["alg"]?.stringValue.flatMap(MLDSA.ParameterSet.init(rawValue:)) == nil
            { continue }
            keys.append(try JWK(object: object))
        }
        try self.init(keys: keys)
    }

    /// `{"keys":[…]}` with public members only.
    public var json: String {
        String(decoding: JSONWriter.encode(.object(JSONObject([("keys", .array(keys.map { .object($0.jsonObject(includingPrivate: false)) }))]))), as: UTF8.self)
    }

    /// The key for a token with `keyID` and `algorithm`.
    ///
    /// With a `kid`, only the key with that `kid` is considered: an unknown
    /// `kid` is an error, never a fall-back. Without one, the set must hold
    /// exactly one key that admits the algorithm.
    public func key(for algorithm: JWSAlgorithm, keyID: String?) throws(TokenMintError) -> JWK {
        if let keyID {
            guard let key = keys.first(where: { $0.keyID == keyID }) else {
                throw TokenMintError(.jose.unknownKeyID, "no key with kid \"\(keyID)\"")
            }
            try key.admit(algorithm, for: .verify)
            return key
        }
        let candidates = keys.filter { (try? $0.admit(algorithm, for: .verify)) != nil }
        switch candidates.count {
        case 1: return candidates[0]
        case 0:
            if keys.count == 1 { try keys[0].admit(algorithm, for: .verify) }
            throw TokenMintError(.jose.algorithmNotAllowed, "no key in the set admits \(algorithm)")
        default:
            throw TokenMintError(.jose.ambiguousKey, "the token has no kid and \(candidates.count) keys admit \(algorithm)")
        }
    }
}
