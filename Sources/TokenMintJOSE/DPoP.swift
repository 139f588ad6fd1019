public import TokenMintCore
import TokenMintCrypto
import Foundation

/// DPoP (RFC 9449): proofs that the sender of a request holds the private
/// key an access token is bound to. A client mints one proof per request
/// with ``proof(key:algorithm:method:url:accessToken:nonce:issuedAt:)``; a server checks
/// it with ``DPoPVerifier``.
public enum DPoP {
    /// The proof's `typ`.
    public static let type = "dpop+jwt"

    /// A proof for `method` and `url` signed with `key` (private and
    /// asymmetric), its public half in the header's `jwk`: claims `jti` (128
    /// random bits), `htm`, `htu` (without query or fragment), `iat`, and,
    /// for a request carrying an access token, `ath`; `nonce` when the server
    /// gave one.
    public static func proof(
        key: JWK, algorithm: JWSAlgorithm? = nil, method: String, url: String, accessToken: String? = nil, nonce: String? = nil,
        issuedAt: Int64? = nil
    ) throws(TokenMintError) -> String {
        let issuedAt = issuedAt ?? Int64(Date().timeIntervalSince1970)
        guard key.keyType != .oct, let publicKey = key.publicKey else { throw TokenMintError(.jose.invalidKey, "a DPoP key is an asymmetric private key") }
        var unnamed = key
        unnamed.keyID = nil  // the key travels in the header; no kid
        let signer = try JWSSigner(key: unnamed, algorithm: algorithm)
        var claims = JSONObject([
            ("jti", .string(Base64URL.encode(SecureRandom.bytes(count: 16)))), ("htm", .string(method)),
            ("htu", .string(try normalizedURL(url))), ("iat", .number(issuedAt)),
        ])
        if let accessToken { claims.set("ath", .string(accessTokenHash(accessToken))) }
        if let nonce { claims.set("nonce", .string(nonce)) }
        var fields = JWSHeaderFields(type: type)
        fields.additional.set("jwk", .object(publicKey.jsonObject(includingPrivate: false).removing("kid", "alg", "use", "key_ops")))
        return try signer.sign(JSONWriter.encode(.object(claims)), header: fields)
    }

    /// `ath`: base64url(SHA-256(access token)).
    public static func accessTokenHash(_ accessToken: String) -> String { Base64URL.encode(HashFunction.sha256.hash(Array(accessToken.utf8))) }

    /// `htu` as compared (RFC 9449 §4.3, RFC 3986 §6.2.2–6.2.3): scheme and
    /// host in lower case, the default port dropped, percent-encodings of
    /// unreserved characters decoded and the others in upper case, dot
    /// segments removed, no query or fragment.
    public static func normalizedURL(_ url: String) throws(TokenMintError) -> String {
        guard url.utf8.count <= 4096, var components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host, !host.isEmpty
        else { throw TokenMintError(.jose.invalidClaim, "htu is not an http(s) URL") }
        components.scheme = scheme
        components.host = host.lowercased()
        if (scheme == "https" && components.port == 443) || (scheme == "http" && components.port == 80) { components.port = nil }
        components.query = nil
        components.fragment = nil
        let path = removingDotSegments(normalizingPercentEncoding(components.percentEncodedPath))
        components.percentEncodedPath = path.isEmpty ? "/" : path
        guard let normalized = components.string else { throw TokenMintError(.jose.invalidClaim, "htu is not a URL") }
        return normalized
    }

    /// RFC 3986 §6.2.2.1–2: `%7e` → `~`, `%2f` → `%2F`.
    static func normalizingPercentEncoding(_ path: String) -> String {
        let bytes = Array(path.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case 0x30...0x39: b - 0x30
            case 0x41...0x46: b - 0x41 + 10
            case 0x61...0x66: b - 0x61 + 10
            default: nil
            }
        }
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x25, i + 2 < bytes.count, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) {
                let value = high << 4 | low
                let unreserved = (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) || (0x30...0x39).contains(value)
                    || value == 0x2D || value == 0x2E || value == 0x5F || value == 0x7E
                if unreserved { out.append(value) } else { out += Array(String(format: "%%%02X", value).utf8) }
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 §5.2.4: `/a/./b/../c` → `/a/c`.
    static func removingDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            let last = index == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        let joined = output.joined(separator: "/")
        return path.hasPrefix("/") && !joined.hasPrefix("/") ? "/" + joined : joined
    }
}

extension JSONObject {
    /// The object without the members named.
    func removing(_ names: String...) -> JSONObject {
        JSONObject(members.filter { !names.contains($0.name) }.map { ($0.name, $0.value) })
    }
}

/// A checked DPoP proof.
public struct VerifiedDPoPProof: Sendable {
    /// The proof key's RFC 7638 thumbprint (SHA-256): what `cnf.jkt` binds a token to.
    public let thumbprint: String
    /// The proof key.
    public let key: JWK
    /// `jti`.
    public let identifier: String
    /// `iat`.
    public let issuedAt: Int64
}

