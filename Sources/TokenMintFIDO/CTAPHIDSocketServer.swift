public import TokenMintCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A ``CTAPHIDDevice`` served on a UNIX-domain stream socket: each client
/// connection is a host, exchanging raw 64-byte CTAPHID reports in both
/// directions (no report ID). `tokenmint fido2 device --socket` runs one;
/// CTAP clients reach it through a connection class of a few lines.
///
/// The socket file is created with mode 0600 (only its owner may talk to
/// the authenticator) and removed when the server stops.
public final class CTAPHIDSocketServer: @unchecked Sendable {
    /// The socket's path.
    public let path: String
    private let device: CTAPHIDDevice
    private let listener: Int32
    private let lock = Lock()
    private var connections: [Int: Int32] = [:]
    private var queues: [Int: DispatchQueue] = [:]
    /// Reports queued for each host and not yet written.
    private var backlog: [Int: Int] = [:]
    /// The most reports queued for a host that does not read (256 KiB): beyond, it is disconnected.
    static let maximumBacklog = 4096
    private var nextHost = 1
    private var stopped = false

    /// Binds `path` (a stale socket file there is replaced; any other file
    /// is an error) and serves `authenticator` once ``run()`` is called.
    public init(path: String, authenticator: CTAP2Authenticator) throws(TokenMintError) {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw TokenMintError(.fido.transportError, "\(SafeText.escaped(path)) exists and is not a socket")
            }
            unlink(path)
        }
        // The file is the device: mode 0600 from its creation.
        let previous = umask(0o177)
        defer { umask(previous) }
        let descriptor = try UnixSocket.open(path, "bind") { bind($0, $1, $2) }
        guard listen(descriptor, 16) == 0 else {
            let code = errno
            close(descriptor)
            throw TokenMintError(.fido.transportError, "cannot listen on \(SafeText.escaped(path)): errno \(code)")
        }
        self.path = path
        self.listener = descriptor
        let box = SendBox()
        self.device = CTAPHIDDevice(authenticator: authenticator) { host, report in box.server?.write(report, to: host) }
        box.server = self
    }

    /// The server the device's replies go to, set once it exists (weakly: the server owns the device).
    private final class SendBox: @unchecked Sendable {
        weak var server: CTAPHIDSocketServer?
    }

    /// Accepts connections until ``stop()``; each is read on its own thread.
    public func run() {
        let ticker = DispatchSource.makeTimerSource(queue: .global())
        ticker.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
        ticker.setEventHandler { [device] in device.tick() }
        ticker.resume()
        defer { ticker.cancel() }
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                let code = errno
                if lock.withLock({ stopped }) { break }
                // A failed accept (an aborted connection, no descriptor left) is not the end of the device.
                if code != EINTR, code != ECONNABORTED { usleep(100_000) }
                continue
            }
            let host: Int? = lock.withLock {
                guard !stopped else { return nil }
                let host = nextHost
                nextHost += 1
                connections[host] = client
                queues[host] = DispatchQueue(label: "tokenmint.ctaphid.host\(host)")
                return host
            }
            guard let host else {
                close(client)
                break
            }
            let thread = Thread { [weak self] in self?.read(from: client, host: host) }
            thread.start()
        }
    }

    /// Stops accepting, closes every connection and removes the socket file.
    public func stop() {
        let open: [Int32]? = lock.withLock {
            guard !stopped else { return nil }
            stopped = true
            return Array(connections.values)
        }
        guard let open else { return }
        // The file goes first: once the listener closes, run() returns and the process may end.
        unlink(path)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for client in open { shutdown(client, Int32(SHUT_RDWR)) }
    }

    private func read(from client: Int32, host: Int) {
        var report = [UInt8](repeating: 0, count: CTAPHID.reportSize)
        reading: while true {
            var filled = 0
            while filled < report.count {
                let count = report.withUnsafeMutableBytes { recv(client, $0.baseAddress! + filled, $0.count - filled, 0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break reading }
                filled += count
            }
            device.receive(report, from: host)
        }
        device.disconnected(host)
        lock.withLock {
            connections[host] = nil
            backlog[host] = nil
            // Writes already queued finish before the descriptor is closed.
            queues.removeValue(forKey: host)?.async { close(client) }
        }
    }

    private func write(_ report: [UInt8], to host: Int) {
        // Queued under the lock: the reader's close is queued after it on the
        // same queue, so this write never reaches a descriptor number reused by another host.
        lock.withLock {
            guard let client = connections[host], let queue = queues[host] else { return }
            let queued = backlog[host, default: 0] + 1
            guard queued <= Self.maximumBacklog else {
                // A host that sends and never reads would grow the queue without end: it is cut off.
                shutdown(client, Int32(SHUT_RDWR))
                return
            }
            backlog[host] = queued
            queue.async { [weak self] in
                defer { self?.lock.withLock { self?.backlog[host]? -= 1 } }
                var sent = 0
                while sent < report.count {
                    let count = report.withUnsafeBytes { send(client, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { return }
                    sent += count
                }
            }
        }
    }
}
