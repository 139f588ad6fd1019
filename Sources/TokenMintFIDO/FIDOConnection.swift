public import TokenMintCore

/// A connection to a FIDO authenticator, as YubiKit's `Connection`: the
/// transport (in process, a UNIX socket, a HID device), from which sessions
/// are opened with the application already selected.
///
/// Opening a session invalidates the connection's previous one: a call on
/// the old session throws `sessionClosed`.
public protocol FIDOConnection: AnyObject, Sendable {
    /// Sends one CTAP2 request (command byte ‖ CBOR) and returns the
    /// response (status byte ‖ CBOR).
    func exchangeCTAP2(_ request: [UInt8]) async throws(TokenMintError) -> [UInt8]
    /// Which session of this connection is current.
    var sessions: SessionRegistry { get }
    /// Closes the transport; sessions of this connection fail afterwards.
    func close()
    /// The OATH application this connection reaches, or `nil` when the
    /// transport has none (the default: CTAPHID carries no OATH).
    var oathApplication: OATHApplication? { get }
}

extension FIDOConnection {
    /// A FIDO2 session on this connection; the previous session, if any,
    /// is invalidated.
    public func fido2Session() async throws(TokenMintError) -> FIDO2Session {
        FIDO2Session(connection: self, generation: try sessions.open())
    }

    /// No OATH application: the default of transports that carry none.
    public var oathApplication: OATHApplication? { nil }

    /// An OATH session on this connection; the previous session, if any,
    /// is invalidated.
    /// - Throws: `.oath.notSupported` when the connection has no OATH
    ///   application, `.fido.sessionClosed` when it is closed.
    public func oathSession() async throws(TokenMintError) -> OATHSession {
        guard let application = oathApplication else {
            throw TokenMintError(.oath.notSupported, "this connection has no OATH application")
        }
        return OATHSession(connection: self, application: application, generation: try sessions.open())
    }
}

/// Which session of a connection is current (the last one opened), and
/// whether the connection is closed.
public final class SessionRegistry: @unchecked Sendable {
    private let lock = Lock()
    private var current = 0
    private var closed = false

    /// A registry with no session open.
    public init() {}

    /// Opens a new session: its generation.
    func open() throws(TokenMintError) -> Int {
        try lock.withLock { () throws(TokenMintError) -> Int in
            guard !closed else { throw TokenMintError(.fido.sessionClosed, "the connection is closed") }
            current += 1
            return current
        }
    }

    /// Throws unless `generation` is the current session of an open connection.
    func check(_ generation: Int) throws(TokenMintError) {
        try lock.withLock { () throws(TokenMintError) in
            guard !closed else { throw TokenMintError(.fido.sessionClosed, "the connection is closed") }
            guard generation == current else { throw TokenMintError(.fido.sessionClosed, "a newer session replaced this one on the connection") }
        }
    }

    /// Marks the connection closed.
    public func close() { lock.withLock { closed = true } }
}

/// A connection to an authenticator in this process: requests go straight
/// to its ``CTAP2Authenticator``, as they would after CTAPHID framing, and
/// OATH sessions to its ``OATHApplication`` when it has one.
public final class InProcessConnection: FIDOConnection {
    /// The authenticator.
    public let authenticator: CTAP2Authenticator
    /// The OATH application, when the key has one.
    public let oathApplication: OATHApplication?
    /// Sessions.
    public let sessions = SessionRegistry()

    /// A connection to `authenticator` (and to `oath`, for OATH sessions).
    public init(_ authenticator: CTAP2Authenticator, oath: OATHApplication? = nil) {
        self.authenticator = authenticator
        self.oathApplication = oath
    }

    /// Sends one CTAP2 request.
    public func exchangeCTAP2(_ request: [UInt8]) async throws(TokenMintError) -> [UInt8] {
        await authenticator.respond(to: request)
    }

    /// Closes the connection.
    public func close() { sessions.close() }
}
