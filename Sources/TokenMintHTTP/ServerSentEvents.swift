import TokenMintCore
import TokenMintPay

/// A server-sent-events reader (WHATWG HTML §9.2.6) for the push channel:
/// lines split on LF (a CR before it dropped), `id:` and `data:` fields
/// collected until a blank line; comments and other fields ignored. Lines
/// and events are capped, so a server cannot make it buffer without end.
struct ServerSentEvents {
    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var id: Int64?
    private var hasData = false

    static let maximumLine = 64 * 1024

    /// Feeds bytes; returns the events they completed.
    mutating func feed(_ bytes: [UInt8]) throws(TokenMintError) -> [WhitelabelPayEvent] {
        var events: [WhitelabelPayEvent] = []
        for byte in bytes {
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                guard line.count <= Self.maximumLine else { throw TokenMintError(.pay.invalidPush, "an event stream line is too long") }
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if line.isEmpty {
                if hasData, let id { events.append(WhitelabelPayEvent(id: id, payload: data)) }
                data = []
                hasData = false
            } else if line.first != UInt8(ascii: ":") {
                let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
                let name = line[..<colon]
                var value = colon < line.endIndex ? line[(colon + 1)...] : []
                if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
                if name.elementsEqual("data".utf8) {
                    if hasData { data.append(UInt8(ascii: "\n")) }
                    data += value
                    hasData = true
                    guard data.count <= Self.maximumLine else { throw TokenMintError(.pay.invalidPush, "an event is too long") }
                } else if name.elementsEqual("id".utf8) {
                    id = Int64(String(decoding: value, as: UTF8.self))
                }
            }
            line = []
        }
        return events
    }
}
