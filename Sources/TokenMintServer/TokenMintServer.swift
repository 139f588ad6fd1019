#if Server
public import TokenMintCore
import TokenMintCrypto
public import TokenMintPay
public import TokenMintStore
import TokenMintAuth
import TokenMintWebAuthn
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import UnixSignals
import HTTPTypes
import NIOSSL
public import Logging
import Foundation

/// `tokenmint serve`: the servers the seed SDKs talk to, on Hummingbird 2 —
/// the WhitelabelPay REST API (`/wlp/v1`), the OAuth 2.0 authorization
/// server (`/oauth`, RFC 8414 metadata), `GET /healthz` and the OpenAPI 3.1
/// document at `GET /openapi.json`.
///
/// Its state is one SQLite store (sealed with the master key beside it in
/// the state directory): the payment verifier's ledger and grants, the
/// devices, payment means, transactions and events, and the OAuth state
/// (the issuer's signing key, refresh families, clients, accounts, codes,
/// passkeys). Either part may be on PostgreSQL instead, shared by several
/// servers. Every answer is given after what it reports is committed. SIGTERM or SIGINT stops it gracefully: the listener closes,
/// in-flight requests finish, event streams end.
public struct TokenMintServer: Sendable {
    /// The options it runs with.
    public let configuration: ServerConfiguration
    /// The OAuth state: the issuer's keys and families, clients, accounts, codes, passkeys.
    let state: any KeyValueStore
    let issuer: LocalTokenIssuer
    let clients: ClientDirectory
    let accounts: AccountDirectory
    let directory: any PaymentDirectory
    let ledger: any VerifierStore
    let verifier: PaymentTokenVerifier
    /// The user-token exchange (`POST /v2/user_token`); nil without a service key.
    let userTokens: UserTokenExchange?
    let hub = EventHub()
    let logger: Logger
    let clock: @Sendable () -> Int64
    /// The WebAuthn relying party ID in effect.
    let relyingPartyID: String

