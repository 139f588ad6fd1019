#if Server
import Foundation

/// Wakes the server-sent-event streams of a device when an event for it is
/// committed. The events themselves live in the store (a stream reads them
/// from there, after the last ID it sent), so a wake-up lost to a race, or
/// an event written by another server instance, is found by the stream's
/// periodic poll.
actor EventHub {
    enum Signal: Sendable { case event, tick }

    private var streams: [String: [(id: UUID, continuation: AsyncStream<Signal>.Continuation)]] = [:]
    private var total = 0
    /// Streams one device may hold open: a new one ends the oldest.
    static let perSubject = 4
    /// Streams the server holds open at most: past that, 503.
    static let maximum = 1024

    /// A stream of wake-ups for `subjectID`; `pollInterval` seconds apart it
    /// also yields a tick (the keep-alive and the poll). Nil when the server
    /// holds ``maximum`` streams already.
    func subscribe(_ subjectID: String, pollInterval: Duration) -> (UUID, AsyncStream<Signal>)? {
        if let open = streams[subjectID], open.count >= Self.perSubject { unsubscribe(subjectID, open[0].id) }
        guard total < Self.maximum else { return nil }
        let (stream, continuation) = AsyncStream<Signal>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        streams[subjectID, default: []].append((id, continuation))
        total += 1
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: pollInterval)
                if case .terminated = continuation.yield(.tick) { return }
            }
        }
        continuation.onTermination = { _ in ticker.cancel() }
        return (id, stream)
    }

    /// Ends one stream.
    func unsubscribe(_ subjectID: String, _ id: UUID) {
        guard let index = streams[subjectID]?.firstIndex(where: { $0.id == id }), let entry = streams[subjectID]?.remove(at: index) else { return }
        entry.continuation.finish()
        total -= 1
        if streams[subjectID]?.isEmpty == true { streams[subjectID] = nil }
    }

    /// Wakes every stream of `subjectID`.
    func notify(_ subjectID: String) {
        for entry in streams[subjectID, default: []] { entry.continuation.yield(.event) }
    }

    /// How many streams are open.
    var count: Int { total }
}
#endif
