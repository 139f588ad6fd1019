import ArgumentParser
import Foundation
import TokenMint
import TokenMintCore
#if HTTPClient
import TokenMintHTTP
import Logging
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `auth login`, `auth logout` and `auth status` when the CLI is built with
/// the HTTPClient trait.
#if HTTPClient
let authLoginCommands: [any ParsableCommand.Type] = [AuthLogin.self, AuthLogout.self, AuthStatus.self]
#else
let authLoginCommands: [any ParsableCommand.Type] = []
#endif

#if HTTPClient
/// `tokenmint auth login`: the OAuth code flow for a terminal (RFC 8252):
/// the authorization URL on standard error, the browser's redirect taken
/// on a loopback port, the token sealed in the store.
struct AuthLogin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in at an OAuth server from a terminal: the code flow with PKCE and a loopback redirect (RFC 8252).",
        discussion: """
            Prints the authorization URL on standard error, listens on the loopback port of --redirect-uri for the \
            browser's redirect, answers the browser with a short page, exchanges the code and seals the token in \
            session.sqlite in the --store folder, with the server and client to refresh and revoke it. Prints \
            {"account": …, "expiresAt": …}. A redirect URI without a port (registered as such) listens on any free port.
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: "The authorization server's base URL.") var server: String
    @Option(help: "The issuer the server names (default: --server).") var issuer: String?
    @Option(name: .customLong("client-id"), help: "The OAuth client ID (a public client).") var clientID: String
    @Option(name: .customLong("redirect-uri"), help: "The client's registered loopback redirect URI: http://127.0.0.1[:PORT]/PATH.")
    var redirectURI: String
    @Option(help: "A scope to ask for (repeatable).") var scope: [String] = []
    @Option(help: "Seconds to wait for the browser.") var timeout = 300

    /// The store file of the signed-in session, in the --store folder.
    static let storeFile = "session.sqlite"
    /// The sealed record of where the stored token came from.
    static let loginName = "auth.login"

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout is 1 to 3600 seconds") }
    }

    func run() async throws {
        let loopback = try LoopbackRedirect(redirectURI)
        let listener = try LoopbackListener(port: loopback.port)
        defer { listener.close() }
        let callback = "http://127.0.0.1:\(listener.port)\(loopback.path)"
        let seconds = timeout
        let provider = OAuthAuthorizationProvider(
            clientID: clientID, callbackURL: callback, server: server, issuer: issuer, scopes: scope, signInTimeout: .seconds(seconds),
            presenter: { url in
                report("open this URL in a browser: \(url.absoluteString)")
                report("waiting for the browser at \(callback) (up to \(seconds) s)")
            })
        let sessionStore = try store.open(Self.storeFile)
        let manager = TokenManager(provider: provider, store: sessionStore, logger: Self.logger())
        let signIn = Task { try await manager.signIn() }
        let finished = SignInFlag()
        Task {
            _ = await signIn.result
            finished.set()
        }
        await Self.answerBrowser(listener, path: loopback.path, provider: provider, signIn: signIn, finished: finished)
        let token = try await signIn.value
        try Self.saveLogin(LoginRecord(server: provider.server, issuer: provider.issuer, clientID: clientID, redirectURI: redirectURI), in: sessionStore)
        try Output.line(String(decoding: JSONWriter.encode(.object(JSONObject([
            ("account", .string(token.account)), ("expiresAt", .number(token.expiresAt)),
        ]))), as: UTF8.self))
    }

    /// Warnings (a revocation the server did not confirm) on standard error.
    static func logger() -> Logger {
        var logger = Logger(label: "tokenmint.auth") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        return logger
    }

    /// Serves the loopback port until the browser brings the redirect back
    /// (or the sign-in ends without one): another path is answered 404; the
    /// redirect is handed to the provider and answered with the sign-in's
    /// outcome once the code is exchanged, or at once when it carries an
    /// error.
    static func answerBrowser(_ listener: LoopbackListener, path: String, provider: OAuthAuthorizationProvider,
                              signIn: Task<OAuthToken, any Error>, finished: SignInFlag) async {
        while let connection = await listener.nextConnection(until: { finished.isSet }) {
            defer { connection.close() }
            guard let request = await connection.readRequestLine() else {
                await connection.respond(400, title: "Bad request", message: "The request could not be read.")
                continue
            }
            let target = request.target
            let requestPath = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard request.method == "GET", requestPath == path else {
                await connection.respond(404, title: "Not found", message: "This is not the sign-in's callback.")
                continue
            }
            guard let url = URL(string: "http://127.0.0.1:\(listener.port)" + target), provider.handleRedirect(url) else {
                await connection.respond(400, title: "Not this sign-in", message: "No sign-in is waiting for this redirect.")
                continue
            }
            let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            if let error = items.first(where: { $0.name == "error" })?.value {
                await connection.respond(400, title: "Sign-in failed", message: "The server refused the sign-in (\(error.prefix(64))). See the terminal.")
                return
            }
            switch await signIn.result {
            case .success(let token):
                await connection.respond(200, title: "Signed in", message: "Signed in as \(token.account). You can close this window and return to the terminal.")
            case .failure(let error):
                let code = (error as? TokenMintError).map { "\($0.code)" } ?? "an error"
                await connection.respond(400, title: "Sign-in failed", message: "The sign-in failed (\(code)). See the terminal.")
            }
            return
        }
    }

    /// Where the stored token came from: what `auth logout` needs to revoke it.
    struct LoginRecord {
        var server: String
        var issuer: String
        var clientID: String
        var redirectURI: String
    }

    static func saveLogin(_ record: LoginRecord?, in store: SQLiteStore) throws {
        try store.transaction { tx in
            guard let record else {
                try tx.remove(loginName)
                return
            }
            let object = JSONObject([("server", .string(record.server)), ("issuer", .string(record.issuer)),
                                     ("clientId", .string(record.clientID)), ("redirectUri", .string(record.redirectURI))])
            try tx.setSecret(loginName, SecureBytes(JSONWriter.encode(.object(object))))
        }
    }

    /// The sealed login record; nil when the token did not come from `auth login`.
    static func loadLogin(in store: SQLiteStore) throws -> LoginRecord? {
        guard let sealed = try store.transaction({ tx in try tx.secret(loginName) }) else { return nil }
        let value = sealed.withUnsafeBytes { try? JSONParser.parse(Array($0)) }
        guard let object = value?.objectValue, let server = object["server"]?.stringValue, let issuer = object["issuer"]?.stringValue,
            let clientID = object["clientId"]?.stringValue, let redirectURI = object["redirectUri"]?.stringValue
        else { throw CLIError(message: "the login record in \(Self.storeFile) is damaged") }
        return LoginRecord(server: server, issuer: issuer, clientID: clientID, redirectURI: redirectURI)
    }
}

/// `tokenmint auth logout`: revokes the stored refresh token at the server
/// it came from, then wipes the tokens.
struct AuthLogout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Sign out: revoke the refresh token at the server of `auth login` (RFC 7009), then wipe the stored tokens.",
        discussion: """
            The tokens are wiped even when the server cannot be reached; "revoked" in the JSON printed says whether \
            the server confirmed the revocation.
            """)

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let sessionStore = try store.open(AuthLogin.storeFile)
        let login = try AuthLogin.loadLogin(in: sessionStore)
        let provider: any AuthorizationProvider
        if let login {
            provider = OAuthAuthorizationProvider(clientID: login.clientID, callbackURL: login.redirectURI, server: login.server, issuer: login.issuer)
        } else {
            provider = NoSignIn()
        }
        let manager = TokenManager(provider: provider, store: sessionStore, logger: AuthLogin.logger())
        let account = AuthStatus.account(of: await manager.state)
        let revoked = try await manager.logout()
        try AuthLogin.saveLogin(nil, in: sessionStore)
        var object = JSONObject([("status", .string("signedOut")), ("account", account.map { JSONValue.string($0) } ?? JSONValue.null),
                                 ("revoked", .bool(revoked && login != nil && account != nil))])
        if let login { object.set("server", .string(login.server)) }
        try Output.line(String(decoding: JSONWriter.encode(.object(object)), as: UTF8.self))
    }
}

/// `tokenmint auth status`: the state the stored tokens describe.
struct AuthStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print the sign-in state of the store: {\"state\": signedOut | authorized | elevated, \"account\": …}.")

    @OptionGroup var store: StoreOptions

    static func account(of state: AuthState) -> String? {
        switch state {
        case .signedOut: nil
        case .authorized(let account): account
        case .elevated(let account, _): account
        }
    }

    func run() async throws {
        let manager = TokenManager(provider: NoSignIn(), store: try store.open(AuthLogin.storeFile), logger: AuthLogin.logger())
        let state = await manager.state
        var object = JSONObject()
        switch state {
        case .signedOut: object.set("state", .string("signedOut"))
        case .authorized(let account):
            object.set("state", .string("authorized"))
            object.set("account", .string(account))
        case .elevated(let account, let until):
            object.set("state", .string("elevated"))
            object.set("account", .string(account))
            object.set("until", .number(until))
        }
        try Output.line(String(decoding: JSONWriter.encode(.object(object)), as: UTF8.self))
    }
}

/// A provider for reading and wiping stored tokens only: it signs nobody in.
struct NoSignIn: AuthorizationProvider {
    func authorizeAccount() async throws -> OAuthToken { throw TokenMintError(.auth.notSignedIn, "use `tokenmint auth login`") }
    func verifyAccount(uuid: UUID) async throws -> OAuthToken { throw TokenMintError(.auth.stepUpUnavailable, "no step-up here") }
    func refresh(_ token: OAuthToken) async throws -> OAuthToken { throw TokenMintError(.auth.notSignedIn, "use `tokenmint auth login`") }
}

/// Set once the sign-in has ended.
final class SignInFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// A loopback redirect URI, `http://127.0.0.1[:PORT]/PATH`: its port (0
/// when it has none: any free port) and path.
struct LoopbackRedirect {
    let port: Int
    let path: String

    init(_ uri: String) throws {
        guard uri.hasPrefix("http://127.0.0.1"), uri.utf8.count <= 512, uri.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            let components = URLComponents(string: uri), components.scheme == "http", components.host == "127.0.0.1",
            components.query == nil, components.fragment == nil, components.user == nil
        else {
            throw ValidationError("--redirect-uri is a loopback URI http://127.0.0.1[:PORT]/PATH without query or fragment (RFC 8252 §7.3)")
        }
        if let port = components.port {
            guard (1...65_535).contains(port) else {
                throw ValidationError("--redirect-uri: port \(port) cannot be registered; leave the port out to listen on any free one")
            }
            self.port = port
        } else {
            self.port = 0
        }
        self.path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    }
}

/// The listening socket on 127.0.0.1 that takes the browser's redirect:
/// non-blocking, polled, so the wait ends with the sign-in.
struct LoopbackListener: Sendable {
    let descriptor: Int32
    /// The port listened on (the one picked when 0 was asked for).
    let port: Int

    init(port: Int) throws {
        #if os(Linux)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw CLIError(message: "cannot open a socket: \(String(cString: strerror(errno)))") }
        var reuse: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else {
            let reason = String(cString: strerror(errno))
            closeDescriptor(descriptor)
            throw CLIError(message: "cannot listen on 127.0.0.1:\(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0, fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0 else {
            closeDescriptor(descriptor)
            throw CLIError(message: "cannot set up the loopback listener: \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: actual.sin_port))
    }

    /// The next connection, or nil once `stop` says so.
    func nextConnection(until stop: @Sendable () -> Bool) async -> LoopbackConnection? {
        while !stop(), !Task.isCancelled {
            let accepted = acceptConnection(descriptor)
            if accepted >= 0 {
                guard fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK) == 0 else {
                    closeDescriptor(accepted)
                    continue
                }
                return LoopbackConnection(descriptor: accepted)
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    func close() { closeDescriptor(descriptor) }
}

/// One browser connection: the request head read (8 KiB at most), one
/// answer, closed.
struct LoopbackConnection: Sendable {
    let descriptor: Int32

    /// The largest request head read, in bytes.
    static let headLimit = 8192

    /// The request line of a request whose head (up to the blank line)
    /// arrived within 5 s and 8 KiB; nil otherwise.
    func readRequestLine() async -> (method: String, target: String)? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let deadline = ContinuousClock.now + .seconds(5)
        while head.count < Self.headLimit, ContinuousClock.now < deadline {
            let wanted = min(buffer.count, Self.headLimit - head.count)
            let count = buffer.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, wanted) }
            if count > 0 {
                head += buffer[0..<count]
                if head.count >= 4, containsBlankLine(head) { break }
                continue
            }
            if count == 0 { break }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        guard let end = firstLineEnd(head) else { return nil }
        let line = head[..<end]
        guard line.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let parts = String(decoding: line, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[1].hasPrefix("/") else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    func containsBlankLine(_ bytes: [UInt8]) -> Bool {
        let crlf: [UInt8] = [13, 10, 13, 10]
        return bytes.indices.dropLast(3).contains { bytes[$0..<($0 + 4)].elementsEqual(crlf) } || bytes.indices.dropLast(1).contains { bytes[$0] == 10 && bytes[$0 + 1] == 10 }
    }

    func firstLineEnd(_ bytes: [UInt8]) -> Int? {
        guard let newline = bytes.firstIndex(of: 10) else { return nil }
        return newline > 0 && bytes[newline - 1] == 13 ? newline - 1 : newline
    }

    /// Answers with a small HTML page and ends the connection.
    func respond(_ status: Int, title: String, message: String) async {
        let reason = [200: "OK", 400: "Bad Request", 404: "Not Found"][status] ?? "Error"
        let body = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(HTMLText.escape(title))</title></head>
            <body><h1>\(HTMLText.escape(title))</h1><p>\(HTMLText.escape(message))</p></body></html>

            """
        let head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nContent-Security-Policy: default-src 'none'\r\n"
            + "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
        var bytes = Array((head + body).utf8)
        let deadline = ContinuousClock.now + .seconds(5)
        while !bytes.isEmpty, ContinuousClock.now < deadline {
            let written = bytes.withUnsafeBytes { writeBytes(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes.removeFirst(written)
            } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                try? await Task.sleep(for: .milliseconds(10))
            } else {
                return
            }
        }
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    func close() { closeDescriptor(descriptor) }

}

// The POSIX calls under names the listener's own methods do not shadow.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
private func acceptConnection(_ descriptor: Int32) -> Int32 { accept(descriptor, nil, nil) }
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func writeBytes(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(descriptor, buffer, count) }
#endif
