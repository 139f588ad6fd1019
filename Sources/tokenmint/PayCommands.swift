import ArgumentParser
import Foundation
import TokenMint
#if HTTPClient
import TokenMintHTTP
#endif

/// The folder holding a device's state: `store.sqlite` (sealed), `master.key`
/// (0600; or the key in TOKENMINT_MASTER_KEY), `ledger.sqlite` for the verifier side.
struct StoreOptions: ParsableArguments {
    @Option(help: "State folder (created with mode 0700).") var store: String = "./.tokenmint"

    var masterKey: MasterKeySource {
        if ProcessInfo.processInfo.environment["TOKENMINT_MASTER_KEY"] != nil {
            return .environment(variable: "TOKENMINT_MASTER_KEY")
        }
        return .file(path: store + "/master.key")
    }

    /// Opens `file` in the state folder (or the SQLite file at `path`),
    /// creating the folder, which holds the master key either way.
    func open(_ file: String = "store.sqlite", path: String? = nil) throws -> SQLiteStore {
        try Self.open(folder: store, file, path: path)
    }

    /// Opens `file` in `folder` (created 0700, warned about when others may read it), sealed with its master key.
    static func open(folder: String, _ file: String, path: String? = nil) throws -> SQLiteStore {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var info = stat()
        if stat(folder, &info) == 0, info.st_mode & 0o077 != 0 {
            report("warning: the state folder \(quoted(folder)) may be read by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 700 it")
        }
        var options = StoreOptions()
        options.store = folder
        return try SQLiteStore(path: path ?? folder + "/" + file, masterKey: options.masterKey)
    }

    /// The SDK over the store, with the configuration saved by `pay init`.
    /// The SDK over the store, with the configuration `pay init` sealed
    /// there. `unsigned`, when given, is the server-issued unsigned part an
    /// online mint signs (what the backend answered).
    func sdk(unsigned: String? = nil) throws -> WhitelabelPay {
        let store = try open()
        // The configuration is sealed with the master key: an edited limit is
        // refused as tampered, never read as a default.
        let saved: SecureBytes?
        do { saved = try store.transaction { tx in try tx.secret(PayCommand.configName) } } catch {
            throw TokenMintError(.pay.tampered, "the configuration in \(quoted(self.store)) was edited or damaged", underlying: error)
        }
        guard let saved else { throw CLIError(message: "no configuration in \(quoted(self.store)): run `tokenmint pay init` first") }
        guard let object = saved.withUnsafeBytes({ try? JSONSerialization.jsonObject(with: Data($0)) }) as? [String: Any],
            let tenant = object["tenant"] as? String, let reference = object["reference"] as? String,
            let environmentName = object["environment"] as? String, let environment = WhitelabelPayEnvironment(rawValue: environmentName),
            let debug = object["debug"] as? Bool, let limit = object["offlineLimit"] as? Int, let lifetime = object["lifetime"] as? Int,
            let legacy = object["legacyTenant"] as? Bool
        else { throw TokenMintError(.pay.tampered, "the configuration in \(quoted(self.store)) is incomplete") }
        let configuration = try WhitelabelPayConfiguration(
            tenantID: tenant, referenceID: reference, environment: environment, authorizedParty: object["authorizedParty"] as? String,
            debug: debug, offlineTokenLimit: limit, tokenLifetime: Int64(lifetime), allowLegacyTenantCodes: legacy)
        let backend: any WhitelabelPayBackend
        if let url = object["backend"] as? String {
            guard unsigned == nil else { throw ValidationError("--unsigned is for a device without a backend") }
            backend = try PayCommand.httpBackend(environment: environment, url: url, audience: object["audience"] as? String,
                                                 timeout: object["backendTimeout"] as? Int ?? 10)
        } else {
            backend = LocalBackend(clock: .system, unsignedPart: unsigned)
        }
        return try WhitelabelPay(configuration: configuration, store: store, backend: backend, logDirectory: self.store)
    }

    /// The SDK after a sync with its server, when it has one and can reach
    /// it (a one-shot command cannot wait for a push): the state, the means
    /// and a fresh offline grant. An unreachable server leaves the device
    /// offline; a server that no longer knows the device wipes it (and says so).
    func syncedSDK() async throws -> WhitelabelPay {
        let sdk = try self.sdk()
        do { try await sdk.sync() } catch where error.code == .pay.invalidEnrolmentInstance { throw error } catch {}
        return sdk
    }
}

