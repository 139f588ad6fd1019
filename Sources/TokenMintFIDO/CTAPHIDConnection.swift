public import TokenMintCore
import TokenMintCrypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a key that speaks CTAPHID over 64-byte reports: a
/// UNIX-domain socket (``init(socketPath:)``, what `tokenmint fido2 device`
/// serves) or a Linux hidraw device (``init(hidrawPath:)``, a real security
/// key: see ``HIDRaw/fidoDevices(sysfs:dev:)``). It allocates a channel with INIT
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
    /// hidraw: each write is report ID 0 ‖ 64 bytes and each read one whole report.
    private let hidraw: Bool
    private let queue = DispatchQueue(label: "tokenmint.ctaphid.client")
    private let lock = Lock()
    private var closed = false
    /// A response timed out: its late answer may still come, so the next
    /// request first resynchronizes the channel with INIT (only touched on `queue`).
    private var needsResynchronization = false

    /// Connects to the socket at `socketPath` and allocates a channel.
    public convenience init(socketPath: String) async throws(TokenMintError) {
        let descriptor = try UnixSocket.open(socketPath, "connect to") { connect($0, $1, $2) }
        try await self.init(descriptor: descriptor)
    }

    /// Opens a Linux hidraw device (`/dev/hidrawN`; the user needs read and
    /// write access to it, usually through a udev rule) and allocates a channel.
    public convenience init(hidrawPath: String) async throws(TokenMintError) {
        let descriptor = open(hidrawPath, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TokenMintError(.fido.transportError, "cannot open \(hidrawPath.debugDescription): \(String(cString: strerror(errno)))")
        }
        try await self.init(descriptor: descriptor, hidraw: true)
    }

    /// A connection over an open descriptor that carries 64-byte reports
    /// both ways (a byte stream, or hidraw's report per read and report ID ‖
    /// report per write); it is closed with the connection.
    init(descriptor: Int32, hidraw: Bool = false) async throws(TokenMintError) {
        self.descriptor = descriptor
        self.hidraw = hidraw
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

    /// A connection over a descriptor with hidraw's shape (tests use a
    /// SOCK_SEQPACKET socket pair in place of a device); closed with the connection.
    package convenience init(hidrawDescriptorForTesting descriptor: Int32) async throws(TokenMintError) {
        try await self.init(descriptor: descriptor, hidraw: true)
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
        if needsResynchronization { try resynchronize() }
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

    /// INIT on the allocated channel (CTAP 2.1 §11.2.9.1.3): the key stops
    /// what the channel was doing; everything before the INIT answer with
    /// this nonce (a late answer) is skipped.
    private func resynchronize() throws(TokenMintError) {
        let nonce = SecureRandom.bytes(count: 8)
        for report in CTAPHID.packets(channel: channel, command: CTAPHID.Command.initialize.rawValue, data: nonce) { try write(report) }
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let report = try read(until: deadline)
            if CTAPHID.channel(report) == channel, report[4] == CTAPHID.Command.initialize.rawValue, Array(report[7..<15]) == nonce {
                needsResynchronization = false
                return
            }
        }
    }

    private func write(_ report: [UInt8]) throws(TokenMintError) {
        if hidraw {
            // Report ID 0 (FIDO devices have no report IDs), then the report, in one write.
            let packet = [0] + report
            while true {
                let count = packet.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress!, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count == packet.count else { throw TokenMintError(.fido.transportError, "the device refused a report") }
                return
            }
        }
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
            // close() cannot interrupt a hidraw read (shutdown is for sockets): the poll loop checks.
            guard !lock.withLock({ closed }) else { throw TokenMintError(.fido.sessionClosed, "the connection is closed") }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                needsResynchronization = true
                throw TokenMintError(.fido.transportError, "the key did not answer in time")
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000, 200))
            let ready = poll(&poller, 1, max(1, milliseconds))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            if hidraw {
                // One read, one report (a shorter one is zero-padded).
                let count = report.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                guard count > 0 else { throw TokenMintError(.fido.transportError, "the device went away while reading") }
                return report
            }
            let count = report.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + filled, $0.count - filled, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw TokenMintError(.fido.transportError, "the connection closed while reading") }
            filled += count
        }
        return report
    }
}
