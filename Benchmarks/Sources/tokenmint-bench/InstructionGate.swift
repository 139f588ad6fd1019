import CBenchRaw
import Foundation

/// `--instructions N`: the gate's rows, each run N times (in ten chunks)
/// under callgrind with the counters zeroed before each chunk and dumped,
/// labelled with the row's name, after it (`scripts/bench/instruction_gate.py` runs it and
/// reads the dumps). The same binary on the same input executes the same
/// instructions on every run, so a change of a few percent is the code's,
/// not the machine's: the regression gate that timing ratios on a shared
/// VM cannot be.
enum InstructionGate {
    /// The rows counted: TokenMint's side of the main scoreboard rows.
    static let rows = [
        "Ed25519 sign", "Ed25519 verify", "ECDSA P-256 sign", "ECDSA P-256 sign RFC 6979", "ECDSA P-256 verify",
        "HMAC-SHA-256", "HMAC-SHA-256 verify",
        "JWT EdDSA mint", "JWT EdDSA verify", "JWT ES256 mint", "JWT ES256 verify", "JWT HS256 mint", "JWT HS256 verify",
        "JWT RS256 verify", "Pay mint (in-memory quota)", "Pay verify (no ledger)",
        "FIDO2 ES256 getAssertion (memory)", "FIDO2 EdDSA getAssertion (memory)", "FIDO2 ES256 RP verify",
    ]
    static let aztecPrefix = "Aztec payment token"

    /// The groups the rows come from: only the suites that hold them, so
    /// that set-up under callgrind stays short (no RSA-3072/4096 keys).
    static func groups() throws -> [Group] {
        var groups = try Suite.ed25519()
        groups += try Suite.ecdsa(.p256, name: "P-256", md: "SHA2-256", hash: .sha256)
        groups += Suite.hmac()
        groups += try JWTSuite.groups()
        groups += try PaySuite.groups()
        groups += try FIDO2Suite.groups()
        groups += try AztecSuite.groups()
        return groups.filter { rows.contains($0.name) || ($0.name.hasPrefix(aztecPrefix) && $0.name.hasSuffix("→ matrix")) }
    }

    /// Runs every row's TokenMint case `iterations` times between a zero and a labelled dump.
    static func run(iterations: Int, filter: String?) throws {
        guard CBenchRaw_on_valgrind() == 1 else {
            throw BenchError("--instructions counts under valgrind --tool=callgrind; run scripts/bench/instruction_gate.py")
        }
        var groups = try groups()
        if let filter { groups = groups.filter { $0.name.localizedCaseInsensitiveContains(filter) } }
        for group in groups {
            guard let item = group.cases.first(where: { $0.implementation == .tokenmint }) else { continue }
            Harness.run(item, times: 8)  // warm: lazy set-up and caches are not the row's cost
            // Ten chunks, each counted on its own: the gate takes the median
            // chunk, so a rare costly event (OpenSSL reseeding its generator,
            // a rejection-sampling loop that ran long) moves no row.
            let chunk = max(1, iterations / 10)
            for index in 0..<10 {
                CBenchRaw_count_begin()
                let ok = Harness.run(item, times: chunk)
                CBenchRaw_count_end("\(group.name) x\(chunk) #\(index)")
                guard ok == chunk else { throw BenchError("\(group.name): \(chunk - ok) of \(chunk) runs failed") }
            }
            print("counted \(group.name)")
        }
    }
}
