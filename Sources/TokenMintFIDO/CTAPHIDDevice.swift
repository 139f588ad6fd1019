import TokenMintCore
import Foundation
import TokenMintWebAuthn

/// The authenticator side of CTAPHID: takes reports from hosts, answers
/// INIT, PING, WINK and CANCEL itself, hands complete CBOR messages to a
/// ``CTAP2Authenticator`` and frames the responses, sending KEEPALIVE every
/// 100 ms while a command runs.
///
/// One device serves many hosts (a host is a connection: a socket client,
/// a HID handle); channels are device-wide, as on a security key. One
/// message is assembled or processed at a time: an initialization packet
/// on another channel meanwhile gets ERR_CHANNEL_BUSY, a wrong sequence
/// number ERR_INVALID_SEQ, a message left unfinished for
/// ``transactionTimeout`` ERR_MSG_TIMEOUT, an unknown or unallocated
/// channel ERR_INVALID_CHANNEL. A malformed report is answered, never trusted.
public final class CTAPHIDDevice: @unchecked Sendable {
    /// Who sent a report; responses go back to the same host.
    public typealias Host = Int

    /// How long a message may wait for its next continuation packet.
    public static let transactionTimeout: Duration = .milliseconds(500)
    /// The most channels allocated at once (the oldest is dropped beyond).
    public static let maximumChannels = 256

    private struct Assembly {
        let channel: UInt32
        let host: Host
        let command: UInt8
        let length: Int
        var data: [UInt8]
        var sequence: UInt8
        var deadline: ContinuousClock.Instant
    }

    private struct Processing {
        let id: Int
        let channel: UInt32
        let host: Host
        var task: Task<Void, Never>?
        /// Waiting for the user (KEEPALIVE status UPNEEDED, else PROCESSING).
        var waitingForUser = false
    }

    private let authenticator: CTAP2Authenticator
    private let send: @Sendable (Host, [UInt8]) -> Void
    private let lock = Lock()
    private var channels: [UInt32] = []
    private var nextChannel: UInt32 = 1
    private var assembly: Assembly?
    private var processing: Processing?
    private var lastProcessingID = 0

    /// A device answering with `authenticator`; `send` delivers one report
    /// to a host (it must not block: queue the write).
    public init(authenticator: CTAP2Authenticator, send: @escaping @Sendable (Host, [UInt8]) -> Void) {
        self.authenticator = authenticator
        self.send = send
    }

    /// Handles one report from `host`.
    public func receive(_ report: [UInt8], from host: Host) {
        lock.withLock { handle(report, from: host) }
    }

    /// Whether a CBOR command is running (its answer not sent yet).
    public var isProcessing: Bool { lock.withLock { processing != nil } }

    /// Forgets `host`'s unfinished message (its connection closed).
    public func disconnected(_ host: Host) {
        lock.withLock {
            if assembly?.host == host { assembly = nil }
        }
    }

    /// Expires an unfinished message whose next packet is late (call it
    /// now and then; a report arriving also checks).
    public func tick() {
        lock.withLock { expire() }
    }

    private func expire() {
        if let pending = assembly, ContinuousClock.now > pending.deadline {
            assembly = nil
            fail(pending.channel, .messageTimeout, to: pending.host)
        }
    }

    private func fail(_ channel: UInt32, _ code: CTAPHID.ErrorCode, to host: Host) {
        reply(channel, CTAPHID.Command.error.rawValue, [code.rawValue], to: host)
    }

    private func reply(_ channel: UInt32, _ command: UInt8, _ data: [UInt8], to host: Host) {
        for report in CTAPHID.packets(channel: channel, command: command, data: data) { send(host, report) }
    }

    private func handle(_ report: [UInt8], from host: Host) {
        expire()
        guard report.count == CTAPHID.reportSize else {
            if report.count >= 4 { fail(CTAPHID.channel(report), .invalidLength, to: host) }
            return
        }
        let channel = CTAPHID.channel(report)
        let isInitialization = report[4] & 0x80 != 0
        guard isInitialization else {
            continuation(report, channel: channel, from: host)
            return
        }
        let command = report[4]
        let length = Int(report[5]) << 8 | Int(report[6])
        if command == CTAPHID.Command.initialize.rawValue {
            initialize(report, channel: channel, length: length, from: host)
            return
        }
        guard channel != 0, channel != CTAPHID.broadcastChannel, channels.contains(channel) else {
            fail(channel, .invalidChannel, to: host)
            return
        }
        if let pending = assembly {
            guard pending.channel == channel else {
                fail(channel, .channelBusy, to: host)
                return
            }
            // A new message on the channel before the last one was complete.
            assembly = nil
            fail(channel, .invalidSequence, to: host)
            return
        }
        if let running = processing {
            // While a command runs, only its own channel's CANCEL is taken: the
            // command is stopped and answered KEEPALIVE_CANCEL now (CTAP 2.1 §11.2.9.1.5).
            if running.channel == channel, command == CTAPHID.Command.cancel.rawValue {
                abort(answering: true)
            } else {
                fail(channel, .channelBusy, to: host)
            }
            return
        }
        guard length <= CTAPHID.maximumMessageSize else {
            fail(channel, .invalidLength, to: host)
            return
        }
        let data = Array(report[7..<min(7 + length, 64)])
        if data.count == length {
            complete(channel: channel, command: command, data: data, from: host)
        } else {
            assembly = Assembly(channel: channel, host: host, command: command, length: length, data: data, sequence: 0,
                                deadline: ContinuousClock.now + Self.transactionTimeout)
        }
    }

