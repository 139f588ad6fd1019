import TokenMintCore
import Foundation

/// Linux hidraw devices that are FIDO security keys: those whose HID report
/// descriptor declares the FIDO Alliance usage page 0xF1D0 (CTAP 2.1 §11.2.8.1).
/// Open one with ``CTAPHIDConnection/init(hidrawPath:)``.
public enum HIDRaw {
    /// A FIDO device found in sysfs.
    public struct Device: Sendable, Hashable {
        /// The device node, e.g. `/dev/hidraw3`.
        public let path: String
        /// The product name the kernel reports (HID_NAME), when known.
        public let productName: String?
        /// The USB vendor ID, when known.
        public let vendorID: UInt16?
        /// The USB product ID, when known.
        public let productID: UInt16?
    }

    /// The FIDO devices under `sysfs` (each `hidrawN` with its
    /// `device/report_descriptor` and `device/uevent`), with nodes in `dev`,
    /// in name order. Devices whose descriptor cannot be read are skipped.
    public static func fidoDevices(sysfs: String = "/sys/class/hidraw", dev: String = "/dev") -> [Device] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: sysfs)) ?? []).filter { $0.hasPrefix("hidraw") }.sorted()
        return names.compactMap { name -> Device? in
            let folder = sysfs + "/" + name + "/device/"
            guard let descriptor = FileManager.default.contents(atPath: folder + "report_descriptor"), descriptor.count <= 4096,
                isFIDO(reportDescriptor: Array(descriptor))
            else { return nil }
            var productName: String?
            var vendorID: UInt16?
            var productID: UInt16?
            if let data = FileManager.default.contents(atPath: folder + "uevent"), data.count <= 4096 {
                for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                    if line.hasPrefix("HID_NAME=") { productName = String(line.dropFirst(9)) }
                    if line.hasPrefix("HID_ID=") {
                        // bus:vendor:product in hex, e.g. 0003:00001050:00000407.
                        let parts = line.dropFirst(7).split(separator: ":")
                        if parts.count == 3 {
                            vendorID = UInt32(parts[1], radix: 16).flatMap { UInt16(exactly: $0) }
                            productID = UInt32(parts[2], radix: 16).flatMap { UInt16(exactly: $0) }
                        }
                    }
                }
            }
            return Device(path: dev + "/" + name, productName: productName, vendorID: vendorID, productID: productID)
        }
    }

    /// Whether a HID report descriptor declares usage page 0xF1D0: its
    /// short items are walked (long items skipped) for a global Usage Page.
    public static func isFIDO(reportDescriptor bytes: [UInt8]) -> Bool {
        var index = 0
        while index < bytes.count {
            let prefix = bytes[index]
            if prefix == 0xFE {  // long item: size, tag, data
                guard index + 1 < bytes.count else { return false }
                index += 3 + Int(bytes[index + 1])
                continue
            }
            let size = [0, 1, 2, 4][Int(prefix & 0x03)]
            guard index + size < bytes.count else { return false }
            if prefix & 0xFC == 0x04 {  // Usage Page (global, tag 0)
                var value = 0
                for offset in 0..<size { value |= Int(bytes[index + 1 + offset]) << (8 * offset) }
                if value == 0xF1D0 { return true }
            }
            index += 1 + size
        }
        return false
    }
}
