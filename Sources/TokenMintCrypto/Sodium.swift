import TokenMintCore
internal import CSodium

/// libsodium's one-time initialisation. Swift runs a global's initialiser
/// exactly once, thread-safely (swift_once), so every entry point that touches
/// libsodium reads `Sodium.ready` first.
enum Sodium {
    static let ready: Bool = sodium_init() >= 0

    @inline(__always)
    static func ensure() throws(TokenMintError) {
        guard ready else { throw TokenMintError(.crypto.libraryFailure, "sodium_init failed") }
    }
}
