#if Server
import Foundation

/// Wakes the server-sent-event streams of a device when an event for it is
/// committed. The events themselves live in the store (a stream reads them
/// from there, after the last ID it sent), so a wake-up lost to a race, or
/// an event written by another server instance, is found by the stream's
/// periodic poll.
actor EventHub {
    enum Signal: Sendable { case event, tick }

    private var streams: [String: [UUID: AsyncStream<Signal>.Continuation]] = [:]

    /// A stream of wake-ups for `subjectID`; `pollInterval` seconds apart it
    /// also yields a tick (the keep-alive and the poll).
    func subscribe(_ subjectID: String, pollInterval: Duration) -> (UUID, AsyncStream<Signal>) {
        let (stream, continuation) = AsyncStream<Signal>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        streams[subjectID, default: [:]][id] = continuation
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
        streams[subjectID]?.removeValue(forKey: id)?.finish()
        if streams[subjectID]?.isEmpty == true { streams[subjectID] = nil }
    }

    /// Wakes every stream of `subjectID`.
    func notify(_ subjectID: String) {
        for continuation in streams[subjectID, default: [:]].values { continuation.yield(.event) }
    }

    /// How many streams are open (for tests and `/healthz`).
    var count: Int { streams.values.reduce(0) { $0 + $1.count } }
}
#endif
