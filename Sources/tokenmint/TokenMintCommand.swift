import ArgumentParser
import Foundation
import TokenMint

/// The `tokenmint` command. Exit status: 0 success or valid; 1 invalid (a
/// signature, token, assertion or vector that did not verify); 2 usage,
/// input, store or output error (output that could not be written
/// included); 3 the offline token limit was reached.
@main
struct TokenMintCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokenmint",
        abstract: "Mint and verify WhitelabelPay payment tokens, JWS/JWT/JWK, FIDO2/WebAuthn credentials and Aztec codes.",
        discussion: """
            Built on libsodium, OpenSSL 3, zint and SQLite. Exit status: 0 success or valid; 1 invalid \
            (a signature, token, assertion or vector that did not verify); 2 usage, input, store or output \
            error (output that could not be written included); 3 the offline token limit was reached.
            """,
        version: TokenMintVersion.string,
        subcommands: [Keygen.self, Pubkey.self, Sign.self, Verify.self, JWKCommand.self, JWTCommand.self, JWECommand.self, SDJWTCommand.self, DPoPCommand.self, AztecCommand.self, PayCommand.self, FIDO2Command.self, OATHCommand.self, WebAuthnCommand.self, AuthCommand.self, Vectors.self, Demo.self] + serveCommands)

    static func main() async {
        // A closed pipe is a write error to report, not a silent death.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            // Whatever was printed must have reached standard output.
            try Output.flush()
        } catch let error as CLIError {
            report(error.message)
            Foundation.exit(error.status)
        } catch let error as TokenMintError {
            report("\(error)")
            Foundation.exit(error.code == .pay.offlineTokenLimitReached ? 3 : 2)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            FileHandle.standardError.write(Data("\(fullMessage(for: error))\n".utf8))
            // Usage errors exit with 2, like most Unix tools; other codes pass through.
            Foundation.exit(code == .validationFailure ? 2 : code.rawValue)
        }
    }
}

/// Prints `tokenmint: <message>` on standard error, with anything that
/// could drive a terminal or forge a line escaped (messages quote tokens,
/// origins and key IDs an attacker chose).
func report(_ message: String) {
    FileHandle.standardError.write(Data("tokenmint: \(SafeText.escaped(message, backslashes: false))\n".utf8))
}

/// Runs `body`; any failure is reported with exit status 1, the status the
/// verifying commands give a refusal.
func refusing<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch { throw CLIError(message: "\(error)", status: 1) }
}

/// ``refusing(_:)`` for a body that awaits.
func refusing<T>(_ body: () async throws -> T) async throws -> T {
    do { return try await body() } catch { throw CLIError(message: "\(error)", status: 1) }
}

/// A JSON object from outside (a browser's registration or assertion), read
/// with the strict parser — a repeated member, invalid UTF-8, a lone
/// surrogate or an oversized input is refused, exit 1 — and handed on as
/// Foundation values.
func untrustedJSONObject(_ data: Data) throws -> [String: Any] {
    let value: JSONValue
    do { value = try JSONParser.parse(Array(data)) } catch { throw CLIError(message: "\(error)", status: 1) }
    guard let object = foundationValue(value) as? [String: Any] else { throw CLIError(message: "not a JSON object", status: 1) }
    return object
}

/// `value` as JSONSerialization would have produced it.
func foundationValue(_ value: JSONValue) -> Any {
    switch value {
    case .null: return NSNull()
    case .bool(let bool): return bool
    case .number(let text):
        if let integer = Int(text) { return integer }
        return Double(text) ?? text
    case .string(let text): return text
    case .array(let elements): return elements.map(foundationValue)
    case .object(let object): return object.members.reduce(into: [String: Any]()) { $0[$1.name] = foundationValue($1.value) }
    }
}

/// An error the CLI reports with its own exit status.
struct CLIError: Error {
    var message: String
    var status: Int32 = 2
}

/// The algorithm names the CLI takes (the JOSE names of RFC 7518, RFC 8037, RFC 8812 and RFC 9864).
enum Algorithm: String, CaseIterable, ExpressibleByArgument {
    case EdDSA, Ed25519, Ed448, ES256, ES384, ES512, ES256K, RS256, RS384, RS512, PS256, PS384, PS512, HS256, HS384, HS512
    case MLDSA44 = "ML-DSA-44", MLDSA65 = "ML-DSA-65", MLDSA87 = "ML-DSA-87"

    /// The JOSE algorithm of the same name.
    var jose: JWSAlgorithm? { JWSAlgorithm(name: rawValue) }
    var curve: ECDSA.Curve? { jose?.curve }
    var hash: HashFunction { jose?.hash ?? .sha256 }
    /// EdDSA under either name.
    var isEd25519: Bool { self == .EdDSA || self == .Ed25519 }
    /// Ed448 under either name: EdDSA with an Ed448 key (RFC 8037), or Ed448 (RFC 9864).
    var isEd448: Bool { self == .EdDSA || self == .Ed448 }

    var rsaPadding: RSA.Padding? {
        switch self {
        case .RS256, .RS384, .RS512: .pkcs1v15
        case .PS256, .PS384, .PS512: .pss
        default: nil
        }
    }

    var isHMAC: Bool { [.HS256, .HS384, .HS512].contains(self) }
}

/// Reads a whole file, or fails with exit 2.
func readFile(_ path: String, limit: Int = 16 << 20) throws -> Data {
    guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError(message: "cannot read \(path)") }
    defer { try? handle.close() }
    let data = (try? handle.read(upToCount: limit + 1)) ?? Data()
    guard data.count <= limit else { throw CLIError(message: "\(path) is larger than \(limit) bytes") }
    return data
}

/// Writes a secret `text` to `path` (mode 0600 from the first byte, never
/// over an existing file without `force`), or to stdout when `path` is nil.
func writeOutput(_ text: String, to path: String?, force: Bool = false) throws {
    guard let path else {
        try Output.write(text.hasSuffix("\n") ? text : text + "\n")
        return
    }
    try OutputFile.write(Array(text.utf8), to: path, kind: .secret, force: force)
}

/// The message given by `--hex` or `--in`.
struct MessageOptions: ParsableArguments {
    @Option(name: .customLong("hex"), help: "The message as hex.")
    var hex: String?

    @Option(name: .customLong("in"), help: "Read the message from FILE.")
    var input: String?

    func validate() throws {
        guard (hex == nil) != (input == nil) else { throw ValidationError("give exactly one of --hex or --in") }
    }

    func message() throws -> [UInt8] {
        if let hex { return try Hex.decode(hex.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return [UInt8](try readFile(input ?? ""))
    }
}
