public import TokenMintCore
import TokenMintCrypto

/// A JWT claims set (RFC 7519 §4): the registered claims typed, everything
/// else in ``additional``.
public struct JWTClaims: Sendable, Hashable {
    /// `iss`.
    public var issuer: String?
    /// `sub`.
    public var subject: String?
    /// `aud`: one or more audiences.
    public var audience: [String]? {
        get {
            switch audiences {
            case .none: nil
            case .one(let name): [name]
            case .many(let names): names
            }
        }
        set { audiences = newValue.map { $0.count == 1 ? .one($0[0]) : .many($0) } }
    }
    /// `aud` as stored: one audience needs no array (a verified token's
    /// claims allocate one less), and a one-element list is always `.one`,
    /// so equal audiences compare equal.
    private var audiences: Audiences?

    enum Audiences: Hashable, Sendable {
        case one(String)
        case many([String])
    }

    /// Whether `aud` names `name` (no array made).
    func audienceIncludes(_ name: String) -> Bool {
        switch audiences {
        case .none: false
        case .one(let one): one == name
        case .many(let names): names.contains(name)
        }
    }
    /// Write `aud` as an array even when it holds one audience.
    public var audienceAsArray = false
    /// `exp`, seconds since the epoch.
    public var expiration: Int64?
    /// `nbf`, seconds since the epoch.
    public var notBefore: Int64?
    /// `iat`, seconds since the epoch.
    public var issuedAt: Int64?
    /// `jti`.
    public var jwtID: String?
    /// `azp` (OpenID Connect Core §2): the party the token was issued to.
    public var authorizedParty: String?
    /// Every other claim, in order.
    public var additional = JSONObject()

    /// The claims this type holds in its own properties.
    enum Registered: Int {
        case iss, sub, aud, exp, nbf, iat, jti, azp

        /// The registered claim a name's UTF-8 bytes spell, compared byte for
        /// byte (as JSON member names are), from its three bytes packed in
        /// one integer.
        init?(bytes: UnsafeBufferPointer<UInt8>) {
            guard bytes.count == 3 else { return nil }
            switch UInt32(bytes[0]) << 16 | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) {
            case 0x69_7373: self = .iss
            case 0x73_7562: self = .sub
            case 0x61_7564: self = .aud
            case 0x65_7870: self = .exp
            case 0x6E_6266: self = .nbf
            case 0x69_6174: self = .iat
            case 0x6A_7469: self = .jti
            case 0x61_7A70: self = .azp
            default: return nil
            }
        }

