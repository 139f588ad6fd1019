import ArgumentParser
import Foundation
import TokenMint
#if Server
import TokenMintServer
import Logging
#endif
#if Server && Postgres
import TokenMintPostgres
#endif

/// The `serve` command when the CLI is built with the Server trait.
#if Server
let serveCommands: [any ParsableCommand.Type] = [Serve.self]
#else
let serveCommands: [any ParsableCommand.Type] = []
#endif

#if Server
/// The options `serve` and its management commands share.
struct ServerStateOptions: ParsableArguments {
    @Option(help: "The server's state directory (SQLite store and master key; created 0700).") var state: String
    @Option(help: "The issuer URL: OAuth `iss` and the audience of device JWTs (default http://HOST:PORT).") var issuer: String?
    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port to listen on (0: any free port, printed when listening).") var port = 8080
    #if Postgres
    @Option(help: """
        Keep the state on PostgreSQL, shared by every server given the same URL: the payment state (ledger, grants, devices, \
        means, transactions, events) and the OAuth state (signing keys, refresh families, clients, accounts, codes, passkeys). \
        postgres://user[:password]@host[:port]/database[?sslmode=require]; without a password in the URL, PGPASSWORD is used. \
        Every server sharing it needs the same master key: copy master.key from the first server's --state.
        """)
    var postgres: String?
    #endif

    func configuration() -> ServerConfiguration {
        var configuration = ServerConfiguration(host: host, port: port, stateDirectory: state)
        configuration.issuer = issuer
        return configuration
    }

    /// Runs `body` with the server these options describe: its state in
    /// --state, or on PostgreSQL with --postgres (migrated first).
    func withServer<T: Sendable>(_ configuration: ServerConfiguration, logger: Logger = Logger(label: "tokenmint.serve"),
                                 _ body: @escaping @Sendable (TokenMintServer) async throws -> T) async throws -> T {
        #if Postgres
        if let postgres {
            let directory = state
            return try await PostgresVerifierStore.withStore(try PostgresConfiguration(url: postgres), logger: logger) { store in
                try await store.migrate()
                try TokenMintServer.prepareStateDirectory(directory)
                let shared: PostgresKeyValueStore
                do {
                    shared = try PostgresKeyValueStore(configuration: store.configuration, masterKey: TokenMintServer.masterKey(stateDirectory: directory), logger: logger)
                } catch let error as TokenMintError where error.code == .store.wrongMasterKey || error.code == .store.masterKeyUnavailable {
                    throw CLIError(message: "\(error.reason); servers that share --postgres share one master key: copy master.key from the first server's --state into \(directory)")
                }
                return try await body(TokenMintServer(configuration: configuration, logger: logger, payments: store, state: shared))
            }
        }
        #endif
        return try await body(TokenMintServer(configuration: configuration, logger: logger))
    }
}

