#if HTTPClient
public import TokenMintCore
public import TokenMintJOSE
public import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A JWK Set fetched from an issuer's `jwks_uri`, for resource servers that
/// verify its tokens: cached as its Cache-Control says (bounded both ways),
/// revalidated with its ETag, fetched again for an unknown `kid` at most
/// once per ``Options/minimumRefreshInterval``, and kept when the issuer
/// fails: the last good set serves until it answers again, for at most
/// ``Options/maximumStaleness`` past the set's own lifetime, then it is
/// dropped and verification fails until the issuer answers. A set larger
/// than the limits, or not a JWK Set, is refused and the last good one kept.
/// Concurrent callers share one fetch. A published key set never verifies
/// HMAC tokens: `oct` keys in it are dropped and HS* algorithms refused.
///
/// ```swift
/// let keys = try await JWKSClient.discover(issuer: "https://login.example.com")
/// let verified = try await keys.verify(token, validation: JWTValidation(issuer: "https://login.example.com", audience: "api"))
/// ```
public actor JWKSClient {
    /// Limits and intervals.
    public struct Options: Sendable {
        /// The largest key set read, in bytes.
        public var maximumBytes = 256 * 1024
        /// The most keys a set may hold.
        public var maximumKeys = 64
        /// At most one fetch per this interval (an unknown `kid` or a failing
        /// issuer cannot make the client hammer it).
        public var minimumRefreshInterval: Duration = .seconds(30)
        /// How long a set lives when the answer says nothing (no max-age).
        public var defaultLifetime: Duration = .seconds(300)
        /// The longest a set lives, whatever max-age says.
        public var maximumLifetime: Duration = .seconds(86_400)
        /// How long a fetch may take.
        public var timeout: Duration = .seconds(10)
        /// How long past its lifetime the last good set may serve while the
        /// issuer fails (keys the issuer has revoked meanwhile stay trusted
        /// that long, at most). Every duration here is at most a year.
        public var maximumStaleness: Duration = .seconds(86_400)
        /// The defaults.
        public init() {}
    }

    /// The longest any option may be: a year.
    static let longestDuration: Duration = .seconds(366 * 86_400)

    /// The key set's address.
    public let url: String
    let client: HTTPClient
    let options: Options
    private var cached: JWKSet?
    private var entityTag: String?
    private var freshUntil = ContinuousClock.now
    /// Past this the cached set no longer serves, even while the issuer fails:
    /// its lifetime at the last answer plus ``Options/maximumStaleness``.
    private var usableUntil = ContinuousClock.now
    private var lastAttempt: ContinuousClock.Instant?
    /// The fetch under way, which every caller that needs the set awaits.
    private var inFlight: Task<Fetched, any Error>?
    /// How many requests went to the issuer (each fetch or revalidation).
    public private(set) var requests = 0

    /// A client for the key set at `url`: https, or http to a loopback host only.
    public init(url: String, client: HTTPClient = .tokenMint, options: Options = Options()) throws(TokenMintError) {
        try Self.checkAddress(url)
        guard options.maximumBytes > 0, options.maximumKeys > 0, options.minimumRefreshInterval > .zero,
            options.timeout > .zero, options.defaultLifetime >= .zero, options.maximumLifetime >= options.minimumRefreshInterval,
            options.maximumStaleness >= .zero,
            // Bounded so that instants plus them cannot overflow (a year is plenty).
            options.maximumLifetime <= Self.longestDuration, options.maximumStaleness <= Self.longestDuration,
            options.defaultLifetime <= Self.longestDuration, options.minimumRefreshInterval <= Self.longestDuration,
            options.timeout <= Self.longestDuration
        else { throw TokenMintError(.jose.invalidConfiguration, "JWKS client options out of range") }
        self.url = url
        self.client = client
        self.options = options
    }

    /// Where an issuer's metadata lives: RFC 8414 §3.1 puts the well-known
    /// segment between the host and the issuer's path
    /// (`https://a.example/.well-known/oauth-authorization-server/tenant`);
    /// OpenID Connect Discovery appends it (`…/tenant/.well-known/openid-configuration`).
    static func metadataURLs(issuer: String) -> [String] {
        let base = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        var rfc8414 = base + "/.well-known/oauth-authorization-server"
        if var components = URLComponents(string: base), !components.percentEncodedPath.isEmpty, components.percentEncodedPath != "/" {
            let path = components.percentEncodedPath
            components.percentEncodedPath = "/.well-known/oauth-authorization-server" + path
            if let url = components.string { rfc8414 = url }
        }
        return [rfc8414, base + "/.well-known/openid-configuration"]
    }

    /// The client for an issuer's keys, found through its RFC 8414
    /// metadata (`/.well-known/oauth-authorization-server`, then
    /// `/.well-known/openid-configuration`), whose `issuer` must be `issuer` exactly.
    public static func discover(issuer: String, client: HTTPClient = .tokenMint, options: Options = Options()) async throws(TokenMintError) -> JWKSClient {
        try checkAddress(issuer)
        let exchange = JSONExchange(client: client, timeout: JSONExchange.timeAmount(options.timeout))
        var problem = "no metadata"
        for url in metadataURLs(issuer: issuer) {
            let answer: (status: Int, object: JSONObject)
            do { answer = try await exchange.send(.GET, url, bearer: nil, body: nil) } catch {
                problem = "\(url): \(error)"
                continue
            }
            guard answer.status == 200 else {
                problem = "\(url) answered \(answer.status)"
                continue
            }
            guard answer.object["issuer"]?.stringValue == issuer else {
                throw TokenMintError(.jose.keySetUnavailable, "the metadata at \(SafeText.escaped(url)) is for another issuer")
            }
            guard let jwksURI = answer.object["jwks_uri"]?.stringValue else {
                throw TokenMintError(.jose.keySetUnavailable, "the metadata at \(SafeText.escaped(url)) has no jwks_uri")
            }
            // An https issuer's metadata cannot send the client to plain http (its own loopback services).
            if URLComponents(string: issuer)?.scheme == "https", URLComponents(string: jwksURI)?.scheme != "https" {
                throw TokenMintError(.jose.keySetUnavailable, "an https issuer's jwks_uri must be https")
            }
            return try JWKSClient(url: jwksURI, client: client, options: options)
        }
        throw TokenMintError(.jose.keySetUnavailable, "no authorization server metadata for \(SafeText.escaped(issuer)): \(SafeText.escaped(problem))")
    }

    static func checkAddress(_ url: String) throws(TokenMintError) {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else {
            throw TokenMintError(.jose.keySetUnavailable, "\(SafeText.escaped(url)) is not a URL")
        }
        let loopback = ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host)
        guard components.scheme == "https" || (components.scheme == "http" && loopback) else {
            throw TokenMintError(.jose.keySetUnavailable, "keys are fetched over https (plain http on loopback only): \(SafeText.escaped(url))")
        }
    }

    /// The current set: the cached one while fresh, else fetched (or
    /// revalidated) now; the last good set when the issuer fails.
    public func keySet() async throws(TokenMintError) -> JWKSet {
        let now = ContinuousClock.now
        if let cached, now < freshUntil, now < usableUntil { return cached }
        return try await refresh()
    }

    /// The last good set while it may still serve; past its bound it is dropped.
    private func lastGood(at now: ContinuousClock.Instant) -> JWKSet? {
        guard cached != nil, now >= usableUntil else { return cached }
        cached = nil
        entityTag = nil
        return nil
    }

    /// The key for a token with `algorithm` and `keyID`. An unknown `kid`
    /// fetches the set again, unless that was done less than
    /// ``Options/minimumRefreshInterval`` ago.
    public func key(for algorithm: JWSAlgorithm, keyID: String?) async throws(TokenMintError) -> JWK {
        guard algorithm.keyType != .oct else {
            throw TokenMintError(.jose.algorithmNotAllowed, "a published key set never verifies \(algorithm) (HMAC) tokens")
        }
        let set = try await keySet()
        do { return try set.key(for: algorithm, keyID: keyID) } catch where error.code == .jose.unknownKeyID {
            return try await refresh().key(for: algorithm, keyID: keyID)
        }
    }

    /// Verifies a JWT with this issuer's keys (the key chosen by the
    /// token's `kid` and `alg`, then every rule of `JWTVerifier`).
    public func verify(_ token: String, validation: JWTValidation, policy: JWSPolicy = JWSPolicy()) async throws(TokenMintError) -> VerifiedJWT {
        // The size cap and the policy's algorithms before anything is parsed or fetched.
        guard token.utf8.count <= policy.maximumTokenBytes else {
            throw TokenMintError(.jose.tooLarge, "the token is over \(policy.maximumTokenBytes) bytes")
        }
        let header = try UnverifiedJWT.decode(token).header
        guard let name = header["alg"]?.stringValue, let algorithm = JWSAlgorithm(name: name) else {
            throw TokenMintError(.jose.unsupportedAlgorithm, "the token's alg is not a supported JWS algorithm")
        }
        if let allowed = policy.algorithms, !allowed.contains(algorithm) {
            throw TokenMintError(.jose.algorithmNotAllowed, "\(algorithm) is not among the policy's algorithms")
        }
        let key = try await key(for: algorithm, keyID: header["kid"]?.stringValue)
        return try JWTVerifier(key: key, validation: validation, policy: policy).verify(token)
    }

    /// What one request brought: a new set (with its ETag), or "not modified".
    enum Fetched: Sendable {
        case modified(JWKSet, entityTag: String?, lifetime: Duration)
        case notModified(lifetime: Duration)
    }

    /// Fetches (or revalidates) the set, at most once per minimum interval;
    /// callers arriving while a fetch is under way share it.
    private func refresh() async throws(TokenMintError) -> JWKSet {
        if let running = inFlight { return try await settle(running) }
        let now = ContinuousClock.now
        if let lastAttempt, now < lastAttempt + options.minimumRefreshInterval {
            if let cached = lastGood(at: now) { return cached }
            throw TokenMintError(.jose.keySetUnavailable, "the key set at \(SafeText.escaped(url)) was not available a moment ago; not asking again yet")
        }
        lastAttempt = now
        requests += 1
        let (url, client, options, tag) = (url, client, options, cached == nil ? nil : entityTag)
        let task = Task<Fetched, any Error> { try await JWKSClient.fetch(url: url, client: client, options: options, entityTag: tag) }
        inFlight = task
        return try await settle(task)
    }

    /// The outcome of `task`, applied once (by whichever caller sees it first).
    private func settle(_ task: Task<Fetched, any Error>) async throws(TokenMintError) -> JWKSet {
        let outcome = await task.result
        if inFlight == task {
            inFlight = nil
            switch outcome {
            case .success(.modified(let set, let tag, let lifetime)):
                cached = set
                entityTag = tag
                freshUntil = ContinuousClock.now + lifetime
                usableUntil = freshUntil + options.maximumStaleness
            case .success(.notModified(let lifetime)):
                freshUntil = ContinuousClock.now + lifetime
                usableUntil = freshUntil + options.maximumStaleness
            case .failure:
                // The last good set serves on; the next attempt waits the minimum interval.
                freshUntil = ContinuousClock.now + options.minimumRefreshInterval
            }
        }
        if let cached = lastGood(at: ContinuousClock.now) { return cached }  // the new set, or the last good one
        switch outcome {
        case .failure(let error as TokenMintError): throw error
        case .failure(let error): throw TokenMintError(.jose.keySetUnavailable, "the key set at \(SafeText.escaped(url)): \(error)", underlying: error)
        case .success: throw TokenMintError(.jose.keySetUnavailable, "the key set at \(SafeText.escaped(url)) answered 304 with nothing cached")
        }
    }

    /// One GET (with If-None-Match when an ETag is known).
    static func fetch(url: String, client: HTTPClient, options: Options, entityTag: String?) async throws(TokenMintError) -> Fetched {
        func unavailable(_ why: String, _ cause: (any Error)? = nil) -> TokenMintError {
            TokenMintError(.jose.keySetUnavailable, "the key set at \(SafeText.escaped(url)): \(why)", underlying: cause)
        }
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/jwk-set+json, application/json")
        if let entityTag { request.headers.add(name: "If-None-Match", value: entityTag) }
        let status: Int
        let headers: HTTPHeaders
        let body: [UInt8]
        do {
            let response = try await client.execute(request, timeout: JSONExchange.timeAmount(options.timeout))
            status = Int(response.status.code)
            headers = response.headers
            body = status == 304 ? [] : Array(buffer: try await response.body.collect(upTo: options.maximumBytes))
        } catch { throw unavailable("no answer or an answer over \(options.maximumBytes) bytes", error) }
        let lifetime = lifetime(headers, options)
        if status == 304 {
            guard entityTag != nil else { throw unavailable("answered 304 to a request without If-None-Match") }
            return .notModified(lifetime: lifetime)
        }
        guard status == 200 else { throw unavailable("answered \(status)") }
        let parsed: JWKSet
        do { parsed = try JWKSet(json: String(decoding: body, as: UTF8.self)) } catch { throw unavailable("not a JWK Set: \(error.reason)", error) }
        guard parsed.keys.count <= options.maximumKeys else { throw unavailable("\(parsed.keys.count) keys, more than \(options.maximumKeys)") }
        // A published oct key would let anyone who reads the set forge HMAC tokens: such keys are dropped.
        let set: JWKSet
        do { set = try JWKSet(keys: parsed.keys.filter { $0.keyType != .oct }) } catch { throw unavailable("not a usable JWK Set: \(error.reason)", error) }
        return .modified(set, entityTag: headers.first(name: "ETag"), lifetime: lifetime)
    }

    /// max-age from Cache-Control, bounded by the minimum interval and the
    /// maximum lifetime; no-store or no-cache: the minimum interval.
    static func lifetime(_ headers: HTTPHeaders, _ options: Options) -> Duration {
        let directives = headers[canonicalForm: "Cache-Control"].map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
        if directives.contains("no-store") || directives.contains("no-cache") { return options.minimumRefreshInterval }
        for directive in directives where directive.hasPrefix("max-age=") {
            guard let seconds = Int64(directive.dropFirst(8)), seconds >= 0 else { continue }
            return min(max(.seconds(seconds), options.minimumRefreshInterval), options.maximumLifetime)
        }
        return options.defaultLifetime
    }
}
#endif
