// libFuzzer entry points. The target to run is named by the environment
// variable TOKENMINT_FUZZ_TARGET; TOKENMINT_FUZZ_DATA names a folder with the
// keys and the attestation root the verifying targets use (Fuzz/Data).
//
// A target returns normally for every input the library refuses with a typed
// error. It traps (and libFuzzer records the input) when the library itself
// traps, when ASan sees a memory error, or when a property a target checks
// does not hold — for instance a parsed value that does not survive a
// round trip through its own encoder.

import Foundation

/// One fuzz target: a name and the function that takes one input.
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) -> Void
}

/// Every target, in the order scripts/fuzz runs them.
let allTargets: [FuzzTarget] = [
    FuzzTarget(name: "base64url", run: fuzzBase64URL),
    FuzzTarget(name: "json", run: fuzzJSON),
    FuzzTarget(name: "jws-compact", run: fuzzJWSCompact),
    FuzzTarget(name: "jws-json", run: fuzzJWSJSON),
    FuzzTarget(name: "jwk", run: fuzzJWK),
    FuzzTarget(name: "jwe", run: fuzzJWE),
    FuzzTarget(name: "sd-jwt", run: fuzzSDJWT),
    FuzzTarget(name: "key-import", run: fuzzKeyImport),
    FuzzTarget(name: "cbor", run: fuzzCBOR),
    FuzzTarget(name: "cose-key", run: fuzzCOSEKey),
    FuzzTarget(name: "authenticator-data", run: fuzzAuthenticatorData),
    FuzzTarget(name: "client-data", run: fuzzClientData),
    FuzzTarget(name: "webauthn-registration", run: fuzzRegistration),
    FuzzTarget(name: "webauthn-assertion", run: fuzzAssertion),
    FuzzTarget(name: "ctap2-command", run: fuzzCTAP2Command),
    FuzzTarget(name: "ctaphid", run: fuzzCTAPHID),
    FuzzTarget(name: "pay-tokens", run: fuzzPayTokens),
    FuzzTarget(name: "aztec", run: fuzzAztec),
]

nonisolated(unsafe) var selected: FuzzTarget?

/// Reports a broken property and traps so libFuzzer keeps the input.
func violated(_ message: String) -> Never {
    say("property violated: \(message)")
    abort()
}

/// Writes a line to standard error.
func say(_ message: String) {
    let line = Array("tokenmint-fuzz: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// Reads a file of the data folder, or nil.
func dataFile(_ name: String) -> [UInt8]? {
    guard let folder = getenv("TOKENMINT_FUZZ_DATA") else { return nil }
    return FileManager.default.contents(atPath: String(cString: folder) + "/" + name).map { Array($0) }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard let raw = getenv("TOKENMINT_FUZZ_TARGET") else {
        say("set TOKENMINT_FUZZ_TARGET to one of: \(allTargets.map(\.name).joined(separator: " "))")
        exit(64)
    }
    let name = String(cString: raw)
    guard let target = allTargets.first(where: { $0.name == name }) else {
        say("unknown target \(name)")
        exit(64)
    }
    selected = target
    prepareFixtures()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = selected else { return 0 }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    target.run(bytes)
    return 0
}

/// Splits off a 2-byte big-endian length and that many bytes, or nil.
func takeChunk(_ input: inout ArraySlice<UInt8>) -> [UInt8]? {
    guard input.count >= 2 else { return nil }
    let length = Int(input[input.startIndex]) << 8 | Int(input[input.startIndex + 1])
    input = input.dropFirst(2)
    guard input.count >= length else { return nil }
    defer { input = input.dropFirst(length) }
    return Array(input.prefix(length))
}