/// `tokenmint serve`: the WhitelabelPay REST API and OAuth server over HTTP.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the WhitelabelPay REST API and the OAuth server over HTTP (Hummingbird 2).",
        discussion: """
            Routes are described by the OpenAPI 3.1 document at GET /openapi.json. Prints \
            "listening on URL" once it accepts connections; SIGTERM or SIGINT stops it gracefully \
            (in-flight requests finish). Logs go to standard error, without tokens or secrets.
            """,
        subcommands: [Start.self, ClientCommand.self, AccountCommand.self],
        defaultSubcommand: Start.self)

    /// Runs the server.
    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Run the server (the default).")

        @OptionGroup var state: ServerStateOptions
        @Option(name: .customLong("authorized-party"), help: "The azp every device JWT must carry.") var authorizedParty: String?
        @Option(help: "The WebAuthn origin (default: the issuer).") var origin: String?
        @Option(name: .customLong("rp-id"), help: "The WebAuthn relying party ID (default: the origin's host).") var rpID: String?
        @Option(help: "The attestation passkey registrations ask for: none (the default) or direct.") var attestation = "none"
        @Option(name: .customLong("related-origin"),
                help: "Another origin of the same relying party (repeatable): accepted in ceremonies and published at /.well-known/webauthn.")
        var relatedOrigins: [String] = []
        @Option(name: .customLong("public-suffix-list"),
                help: "The Public Suffix List that counts the related origins' labels, at most 5 (default: the system's publicsuffix package, if installed).")
        var publicSuffixList: String?
        @Option(name: .customLong("hint"), help: "security-key, client-device or hybrid (repeatable, in order): the WebAuthn hints the ceremonies give.")
        var hints: [String] = []
        @Option(name: .customLong("attestation-roots"),
                help: "A PEM file of the root certificates that anchor attestation chains (needed to accept attestations with certificates).")
        var attestationRoots: String?
        @Flag(name: .customLong("accept-unanchored-attestation"),
              help: "Register a passkey whose attestation certificates verify but reach no --attestation-roots root (reported as unanchored) instead of refusing it.")
        var acceptUnanchoredAttestation = false
        @Option(name: .customLong("tls-certificate"), help: "A PEM certificate chain: serve HTTPS (with --tls-key).") var tlsCertificate: String?
        @Option(name: .customLong("tls-key"), help: "The PEM private key of --tls-certificate.") var tlsKey: String?
        @Option(name: .customLong("max-body"), help: "The largest request body taken, in bytes.") var maximumBody = 64 * 1024
        @Option(name: .customLong("offline-grant"), help: "Offline tokens granted to a device at a time.") var offlineGrant: Int64 = 10
        @Option(name: .customLong("service-key-file"),
                help: "A file (mode 0600) holding the service key partners present at POST /v2/user_token (without it that route answers 404).")
        var serviceKeyFile: String?
        @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"

        func run() async throws {
            var configuration = state.configuration()
            configuration.authorizedParty = authorizedParty
            configuration.origin = origin
            configuration.relyingPartyID = rpID
            guard let conveyance = ServerConfiguration.Attestation(rawValue: attestation) else {
                throw ValidationError("--attestation is none or direct, not \(attestation)")
            }
            configuration.attestation = conveyance
            configuration.relatedOrigins = relatedOrigins
            configuration.publicSuffixListPath = publicSuffixList
            configuration.hints = hints
            configuration.attestationRootsPath = attestationRoots
            configuration.acceptUnanchoredAttestation = acceptUnanchoredAttestation
            configuration.tlsCertificatePath = tlsCertificate
            configuration.tlsKeyPath = tlsKey
            configuration.maximumBodyBytes = maximumBody
            configuration.offlineGrantSize = offlineGrant
            configuration.serviceKeyPath = serviceKeyFile
            guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("--log-level: unknown level \(logLevel)") }
            var logger = Logger(label: "tokenmint.serve") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = level
            let finished = configuration
            try await state.withServer(finished, logger: logger) { server in try await serve(server, finished) }
        }

        func serve(_ server: TokenMintServer, _ configuration: ServerConfiguration) async throws {
            let scheme = tlsCertificate == nil ? "http" : "https"
            let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
            try await server.run { port in
                // The one line a supervisor or a test waits for.
                try? Output.line("listening on \(scheme)://\(host):\(port)")
                try? Output.flush()
            }
        }
    }

    /// `tokenmint serve client …`.
    struct ClientCommand: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "client", abstract: "Manage OAuth clients.", subcommands: [Add.self])

        /// `tokenmint serve client add`.
        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Register an OAuth client (a cash desk, an app); prints it as JSON.",
                discussion: "Registering an existing ID replaces it. The secret (at least 16 bytes) is read from the first line of standard input and stored as an Argon2id hash.")

            @OptionGroup var state: ServerStateOptions
            @Option(help: "The client ID.") var id: String
            @Flag(name: .customLong("secret-stdin"), help: "Read the client secret from standard input (a confidential client).") var secretStdin = false
            @Option(name: .customLong("redirect-uri"), help: "A redirect URI, matched exactly (repeatable).") var redirectURIs: [String] = []
            @Option(name: .customLong("grant"), help: "authorization_code, refresh_token or client_credentials (repeatable).") var grants: [String] = []

            func run() async throws {
                let grants = self.grants.isEmpty ? (secretStdin && redirectURIs.isEmpty ? ["client_credentials"] : ["authorization_code", "refresh_token"]) : self.grants
                var secret: SecureBytes?
                if secretStdin {
                    guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError(message: "no secret on standard input") }
                    secret = SecureBytes(Array(line.utf8))
                }
                let (id, redirectURIs, finished) = (id, redirectURIs, secret)
                try await state.withServer(state.configuration()) { server in
                    try server.clientDirectory.add(id: id, secret: finished, redirectURIs: redirectURIs, grants: grants)
                }
                let object = JSONObject([("clientId", .string(id)), ("confidential", .bool(secret != nil)),
                                         ("redirectUris", .array(redirectURIs.map { .string($0) })), ("grants", .array(grants.map { .string($0) }))])
                try Output.line(String(decoding: JSONWriter.encode(.object(object)), as: UTF8.self))
            }
        }
    }

    /// `tokenmint serve account …`.
    struct AccountCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "account", abstract: "Manage the accounts that sign in at /oauth/authorize.", subcommands: [Add.self])

        /// `tokenmint serve account add`.
        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add an account for the OAuth code flow; prints it as JSON.",
                discussion: "Adding an existing username replaces its password. The password (8 to 1024 bytes) is read from the first line of standard input and stored as an Argon2id hash.")

            @OptionGroup var state: ServerStateOptions
            @Option(help: "The username (1 to 64 visible ASCII characters).") var username: String
            @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input (required).") var passwordStdin = false

            func validate() throws {
                guard passwordStdin else { throw ValidationError("--password-stdin is required: a password is never taken from the command line") }
            }

            func run() async throws {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError(message: "no password on standard input") }
                let (username, password) = (username, SecureBytes(Array(line.utf8)))
                try await state.withServer(state.configuration()) { server in
                    try server.accountDirectory.add(username: username, password: password)
                }
                try Output.line(String(decoding: JSONWriter.encode(.object(JSONObject([("username", .string(username))]))), as: UTF8.self))
            }
        }
    }
}
#endif