struct PayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pay", abstract: "WhitelabelPay: enrol, mint payment tokens online and offline, verify.",
        discussion: """
            Without --backend the device talks to no server: online mode uses a local stand-in for the backend \
            (LocalBackend), so online mints never touch the offline quota. With `pay init --backend URL` the device \
            talks to a WhitelabelPay server (`tokenmint serve`): every command first syncs with it when it can reach \
            it, online mints fall back to offline ones by themselves when it cannot, and the offline count resets \
            only when the server confirms the device is back.
            """,
        subcommands: [Init.self, Enrol.self, Push.self, Means.self, Mint.self, Online.self, Status.self, Transactions.self, VerifyToken.self,
                      Verifier.self, Reset.self] + deskCommands)

    /// Where `pay init` seals the CLI's configuration.
    static let configName = "cli.config"

    /// The HTTP backend of a device configured with `--backend`.
    static func httpBackend(environment: WhitelabelPayEnvironment, url: String, audience: String?, timeout: Int) throws -> any WhitelabelPayBackend {
        #if HTTPClient
        return try HTTPWhitelabelPayBackend(environment: environment, baseURL: url, audience: audience, timeout: .seconds(timeout))
        #else
        throw CLIError(message: "this build has no HTTP client: build with the HTTPClient trait to use --backend")
        #endif
    }

    static func status(_ sdk: WhitelabelPay) async throws -> String {
        let object: [String: Any] = [
            "state": try await sdk.state.rawValue,
            "environment": await sdk.configuration.environment.rawValue,
            "tenantId": await sdk.configuration.tenantID,
            "referenceId": await sdk.configuration.referenceID,
            "online": try await sdk.isOnline,
            "offlineTokenLimit": await sdk.offlineTokenLimit,
            "offlineMintedTokenCount": try await sdk.offlineMintedTokenCount,
            "availableOfflineTokensCount": try await sdk.availableOfflineTokensCount,
            "offlineTokenLimitReached": try await sdk.offlineTokenLimitReached,
            "wastedTokenCount": try await sdk.wastedTokenCount,
            "activePaymentMeans": try await sdk.activePaymentMeans()?.id ?? NSNull(),
            "paymentMeans": try await sdk.paymentMeans().map { ["id": $0.id, "active": $0.isActive] },
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Configure the device state folder.")
        @OptionGroup var options: StoreOptions
        @Option(help: "Tenant UUID.") var tenant: String
        @Option(help: "Reference (installation) UUID.") var reference: String
        @Option(help: "development, integration or production.") var environment: String = "production"
        @Option(help: "Payment tokens that may be minted offline.") var offlineLimit: Int = 10
        @Option(help: "Payment-token lifetime in seconds.") var lifetime: Int = 600
        @Flag(help: "Accept a legacy 3-character tenant code.") var legacyTenant = false
        @Flag(help: "Write a debug log (exported with the SDK's exportLogs).") var debug = false
        @Option(help: "The WhitelabelPay server's base URL: the device talks to it over HTTP.") var backend: String?
        @Option(name: .customLong("authorized-party"), help: "The azp of the device's request JWTs.") var authorizedParty: String?
        @Option(help: "The server's issuer URL, the audience of the device's JWTs (default: --backend).") var audience: String?
        @Option(name: .customLong("backend-timeout"), help: "Seconds a request to the server may take before the device counts it unreachable.")
        var backendTimeout = 10

        func run() async throws {
            guard let env = WhitelabelPayEnvironment(rawValue: environment) else {
                throw ValidationError("--environment must be development, integration or production")
            }
            _ = try WhitelabelPayConfiguration(tenantID: tenant, referenceID: reference, environment: env, authorizedParty: authorizedParty,
                                               debug: debug, offlineTokenLimit: offlineLimit, tokenLifetime: Int64(lifetime),
                                               allowLegacyTenantCodes: legacyTenant)
            guard (1...120).contains(backendTimeout) else { throw ValidationError("--backend-timeout is 1 to 120 seconds") }
            if let backend { _ = try PayCommand.httpBackend(environment: env, url: backend, audience: audience, timeout: backendTimeout) }
            let store = try options.open()
            var object: [String: Any] = [
                "tenant": tenant, "reference": reference, "environment": environment, "offlineLimit": offlineLimit,
                "lifetime": lifetime, "legacyTenant": legacyTenant, "debug": debug,
            ]
            if let backend { object["backend"] = backend }
            if let authorizedParty { object["authorizedParty"] = authorizedParty }
            if let audience { object["audience"] = audience }
            if backend != nil { object["backendTimeout"] = backendTimeout }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            try store.transaction { tx in try tx.setSecret(PayCommand.configName, SecureBytes(data)) }
            print(try await PayCommand.status(try options.sdk()))
        }
    }

    struct Enrol: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the enrolment token (creating the device key once).")
        @OptionGroup var options: StoreOptions
        func run() async throws { print(try await options.syncedSDK().getEnrolmentToken()) }
    }

    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Handle a push payload {\"aps\":{},\"yp-type\":…}.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The push JSON.") var payload: String
        func run() async throws {
            let type = try await options.sdk().handlePush(Array(payload.utf8))
            print(type.rawValue)
        }
    }

    struct Means: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Payment means: list (the default, JSON), add ID (and make it active), deactivate ID, reactivate ID.",
            subcommands: [List.self, Add.self, Deactivate.self, Reactivate.self], defaultSubcommand: List.self)

        struct Add: AsyncParsableCommand {
            @OptionGroup var options: StoreOptions
            @Argument var id: String
            func run() async throws { try await options.sdk().addPaymentMeans(id) }
        }
        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Print the payment means as JSON; --network asks the server first.")
            @OptionGroup var options: StoreOptions
            @Flag(help: "Fetch the means from the server (an error when it cannot be reached).") var network = false
            func run() async throws {
                // A one-shot command cannot wait for a background refresh: it syncs first when it can.
                let list = network ? try await options.sdk().getPaymentMeans(fetchMode: .network) : try await options.syncedSDK().paymentMeans()
                let object: [String: Any] = ["paymentMeans": list.map { ["id": $0.id, "active": $0.isActive] }]
                try Output.line(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
            }
        }
        struct Deactivate: AsyncParsableCommand {
            @OptionGroup var options: StoreOptions
            @Argument var id: String
            func run() async throws { try await options.syncedSDK().deactivatePaymentMeans(id) }
        }
        struct Reactivate: AsyncParsableCommand {
            @OptionGroup var options: StoreOptions
            @Argument var id: String
            func run() async throws { try await options.syncedSDK().reactivatePaymentMeans(id) }
        }
    }

    struct Mint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a payment token; exit 3 with offlineTokenLimitReached at the offline limit.")
        @OptionGroup var options: StoreOptions
        @Flag(help: "Mint offline, within the quota.") var offline = false
        @Option(help: "Also write the token as an Aztec PNG.") var aztec: String?
        @Flag(help: "With --aztec: write through a symbolic link.") var force = false
        @Option(help: "Mint this many tokens, one per line.") var count = 1
        @Option(help: "Online: sign this server-issued unsigned part (from `pay verifier issue`).") var unsigned: String?

        func validate() throws {
            guard (1...100_000).contains(count) else { throw ValidationError("--count is 1 to 100000") }
            guard count == 1 || aztec == nil else { throw ValidationError("--aztec writes one token") }
            guard unsigned == nil || (count == 1 && !offline) else { throw ValidationError("--unsigned signs one online token") }
        }

        func run() async throws {
            let sdk = unsigned == nil ? try await options.syncedSDK() : try options.sdk(unsigned: unsigned)
            // The output is checked before a slot is spent on it.
            if let aztec { try OutputFile.check(aztec, kind: .data, force: force) }
            do {
                for _ in 0..<count {
                    // Not forced offline: online when the device is, falling
                    // back to offline by itself when a server cannot be reached.
                    let token = try await sdk.getPaymentToken(offline: offline ? true : nil)
                    do {
                        if let aztec {
                            let png = try AztecEncoder.encode(token: token.description).png(scale: 4, quietZone: 4)
                            try OutputFile.write(png, to: aztec, kind: .data, force: force)
                        }
                        try Output.line(token.description)
                    } catch {
                        // Minted but never delivered: counted, so pay status shows it.
                        try? await sdk.recordWastedToken()
                        throw CLIError(message: "a token was minted but could not be written, and is wasted: \((error as? CLIError)?.message ?? "\(error)")", status: 2)
                    }
                }
            } catch let error as TokenMintError where error.code == .pay.offlineTokenLimitReached {
                throw CLIError(message: "offlineTokenLimitReached: \(error.reason)", status: 3)
            }
        }
    }

    struct Online: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Back online: the offline count resets (with a server: when a sync reaches it, and an error when it cannot).")
        @OptionGroup var options: StoreOptions
        func run() async throws {
            let sdk = try options.sdk()
            if sdk.hasServer { try await sdk.sync() } else { try await sdk.markOnline() }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the state as JSON.")
        @OptionGroup var options: StoreOptions
        func run() async throws { print(try await PayCommand.status(try await options.syncedSDK())) }
    }

    struct Transactions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print one page of the device's transactions from its server as JSON.")
        @OptionGroup var options: StoreOptions
        @Option(help: "The page, from 1.") var page = 1
        @Option(help: "Transactions per page (1 to 100).") var size = 20
        @Option(help: "property(,asc|desc), repeatable: createdAt, amount, currency, transactionId, paymentMeansId.") var sort: [String] = []
        func run() async throws {
            let response = try await options.sdk().fetchTransactions(page: page, size: size, sort: sort)
            let object: [String: Any] = [
                "content": response.transactions.map {
                    ["transactionId": $0.id, "paymentMeansId": $0.paymentMeansID, "amount": ["value": $0.amount, "currency": $0.currency],
                     "status": $0.status, "createdAt": $0.createdAt] as [String: Any]
                },
                "page": response.page, "size": response.size, "totalElements": response.totalElements, "totalPages": response.totalPages,
                "sort": response.sort,
            ]
            try Output.line(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
        }
    }

    struct VerifyToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Verify payment tokens for an enrolment or an enrolled device: exit 0 valid, 1 rejected.",
            discussion: """
                With --stdin, verifies one token per input line ("TOKEN" or "ATTEMPT TOKEN") and prints \
                one JSON line per token ({"valid":…} or {"valid":false,"error":…}); a store failure stops \
                with exit 2. An attempt (a payment's transaction ID) makes a retry after a crash or a lost \
                answer safe: the same attempt is accepted again, any other is refused as replayed.
                """)
        @OptionGroup var backend: VerifierBackendOptions
        @Option(help: "The device's enrolment token.") var enrolment: String?
        @Option(help: "An enrolled device's ID (its reference ID), looked up in the verifier store.") var device: String?
        @Option(help: "Current time as seconds since the epoch.") var now: Int64?
        @Option(help: "Token lifetime in seconds.") var lifetime: Int64 = 600
        @Option(help: "Clock skew allowed, in seconds.") var skew: Int64 = 30
        @Flag(help: "Refuse offline tokens whose counter was not granted to the device.") var requireGrant = false
        @Flag(help: "Read tokens from standard input, one per line.") var stdin = false
        @Option(help: "The payment attempt this verification belongs to (retries of it are accepted again).") var attempt: String?
        @Argument(help: "The payment token.") var token: String?

        func validate() throws {
            guard (enrolment == nil) != (device == nil) else { throw ValidationError("give --enrolment or --device") }
            guard stdin == (token == nil) else { throw ValidationError("give a token or --stdin") }
        }

        func run() async throws {
            let enrolmentToken = try enrolment.map { text throws in try EnrolmentToken(parsing: text, allowLegacyTenant: true) }
            let clock = now.map { t in WhitelabelPayClock { t } } ?? .system
            try await backend.withStore { store in
                var strict = try PaymentTokenVerifier(store: store, lifetime: lifetime, skew: skew, clock: clock)
                strict.requiresOfflineGrant = requireGrant
                let verifier = strict
                let check = { @Sendable (text: String, attempt: String?) async throws(TokenMintError) -> VerifiedPaymentToken in
                    if let enrolmentToken { return try await verifier.verify(text, enrolment: enrolmentToken, attempt: attempt) }
                    return try await verifier.verify(text, deviceID: device ?? "", attempt: attempt)
                }
                guard stdin else {
                    let verified: VerifiedPaymentToken
                    do throws(TokenMintError) { verified = try await check(token ?? "", attempt) } catch {
                        throw CLIError(message: "\(error)", status: error.code == .pay.storeFailure ? 2 : 1)
                    }
                    try Output.line(try Self.line(for: verified))
                    return
                }
                while let line = readLine() {
                    let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
                    let (lineAttempt, text) = fields.count == 2 ? (fields[0], fields[1]) : (attempt, line)
                    let verified: VerifiedPaymentToken
                    do throws(TokenMintError) { verified = try await check(text, lineAttempt) } catch {
                        // A store failure stops the run: that token's answer is unknown.
                        if error.code == .pay.storeFailure { throw CLIError(message: "\(error)", status: 2) }
                        try Output.line(String(decoding: try JSONSerialization.data(
                            withJSONObject: ["valid": false, "token": text, "error": error.code.name], options: [.sortedKeys]), as: UTF8.self))
                        continue
                    }
                    // An accepted token whose answer cannot be written stops the run
                    // (exit 2): a retry with the same attempt is accepted again.
                    try Output.line(try Self.line(for: verified))
                }
            }
        }

        static func line(for verified: VerifiedPaymentToken) throws -> String {
            let object: [String: Any] = [
                "valid": true, "token": verified.token.description, "unsigned": verified.token.unsignedPart,
                "epochSeconds": verified.token.epochSeconds, "offline": verified.isOffline, "tenant": verified.enrolment.tenant,
                "referenceId": verified.enrolment.referenceID,
            ]
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Wipe every key, count and setting in the state folder.")
        @OptionGroup var options: StoreOptions
        func run() async throws { try options.open().reset() }
    }
}