    private func continuation(_ report: [UInt8], channel: UInt32, from host: Host) {
        // A continuation with no message under way is spurious, and ignored.
        guard var pending = assembly, pending.channel == channel else { return }
        guard report[4] == pending.sequence else {
            assembly = nil
            fail(channel, .invalidSequence, to: host)
            return
        }
        let take = min(59, pending.length - pending.data.count)
        pending.data += report[5..<5 + take]
        pending.sequence &+= 1
        pending.deadline = ContinuousClock.now + Self.transactionTimeout
        if pending.data.count == pending.length {
            assembly = nil
            complete(channel: channel, command: pending.command, data: pending.data, from: pending.host)
        } else {
            assembly = pending
        }
    }

    private func initialize(_ report: [UInt8], channel: UInt32, length: Int, from host: Host) {
        guard length == 8 else {
            fail(channel, .invalidLength, to: host)
            return
        }
        guard channel != 0, channel == CTAPHID.broadcastChannel || channels.contains(channel) else {
            fail(channel, .invalidChannel, to: host)
            return
        }
        // INIT on an allocated channel resynchronizes it: its unfinished
        // message is dropped and a command it runs is stopped, unanswered.
        if assembly?.channel == channel { assembly = nil }
        if channel != CTAPHID.broadcastChannel, processing?.channel == channel { abort(answering: false) }
        var allocated = channel
        if channel == CTAPHID.broadcastChannel {
            allocated = nextChannel
            nextChannel = nextChannel >= 0xFFFF_FFFE ? 1 : nextChannel + 1
            channels.append(allocated)
            if channels.count > Self.maximumChannels { channels.removeFirst() }
        }
        let nonce = Array(report[7..<15])
        reply(channel, CTAPHID.Command.initialize.rawValue, nonce + CTAPHID.bytes(of: allocated) + [2, 1, 0, 0, CTAPHID.capabilities], to: host)
    }

    private func complete(channel: UInt32, command: UInt8, data: [UInt8], from host: Host) {
        switch CTAPHID.Command(rawValue: command) {
        case .ping:
            reply(channel, command, data, to: host)
        case .wink:
            guard data.isEmpty else { return fail(channel, .invalidLength, to: host) }
            reply(channel, command, [], to: host)
        case .cancel:
            break  // nothing runs: nothing to cancel, and CANCEL has no answer
        case .cbor:
            guard !data.isEmpty else { return fail(channel, .invalidLength, to: host) }
            run(data, channel: channel, host: host)
        default:
            fail(channel, .invalidCommand, to: host)
        }
    }

    /// Stops the running command (its task is cancelled, and its answer,
    /// if it comes, dropped), answering KEEPALIVE_CANCEL when `answering`.
    private func abort(answering: Bool) {
        guard let running = processing else { return }
        running.task?.cancel()
        processing = nil
        if answering { reply(running.channel, CTAPHID.Command.cbor.rawValue, [CTAP2Status.keepaliveCancel.rawValue], to: running.host) }
    }

    /// Runs a CBOR command off the lock, with KEEPALIVE every 100 ms until it
    /// answers (UPNEEDED while the authenticator waits for the user). Called
    /// under the lock.
    private func run(_ request: [UInt8], channel: UInt32, host: Host) {
        let authenticator = self.authenticator
        lastProcessingID += 1
        let id = lastProcessingID
        processing = Processing(id: id, channel: channel, host: host)
        let keepalive = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                guard !Task.isCancelled, let self else { return }
                self.lock.withLock {
                    guard let running = self.processing, running.id == id else { return }
                    self.reply(channel, CTAPHID.Command.keepalive.rawValue, [running.waitingForUser ? 2 : 1], to: host)
                }
            }
        }
        let observer: @Sendable (Bool) -> Void = { [weak self] waiting in
            self?.lock.withLock { if self?.processing?.id == id { self?.processing?.waitingForUser = waiting } }
        }
        processing?.task = Task { [weak self] in
            // The device runs one command at a time: its observer is the one set (an
            // earlier command's, left behind, matches no running command and does nothing).
            await authenticator.authenticator.observeUserInteraction(observer)
            let response = await authenticator.respond(to: request)
            keepalive.cancel()
            guard let self else { return }
            self.lock.withLock {
                // A cancelled or resynchronized command was answered already, or is not to be.
                guard self.processing?.id == id else { return }
                self.processing = nil
                self.reply(channel, CTAPHID.Command.cbor.rawValue, response, to: host)
            }
        }
    }
}
