import ArgumentParser
import Foundation
import TokenMint

struct OATHCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "oath", abstract: "HOTP/TOTP credentials in a software OATH application: add, list, code, delete.",
        discussion: """
            Credentials live in oath.sqlite in the --store folder, their secrets sealed with its master key. A HOTP counter \
            moves on, durably, before its code is printed. The CLI's user is taken as present, so a credential added with \
            --touch gives its code here too (an OATH session's client asks its host).
            """,
        subcommands: [Add.self, List.self, Code.self, Delete.self])

    /// The application over oath.sqlite in the state folder.
    static func application(_ options: StoreOptions) throws -> OATHApplication {
        try OATHApplication(store: try options.open("oath.sqlite"))
    }

    /// One line of `list`: name, type, algorithm, digits, period or counter, flags (tab-separated; never a secret).
    static func line(_ info: OATHCredential.Info) -> String {
        var fields = [SafeText.escaped(info.name)]
        switch info.kind {
        case .totp(let period): fields += ["totp", info.algorithm.rawValue, "\(info.digits) digits", "period \(period)"]
        case .hotp(let counter): fields += ["hotp", info.algorithm.rawValue, "\(info.digits) digits", "counter \(counter)"]
        }
        if info.requiresTouch { fields.append("touch") }
        if info.requiresVerification { fields.append("verification") }
        return fields.joined(separator: "\t")
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a credential from an otpauth:// URI (prints its name), or make one with --generate (prints its URI, once).",
            discussion: """
                With --generate, the secret is 20 random bytes and the printed otpauth:// URI is the only copy outside \
                the store: give it to the authenticator app. --aztec FILE also writes the URI, generated or given, as an \
                Aztec code (mode 0600) for a phone to scan.
                """)
        @OptionGroup var options: StoreOptions
        @Argument(help: "An otpauth:// URI; - reads it from standard input.") var uri: String?
        @Flag(help: "Make a new credential with a random 20-byte secret (needs --account).") var generate = false
        @Option(help: "With --generate: the issuer.") var issuer: String?
        @Option(help: "With --generate: the account name.") var account: String?
        @Option(help: "With --generate: totp (default) or hotp.") var type: String?
        @Option(help: "With --generate: SHA1 (default), SHA256 or SHA512.") var algorithm: String?
        @Option(help: "With --generate: 6 (default), 7 or 8 digits.") var digits: Int?
        @Option(help: "With --generate: the TOTP period in seconds (default 30).") var period: Int?
        @Option(help: "With --generate: the HOTP counter to start at (default 0).") var counter: UInt64?
        @Option(help: "Also write the URI as an Aztec code to FILE (PNG; SVG when FILE ends in .svg).") var aztec: String?
        @Flag(help: "Each code needs the user's touch.") var touch = false
        @Flag(help: "Each code needs the user to be verified (an OATH session's client asks its host).") var verification = false
        @Flag(help: "Replace a credential of the same name; with --aztec, replace FILE or write through a symbolic link.") var force = false

        func validate() throws {
            if generate {
                guard uri == nil else { throw ValidationError("give an otpauth:// URI or --generate, not both") }
                guard account != nil else { throw ValidationError("--generate needs --account") }
            } else {
                guard uri != nil else { throw ValidationError("give an otpauth:// URI, or --generate with --account") }
                let unset: [Bool] = [issuer == nil, account == nil, type == nil, algorithm == nil, digits == nil, period == nil, counter == nil]
                guard !unset.contains(false) else {
                    throw ValidationError("--issuer, --account, --type, --algorithm, --digits, --period and --counter go with --generate")
                }
            }
        }

        func run() async throws {
            let credential = try generate ? generated() : given()
            if let aztec { try OutputFile.check(aztec, kind: .secret, force: force) }
            let oath = try OATHCommand.application(options)
            if !force, try await oath.list().contains(where: { $0.name == credential.name }) {
                throw CLIError(message: "a credential named \(quoted(credential.name)) exists; give --force to replace it")
            }
            try await oath.put(credential)
            guard generate || aztec != nil else {
                try Output.line(SafeText.escaped(credential.name))
                return
            }
            let uri = OTPAuthURI.encode(credential)
            do {
                if let aztec {
                    let symbol = try AztecEncoder.encode(uri)
                    let bytes: [UInt8]
                    if aztec.hasSuffix(".svg") {
                        bytes = Array(try symbol.svg(scale: 4, quietZone: 4).utf8)
                    } else {
                        bytes = try symbol.png(scale: 4, quietZone: 4)
                    }
                    try OutputFile.write(bytes, to: aztec, kind: .secret, force: force)
                    FileHandle.standardError.write(Data("\(symbol.summary) → \(SafeText.escaped(aztec))\n".utf8))
                }
                // A given URI is not printed again: its holder has it; a generated one is the only copy.
                try Output.line(generate ? uri : SafeText.escaped(credential.name))
            } catch {
                // Not delivered: the credential is taken out again (a generated secret nobody holds).
                try? await oath.delete(credential.name)
                throw error
            }
        }

        /// The credential of `--generate`.
        func generated() throws -> OATHCredential {
            guard let hash = OATH.Algorithm(name: algorithm ?? "SHA1") else { throw CLIError(message: "--algorithm must be SHA1, SHA256 or SHA512") }
            let kind: OATHCredential.Kind
            switch (type ?? "totp").lowercased() {
            case "totp": kind = .totp(period: period ?? OATH.defaultPeriod)
            case "hotp":
                guard period == nil else { throw CLIError(message: "--period goes with --type totp") }
                kind = .hotp(counter: counter ?? 0)
            default: throw CLIError(message: "--type must be totp or hotp")
            }
            guard counter == nil || (type ?? "totp").lowercased() == "hotp" else { throw CLIError(message: "--counter goes with --type hotp") }
            var credential = try OATHCredential(issuer: issuer, account: account ?? "", secret: SecureBytes(randomCount: 20), kind: kind,
                                                algorithm: hash, digits: digits ?? 6, requiresTouch: touch)
            credential.requiresVerification = verification
            return credential
        }

        /// The credential of the URI argument (or of standard input for `-`).
        func given() throws -> OATHCredential {
            var text = uri ?? ""
            if text == "-" {
                let data = (try? FileHandle.standardInput.read(upToCount: OTPAuthURI.maximumBytes + 2)) ?? Data()
                text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            var credential = try OTPAuthURI.parse(text)
            credential.requiresTouch = touch
            credential.requiresVerification = verification
            return credential
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the credentials: name, type, algorithm, digits, period or next counter, flags (tab-separated; never a secret).")
        @OptionGroup var options: StoreOptions

        func run() async throws {
            for info in try await OATHCommand.application(options).list() { try Output.line(OATHCommand.line(info)) }
        }
    }

    struct Code: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a credential's code (a HOTP counter moves on first).")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The credential's name: issuer:account, or the account alone.") var name: String
        @Option(help: "TOTP: the time, Unix seconds (default: now).") var time: Int64?

        func run() async throws {
            let code = try await OATHCommand.application(options).calculate(name, time: time)
            try Output.line(code.value)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a credential.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The credential's name.") var name: String

        func run() async throws {
            try await OATHCommand.application(options).delete(name)
            try Output.line("deleted \(SafeText.escaped(name))")
        }
    }
}
