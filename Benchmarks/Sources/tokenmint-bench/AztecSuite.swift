import CBenchRaw
import Foundation
import TokenMintAztec

/// Aztec rows: encode to matrix and to PNG, for a typical payment token
/// (~135 characters) and a 1,000-byte payload, next to zint's C API.
enum AztecSuite {
    static let paymentToken = Array(
        ("02/5c2a8b0e-1d4f-4f8e-9a51-2b7c3d9e0f11/1763776800/"
            + "mF3Yk2Zp0qL8sX1vB7nR4tW9eU6cA5dH3gJ2kM8pQ1rS7uV0wY4zB6xE9fG2hI5jK8lN1oP4qR7sT0uV3wX6yA==").utf8)

    static func groups() throws -> [Group] {
        var state: UInt64 = 42
        let kilobyte = (0..<1000).map { _ -> UInt8 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        let token = paymentToken
        let symbol = try AztecEncoder.encode(token)
        let pngPath = FileManager.default.temporaryDirectory.appendingPathComponent("tokenmint-bench-\(getpid()).png").path
        var groups: [Group] = []
        for (name, payload) in [("payment token (\(token.count) B)", token), ("1,000 bytes", kilobyte)] {
            groups.append(Group(name: "Aztec \(name) → matrix", cases: [
                Case(implementation: .raw("zint C API")) { CBenchRaw_zint_aztec(payload, payload.count, 2) > 0 },
                Case(implementation: .tokenmint) { (try? AztecEncoder.encode(payload)) != nil },
            ]))
        }
        groups.append(Group(name: "Aztec payment token → PNG", cases: [
            Case(implementation: .raw("zint PNG file")) { CBenchRaw_zint_aztec_png(token, token.count, 2, pngPath) == 0 },
            Case(implementation: .tokenmint) { ((try? AztecEncoder.encode(token).png(scale: 4, quietZone: 4))?.count ?? 0) > 0 },
        ], goalToRaw: nil))
        groups.append(Group(name: "Aztec PNG from matrix (token)", cases: [
            Case(implementation: .tokenmint) { ((try? symbol.png(scale: 4, quietZone: 4))?.count ?? 0) > 0 },
        ], goalToRaw: nil))
        return groups
    }
}
