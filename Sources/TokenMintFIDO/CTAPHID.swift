import TokenMintCore

/// CTAPHID framing (CTAP 2.1 §11.2): 64-byte reports, a 4-byte channel ID,
/// an initialization packet (command, 16-bit length, 57 bytes of data) and
/// continuation packets (sequence 0…127, 59 bytes each).
public enum CTAPHID {
    /// The report size.
    public static let reportSize = 64
    /// The broadcast channel, on which INIT allocates channels.
    public static let broadcastChannel: UInt32 = 0xFFFF_FFFF
    /// The largest message: one initialization and 128 continuation packets.
    public static let maximumMessageSize = 57 + 128 * 59

    /// CTAPHID commands (with the initialization bit 0x80 set).
    public enum Command: UInt8, Sendable, CaseIterable {
        /// Echo the data.
        case ping = 0x81
        /// A CTAP1/U2F message.
        case msg = 0x83
        /// Lock the device to a channel.
        case lock = 0x84
        /// Allocate a channel, or resynchronize one.
        case initialize = 0x86
        /// Show the device to the user.
        case wink = 0x88
        /// A CTAP2 command.
        case cbor = 0x90
        /// Cancel the channel's pending CBOR command.
        case cancel = 0x91
        /// The device is still processing (status 1) or waits for the user (status 2).
        case keepalive = 0xBB
        /// A framing error, with its code.
        case error = 0xBF
    }

    /// The error codes of the ERROR command.
    public enum ErrorCode: UInt8, Sendable, CaseIterable {
        /// ERR_INVALID_CMD.
        case invalidCommand = 0x01
        /// ERR_INVALID_PAR.
        case invalidParameter = 0x02
        /// ERR_INVALID_LEN.
        case invalidLength = 0x03
        /// ERR_INVALID_SEQ.
        case invalidSequence = 0x04
        /// ERR_MSG_TIMEOUT.
        case messageTimeout = 0x05
        /// ERR_CHANNEL_BUSY.
        case channelBusy = 0x06
        /// ERR_LOCK_REQUIRED.
        case lockRequired = 0x0A
        /// ERR_INVALID_CHANNEL.
        case invalidChannel = 0x0B
        /// ERR_OTHER.
        case other = 0x7F
    }

    /// The capabilities INIT reports: WINK, CBOR and NMSG (no CTAP1 messages).
    public static let capabilities: UInt8 = 0x01 | 0x04 | 0x08

    /// The reports of one message on `channel`.
    public static func packets(channel: UInt32, command: UInt8, data: [UInt8]) -> [[UInt8]] {
        let cid = bytes(of: channel)
        var first = cid + [command, UInt8(data.count >> 8 & 0xFF), UInt8(data.count & 0xFF)]
        first += data.prefix(57)
        var reports = [pad(first)]
        var offset = min(57, data.count)
        var sequence: UInt8 = 0
        while offset < data.count {
            let end = min(offset + 59, data.count)
            reports.append(pad(cid + [sequence] + data[offset..<end]))
            offset = end
            sequence &+= 1
        }
        return reports
    }

    static func pad(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: max(0, reportSize - bytes.count)) }

    /// The channel ID at `offset` of `bytes` (a report's first four bytes, or INIT's answer's).
    static func channel(_ bytes: [UInt8], at offset: Int = 0) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// A channel ID as its four big-endian bytes.
    static func bytes(of channel: UInt32) -> [UInt8] {
        [UInt8(channel >> 24), UInt8(channel >> 16 & 0xFF), UInt8(channel >> 8 & 0xFF), UInt8(channel & 0xFF)]
    }
}
