/// Offline counter values granted to one device: `first ..< first + count`.
public struct OfflineGrant: Sendable, Hashable {
    /// The device.
    public let deviceID: String
    /// The first counter value of the grant (the first grant starts at 1).
    public let first: Int64
    /// How many values.
    public let count: Int64
    /// The last second (since the epoch) a token of this grant may be dated.
    public let notAfter: Int64

    /// A grant.
    public init(deviceID: String, first: Int64, count: Int64, notAfter: Int64) {
        self.deviceID = deviceID
        self.first = first
        self.count = count
        self.notAfter = notAfter
    }

    /// Whether `counter` is one of the granted values.
    public func contains(_ counter: Int64) -> Bool { counter >= first && counter - first < count }
}
