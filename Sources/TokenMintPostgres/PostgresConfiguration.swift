#if Postgres
public import TokenMintCore
import TokenMintPay
import TokenMintStore
import Logging
internal import PostgresNIO
import Foundation

/// Where a ``PostgresVerifierStore`` connects, and its limits. Its
/// description never shows the password.
public struct PostgresConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Host name or address.
    public var host: String
    /// Port.
    public var port: Int = 5432
    /// User name.
    public var username: String
    /// Password, if the server asks for one.
    public var password: String?
    /// Database name (the user name when nil).
    public var database: String?
    /// Require TLS (verifying the server's certificate with the system's
    /// roots). Off by default, for a server on loopback.
    public var requireTLS = false
    /// Connections in the pool at most.
    public var maximumConnections = 16
    /// How long opening a connection may take.
    public var connectTimeout: Duration = .seconds(5)
    /// How long one statement may run on the server (and, plus a second,
    /// how long a call waits for its answer).
    public var statementTimeout: Duration = .seconds(5)

    /// `postgres://user:***@host:port/database`, TLS and limits.
    public var description: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database ?? username)"
            + " (tls: \(requireTLS ? "required" : "off"), pool: \(maximumConnections), statement timeout: \(statementTimeout))"
    }

    /// A configuration.
    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    /// Reads `postgres://user[:password]@host[:port]/database[?sslmode=require]`
    /// (`postgresql://` too). `sslmode` may be `disable` (the default) or
    /// `require`; anything else is refused rather than ignored.
    ///
    /// A URL without a password takes the one in `PGPASSWORD`, when the
    /// environment has it (libpq's convention): a password in a URL given on
    /// a command line is visible to every user of the machine, one in the
    /// environment is not. `environment` is the process's when nil.
    public init(url text: String, environment: [String: String]? = nil) throws(TokenMintError) {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? ""),
            let host = url.host, !host.isEmpty, let user = url.user, !user.isEmpty
        else { throw TokenMintError(.store.invalidArgument, "a PostgreSQL URL is postgres://user[:password]@host[:port]/database") }
        let fromEnvironment = (environment ?? ProcessInfo.processInfo.environment)["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        self.init(host: host, port: url.port ?? 5432, username: user, password: url.password ?? fromEnvironment)
        let path = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        database = path.isEmpty ? nil : path
        for item in url.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "disable"): requireTLS = false
            case ("sslmode", "require"), ("sslmode", "verify-full"): requireTLS = true
            default: throw TokenMintError(.store.invalidArgument, "unsupported URL parameter \(item.name)=\(item.value ?? "")")
            }
        }
    }
}
#endif
