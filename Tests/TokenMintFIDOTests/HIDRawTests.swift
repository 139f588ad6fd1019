import TokenMintCore
import Foundation
import Testing
import TokenMintCrypto
import TokenMintStore
import TokenMintWebAuthn
import TokenMintFIDO
#if canImport(Glibc)
import Glibc
#endif

/// The hidraw transport without a key: enumeration over a fake sysfs tree,
/// and the session over a fake hidraw pair (a SOCK_SEQPACKET socket pair
/// keeps hidraw's shape: each write is report ID 0 ‖ 64 bytes, each read one
/// 64-byte report) served by the CTAPHID device.
@Suite("hidraw: enumeration and the session over a fake hidraw pair")
struct HIDRawTests {
    /// A YubiKey-like FIDO descriptor (usage page 0xF1D0, usage 1, 64-byte reports) and a keyboard's.
    static let fido: [UInt8] = [0x06, 0xD0, 0xF1, 0x09, 0x01, 0xA1, 0x01, 0x09, 0x20, 0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08,
                                0x95, 0x40, 0x81, 0x02, 0x09, 0x21, 0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08, 0x95, 0x40, 0x91, 0x02, 0xC0]
    static let keyboard: [UInt8] = [0x05, 0x01, 0x09, 0x06, 0xA1, 0x01, 0x05, 0x07, 0x19, 0xE0, 0x29, 0xE7, 0xC0]

    @Test("only devices with usage page 0xF1D0 are listed, with their product names and IDs")
    func enumerate() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hidraw-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (name, descriptor, uevent) in [
            ("hidraw0", Self.keyboard, "HID_ID=0003:000046D:0000C31C\nHID_NAME=Logitech USB Keyboard\n"),
            ("hidraw2", Self.fido, "DRIVER=hid-generic\nHID_ID=0003:00001050:00000407\nHID_NAME=Yubico YubiKey OTP+FIDO+CCID\n"),
            ("hidraw1", [0xFE, 0x02, 0x10, 0x06, 0xD0] + Self.keyboard, "HID_NAME=long item hiding a page\n"),
            ("hidraw3", [0x06, 0xD0], "HID_NAME=truncated\n"),
        ] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(name)/device", withIntermediateDirectories: true)
            try Data(descriptor).write(to: URL(fileURLWithPath: "\(root)/\(name)/device/report_descriptor"))
            try Data(uevent.utf8).write(to: URL(fileURLWithPath: "\(root)/\(name)/device/uevent"))
        }
        let found = HIDRaw.fidoDevices(sysfs: root, dev: "/dev")
        #expect(found.map(\.path) == ["/dev/hidraw2"])
        #expect(found.first?.productName == "Yubico YubiKey OTP+FIDO+CCID" && found.first?.vendorID == 0x1050 && found.first?.productID == 0x0407)
        #expect(HIDRaw.fidoDevices(sysfs: root + "/absent").isEmpty)
        #expect(!HIDRaw.isFIDO(reportDescriptor: []) && HIDRaw.isFIDO(reportDescriptor: Self.fido))
    }

    @Test("the FIDO2 session over a fake hidraw pair; a device that goes away is a typed error")
    func session() async throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0)
        let host = pair[0], deviceSide = pair[1]
        let ctap = CTAP2Authenticator(try SoftwareAuthenticator(store: InMemoryStore(), supportsUserVerification: true))
        let device = CTAPHIDDevice(authenticator: ctap) { _, report in
            #expect(report.count == 64)
            _ = report.withUnsafeBytes { Glibc.write(deviceSide, $0.baseAddress!, $0.count) }
        }
        let badReportIDs = Counter()
        let reader = Thread {
            var packet = [UInt8](repeating: 0, count: 65)
            while true {
                let count = packet.withUnsafeMutableBytes { Glibc.read(deviceSide, $0.baseAddress!, $0.count) }
                guard count > 0 else { return }
                if count != 65 || packet[0] != 0 { badReportIDs.add() }
                device.receive(Array(packet[1..<65]), from: 1)
            }
        }
        reader.start()
        let connection = try await CTAPHIDConnection(hidrawDescriptorForTesting: host)
        let session = try await connection.fido2Session()
        let info = try await session.getInfo()
        #expect(info.versions.contains("FIDO_2_1") && info.pinUVAuthProtocols == [2, 1])
        #expect(try await connection.ping(Array(repeating: 0xA5, count: 1000)) == Array(repeating: 0xA5, count: 1000))
        let made = try await session.makeCredential(clientDataHash: [UInt8](repeating: 1, count: 32), rp: ("example.org", nil), user: ([1], "a", nil))
        let asserted = try await session.getAssertion(rpID: "example.org", clientDataHash: [UInt8](repeating: 2, count: 32), allowList: [made.credentialID])
        #expect(asserted.credentialID == made.credentialID && asserted.authenticatorData.signCount == 1)
        #expect(badReportIDs.value == 0, "every write was report ID 0 ‖ 64 bytes")
        // The key is pulled out.
        shutdown(deviceSide, Int32(SHUT_RDWR))
        await #expect(throws: TokenMintError.self) { _ = try await session.getInfo() }
        connection.close()
        _ = Glibc.close(deviceSide)
        await #expect(throws: TokenMintError.self) { _ = try await CTAPHIDConnection(hidrawPath: "/nonexistent/hidraw9") }
    }
}

/// A count shared with a thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