    /// Opens (or creates) the state directory and the store.
    ///
    /// `payments`, when given, keeps the payment state instead of the state
    /// directory's SQLite store: the verifier's ledger and grants and the
    /// backend's directory (devices, means, transactions, events) — a
    /// `PostgresVerifierStore` shared by several servers. `state`, when
    /// given, keeps the OAuth state instead (the issuer's signing keys,
    /// refresh families, clients, accounts, codes, passkeys) — a
    /// `PostgresKeyValueStore` shared by the same servers, sealed with the
    /// master key they share. The master key and the TLS files stay in the
    /// state directory.
    /// - Throws: `server.invalidConfiguration` for a bad option or a state
    ///   directory that cannot be used.
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "tokenmint.serve"),
                payments: (any VerifierStore & PaymentDirectory)? = nil, state: (any KeyValueStore)? = nil) throws(TokenMintError) {
        try configuration.validate()
        // The service key is read once, before anything is created.
        var serviceKey: ServiceKey?
        if let path = configuration.serviceKeyPath { serviceKey = try UserTokenRoutes.serviceKey(at: path) }
        let directory = configuration.stateDirectory
        try Self.prepareStateDirectory(directory)
        let store: SQLiteStore
        do { store = try SQLiteStore(path: directory + "/server.sqlite", masterKey: Self.masterKey(stateDirectory: directory)) } catch {
            throw TokenMintError(.server.invalidConfiguration, "the store in \(directory) does not open: \(error.reason)", underlying: error)
        }
        do { try ServerState.importLegacyTables(of: store) } catch {
            throw TokenMintError(.server.invalidConfiguration, "the store in \(directory) cannot be upgraded: \(error.reason)", underlying: error)
        }
        if let state {
            do { try ServerState.moveOAuthState(from: store, to: state) } catch {
                throw TokenMintError(.server.invalidConfiguration, "the OAuth state in \(directory) cannot be moved to the shared store: \(error.reason)",
                                     underlying: error)
            }
        }
        let oauthState: any KeyValueStore = state ?? store
        let attestationRoots = try configuration.attestationRootsPath.map(Self.certificates(pemFile:)) ?? []
        if !configuration.relatedOrigins.isEmpty {
            do { _ = try RelatedOrigins(configuration.relatedOrigins, publicSuffixes: try Self.publicSuffixes(configuration.publicSuffixListPath)) } catch {
                throw TokenMintError(.server.invalidConfiguration, "--related-origin: \(error.reason)", underlying: error)
            }
        }
        let clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
        let base = configuration.effectiveIssuer
        let origin = configuration.origin ?? base
        let rpID = configuration.relyingPartyID ?? (URLComponents(string: origin)?.host ?? "localhost")
        let issuer: LocalTokenIssuer
        do {
            // Passkeys here stand in for a password: user verification is required.
            var policy = RelyingPartyPolicy(rpID: rpID, origins: Set([origin] + configuration.relatedOrigins))
            policy.requireUserVerification = true
            policy.attestationRoots = attestationRoots
            policy.unanchoredAttestation = configuration.acceptUnanchoredAttestation ? .accept : .refuse
            issuer = try LocalTokenIssuer(store: oauthState, issuer: base, audience: base, relyingParty: policy, clock: clock, logger: logger)
        } catch { throw TokenMintError(.server.invalidConfiguration, "the token issuer does not start: \(error.reason)", underlying: error) }
        var verifier: PaymentTokenVerifier
        let shared: any VerifierStore & PaymentDirectory = payments ?? store
        do { verifier = try PaymentTokenVerifier(store: shared, lifetime: configuration.tokenLifetime, clock: .system) } catch {
            throw TokenMintError(.server.invalidConfiguration, error.reason, underlying: error)
        }
        verifier.requiresOfflineGrant = true
        self.configuration = configuration
        self.state = oauthState
        self.issuer = issuer
        self.clients = ClientDirectory(store: oauthState)
        self.accounts = AccountDirectory(store: oauthState)
        self.directory = shared
        self.ledger = shared
        self.verifier = verifier
        self.userTokens = serviceKey.map { UserTokenRoutes.makeExchange(serviceKey: $0, store: oauthState, issuer: issuer) }
        self.logger = logger
        self.clock = clock
        self.relyingPartyID = rpID
    }

    /// Creates the state directory (mode 0700) when it does not exist.
    /// - Throws: `server.invalidConfiguration` when it cannot be created or
    ///   is not a directory.
    public static func prepareStateDirectory(_ directory: String) throws(TokenMintError) {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
                throw TokenMintError(.server.invalidConfiguration, "cannot create the state directory \(directory)", underlying: error)
            }
        } else if !isDirectory.boolValue {
            throw TokenMintError(.server.invalidConfiguration, "--state \(directory) is not a directory")
        }
    }

    /// The DER certificates of a PEM file (`-----BEGIN CERTIFICATE-----`
    /// blocks; anything between blocks is ignored), each parsed.
    /// - Throws: `server.invalidConfiguration` for a file that cannot be
    ///   read, is over 1 MiB, holds no certificate or one that does not parse.
    /// The Public Suffix List at `path`, or the system's when none is given
    /// and it is installed, or the default rule alone.
    static func publicSuffixes(_ path: String?) throws(TokenMintError) -> PublicSuffixList {
        let file = path ?? ServerConfiguration.systemPublicSuffixListPath
        guard let data = FileManager.default.contents(atPath: file), data.count <= PublicSuffixList.maximumByteCount else {
            guard path == nil else {
                throw TokenMintError(.server.invalidConfiguration, "--public-suffix-list \(SafeText.escaped(file.prefix(256))) cannot be read (or is over 4 MiB)")
            }
            return .defaultRule
        }
        return try PublicSuffixList(parsing: String(decoding: data, as: UTF8.self))
    }

    static func certificates(pemFile path: String) throws(TokenMintError) -> [[UInt8]] {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
            throw TokenMintError(.server.invalidConfiguration, "--attestation-roots \(SafeText.escaped(path.prefix(256))) cannot be read (or is over 1 MiB)")
        }
        do { return try X509Certificate.derCertificates(pem: String(decoding: data, as: UTF8.self)) } catch {
            throw TokenMintError(.server.invalidConfiguration, "--attestation-roots: \(error.reason)", underlying: error)
        }
    }

    /// The master key of the server whose state directory is `stateDirectory`
    /// (its `master.key`, created 0600 with the store). Servers that share
    /// their OAuth state on PostgreSQL share this key: copy the file.
    public static func masterKey(stateDirectory: String) -> MasterKeySource {
        .file(path: stateDirectory + "/master.key")
    }

    /// The OAuth clients of this server's store (`tokenmint serve client add`).
    public var clientDirectory: ClientDirectory { clients }

    /// The accounts that sign in at `/oauth/authorize` (`tokenmint serve account add`).
    public var accountDirectory: AccountDirectory { accounts }

    /// The routes, with the error middleware in front.
    func router(pollInterval: Duration = .seconds(15)) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ErrorMiddleware(logger: logger))
        router.get("healthz") { _, _ in
            HTTPMessages.json(.ok, JSONObject([("status", .string("ok")), ("time", .number(clock()))]))
        }
        router.get("openapi.json") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.json(server: configuration.effectiveIssuer))))
        }
        let tokens = AccessTokenAuthenticator(issuer: issuer, ledger: ledger, baseURL: configuration.effectiveIssuer, clock: clock)
        let devices = DeviceAuthenticator(audience: configuration.effectiveIssuer, authorizedParty: configuration.authorizedParty, ledger: ledger, clock: clock)
        WhitelabelPayRoutes(directory: directory, verifier: verifier, devices: devices, desks: DeskAuthenticator(tokens: tokens), hub: hub,
                            configuration: configuration, clock: clock, logger: logger, pollInterval: pollInterval).add(to: router)
        let passkeys = PasskeyRoutes(issuer: issuer, tokens: tokens, accounts: accounts, configuration: configuration, relyingPartyID: relyingPartyID, clock: clock,
                                     logger: logger)
        passkeys.add(to: router)
        OAuthRoutes(issuer: issuer, tokens: tokens, clients: clients, accounts: accounts, codes: AuthorizationCodes(store: state), passkeys: passkeys,
                    configuration: configuration, clock: clock, logger: logger).add(to: router)
        UserTokenRoutes(exchange: userTokens, configuration: configuration, logger: logger).add(to: router)
        return router
    }

    /// Serves until SIGTERM or SIGINT. `onListening` is called with the bound
    /// port once the server accepts connections.
    /// - Throws: `server.invalidConfiguration` when the TLS files do not load
    ///   or the address cannot be bound.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws(TokenMintError) {
        let server: HTTPServerBuilder
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                let privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
                let tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(privateKey))
                // Built once here so that a key that does not match the
                // certificate stops the start, not the first connection.
                _ = try NIOSSLContext(configuration: tls)
                server = try .tls(.http1(), tlsConfiguration: tls)
            } catch {
                throw TokenMintError(.server.invalidConfiguration, "the TLS certificate or key does not load: \(error)", underlying: error)
            }
        } else {
            server = .http1()
        }
        let app = Application(
            router: router(), server: server,
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "tokenmint"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        do { try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint]) } catch {
            throw TokenMintError(.server.invalidConfiguration, "the server stopped: \(error)", underlying: error)
        }
    }
}
#endif
