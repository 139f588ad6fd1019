public import TokenMintCore

/// A verified JWS's header: the protected members, plus (JSON serialization
/// only) the unprotected ones, which never override protected members.
public struct JWSHeader: Sendable {
    /// `alg`, always from the protected header.
    public let algorithm: JWSAlgorithm
    /// The protected header members.
    public let protected: JSONObject
    /// The unprotected header members (JSON serialization), disjoint from `protected`.
    public let unprotected: JSONObject

    /// `kid`.
    public var keyID: String? { protected["kid"]?.stringValue ?? unprotected["kid"]?.stringValue }
    /// `typ` (read once, when the header is checked: a cached header serves many tokens).
    public let type: String?
    /// `cty`.
    public var contentType: String? { protected["cty"]?.stringValue }
    /// `crit`.
    public var critical: [String] { protected["crit"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    /// `b64` (RFC 7797): false when the payload is carried unencoded.
    public let isPayloadBase64URLEncoded: Bool

    /// A header member, protected first.
    public subscript(name: String) -> JSONValue? { protected[name] ?? unprotected[name] }

    /// Header names RFC 7515 §4.1 and RFC 7516 §4.1 register, which `crit` must not list.
    static let registered: Set<String> = [
        "alg", "jku", "jwk", "kid", "x5u", "x5c", "x5t", "x5t#S256", "typ", "cty", "crit",
        "enc", "zip", "epk", "apu", "apv", "iv", "tag", "p2s", "p2c",
    ]

    /// Applies RFC 7515 §4.1 and RFC 7797 to the decoded headers.
    ///
    /// `jku`, `x5u`, `jwk` and `x5c` are kept as data and never used to find
    /// or trust a key.
    init(protected: JSONObject, unprotected: JSONObject = JSONObject(), policy: JWSPolicy) throws(TokenMintError) {
        for member in unprotected where protected[member.name] != nil {
            throw .header("\"\(member.name)\" appears in both the protected and unprotected header (RFC 7515 §7.2.1)")
        }
        for name in ["crit", "b64"] where unprotected[name] != nil {
            throw .header("\"\(name)\" must be in the protected header")
        }
        if unprotected["alg"] != nil, !policy.allowsUnprotectedAlgorithm {
            throw .header("\"alg\" must be in the protected header (set allowsUnprotectedAlgorithm to accept RFC 7520 §4.7 style JWS)")
        }
        guard let algValue = protected["alg"] ?? unprotected["alg"] else { throw .header("the header has no \"alg\"") }
        guard let name = algValue.stringValue else { throw .header("\"alg\" must be a string") }
        guard let algorithm = JWSAlgorithm(name: name) else {
            if name.lowercased() == "none" {
                throw TokenMintError(.jose.unsupportedAlgorithm, "alg \"\(name)\": unsecured tokens are only read by UnsecuredJWS")
            }
            throw TokenMintError(.jose.unsupportedAlgorithm, "unknown or unsupported alg \"\(name)\"")
        }
        if let allowed = policy.algorithms, !allowed.contains(algorithm) {
            throw TokenMintError(.jose.algorithmNotAllowed, "\(algorithm) is not in this verifier's allowed algorithms")
        }
        for key in ["kid", "typ", "cty"] {
            if let value = protected[key] ?? unprotected[key], value.stringValue == nil {
                throw .header("\"\(key)\" must be a string")
            }
        }
        var critical: [String] = []
        if let value = protected["crit"] {
            guard let array = value.arrayValue, !array.isEmpty else { throw .header("\"crit\" must be a non-empty array") }
            for item in array {
                guard let entry = item.stringValue else { throw .header("\"crit\" entries must be strings") }
                guard !critical.contains(entry) else { throw .header("\"crit\" lists \"\(entry)\" twice") }
                guard !JWSHeader.registered.contains(entry) else {
                    throw .header("\"crit\" must not list the registered header \"\(entry)\"")
                }
                guard entry == "b64" || policy.understoodCriticalHeaders.contains(entry) else {
                    throw TokenMintError(.jose.unsupportedCritical, "\"crit\" names \"\(entry)\", which this verifier does not understand")
                }
                guard protected[entry] != nil else { throw .header("\"crit\" names \"\(entry)\", which is not in the header") }
                critical.append(entry)
            }
        }
        if let b64 = protected["b64"] {
            guard b64.boolValue != nil else { throw .header("\"b64\" must be a boolean") }
            guard critical.contains("b64") else { throw .header("\"b64\" must be listed in \"crit\" (RFC 7797 §6)") }
            if b64.boolValue == false, !policy.allowsUnencodedPayload {
                throw .header("unencoded payloads (b64: false) are not allowed by this verifier")
            }
        }
        self.algorithm = algorithm
        self.protected = protected
        self.unprotected = unprotected
        self.type = protected["typ"]?.stringValue
        self.isPayloadBase64URLEncoded = protected["b64"]?.boolValue ?? true
    }
}
