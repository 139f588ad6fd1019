public import TokenMintCore
import TokenMintCrypto

/// A Selective Disclosure JWT (RFC 9901): an issuer-signed JWT whose claims
/// carry digests, the disclosures the holder chose to reveal, and an
/// optional key binding JWT, serialized as `<JWT>~<disclosure>~…~[<KB-JWT>]`.
///
/// Issue with ``SDJWTIssuer``; narrow to what a verifier needs with
/// ``presenting(_:)`` and prove the holder's key with
/// ``binding(to:algorithm:audience:nonce:issuedAt:)``; check with ``SDJWTVerifier``.
public struct SDJWT: Sendable, CustomStringConvertible {
    /// The issuer-signed JWT.
    public let issuerSignedJWT: String
    /// The disclosures, in order.
    public let disclosures: [SDJWTDisclosure]
    /// The key binding JWT, if any.
    public let keyBindingJWT: String?

    /// The largest SD-JWT read by default (1 MiB), and the most disclosures (1,024).
    public static let defaultMaximumBytes = 1 << 20
    static let maximumDisclosures = 1024

    /// The `typ` of an SD-JWT VC (SD-JWT-based Verifiable Credentials).
    public static let verifiableCredentialType = "dc+sd-jwt"
    /// The `typ` of a key binding JWT.
    public static let keyBindingType = "kb+jwt"

    /// The compact serialization.
    public var serialization: String { presentationPrefix + (keyBindingJWT ?? "") }

    /// Prints the serialization; it holds no secret of the issuer's (disclosures are what the holder shows).
    public var description: String { serialization }

    /// `<JWT>~<disclosure>~…~`: what a key binding JWT's `sd_hash` covers.
    var presentationPrefix: String {
        var text = issuerSignedJWT + "~"
        for d in disclosures { text += d.encoded + "~" }
        return text
    }

    /// An SD-JWT from its parts.
    public init(issuerSignedJWT: String, disclosures: [SDJWTDisclosure], keyBindingJWT: String? = nil) {
        self.issuerSignedJWT = issuerSignedJWT
        self.disclosures = disclosures
        self.keyBindingJWT = keyBindingJWT
    }

    /// Reads the compact serialization; every disclosure is decoded and checked for shape.
    /// - Throws: `.jose.tooLarge`, `.jose.malformed`, `.jose.invalidBase64URL`, `.jose.invalidJSON`.
    public init(parsing text: String, maximumBytes: Int = SDJWT.defaultMaximumBytes) throws(TokenMintError) {
        guard text.utf8.count <= maximumBytes else { throw TokenMintError(.jose.tooLarge, "the SD-JWT is larger than \(maximumBytes) bytes") }
        let parts = text.trimmingWhitespace.split(separator: "~", omittingEmptySubsequences: false)
        guard parts.count - 2 <= SDJWT.maximumDisclosures else { throw TokenMintError(.jose.tooLarge, "more than \(SDJWT.maximumDisclosures) disclosures") }
        guard parts.count >= 2, !parts[0].isEmpty else { throw .malformed("an SD-JWT is <JWT>~[disclosures~][KB-JWT]") }
        var disclosures: [SDJWTDisclosure] = []
        for part in parts[1..<(parts.count - 1)] {
            guard !part.isEmpty else { throw .malformed("an empty disclosure (two ~ in a row)") }
            disclosures.append(try SDJWTDisclosure(encoded: String(part)))
        }
        let last = parts[parts.count - 1]
        self.init(issuerSignedJWT: String(parts[0]), disclosures: disclosures, keyBindingJWT: last.isEmpty ? nil : String(last))
    }