        /// The registered claim `name` is.
        init?(_ name: String) {
            guard name.utf8.count == 3 else { return nil }
            guard let claim = name.utf8.withContiguousStorageIfAvailable({ Registered(bytes: $0) })
                ?? Array(name.utf8).withUnsafeBufferPointer({ Registered(bytes: $0) })
            else { return nil }
            self = claim
        }
    }

    /// Whether `name` is one of the claims this type holds in its own properties.
    static func isRegistered(_ name: String) -> Bool {
        Registered(name) != nil
    }

    /// A claims set.
    public init(
        issuer: String? = nil, subject: String? = nil, audience: [String]? = nil, expiration: Int64? = nil,
        notBefore: Int64? = nil, issuedAt: Int64? = nil, jwtID: String? = nil, authorizedParty: String? = nil,
        additional: JSONObject = JSONObject()
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.expiration = expiration
        self.notBefore = notBefore
        self.issuedAt = issuedAt
        self.jwtID = jwtID
        self.authorizedParty = authorizedParty
        self.additional = additional
    }

    /// Any claim by name, registered or not.
    public subscript(name: String) -> JSONValue? {
        switch name {
        case "iss": issuer.map { .string($0) }
        case "sub": subject.map { .string($0) }
        case "aud": audience.map { $0.count == 1 && !audienceAsArray ? .string($0[0]) : .array($0.map { .string($0) }) }
        case "exp": expiration.map { .number(String($0)) }
        case "nbf": notBefore.map { .number(String($0)) }
        case "iat": issuedAt.map { .number(String($0)) }
        case "jti": jwtID.map { .string($0) }
        case "azp": authorizedParty.map { .string($0) }
        default: additional[name]
        }
    }

    /// Reads a claims set, type-checking the registered claims: strings are
    /// strings, `aud` a string or an array of strings, dates numbers
    /// (fractions are truncated to whole seconds).
    public init(object: consuming JSONObject) throws(TokenMintError) {
        // Registered claims are typed; the rest stay in order, in the
        // object's own storage when it is not shared. (A JWT's payload takes
        // the faster ``init(json:limits:)``.)
        var rest = object.takeMembers()
        for member in rest {
            if let claim = Registered(member.name) { try take(claim, member.value) }
        }
        rest.removeAll { JWTClaims.isRegistered($0.name) }
        // The parser has already refused duplicate names.
        additional = JSONObject(uniqueMembers: rest)
    }

    /// Reads a claims set straight from its JSON (a JWT's payload): the
    /// registered claims go into their properties as they are parsed, never
    /// into a member array, and the others into ``additional``. The same
    /// rules as ``init(object:)`` after a strict parse; a JSON error is
    /// `.jose.invalidJSON` and comes before any claim's type error.
    init(json: UnsafeRawBufferPointer, limits: JSONParser.Limits) throws(TokenMintError) {
        var claims = JWTClaims()
        var failure: TokenMintError?
        let rest: JSONObject?
        do {
            rest = try JSONParser.parseObject(json, limits: limits, recognising: { Registered(bytes: $0)?.rawValue }) { id, value in
                guard failure == nil, let claim = Registered(rawValue: id) else { return }
                do throws(TokenMintError) { try claims.take(claim, value) } catch { failure = error }
            }
        } catch {
            throw TokenMintError(.jose.invalidJSON, "claims: \(error)", underlying: error)
        }
        guard let rest else { throw TokenMintError.claim("the JWT payload is not a JSON object") }
        if let failure { throw failure }
        claims.additional = rest
        self = claims
    }

    /// Sets the registered claim `claim` from `value`, type-checked.
    private mutating func take(_ claim: Registered, _ value: JSONValue) throws(TokenMintError) {
        func string(_ name: String) throws(TokenMintError) -> String {
            guard case .string(let text) = value else { throw .claim("\"\(name)\" must be a string") }
            return text
        }
        func date(_ name: String) throws(TokenMintError) -> Int64 {
            if let integer = value.int64Value { return integer }
            guard let double = value.doubleValue, double.isFinite, let seconds = Int64(exactly: double.rounded(.down)) else {
                throw .claim("\"\(name)\" must be a NumericDate (a number of seconds)")
            }
            return seconds
        }
        switch claim {
        case .iss: issuer = try string("iss")
        case .sub: subject = try string("sub")
        case .jti: jwtID = try string("jti")
        case .azp: authorizedParty = try string("azp")
        case .exp: expiration = try date("exp")
        case .nbf: notBefore = try date("nbf")
        case .iat: issuedAt = try date("iat")
        case .aud:
            switch value {
            case .string(let one): audiences = .one(one)
            case .array(let many):
                var list: [String] = []
                list.reserveCapacity(many.count)
                for item in many {
                    guard case .string(let text) = item else { throw .claim("\"aud\" entries must be strings") }
                    list.append(text)
                }
                audience = list
                audienceAsArray = true
            default: throw .claim("\"aud\" must be a string or an array of strings")
            }
        }
    }

    /// Whether the claim `name` is present.
    public func contains(_ name: String) -> Bool {
        switch name {
        case "iss": issuer != nil
        case "sub": subject != nil
        case "aud": audiences != nil
        case "exp": expiration != nil
        case "nbf": notBefore != nil
        case "iat": issuedAt != nil
        case "jti": jwtID != nil
        case "azp": authorizedParty != nil
        default: additional[name] != nil
        }
    }

    /// Writes the claims as compact JSON: registered claims first, then the rest.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        if let issuer { writer.member("iss", issuer) }
        if let subject { writer.member("sub", subject) }
        switch audiences {
        case .none:
            break
        case .one(let one) where !audienceAsArray:
            writer.member("aud", one)
        case .one(let one):
            writer.key("aud")
            writer.beginArray()
            writer.string(one)
            writer.endArray()
        case .many(let names):
            writer.key("aud")
            writer.beginArray()
            for item in names { writer.string(item) }
            writer.endArray()
        }
        if let expiration { writer.member("exp", expiration) }
        if let notBefore { writer.member("nbf", notBefore) }
        if let issuedAt { writer.member("iat", issuedAt) }
        if let jwtID { writer.member("jti", jwtID) }
        if let authorizedParty { writer.member("azp", authorizedParty) }
        for member in additional where !JWTClaims.isRegistered(member.name) {
            writer.member(member.name, member.value)
        }
        writer.endObject()
    }

    /// The claims as compact JSON.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        write(to: &writer)
        return writer.bytes
    }

    /// The claims as a JSON object.
    public var jsonObject: JSONObject {
        (try? JSONParser.parse(jsonBytes).objectValue) ?? JSONObject()
    }
}

extension JWTClaims {
    /// `client_id` (RFC 9068 §2.2).
    public var clientID: String? { additional["client_id"]?.stringValue }
    /// `scope` split on spaces (RFC 9068 §2.2.3, RFC 8693 §4.2).
    public var scopes: [String] {
        additional["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) } ?? []
    }

    /// The claims of an OAuth 2.0 JWT access token (RFC 9068 §2.2): iss, exp,
    /// aud, sub, client_id, iat and jti, plus `scope` and `azp` when given.
    public static func accessToken(
        issuer: String, subject: String, audience: [String], clientID: String, scopes: [String] = [],
        lifetime: Int64, now: Int64, jwtID: String? = nil, authorizedParty: String? = nil
    ) -> JWTClaims {
        var claims = JWTClaims(
            issuer: issuer, subject: subject, audience: audience, expiration: now + lifetime, issuedAt: now,
            jwtID: jwtID ?? B64.encode(SecureRandom.bytes(count: 16)), authorizedParty: authorizedParty)
        claims.additional.set("client_id", .string(clientID))
        if !scopes.isEmpty { claims.additional.set("scope", .string(scopes.joined(separator: " "))) }
        return claims
    }
}