/// A server's DPoP proof check (RFC 9449 §4.3): `typ` dpop+jwt, an
/// asymmetric `alg` the policy allows, a public `jwk` that verifies the
/// signature, `htm` and `htu` matching the request, `iat` within the
/// window, `ath` matching the access token, the server's `nonce`, the key
/// bound to the token (`cnf.jkt`), and `jti` recorded once in a replay
/// ledger (the payment tokens' `VerifierStore.recordOnce`, or any other).
public struct DPoPVerifier: Sendable {
    /// The algorithms taken (asymmetric only).
    public var algorithms: Set<JWSAlgorithm> = [.ES256, .ES384, .ES512, .ES256K, .EdDSA, .Ed25519, .Ed448, .PS256, .PS384, .PS512, .RS256]
    /// How far `iat` may lie in the past, in seconds (1 to a day).
    public var maximumAge: Int64 = 300
    /// How far `iat` may lie in the future (clock skew), in seconds (0 to 600).
    public var leeway: Int64 = 30
    /// The largest proof taken, in bytes.
    public var maximumBytes = 8 * 1024
    /// The clock.
    public var clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    /// A verifier with the defaults.
    public init() {}

    /// Checks `proof` for a request; `replay` records the proof's identifier
    /// until it expires and returns false when it was recorded before.
    public func verify(
        _ proof: String, method: String, url: String, accessToken: String? = nil, boundThumbprint: String? = nil, nonce: String? = nil,
        replay: @Sendable ([UInt8], Int64) async throws(TokenMintError) -> Bool
    ) async throws(TokenMintError) -> VerifiedDPoPProof {
        func invalid(_ why: String) -> TokenMintError { TokenMintError(.jose.invalidClaim, "DPoP proof: \(why)") }
        guard (1...86_400).contains(maximumAge), (0...600).contains(leeway), (1...(1 << 20)).contains(maximumBytes) else {
            throw TokenMintError(.jose.invalidConfiguration, "DPoPVerifier: maximumAge 1 to 86400 s, leeway 0 to 600 s, maximumBytes 1 B to 1 MiB")
        }
        guard proof.utf8.count <= maximumBytes else { throw TokenMintError(.jose.tooLarge, "DPoP proof over \(maximumBytes) bytes") }
        let header = try UnverifiedJWT.decode(proof).header
        guard header["typ"]?.stringValue == DPoP.type else { throw TokenMintError(.jose.invalidType, "a DPoP proof's typ is dpop+jwt") }
        guard let name = header["alg"]?.stringValue, let algorithm = JWSAlgorithm(name: name), algorithms.contains(algorithm) else {
            throw TokenMintError(.jose.algorithmNotAllowed, "a DPoP proof is signed with an allowed asymmetric algorithm")
        }
        guard let jwkObject = header["jwk"]?.objectValue else { throw invalid("no jwk in the header") }
        let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
        guard !jwkObject.contains(where: { privateMembers.contains($0.name) }) else { throw invalid("the header's jwk carries private members") }
        var key = try JWK(json: String(decoding: JSONWriter.encode(.object(jwkObject)), as: UTF8.self))
        guard key.keyType != .oct, !key.isPrivate else { throw invalid("the header's jwk is not a public key") }
        key.keyID = header["kid"]?.stringValue  // a kid beside the jwk names this key, nothing else
        var policy = JWSPolicy()
        policy.algorithms = algorithms
        policy.maximumTokenBytes = maximumBytes
        policy.allowsUnencodedPayload = false
        let signed = try JWSVerifier(key: key, policy: policy).verify(compact: proof)
        // The claims are read from the verified payload.
        guard let claims = (try? JSONParser.parse(signed.payload))?.objectValue else { throw invalid("the payload is not a JSON object") }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else { throw invalid("jti is missing or over 256 bytes") }
        guard claims["htm"]?.stringValue == method else { throw invalid("htm is not the request's method") }
        guard let htu = claims["htu"]?.stringValue, try DPoP.normalizedURL(htu) == DPoP.normalizedURL(url) else { throw invalid("htu is not the request's URL") }
        guard let iat = claims["iat"]?.int64Value else { throw invalid("iat is missing") }
        let now = clock()
        let (latest, over) = now.addingReportingOverflow(leeway)
        let (earliest, under) = now.subtractingReportingOverflow(maximumAge)
        guard iat <= (over ? .max : latest) else { throw TokenMintError(.jose.issuedInFuture, "DPoP proof: iat is in the future") }
        guard iat >= (under ? .min : earliest) else { throw TokenMintError(.jose.expired, "DPoP proof: iat is too old") }
        if let accessToken {
            guard let ath = claims["ath"]?.stringValue, ConstantTime.equals(Array(ath.utf8), Array(DPoP.accessTokenHash(accessToken).utf8)) else {
                throw invalid("ath is not the access token's hash")
            }
        }
        if let nonce {
            // A distinct code: the server answers use_dpop_nonce with a fresh DPoP-Nonce (RFC 9449 §8), which clients retry on.
            guard claims["nonce"]?.stringValue == nonce else { throw TokenMintError(.jose.useDPoPNonce, "DPoP proof: use the server's nonce") }
        }
        let thumbprint = key.thumbprint()
        if let boundThumbprint {
            guard ConstantTime.equals(Array(thumbprint.utf8), Array(boundThumbprint.utf8)) else { throw invalid("the key is not the one the token is bound to (cnf.jkt)") }
        }
        // The identifier: jti under this key, so that two keys' jti never collide in a shared ledger.
        let identifier = HashFunction.sha256.hash(Array("dpop\u{0}\(thumbprint)\u{0}\(jti)".utf8))
        let (sum, overflow) = iat.addingReportingOverflow(maximumAge + leeway)  // both bounded above
        let expires = overflow ? Int64.max : sum
        guard try await replay(identifier, expires) else { throw TokenMintError(.jose.replayed, "DPoP proof: this jti was used before") }
        return VerifiedDPoPProof(thumbprint: thumbprint, key: key, identifier: jti, issuedAt: iat)
    }
}