    /// The issuer-signed payload, not verified: for the holder, who decides what to show.
    func unverifiedPayload() throws(TokenMintError) -> JSONObject {
        let parts = issuerSignedJWT.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("the issuer-signed JWT has 3 segments") }
        let bytes = try B64.decode(parts[1], "the issuer-signed payload")
        let value: JSONValue
        do { value = try JSONParser.parse(bytes, limits: JWSPolicy().claimsLimits) } catch {
            throw TokenMintError(.jose.invalidJSON, "SD-JWT payload: \(error.reason)", underlying: error)
        }
        guard let object = value.objectValue else { throw TokenMintError.claim("the SD-JWT payload is not a JSON object") }
        return object
    }

    /// The same SD-JWT with only the disclosures for `pointers` (RFC 6901
    /// JSON Pointers into the claims as the issuer named them) and those of
    /// the disclosable claims they lie in, and without a key binding JWT.
    /// Disclosable claims inside a named one stay hidden unless named too.
    /// - Throws: `.jose.invalidClaim` when a pointer names nothing selectively disclosable.
    public func presenting(_ pointers: [String]) throws(TokenMintError) -> SDJWT {
        let processed = try SDJWTProcessor.process(try unverifiedPayload(), disclosures: disclosures)
        var keep: Set<String> = []
        for pointer in pointers {
            guard processed.pointers.values.contains(pointer) else {
                throw TokenMintError.claim("no selectively disclosable claim at \(SafeText.escaped(pointer))")
            }
            // The claim and the disclosable claims it lies in; what lies inside it stays hidden unless named too.
            for (digest, path) in processed.pointers where path == pointer || pointer.hasPrefix(path + "/") {
                keep.insert(digest)
            }
        }
        return SDJWT(issuerSignedJWT: issuerSignedJWT, disclosures: disclosures.filter { keep.contains($0.digest) })
    }

    /// The same SD-JWT with every disclosure and no key binding JWT.
    public var withoutKeyBinding: SDJWT { SDJWT(issuerSignedJWT: issuerSignedJWT, disclosures: disclosures) }

    /// This presentation with a key binding JWT (RFC 9901 §4.3) signed by
    /// the holder's key: `typ` kb+jwt; `iat`, `aud`, `nonce` and `sd_hash`
    /// over the presentation.
    public func binding(
        to holderKey: JWK, algorithm: JWSAlgorithm? = nil, audience: String, nonce: String, issuedAt: Int64
    ) throws(TokenMintError) -> SDJWT {
        let unbound = withoutKeyBinding
        var claims = JSONObject()
        claims.set("iat", .number(issuedAt))
        claims.set("aud", .string(audience))
        claims.set("nonce", .string(nonce))
        claims.set("sd_hash", .string(SDJWTDisclosure.digest(unbound.presentationPrefix)))
        let signer = try JWTSigner(key: holderKey, algorithm: algorithm, type: SDJWT.keyBindingType)
        let kb = try signer.sign(claimsJSON: JSONWriter.encode(.object(claims)))
        return SDJWT(issuerSignedJWT: issuerSignedJWT, disclosures: disclosures, keyBindingJWT: kb)
    }
}

/// One disclosure: `[salt, name, value]` for an object member or
/// `[salt, value]` for an array element, base64url-encoded; its digest is
/// the base64url SHA-256 of that encoding.
public struct SDJWTDisclosure: Sendable, Hashable {
    /// The base64url text, exactly as issued.
    public let encoded: String
    /// The salt.
    public let salt: String
    /// The member name (nil for an array element).
    public let name: String?
    /// The disclosed value.
    public let value: JSONValue
    /// base64url(SHA-256(encoded)).
    public let digest: String

    static let limits: JSONParser.Limits = {
        var limits = JSONParser.Limits()
        limits.maximumBytes = 256 * 1024
        limits.maximumDepth = 16
        return limits
    }()

    /// Decodes and checks one disclosure.
    public init(encoded: String) throws(TokenMintError) {
        let bytes = try B64.decode(encoded, "a disclosure")
        let value: JSONValue
        do { value = try JSONParser.parse(bytes, limits: SDJWTDisclosure.limits) } catch {
            throw TokenMintError(.jose.invalidJSON, "disclosure: \(error.reason)", underlying: error)
        }
        guard let array = value.arrayValue, array.count == 2 || array.count == 3, let salt = array[0].stringValue else {
            throw .malformed("a disclosure is [salt, name, value] or [salt, value]")
        }
        var name: String? = nil
        if array.count == 3 {
            guard let n = array[1].stringValue else { throw .malformed("a disclosure's claim name must be a string") }
            guard n != "_sd", n != "...", n != "_sd_alg" else { throw .malformed("a disclosure cannot name \"\(n)\" (RFC 9901 §4.2.1)") }
            name = n
        }
        self.encoded = encoded
        self.salt = salt
        self.name = name
        self.value = array[array.count - 1]
        self.digest = SDJWTDisclosure.digest(encoded)
    }

    /// A new disclosure with a fresh 128-bit salt.
    init(name: String?, value: JSONValue) throws(TokenMintError) {
        var array: [JSONValue] = [.string(B64.encode(SecureRandom.bytes(count: 16)))]
        if let name { array.append(.string(name)) }
        array.append(value)
        try self.init(encoded: B64.encode(JSONWriter.encode(.array(array))))
    }

    static func digest(_ text: String) -> String { B64.encode(HashFunction.sha256.hash(Array(text.utf8))) }
}

/// Replaces digests with disclosed values (RFC 9901 §7.1 steps 3–5).
enum SDJWTProcessor {
    struct Result {
        var claims: JSONObject
        /// Each used disclosure's digest and the JSON Pointer of the claim it discloses.
        var pointers: [String: String]
    }

