public import TokenMintCore
import TokenMintWebAuthn

/// What `tokenmint serve` is told on its command line.
public struct ServerConfiguration: Sendable {
    /// The address to listen on (default `127.0.0.1`: loopback only).
    public var host: String
    /// The port (0 picks a free one; the server reports it when listening).
    public var port: Int
    /// The directory of the server's SQLite store and master key (created 0700).
    public var stateDirectory: String
    /// The issuer URL of the OAuth server and the audience of device JWTs
    /// (default `http://<host>:<port>`, or `https://…` with TLS).
    public var issuer: String?
    /// The `azp` every device JWT must carry (the SDK configuration's
    /// `authorizedParty`); nil accepts device JWTs without one.
    public var authorizedParty: String?
    /// The WebAuthn relying party ID (default: the issuer's host).
    public var relyingPartyID: String?
    /// The WebAuthn origin (default: the issuer).
    public var origin: String?
    /// Further origins of the same relying party (WebAuthn L3 related
    /// origins): accepted in ceremonies and published at
    /// `GET /.well-known/webauthn` for browsers to check.
    public var relatedOrigins: [String] = []
    /// The Public Suffix List that counts the related origins' labels (at
    /// most five, as browsers count them); nil for the system's copy
    /// (``systemPublicSuffixListPath``) when it is installed, else the default rule `*` alone.
    public var publicSuffixListPath: String?
    /// Where Debian's and Ubuntu's `publicsuffix` package installs the list.
    public static let systemPublicSuffixListPath = "/usr/share/publicsuffix/public_suffix_list.dat"
    /// The authenticators the ceremonies suggest, in order (WebAuthn L3
    /// `hints`: `security-key`, `client-device`, `hybrid`).
    public var hints: [String] = []
    /// Whether passkey registrations ask for the authenticator's attestation
    /// (`direct`) or not (`none`, the default: browsers then send none).
    public var attestation: Attestation = .none
    /// Whether a registration whose attestation certificates verify but
    /// reach none of ``attestationRootsPath``'s roots is accepted (and
    /// reported `unanchored`) rather than refused.
    public var acceptUnanchoredAttestation = false
    /// A PEM file of root certificates that anchor attestation certificate
    /// chains (an authenticator vendor's, Apple's WebAuthn root, Google's
    /// hardware attestation roots, …). Without it, an attestation that comes
    /// with certificates is refused: nothing could make it trustworthy.
    public var attestationRootsPath: String?
    /// A PEM certificate chain and its PEM private key: the server speaks
    /// TLS when both are given.
    public var tlsCertificatePath: String?
    /// The PEM private key of ``tlsCertificatePath``.
    public var tlsKeyPath: String?
    /// The largest request body taken, in bytes (default 64 KiB).
    public var maximumBodyBytes: Int = 64 * 1024
    /// How many offline counter values a device is granted at a time (default 10).
    public var offlineGrantSize: Int64 = 10
    /// How long an offline grant lasts, in seconds (default 7 days).
    public var offlineGrantWindow: Int64 = 7 * 86_400
    /// How long a payment token is valid, in seconds (the SDK's default, 600).
    public var tokenLifetime: Int64 = 600
    /// A file holding the service key partner backends present in the
    /// `IFTTT-Service-Key` header of `POST /v2/user_token` (32 to 256
    /// visible ASCII characters, one trailing line break allowed; mode 0600).
    /// It is read once, at start. Nil: that route answers 404.
    public var serviceKeyPath: String?

    /// The attestation conveyance passkey registrations ask for (WebAuthn
    /// `AttestationConveyancePreference`).
    public enum Attestation: String, Sendable, CaseIterable {
        /// No attestation (the authenticator's make and model stay private).
        case none
        /// The authenticator's attestation, verified against the configured roots.
        case direct
    }

    /// A configuration serving `stateDirectory` on `host:port`.
    public init(host: String = "127.0.0.1", port: Int = 8080, stateDirectory: String) {
        self.host = host
        self.port = port
        self.stateDirectory = stateDirectory
    }

    /// Checks every option; the server calls it before it opens anything.
    /// - Throws: `server.invalidConfiguration` naming the first bad option.
    public func validate() throws(TokenMintError) {
        guard (0...65_535).contains(port) else { throw TokenMintError(.server.invalidConfiguration, "--port is 0 to 65535, not \(port)") }
        guard !host.isEmpty, host.utf8.count <= 253 else { throw TokenMintError(.server.invalidConfiguration, "--host is empty or too long") }
        guard !stateDirectory.isEmpty else { throw TokenMintError(.server.invalidConfiguration, "--state names no directory") }
        guard (tlsCertificatePath == nil) == (tlsKeyPath == nil) else {
            throw TokenMintError(.server.invalidConfiguration, "TLS needs both a certificate and a key")
        }
        guard (1024...(16 << 20)).contains(maximumBodyBytes) else {
            throw TokenMintError(.server.invalidConfiguration, "the body limit is 1 KiB to 16 MiB")
        }
        guard (1...10_000).contains(offlineGrantSize) else { throw TokenMintError(.server.invalidConfiguration, "an offline grant is 1 to 10000 tokens") }
        guard (60...(366 * 86_400)).contains(offlineGrantWindow) else {
            throw TokenMintError(.server.invalidConfiguration, "an offline grant lasts 60 s to 366 days")
        }
        for (name, url) in [("--issuer", issuer), ("--origin", origin)] {
            if let url, !(url.hasPrefix("http://") || url.hasPrefix("https://")) || url.hasSuffix("/") || url.utf8.count > 512 {
                throw TokenMintError(.server.invalidConfiguration, "\(name) is an http(s) URL without a trailing slash")
            }
        }
        for related in relatedOrigins {
            guard related.utf8.count <= 512, RelatedOrigins.host(ofOrigin: related) != nil else { throw TokenMintError(.server.invalidConfiguration, "--related-origin is an https origin without a path: \(SafeText.escaped(related.prefix(128)))") }
        }
        guard relatedOrigins.count <= 64 else { throw TokenMintError(.server.invalidConfiguration, "at most 64 related origins") }
        for hint in hints where !["security-key", "client-device", "hybrid"].contains(hint) {
            throw TokenMintError(.server.invalidConfiguration, "--hint is security-key, client-device or hybrid, not \(SafeText.escaped(hint.prefix(64)))")
        }
        if let attestationRootsPath, attestationRootsPath.isEmpty {
            throw TokenMintError(.server.invalidConfiguration, "--attestation-roots names no file")
        }
        if let serviceKeyPath, serviceKeyPath.isEmpty {
            throw TokenMintError(.server.invalidConfiguration, "--service-key-file names no file")
        }
        if let authorizedParty, !(1...255).contains(authorizedParty.utf8.count) || authorizedParty.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw TokenMintError(.server.invalidConfiguration, "--authorized-party is 1 to 255 bytes without control characters")
        }
    }

    /// The issuer URL in effect.
    public var effectiveIssuer: String {
        if let issuer { return issuer }
        let scheme = tlsCertificatePath == nil ? "http" : "https"
        let name = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(name):\(port)"
    }
}
