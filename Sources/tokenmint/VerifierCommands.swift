import ArgumentParser
import Foundation
import TokenMint
#if Postgres
import TokenMintPostgres
#endif

/// Where the cash-desk verifier keeps its state: a SQLite file in the state
/// folder, or a PostgreSQL server shared by many verifiers.
struct VerifierBackendOptions: ParsableArguments {
    @OptionGroup var store: StoreOptions
    @Option(help: "SQLite verifier store (default: ledger.sqlite in the state folder).") var ledger: String?
    #if Postgres
    @Option(help: "PostgreSQL verifier store, postgres://user[:password]@host[:port]/database[?sslmode=require]; without a password in the URL, PGPASSWORD is used.")
    var postgres: String?
    #endif

    func withStore<T: Sendable>(_ body: @Sendable (any VerifierStore) async throws -> T) async throws -> T {
        #if Postgres
        if let postgres {
            return try await PostgresVerifierStore.withStore(try PostgresConfiguration(url: postgres)) { try await body($0) }
        }
        #endif
        return try await body(try store.open("ledger.sqlite", path: ledger))
    }
}

extension PayCommand {
    struct Verifier: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The cash-desk verifier's store: schema, enrolled devices, offline grants.",
            subcommands: [Migrate.self, Enrol.self, Grant.self, Issue.self])

        struct Migrate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Create or update the verifier schema (idempotent; safe from many processes at once).")
            @OptionGroup var backend: VerifierBackendOptions
            func run() async throws {
                #if Postgres
                if let url = backend.postgres {
                    let applied = try await PostgresVerifierStore.withStore(try PostgresConfiguration(url: url)) { store in
                        (try await store.migrate(), try await store.schemaVersion())
                    }
                    print(#"{"applied":\#(applied.0),"version":\#(applied.1)}"#)
                    return
                }
                #endif
                try await backend.withStore { _ in }  // SQLite creates its tables on open
                print(#"{"applied":[],"version":1}"#)
            }
        }

        struct Enrol: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Enrol a device from its enrolment token; prints its device ID.")
            @OptionGroup var backend: VerifierBackendOptions
            @Argument(help: "The enrolment token.") var enrolment: String
            func run() async throws {
                let token = try EnrolmentToken(parsing: enrolment, allowLegacyTenant: true)
                try await backend.withStore { store in
                    try await PaymentTokenVerifier(store: store, clock: .system).enrol(token)
                }
                print(PaymentTokenVerifier.deviceID(of: token))
            }
        }

        struct Grant: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Grant an enrolled device its next offline counter values.")
            @OptionGroup var backend: VerifierBackendOptions
            @Option(help: "The device ID.") var device: String
            @Option(help: "How many counter values.") var count: Int64 = 10
            @Option(help: "Seconds the grant stays usable.") var window: Int64 = 86_400
            func run() async throws {
                let grant = try await backend.withStore { store in
                    try await PaymentTokenVerifier(store: store, clock: .system).grantOfflineAllowance(deviceID: device, count: count, window: window)
                }
                print(#"{"device":"\#(grant.deviceID)","first":\#(grant.first),"count":\#(grant.count),"notAfter":\#(grant.notAfter)}"#)
            }
        }

        struct Issue: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Issue an online unsigned part to an enrolled device (one token; `pay mint --unsigned` signs it).")
            @OptionGroup var backend: VerifierBackendOptions
            @Option(help: "The device ID.") var device: String
            @Option(help: "The payment means ID.") var means: String
            @Option(help: "Seconds the part stays usable.") var window: Int64 = 600
            func run() async throws {
                let part = try await backend.withStore { store in
                    try await PaymentTokenVerifier(store: store, clock: .system).issueOnlinePart(deviceID: device, paymentMeansID: means, window: window)
                }
                print(part)
            }
        }
    }
}
