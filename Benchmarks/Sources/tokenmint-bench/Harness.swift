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
    /// Whether TokenMint's case may run on two threads at once (no shared
    /// mutable state, no actor); those get a scaling row.
    var scales = true
    /// The raw signer on `threads` threads at once, `iterations` each; returns
    /// seconds (negative on failure). Lets the scaling table show the C library's own scaling.
    var rawParallel: ((_ iterations: Int, _ threads: Int) -> Double)? = nil
}

/// TokenMint's throughput on one thread and on two at once.
struct Scaling {
    var group: String
    var one: Double  // ops/s
    var two: Double  // ops/s, both threads together
    var rawRatio: Double?  // the raw C signer's own 2-thread ratio
    var ratio: Double { two / one }
    /// Signers must reach 1.8× on two threads.
    var goal: Double? { group.contains(" sign") || group.hasPrefix("HMAC-SHA-256") && !group.hasSuffix("verify") ? 1.8 : nil }
}

/// Lets a measured body run on two threads; only groups marked `scales` use it.
struct SharedBody: @unchecked Sendable {
    let body: () -> Bool
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
    var allocations: Double?  // heap allocations per operation
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
        if CBenchRaw_alloc_available() != 0 {
            for (index, item) in group.cases.enumerated() {
                _ = time(item, 8)  // warm caches and lazily built state
                let n = 64
                CBenchRaw_alloc_start()
                _ = time(item, n)
                results[index].allocations = Double(CBenchRaw_alloc_stop()) / Double(n)
            }
        }
        // Ratios are the median of the per-round ratios: both sides of a
        // round ran back to back, so a change of the machine's speed between
        // rounds cancels out.
        func ratio(_ a: Int, _ b: Int) -> Double {
            let ratios = zip(samples[a], samples[b]).map { $0 / $1 }.sorted()
            return ratios[ratios.count / 2]
        }
        let raw = group.cases.firstIndex { if case .raw = $0.implementation { true } else { false } }
        let peer = group.cases.firstIndex { if case .peer = $0.implementation { true } else { false } }
        for index in results.indices where results[index].implementation == .tokenmint {
            if let raw { results[index].ratioToRaw = ratio(index, raw) }
            if let peer {
                results[index].ratioToPeer = ratio(index, peer)
                results[index].peerName = group.cases[peer].implementation.label
            }
            results[index].goal = group.goalToRaw
        }
        return results
    }

    /// TokenMint's case on one thread, then on two threads at once, for
    /// `rounds` rounds; medians of each.
    static func scaling(_ group: Group, opsPerSecond: Double, rounds: Int, batchSeconds: Double, progress: (String) -> Void) -> Scaling? {
        guard group.scales, let item = group.cases.first(where: { $0.implementation == .tokenmint }), item.asyncBody == nil else { return nil }
        let shared = SharedBody(body: item.body)
        let n = max(1, Int(opsPerSecond * batchSeconds))
        var one: [Double] = []
        var two: [Double] = []
        var rawRatios: [Double] = []
        for round in 0..<rounds {
            if let parallel = group.rawParallel {
                let single = parallel(n, 1), double = parallel(n, 2)
                if single > 0, double > 0 { rawRatios.append(2 * single / double) }
            }
            progress("\(group.name): 2 threads, round \(round + 1)/\(rounds)")
            one.append(Double(n) / time(item, n))
            let failures = Counter()
            let lock = NSLock()
            let start = CBenchRaw_now()
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                var failed = 0
                for _ in 0..<n where !shared.body() { failed += 1 }
                lock.withLock { failures.value += failed }
            }
            let elapsed = Double(CBenchRaw_now() - start) / 1e9
            if failures.value > 0 {
                FileHandle.standardError.write(Data("warning: \(group.name) failed \(failures.value) runs on two threads\n".utf8))
            }
            two.append(Double(2 * n) / elapsed)
        }
        return Scaling(group: group.name, one: one.sorted()[one.count / 2], two: two.sorted()[two.count / 2],
                       rawRatio: rawRatios.isEmpty ? nil : rawRatios.sorted()[rawRatios.count / 2])
    }

    /// Runs `item` `n` times (an async body in one task, waited for); returns how many succeeded.
    @discardableResult
    static func run(_ item: Case, times n: Int) -> Int {
        guard let asyncBody = item.asyncBody else {
            var ok = 0
            for _ in 0..<n where item.body() { ok += 1 }
            return ok
        }
        let counter = Counter()
        let done = DispatchSemaphore(value: 0)
        Task {
            for _ in 0..<n where await asyncBody() { counter.value += 1 }
            done.signal()
        }
        done.wait()
        return counter.value
    }

    private static func time(_ item: Case, _ n: Int) -> Double {
        let start = CBenchRaw_now()
        let ok = run(item, times: n)
        let elapsed = Double(CBenchRaw_now() - start) / 1e9
        sink &+= ok
        if ok != n {
            FileHandle.standardError.write(Data("warning: \(item.implementation.label) failed \(n - ok) of \(n) runs\n".utf8))
        }
        return elapsed
    }
}
