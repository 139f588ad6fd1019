import TokenMintCore
import Foundation
import Testing
import TokenMintCBOR
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn
import TokenMintFIDO

/// CTAP2 commands in canonical CBOR against the software authenticator, and
/// CTAPHID framing, in process: what a security key answers, status codes
/// included.
@Suite("CTAP2 and CTAPHID")
struct CTAPTests {
    static func authenticator() throws -> CTAP2Authenticator {
        CTAP2Authenticator(try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true))
    }

    static func request(_ command: CTAP2Command, _ entries: [(UInt64, CBOR)]) -> [UInt8] {
        [command.rawValue] + (entries.isEmpty ? [] : CBOREncoder.encode(.map(entries.map { CBORMapEntry(key: .unsigned($0.0), value: $0.1) })))
    }

    static func makeCredential(rk: Bool = true, exclude: [[UInt8]] = [], extensions: [(String, CBOR)] = [], user: [UInt8] = [1, 2, 3]) -> [UInt8] {
        var entries: [(UInt64, CBOR)] = [
            (0x01, .bytes([UInt8](repeating: 7, count: 32))),
            (0x02, .map([CBORMapEntry(key: .text("id"), value: .text("example.org"))])),
            (0x03, .map([CBORMapEntry(key: .text("id"), value: .bytes(user)), CBORMapEntry(key: .text("name"), value: .text("al"))])),
            (0x04, .array([.map([CBORMapEntry(key: .text("alg"), value: .int(-7)), CBORMapEntry(key: .text("type"), value: .text("public-key"))])])),
            // A discoverable credential on a key with built-in UV is made verified (CTAP 2.1 §6.1.2 step 7).
            (0x07, .map([CBORMapEntry(key: .text("rk"), value: .bool(rk))] + (rk ? [CBORMapEntry(key: .text("uv"), value: .bool(true))] : []))),
        ]
        if !exclude.isEmpty {
            entries.append((0x05, .array(exclude.map { .map([CBORMapEntry(key: .text("id"), value: .bytes($0)), CBORMapEntry(key: .text("type"), value: .text("public-key"))]) })))
        }
        if !extensions.isEmpty { entries.append((0x06, .map(extensions.map { CBORMapEntry(key: .text($0.0), value: $0.1) }))) }
        return request(.makeCredential, entries.sorted { $0.0 < $1.0 })
    }

    static func response(_ bytes: [UInt8]) throws -> CBOR {
        #expect(bytes.first == 0, "status \(bytes.first.map { String($0, radix: 16) } ?? "none")")
        return try CBORDecoder.decode(Array(bytes.dropFirst()))
    }

    @Test("getInfo, makeCredential, getAssertion and getNextAssertion in CBOR; the RP verifies what comes back")
    func commands() async throws {
        let ctap = try Self.authenticator()
        let info = try Self.response(await ctap.respond(to: [CTAP2Command.getInfo.rawValue]))
        #expect(info[.unsigned(1)]?.arrayValue == [.text("FIDO_2_0"), .text("FIDO_2_1")])
        #expect(info[.unsigned(2)]?.arrayValue?.compactMap(\.textValue) == CTAP2Authenticator.extensions)
        #expect(info[.unsigned(4)]?[.text("uv")]?.boolValue == true)
        var ids: [[UInt8]] = []
        for user in [[UInt8]([1]), [2]] {
            let made = try Self.response(await ctap.respond(to: Self.makeCredential(user: user)))
            #expect(made[.unsigned(1)]?.textValue == "packed")
            let bytes = try #require(made[.unsigned(2)]?.bytesValue)
            ids.append(try #require(try AuthenticatorData(parsing: bytes).attestedCredential?.credentialID))
        }
        let first = try Self.response(await ctap.respond(to: Self.request(.getAssertion, [
            (0x01, .text("example.org")), (0x02, .bytes([UInt8](repeating: 9, count: 32))),
        ])))
        #expect(first[.unsigned(5)]?.intValue == 2)
        #expect(first[.unsigned(4)]?[.text("id")]?.bytesValue == [2], "newest first")
        let next = try Self.response(await ctap.respond(to: [CTAP2Command.getNextAssertion.rawValue]))
        #expect(next[.unsigned(4)]?[.text("id")]?.bytesValue == [1])
        #expect(next[.unsigned(5)] == nil)
        #expect(await ctap.respond(to: [CTAP2Command.getNextAssertion.rawValue]) == [CTAP2Status.notAllowed.rawValue])
        // Any other command ends a getNextAssertion sequence (CTAP 2.1 §6.3), and so does a failed getAssertion.
        _ = try Self.response(await ctap.respond(to: Self.request(.getAssertion, [
            (0x01, .text("example.org")), (0x02, .bytes([UInt8](repeating: 9, count: 32))),
        ])))
        _ = try Self.response(await ctap.respond(to: [CTAP2Command.getInfo.rawValue]))
        #expect(await ctap.respond(to: [CTAP2Command.getNextAssertion.rawValue]) == [CTAP2Status.notAllowed.rawValue])
        _ = try Self.response(await ctap.respond(to: Self.request(.getAssertion, [
            (0x01, .text("example.org")), (0x02, .bytes([UInt8](repeating: 9, count: 32))),
        ])))
        #expect(await ctap.respond(to: Self.request(.getAssertion, [(0x01, .text("nowhere.example")), (0x02, .bytes([UInt8](repeating: 9, count: 32)))]))
                == [CTAP2Status.noCredentials.rawValue])
        #expect(await ctap.respond(to: [CTAP2Command.getNextAssertion.rawValue]) == [CTAP2Status.notAllowed.rawValue])
        // credBlob and largeBlobKey over CTAP.
        let blob = try Self.response(await ctap.respond(to: Self.makeCredential(extensions: [("credBlob", .bytes([5, 6])), ("largeBlobKey", .bool(true))])))
        #expect(blob[.unsigned(5)]?.bytesValue?.count == 32)
        let blobData = try #require(blob[.unsigned(2)]?.bytesValue)
        let blobID = try #require(try AuthenticatorData(parsing: blobData).attestedCredential?.credentialID)
        let got = try Self.response(await ctap.respond(to: Self.request(.getAssertion, [
            (0x01, .text("example.org")), (0x02, .bytes([UInt8](repeating: 9, count: 32))),
            (0x03, .array([.map([CBORMapEntry(key: .text("id"), value: .bytes(blobID)), CBORMapEntry(key: .text("type"), value: .text("public-key"))])])),
            (0x04, .map([CBORMapEntry(key: .text("credBlob"), value: .bool(true)), CBORMapEntry(key: .text("largeBlobKey"), value: .bool(true))])),
        ])))
        let gotData = try #require(got[.unsigned(2)]?.bytesValue)
        let outputs = try AuthenticatorExtensionOutputs(try AuthenticatorData(parsing: gotData).extensions, ceremony: .assertion)
        #expect(outputs.credBlob == [5, 6])
        #expect(got[.unsigned(7)]?.bytesValue == blob[.unsigned(5)]?.bytesValue)
        // reset empties it.
        #expect(await ctap.respond(to: [CTAP2Command.reset.rawValue]) == [0])
        #expect(await ctap.respond(to: Self.request(.getAssertion, [(0x01, .text("example.org")), (0x02, .bytes([UInt8](repeating: 9, count: 32)))]))
                == [CTAP2Status.noCredentials.rawValue])
        _ = ids
    }

    @Test("bad requests get the status CTAP names, never a crash")
    func statuses() async throws {
        let ctap = try Self.authenticator()
        let hash = CBOR.bytes([UInt8](repeating: 1, count: 32))
        let cases: [([UInt8], CTAP2Status)] = [
            ([], .invalidLength),
            ([0x55], .invalidCommand),
            ([CTAP2Command.clientPIN.rawValue], .missingParameter),
            ([CTAP2Command.makeCredential.rawValue, 0xFF, 0x00], .invalidCBOR),
            ([CTAP2Command.makeCredential.rawValue, 0xA1, 0x01], .invalidCBOR),
            ([CTAP2Command.makeCredential.rawValue] + CBOREncoder.encode(.array([])), .cborUnexpectedType),
            (Self.request(.makeCredential, [(0x02, .map([]))]), .missingParameter),
            (Self.request(.makeCredential, [(0x01, .text("x"))]), .cborUnexpectedType),
            (Self.request(.getAssertion, [(0x02, hash)]), .missingParameter),
            (Self.request(.getAssertion, [(0x01, .text("example.org")), (0x02, hash), (0x05, .map([CBORMapEntry(key: .text("rk"), value: .bool(true))]))]),
             .unsupportedOption),
            (Self.request(.getAssertion, [(0x01, .text("example.org")), (0x02, hash)]), .noCredentials),
            (Self.makeCredential(extensions: [("credProtect", .int(9))]), .invalidOption),
            (Self.makeCredential(rk: false, extensions: [("largeBlobKey", .bool(true))]), .invalidOption),
            ([UInt8](repeating: 1, count: CTAP2Authenticator.maximumMessageSize + 1), .requestTooLarge),
        ]
        for (request, status) in cases {
            #expect(await ctap.respond(to: request) == [status.rawValue], "\(Hex.encode(Array(request.prefix(16))))")
        }
        // Exclusion.
        let made = try Self.response(await ctap.respond(to: Self.makeCredential()))
        let madeData = try #require(made[.unsigned(2)]?.bytesValue)
        let id = try #require(try AuthenticatorData(parsing: madeData).attestedCredential?.credentialID)
        #expect(await ctap.respond(to: Self.makeCredential(exclude: [id])) == [CTAP2Status.credentialExcluded.rawValue])
        // up:false on makeCredential.
        var upFalse = Self.makeCredential()
        upFalse = upFalse.count > 0 ? Self.request(.makeCredential, [
            (0x01, hash), (0x02, .map([CBORMapEntry(key: .text("id"), value: .text("example.org"))])),
            (0x03, .map([CBORMapEntry(key: .text("id"), value: .bytes([1]))])),
            (0x04, .array([.map([CBORMapEntry(key: .text("alg"), value: .int(-7)), CBORMapEntry(key: .text("type"), value: .text("public-key"))])])),
            (0x07, .map([CBORMapEntry(key: .text("up"), value: .bool(false))])),
        ]) : upFalse
        #expect(await ctap.respond(to: upFalse) == [CTAP2Status.invalidOption.rawValue])
    }
}

