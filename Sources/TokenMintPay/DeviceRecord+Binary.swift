extension WhitelabelPay.DeviceRecord {
    /// The sealed form: `TMD2`, then each field in a fixed order — strings as
    /// a 2-byte big-endian length and UTF-8, integers as 8 bytes big-endian,
    /// flags as one byte — and nothing after. `TMD1` records (written before
    /// server grants existed) lack the last three integers and still open. Read back strictly: any other
    /// length, tag or flag value is not a record. (Compact and fast: the
    /// record is opened and resealed in every minting transaction.)
    var encoded: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + means.count * 40)
        out.append(contentsOf: "TMD2".utf8)
        func string(_ s: String) {
            let count = s.utf8.count
            out.append(UInt8(truncatingIfNeeded: count >> 8))
            out.append(UInt8(truncatingIfNeeded: count))
            out.append(contentsOf: s.utf8)
        }
        func integer(_ v: Int64) {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> Int64(shift))) }
        }
        string(store)
        string(environment)
        string(state)
        out.append(deviceKey == nil ? 0 : 1)
        if let deviceKey { string(deviceKey) }
        out.append(online ? 1 : 0)
        integer(serverOffset)
        integer(offlineMinted)
        integer(offlineSequence)
        integer(Int64(offlineLimit))
        integer(wasted)
        integer(Int64(means.count))
        for item in means {
            string(item.id)
            out.append(item.isActive ? 1 : 0)
        }
        integer(grantEnd)
        integer(grantNotAfter)
        integer(lastEventID)
        return out
    }

    /// Reads the sealed form; nil for anything that is not exactly one record.
    init?(encoded bytes: UnsafeRawBufferPointer) {
        var index = 0
        func take(_ count: Int) -> UnsafeRawBufferPointer? {
            guard count >= 0, bytes.count - index >= count else { return nil }
            defer { index += count }
            return UnsafeRawBufferPointer(rebasing: bytes[index..<index + count])
        }
        func string() -> String? {
            guard let length = take(2) else { return nil }
            guard let body = take(Int(length[0]) << 8 | Int(length[1])) else { return nil }
            // The record's strings are ASCII in practice: checked byte by byte;
            // anything else goes through the standard library's validation.
            let utf8 = body.assumingMemoryBound(to: UInt8.self)
            for byte in utf8 where byte >= 0x80 { return String(validating: utf8, as: UTF8.self) }
            return String(decoding: utf8, as: UTF8.self)
        }
        func integer() -> Int64? {
            take(8).map { $0.reduce(Int64(0)) { $0 << 8 | Int64($1) } }
        }
        func flag() -> Bool? {
            guard let byte = take(1)?[0], byte <= 1 else { return nil }
            return byte == 1
        }
        // "TMD1" or "TMD2".
        guard let magic = take(4), magic[0] == 0x54, magic[1] == 0x4D, magic[2] == 0x44, magic[3] == 0x31 || magic[3] == 0x32 else { return nil }
        let version2 = magic[3] == 0x32
        guard let store = string(), let environment = string(), let state = string(), let hasKey = flag()
        else { return nil }
        var deviceKey: String?
        if hasKey {
            guard let key = string() else { return nil }
            deviceKey = key
        }
        guard let online = flag(), let serverOffset = integer(), let minted = integer(), let sequence = integer(),
            let limit = integer(), let wasted = integer(), let meansCount = integer(), (0...1024).contains(meansCount),
            let limitValue = Int(exactly: limit)
        else { return nil }
        var means: [PaymentMeans] = []
        for _ in 0..<meansCount {
            guard let id = string(), let active = flag() else { return nil }
            means.append(PaymentMeans(id: id, isActive: active))
        }
        var grant: (end: Int64, notAfter: Int64, lastEvent: Int64) = (0, 0, 0)
        if version2 {
            guard let end = integer(), let notAfter = integer(), let lastEvent = integer() else { return nil }
            grant = (end, notAfter, lastEvent)
        }
        guard index == bytes.count else { return nil }
        self.init(store: store, environment: environment, state: state, deviceKey: deviceKey, online: online,
                  serverOffset: serverOffset, offlineMinted: minted, offlineSequence: sequence, offlineLimit: limitValue,
                  wasted: wasted, means: means, grantEnd: grant.end, grantNotAfter: grant.notAfter, lastEventID: grant.lastEvent)
    }
}
