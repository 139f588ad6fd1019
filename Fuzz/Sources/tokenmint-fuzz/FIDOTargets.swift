import Foundation
import TokenMintCore
import TokenMintCBOR
import TokenMintStore
import TokenMintWebAuthn
import TokenMintFIDO

/// A fresh software authenticator over a store in memory, for one input:
/// nothing carries over from one input to the next, so each replays alone.
func ctapAuthenticator() -> CTAP2Authenticator {
    guard let software = try? SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true) else {
        violated("the software authenticator does not start")
    }
    return CTAP2Authenticator(software)
}

/// Runs `body` to its end on the concurrency pool, synchronously.
func blocking(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await body()
        done.signal()
    }
    done.wait()
}

/// CTAP2 commands: the input is a sequence of requests, each a 2-byte
/// big-endian length and a request (command byte ‖ CBOR), run in order on
/// one authenticator (so that a made credential can be asserted). Every
/// response is a CTAP status byte; a success carries canonical CBOR.
func fuzzCTAP2Command(_ input: [UInt8]) {
    var requests: [[UInt8]] = []
    var offset = 0
    while offset + 2 <= input.count, requests.count < 16 {
        let length = Int(input[offset]) << 8 | Int(input[offset + 1])
        let end = min(input.count, offset + 2 + length)
        requests.append(Array(input[(offset + 2)..<end]))
        offset = end
    }
    let authenticator = ctapAuthenticator()
    let sequence = requests
    blocking {
        for request in sequence {
            let response = await authenticator.respond(to: request)
            guard let status = response.first else { violated("an empty CTAP2 response") }
            guard CTAP2Status(rawValue: status) != nil else { violated("status 0x\(String(status, radix: 16)) is not a CTAP status") }
            if status == 0, response.count > 1 {
                guard (try? CBORDecoder.decode(Array(response.dropFirst()))) != nil else { violated("a success that is not canonical CBOR") }
            } else if status != 0, response.count != 1 {
                violated("an error response carries data")
            }
        }
    }
}

/// CTAPHID: the input is cut into 64-byte reports (the last one short, which
/// the device must refuse too) from two hosts in turn; every report the
/// device sends is 64 bytes on a channel it allocated or the broadcast one.
func fuzzCTAPHID(_ input: [UInt8]) {
    let sent = ReportLog()
    let device = CTAPHIDDevice(authenticator: ctapAuthenticator()) { host, report in sent.add(host, report) }
    var offset = 0
    var host = 1
    while offset < input.count {
        let end = min(offset + CTAPHID.reportSize, input.count)
        device.receive(Array(input[offset..<end]), from: host)
        offset = end
        host = 3 - host
    }
    device.tick()
    // The last CBOR command answers before the next input (nothing left in flight).
    for _ in 0..<2000 where device.isProcessing { usleep(1000) }
    for (_, report) in sent.all() where report.count != CTAPHID.reportSize { violated("a report of \(report.count) bytes") }
}

/// The reports a device sent, per host.
final class ReportLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [(Int, [UInt8])] = []
    func add(_ host: Int, _ report: [UInt8]) { lock.withLock { reports.append((host, report)) } }
    func all() -> [(Int, [UInt8])] { lock.withLock { reports } }
}
