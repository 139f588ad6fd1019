public import TokenMintCore

/// What a JWS verifier accepts, and the size caps it checks before any crypto.
public struct JWSPolicy: Sendable {
    /// The largest token, in bytes (compact text or JSON).
    public var maximumTokenBytes = 64 * 1024
    /// The largest decoded protected header, in bytes.
    public var maximumHeaderBytes = 4 * 1024
    /// Limits for parsing the payload as JSON (JWT claims).
    public var claimsLimits: JSONParser.Limits = {
        var limits = JSONParser.Limits()
        limits.maximumBytes = 48 * 1024
        limits.maximumDepth = 16
        return limits
    }()
    /// `crit` extensions the application understands (besides `b64`).
    public var understoodCriticalHeaders: Set<String> = []
    /// When set, only these algorithms are accepted.
    public var algorithms: Set<JWSAlgorithm>? = nil
    /// Whether RFC 7797 unencoded payloads (`b64: false`) are accepted.
    public var allowsUnencodedPayload = true
    /// Whether a JSON-serialized JWS may carry `alg` in its unprotected header
    /// (RFC 7515 allows it; off by default, so that `alg` is always signed).
    public var allowsUnprotectedAlgorithm = false

    /// The defaults.
    public init() {}

    var headerLimits: JSONParser.Limits {
        var limits = JSONParser.Limits()
        limits.maximumBytes = maximumHeaderBytes
        limits.maximumDepth = 8
        limits.maximumMembers = 64
        return limits
    }
}
