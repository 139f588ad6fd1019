import TokenMintCore
import Foundation

/// A payment means known to the device.
public struct PaymentMeans: Sendable, Hashable, Codable {
    /// Its identifier (characters `[A-Za-z0-9-]`, at most 64).
    public let id: String
    /// Whether it is active (one is, at most).
    public var isActive: Bool

    /// A payment means.
    public init(id: String, isActive: Bool) {
        self.id = id
        self.isActive = isActive
    }

    /// Whether `id` is a valid payment means identifier: 1 to 64 characters of `[A-Za-z0-9-]`.
    public static func isValidID(_ id: some StringProtocol) -> Bool {
        isValidID(utf8: id.utf8)
    }

    /// ``isValidID(_:)`` on UTF-8 bytes.
    static func isValidID(utf8: some Collection<UInt8>) -> Bool {
        (1...64).contains(utf8.count)
            && utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == UInt8(ascii: "-") }
    }
}