    static func process(_ payload: JSONObject, disclosures: [SDJWTDisclosure]) throws(TokenMintError) -> Result {
        if let alg = payload["_sd_alg"] {
            guard alg.stringValue == "sha-256" else { throw TokenMintError.claim("_sd_alg \(SafeText.escaped(alg.description)) is not supported (sha-256 only)") }
        }
        var byDigest: [String: SDJWTDisclosure] = [:]
        for d in disclosures {
            guard byDigest[d.digest] == nil else { throw .malformed("the same disclosure is given twice") }
            byDigest[d.digest] = d
        }
        var state = State(byDigest: byDigest)
        var claims = try state.object(payload, path: "")
        _ = claims.remove("_sd_alg")
        guard state.used.count == disclosures.count else {
            throw TokenMintError.claim("a disclosure is not referenced by the issuer-signed claims")
        }
        return Result(claims: claims, pointers: state.used)
    }

    /// Top-level claims that are never selectively disclosable: the
    /// verifier checks them on the issuer-signed payload (RFC 9901 §9.7,
    /// SD-JWT VC §3.2.2.2).
    static let alwaysSigned: Set<String> = ["iss", "exp", "nbf", "cnf", "vct", "status", "_sd_alg"]
    /// The deepest disclosures may nest (each recursion level is one Swift frame).
    static let maximumDepth = 32

    struct State {
        let byDigest: [String: SDJWTDisclosure]
        var seen: Set<String> = []
        var used: [String: String] = [:]
        var depth = 0

        mutating func claim(_ digest: JSONValue) throws(TokenMintError) -> SDJWTDisclosure? {
            guard let text = digest.stringValue else { throw TokenMintError.claim("a digest must be a string") }
            guard seen.insert(text).inserted else { throw TokenMintError.claim("a digest appears twice in the issuer-signed claims") }
            return byDigest[text]
        }

        mutating func value(_ value: JSONValue, path: String) throws(TokenMintError) -> JSONValue {
            guard value.objectValue != nil || value.arrayValue != nil else { return value }
            depth += 1
            defer { depth -= 1 }
            guard depth <= SDJWTProcessor.maximumDepth else { throw TokenMintError(.jose.tooLarge, "disclosures nest deeper than \(SDJWTProcessor.maximumDepth)") }
            if let object = value.objectValue { return .object(try self.object(object, path: path)) }
            return .array(try self.array(value.arrayValue ?? [], path: path))
        }

        mutating func object(_ object: JSONObject, path: String) throws(TokenMintError) -> JSONObject {
            var out = JSONObject()
            for member in object where member.name != "_sd" {
                if member.name == "..." { throw TokenMintError.claim("\"...\" outside an array element") }
                out.set(member.name, try value(member.value, path: path + "/" + SDJWTPointer.escape(member.name)))
            }
            guard let sd = object["_sd"] else { return out }
            guard let digests = sd.arrayValue else { throw TokenMintError.claim("_sd must be an array") }
            for digest in digests {
                guard let d = try claim(digest) else { continue }  // a decoy, or not disclosed
                guard let name = d.name else { throw TokenMintError.claim("an array element's disclosure is referenced from _sd") }
                guard out[name] == nil else { throw TokenMintError.claim("the disclosed claim \(SafeText.escaped(name)) is already present") }
                guard !path.isEmpty || !SDJWTProcessor.alwaysSigned.contains(name) else {
                    throw TokenMintError.claim("\(name) is never selectively disclosable")
                }
                let childPath = path + "/" + SDJWTPointer.escape(name)
                used[d.digest] = childPath
                out.set(name, try value(d.value, path: childPath))
            }
            return out
        }

        mutating func array(_ array: [JSONValue], path: String) throws(TokenMintError) -> [JSONValue] {
            var out: [JSONValue] = []
            for (index, element) in array.enumerated() {
                let childPath = path + "/\(index)"
                if let placeholder = element.objectValue, placeholder["..."] != nil {
                    guard placeholder.count == 1 else { throw TokenMintError.claim("an array placeholder holds \"...\" only") }
                    guard let d = try claim(placeholder["..."]!) else { continue }
                    guard d.name == nil else { throw TokenMintError.claim("an object member's disclosure is referenced from an array") }
                    used[d.digest] = childPath
                    out.append(try value(d.value, path: childPath))
                } else {
                    out.append(try value(element, path: childPath))
                }
            }
            return out
        }
    }
}

/// RFC 6901 JSON Pointer text.
enum SDJWTPointer {
    static func escape(_ name: String) -> String {
        name.replacing("~", with: "~0").replacing("/", with: "~1")
    }
}
