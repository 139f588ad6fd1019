import CBenchRaw
import Foundation

/// Who implements a measured operation.
enum Implementation: Equatable {
    case raw(String)  // the C call TokenMint wraps
    case tokenmint
    case peer(String)  // another Swift library, same process

    var label: String {
        switch self {
        case .raw(let name): "raw \(name)"
        case .tokenmint: "TokenMint"
        case .peer(let name): name
        }
    }

    var kind: String {
        switch self {
        case .raw: "raw"
        case .tokenmint: "tokenmint"
        case .peer: "peer"
        }
    }
}

/// One operation to measure: `body` performs it once and returns whether it succeeded.
/// Async peers (jwt-kit's key collection is an actor) give `asyncBody`; a whole
/// batch then runs inside one task, so only the peer's own hops are counted.
struct Case {
    var implementation: Implementation
    var body: () -> Bool
    var asyncBody: (@Sendable () async -> Bool)? = nil

    init(implementation: Implementation, body: @escaping () -> Bool) {
        self.implementation = implementation
        self.body = body
    }

    init(implementation: Implementation, async body: @escaping @Sendable () async -> Bool) {
        self.implementation = implementation
        self.body = { false }
        self.asyncBody = body
    }
}

/// A counter a detached task can bump.
final class Counter: @unchecked Sendable {
    var value = 0
}

/// Operations that do the same work, measured side by side.
struct Group {
    var name: String
    var cases: [Case]
    /// Ratio goals for TokenMint (to raw) that the table marks.
    var goalToRaw: Double? = 0.95
}

struct Measurement {
    var group: String
    var implementation: Implementation
    var median: Double  // ops/s
    var minimum: Double
    var maximum: Double
    var ratioToRaw: Double?
    var ratioToPeer: Double?
    var peerName: String?
    var goal: Double?
}

/// Keeps results alive so the optimiser cannot drop the work.
nonisolated(unsafe) var sink = 0

enum Harness {
    /// Interleaved rounds: in every round each case of the group runs one
    /// batch, in rotating order, so drift and noise hit all cases alike.
    static func measure(_ group: Group, rounds: Int, batchSeconds: Double, progress: (String) -> Void) -> [Measurement] {
        // Calibrate: iterations so that one batch takes about batchSeconds.
        var iterations: [Int] = []
        for item in group.cases {
            var n = 1
            while true {
                let t = time(item, n)
                if t >= batchSeconds / 4 || n >= 1 << 24 {
                    iterations.append(max(1, Int(Double(n) * batchSeconds / max(t, 1e-9))))
                    break
                }
                n *= 2
            }
        }
        var samples = Array(repeating: [Double](), count: group.cases.count)
        for round in 0..<rounds {
            progress("\(group.name): round \(round + 1)/\(rounds)")
            for offset in 0..<group.cases.count {
                let index = (offset + round) % group.cases.count
                let n = iterations[index]
                let seconds = time(group.cases[index], n)
                samples[index].append(Double(n) / seconds)
            }
        }
        var results: [Measurement] = []
        for (index, item) in group.cases.enumerated() {
            let sorted = samples[index].sorted()
            results.append(Measurement(
                group: group.name, implementation: item.implementation,
                median: sorted[sorted.count / 2], minimum: sorted.first ?? 0, maximum: sorted.last ?? 0))
        }
        let raw = results.first { if case .raw = $0.implementation { true } else { false } }
        let peer = results.first { if case .peer = $0.implementation { true } else { false } }
        for index in results.indices where results[index].implementation == .tokenmint {
            if let raw { results[index].ratioToRaw = results[index].median / raw.median }
            if let peer {
                results[index].ratioToPeer = results[index].median / peer.median
                results[index].peerName = peer.implementation.label
            }
            results[index].goal = group.goalToRaw
        }
        return results
    }

    private static func time(_ item: Case, _ n: Int) -> Double {
        var ok = 0
        let start = CBenchRaw_now()
        if let asyncBody = item.asyncBody {
            let counter = Counter()
            let done = DispatchSemaphore(value: 0)
            Task {
                for _ in 0..<n where await asyncBody() { counter.value += 1 }
                done.signal()
            }
            done.wait()
            ok = counter.value
        } else {
            for _ in 0..<n where item.body() { ok += 1 }
        }
        let elapsed = Double(CBenchRaw_now() - start) / 1e9
        sink &+= ok
        if ok != n {
            FileHandle.standardError.write(Data("warning: \(item.implementation.label) failed \(n - ok) of \(n) runs\n".utf8))
        }
        return elapsed
    }
}
