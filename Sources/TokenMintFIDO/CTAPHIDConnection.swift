public import TokenMintCore
import TokenMintCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a key that speaks CTAPHID over 64-byte reports: a
/// UNIX-domain socket (``init(socketPath:)``, what `tokenmint fido2 device`
/// serves) or any other report transport. It allocates a channel with INIT
/// (checking the nonce echo), frames each CBOR request, skips KEEPALIVE
/// reports and turns ERROR into a `transportError`.
public final class CTAPHIDConnection: FIDOConnection, @unchecked Sendable {
    /// Sessions.
    public let sessions = SessionRegistry()
    /// The channel the key allocated.
    public private(set) var channel: UInt32 = CTAPHID.broadcastChannel
    /// How long a response may take (keepalives restart nothing: the whole answer is bounded).
    public static let responseTimeout: Duration = .seconds(30)

    private let descriptor: Int32
    private let queue = DispatchQueue(label: "tokenmint.ctaphid.client")
    private let lock = Lock()
    private var closed = false

    /// Connects to the socket at `socketPath` and allocates a channel.
    public convenience init(socketPath: String) async throws(TokenMintError) {
        let descriptor = try UnixSocket.open(socketPath, "connect to") { connect($0, $1, $2) }
        try await self.init(descriptor: descriptor)
    }

    /// A connection over an open descriptor that carries 64-byte reports
    /// both ways; it is closed with the connection.
    init(descriptor: Int32) async throws(TokenMintError) {
        self.descriptor = descriptor
        let nonce = SecureRandom.bytes(count: 8)
        let answer = try await transact(channel: CTAPHID.broadcastChannel, command: CTAPHID.Command.initialize.rawValue, data: nonce) { data in
            data.count >= 17 && Array(data[0..<8]) == nonce
        }
        channel = CTAPHID.channel(answer, at: 8)
        guard channel != 0, channel != CTAPHID.broadcastChannel else {
            close()
            throw TokenMintError(.fido.transportError, "the key allocated an invalid channel")
        }
    }

    deinit { close() }

    /// Sends one CTAP2 request in a CTAPHID CBOR message.
    public func exchangeCTAP2(_ request: [UInt8]) async throws(TokenMintError) -> [UInt8] {
        guard request.count <= CTAPHID.maximumMessageSize else { throw TokenMintError(.fido.transportError, "the request is over the CTAPHID maximum") }
        return try await transact(channel: channel, command: CTAPHID.Command.cbor.rawValue, data: request) { _ in true }
    }

    /// Echoes `data` (CTAPHID PING).
    public func ping(_ data: [UInt8]) async throws(TokenMintError) -> [UInt8] {
        try await transact(channel: channel, command: CTAPHID.Command.ping.rawValue, data: data) { _ in true }
    }

    /// Closes the transport.
    public func close() {
        let wasOpen = lock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        sessions.close()
        if wasOpen {
            // Shut down now (a read or write under way ends); closed on the
            // request queue, after it, so no request touches a reused descriptor.
            shutdown(descriptor, Int32(SHUT_RDWR))
            let descriptor = self.descriptor
            queue.async { _ = Glibc.close(descriptor) }
        }
    }

    /// One request and its response on `channel`, off the caller's thread;
    /// responses of that command that `accept` refuses (another INIT's) are skipped.
    private func transact(channel: UInt32, command: UInt8, data: [UInt8], accept: @escaping @Sendable ([UInt8]) -> Bool)
        async throws(TokenMintError) -> [UInt8]
    {
        let result: Result<[UInt8], TokenMintError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(returning: Result { () throws(TokenMintError) in try self.blockingTransact(channel, command, data, accept) })
            }
        }
        return try result.get()
    }

    private func blockingTransact(_ channel: UInt32, _ command: UInt8, _ data: [UInt8], _ accept: ([UInt8]) -> Bool) throws(TokenMintError) -> [UInt8] {
        guard !lock.withLock({ closed }) else { throw TokenMintError(.fido.sessionClosed, "the connection is closed") }
        for report in CTAPHID.packets(channel: channel, command: command, data: data) { try write(report) }
        let deadline = ContinuousClock.now + Self.responseTimeout
        var busyRetries = 0
        while true {
            let first = try read(until: deadline)
            guard CTAPHID.channel(first) == channel, first[4] & 0x80 != 0 else { continue }
            if first[4] == CTAPHID.Command.keepalive.rawValue { continue }
            let length = Int(first[5]) << 8 | Int(first[6])
            guard length <= CTAPHID.maximumMessageSize else { throw TokenMintError(.fido.transportError, "the key announced \(length) bytes") }
            var message = Array(first[7..<min(64, 7 + length)])
            var sequence: UInt8 = 0
            while message.count < length {
                let next = try read(until: deadline)
                guard CTAPHID.channel(next) == channel else { continue }
                guard next[4] == sequence else { throw TokenMintError(.fido.transportError, "a response packet is out of sequence") }
                message += next[5..<min(64, 5 + length - message.count)]
                sequence &+= 1
            }
            if first[4] == CTAPHID.Command.error.rawValue {
                // The device is busy with another channel: send again shortly, for up to 2 s.
                if message.first == CTAPHID.ErrorCode.channelBusy.rawValue, busyRetries < 100 {
                    busyRetries += 1
                    usleep(20_000)
                    for report in CTAPHID.packets(channel: channel, command: command, data: data) { try write(report) }
                    continue
                }
                let code = message.first.flatMap(CTAPHID.ErrorCode.init(rawValue:)).map { "\($0)" } ?? "unknown"
                throw TokenMintError(.fido.transportError, "the key answered CTAPHID ERROR \(code)")
            }
            guard first[4] == command else { throw TokenMintError(.fido.transportError, "the key answered command 0x\(String(first[4], radix: 16))") }
            if accept(message) { return message }
        }
    }

    private func write(_ report: [UInt8]) throws(TokenMintError) {
        var sent = 0
        while sent < report.count {
            let count = report.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw TokenMintError(.fido.transportError, "the connection closed while writing") }
            sent += count
        }
    }

    private func read(until deadline: ContinuousClock.Instant) throws(TokenMintError) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: CTAPHID.reportSize)
        var filled = 0
        while filled < report.count {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw TokenMintError(.fido.transportError, "the key did not answer in time") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000, 60_000))
            let ready = poll(&poller, 1, max(1, milliseconds))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = report.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + filled, $0.count - filled, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw TokenMintError(.fido.transportError, "the connection closed while reading") }
            filled += count
        }
        return report
    }
}