/// A CTAPHID device whose reports are collected per host.
final class Wire: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [Int: [[UInt8]]] = [:]
    let authenticator: CTAP2Authenticator
    init(_ authenticator: CTAP2Authenticator? = nil) { self.authenticator = authenticator ?? (try! CTAPTests.authenticator()) }
    lazy var device = CTAPHIDDevice(authenticator: authenticator) { [unowned self] host, report in
        self.lock.lock()
        self.reports[host, default: []].append(report)
        self.lock.unlock()
    }

    func take(_ host: Int) -> [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        return reports.removeValue(forKey: host) ?? []
    }

    /// The reports of `host` once `count` have arrived (or `seconds` passed).
    func wait(_ host: Int, count: Int = 1, seconds: Int = 1) async -> [[UInt8]] {
        for _ in 0..<(100 * seconds) {
            let have = lock.withLock { reports[host]?.count ?? 0 }
            if have >= count { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return take(host)
    }

    func send(_ host: Int, channel: UInt32, command: UInt8, data: [UInt8]) {
        for report in CTAPHID.packets(channel: channel, command: command, data: data) { device.receive(report, from: host) }
    }

    /// INIT on the broadcast channel: the new channel.
    func allocate(_ host: Int) throws -> UInt32 {
        let nonce: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        send(host, channel: CTAPHID.broadcastChannel, command: CTAPHID.Command.initialize.rawValue, data: nonce)
        let answer = take(host)
        #expect(answer.count == 1)
        let report = try #require(answer.first)
        #expect(Array(report[0..<4]) == [0xFF, 0xFF, 0xFF, 0xFF] && report[4] == 0x86 && report[6] == 17)
        #expect(Array(report[7..<15]) == nonce)
        #expect(report[15 + 4] == 2 && report[15 + 8] == CTAPHID.capabilities)
        return UInt32(report[15]) << 24 | UInt32(report[16]) << 16 | UInt32(report[17]) << 8 | UInt32(report[18])
    }

    /// Reassembles a response message.
    static func message(_ reports: [[UInt8]]) -> (command: UInt8, data: [UInt8])? {
        guard let first = reports.first else { return nil }
        let length = Int(first[5]) << 8 | Int(first[6])
        var data = Array(first[7..<min(64, 7 + length)])
        for report in reports.dropFirst() where data.count < length { data += report[5..<min(64, 5 + length - data.count)] }
        return (first[4], data)
    }
}

@Suite("CTAPHID framing")
struct CTAPHIDTests {
    @Test("a command waiting for the user: KEEPALIVE UPNEEDED; CANCEL answers KEEPALIVE_CANCEL and stores nothing; INIT stops it unanswered")
    func cancel() async throws {
        let software = try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true, confirmPresence: { _ in
            try? await Task.sleep(for: .seconds(20))  // a user who never touches the key; ends when cancelled
            return true
        })
        let wire = Wire(CTAP2Authenticator(software))
        let channel = try wire.allocate(1)
        for stop in [CTAPHID.Command.cancel, .initialize] {
            wire.send(1, channel: channel, command: CTAPHID.Command.cbor.rawValue, data: CTAPTests.makeCredential())
            let waiting = await wire.wait(1, count: 2, seconds: 10)
            #expect(waiting.count >= 2 && waiting.allSatisfy { $0[4] == CTAPHID.Command.keepalive.rawValue && $0[7] == 2 }, "UPNEEDED")
            #expect(wire.device.isProcessing)
            wire.send(1, channel: channel, command: stop.rawValue, data: stop == .cancel ? [] : [9, 8, 7, 6, 5, 4, 3, 2])
            let answer = try #require(Wire.message(await wire.wait(1)))
            if stop == .cancel {
                #expect(answer.command == 0x90 && answer.data == [CTAP2Status.keepaliveCancel.rawValue])
            } else {
                #expect(answer.command == 0x86 && Array(answer.data.prefix(8)) == [9, 8, 7, 6, 5, 4, 3, 2])
            }
            #expect(!wire.device.isProcessing)
            try await Task.sleep(for: .milliseconds(250))
            #expect(wire.take(1).isEmpty, "no late answer, no keepalive after \(stop)")
            #expect(try await software.residentCredentialCount() == 0, "the cancelled makeCredential stored nothing")
        }
        // The channel serves the next command.
        wire.send(1, channel: channel, command: CTAPHID.Command.cbor.rawValue, data: [CTAP2Command.getInfo.rawValue])
        #expect(Wire.message(await wire.wait(1))?.data.first == 0)
    }

    @Test("INIT allocates distinct channels; PING echoes a multi-packet message; WINK; a CBOR getInfo answers")
    func basics() async throws {
        let wire = Wire()
        let a = try wire.allocate(1), b = try wire.allocate(2)
        #expect(a != b)
        let data = (0..<1000).map { UInt8($0 & 0xFF) }
        wire.send(1, channel: a, command: CTAPHID.Command.ping.rawValue, data: data)
        let echoed = try #require(Wire.message(wire.take(1)))
        #expect(echoed.command == 0x81 && echoed.data == data)
        wire.send(2, channel: b, command: CTAPHID.Command.wink.rawValue, data: [])
        #expect(Wire.message(wire.take(2))?.command == 0x88)
        wire.send(2, channel: b, command: CTAPHID.Command.cbor.rawValue, data: [CTAP2Command.getInfo.rawValue])
        let info = try #require(Wire.message(await wire.wait(2)))
        #expect(info.command == 0x90 && info.data.first == 0)
        #expect(try CBORDecoder.decode(Array(info.data.dropFirst()))[.unsigned(3)]?.bytesValue?.count == 16)
    }

    @Test("framing errors: sequence, command, length, channel, busy, timeout; the device keeps serving")
    func errors() async throws {
        let wire = Wire()
        let a = try wire.allocate(1), b = try wire.allocate(2)
        func error(_ host: Int) -> UInt8? {
            guard let message = Wire.message(wire.take(host)), message.command == 0xBF else { return nil }
            return message.data.first
        }
        // A continuation out of sequence.
        var packets = CTAPHID.packets(channel: a, command: CTAPHID.Command.ping.rawValue, data: [UInt8](repeating: 1, count: 200))
        packets[1][4] = 5
        for report in packets.prefix(2) { wire.device.receive(report, from: 1) }
        #expect(error(1) == CTAPHID.ErrorCode.invalidSequence.rawValue)
        // An unknown command, MSG (no CTAP1), LOCK.
        for command: UInt8 in [0xA5, 0x83, 0x84] {
            wire.send(1, channel: a, command: command, data: [1])
            #expect(error(1) == CTAPHID.ErrorCode.invalidCommand.rawValue, "command \(command)")
        }
        // A message longer than any CTAPHID message; INIT with a bad length; a short report.
        var long = CTAPHID.packets(channel: a, command: 0x81, data: [])[0]
        long[5] = 0xFF
        long[6] = 0xFF
        wire.device.receive(long, from: 1)
        #expect(error(1) == CTAPHID.ErrorCode.invalidLength.rawValue)
        wire.send(1, channel: CTAPHID.broadcastChannel, command: 0x86, data: [1, 2, 3])
        #expect(error(1) == CTAPHID.ErrorCode.invalidLength.rawValue)
        wire.device.receive([0, 0, 0, 1, 0x81], from: 1)
        #expect(error(1) == CTAPHID.ErrorCode.invalidLength.rawValue)
        // Channels never allocated, 0, and the broadcast channel for anything but INIT.
        for channel: UInt32 in [0x1234_5678, 0, CTAPHID.broadcastChannel] {
            wire.send(1, channel: channel, command: 0x81, data: [1])
            #expect(error(1) == CTAPHID.ErrorCode.invalidChannel.rawValue, "channel \(channel)")
        }
        // A half-sent message on a, then a message on b: busy; then a times out.
        let half = CTAPHID.packets(channel: a, command: 0x81, data: [UInt8](repeating: 2, count: 300))
        wire.device.receive(half[0], from: 1)
        wire.send(2, channel: b, command: 0x81, data: [3])
        #expect(error(2) == CTAPHID.ErrorCode.channelBusy.rawValue)
        try await Task.sleep(for: .milliseconds(600))
        wire.device.tick()
        #expect(error(1) == CTAPHID.ErrorCode.messageTimeout.rawValue)
        // A spurious continuation is ignored; b is served again.
        wire.device.receive(half[1], from: 1)
        #expect(wire.take(1).isEmpty)
        wire.send(2, channel: b, command: 0x81, data: [4, 5])
        #expect(Wire.message(wire.take(2))?.data == [4, 5])
        // INIT on an allocated channel resynchronizes it and keeps its ID.
        wire.device.receive(half[0], from: 1)
        wire.send(1, channel: a, command: 0x86, data: [8, 7, 6, 5, 4, 3, 2, 1])
        let resync = try #require(Wire.message(wire.take(1)))
        #expect(resync.command == 0x86 && Array(resync.data[8..<12]) == [UInt8(a >> 24), UInt8(a >> 16 & 0xFF), UInt8(a >> 8 & 0xFF), UInt8(a & 0xFF)])
        // Garbage CBOR is a CTAP status inside a CBOR response.
        wire.send(1, channel: a, command: 0x90, data: [0x01, 0xFF])
        #expect(Wire.message(await wire.wait(1))?.data == [CTAP2Status.invalidCBOR.rawValue])
    }
}
