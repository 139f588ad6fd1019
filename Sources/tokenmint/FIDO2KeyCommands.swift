import ArgumentParser
import Foundation
import TokenMint

/// `tokenmint fido2 key …`: a security key (or `fido2 device`'s socket) driven
/// as a platform drives it: getInfo, the PIN, discoverable credentials, reset.
struct FIDO2KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Manage a FIDO2 security key over Linux hidraw, or the software key of `fido2 device` over its socket.",
        discussion: """
            PINs are read from standard input, one per line, never from the command line. Name the key with --device \
            (a /dev/hidrawN from `fido2 key list`; you need read and write access to it) or --socket.
            """,
        subcommands: [List.self, Info.self, PIN.self, Credentials.self, Delete.self, Reset.self])

    struct Target: ParsableArguments {
        @Option(help: "A hidraw device node, e.g. /dev/hidraw3.") var device: String?
        @Option(help: "The UNIX socket of `tokenmint fido2 device`.") var socket: String?

        func session() async throws -> FIDO2Session {
            switch (device, socket) {
            case (let path?, nil): return try await CTAPHIDConnection(hidrawPath: path).fido2Session()
            case (nil, let path?): return try await CTAPHIDConnection(socketPath: path).fido2Session()
            default: throw ValidationError("name the key with --device or --socket (one of them)")
            }
        }
    }

    /// The next line of standard input (a PIN), without its newline.
    static func readPIN(_ what: String) throws -> String {
        guard let line = Swift.readLine(strippingNewline: true), !line.isEmpty else {
            throw CLIError(message: "expected the \(what) on a line of standard input")
        }
        return line
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the FIDO security keys attached (hidraw devices with usage page 0xF1D0).")
        func run() throws {
            let keys = HIDRaw.fidoDevices()
            if keys.isEmpty { Swift.print("no FIDO security key found") }
            for key in keys {
                let ids = key.vendorID.map { String(format: "%04x:%04x", $0, key.productID ?? 0) } ?? "?"
                Swift.print("\(key.path)  \(ids)  \(SafeText.escaped(key.productName ?? "(no name)"))")
            }
        }
    }

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the key's getInfo as JSON.")
        @OptionGroup var target: Target
        func run() async throws {
            let info = try await target.session().getInfo()
            try FIDO2Command.print(json: [
                "versions": info.versions, "extensions": info.extensions, "aaguid": Hex.encode(info.aaguid), "options": info.options,
                "pinUvAuthProtocols": info.pinUVAuthProtocols, "algorithms": info.algorithms.map { $0.rawValue },
                "maxMsgSize": info.maximumMessageSize ?? 0, "minPINLength": info.minimumPINLength ?? 4,
            ])
        }
    }

    struct PIN: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "set (reads the new PIN), change (reads the current PIN, then the new one), or retries.")
        @Argument(help: "set, change or retries.") var action: String
        @OptionGroup var target: Target
        func run() async throws {
            let session = try await target.session()
            switch action {
            case "set": try await session.setPIN(try FIDO2KeyCommand.readPIN("new PIN"))
            case "change": try await session.changePIN(from: try FIDO2KeyCommand.readPIN("current PIN"), to: try FIDO2KeyCommand.readPIN("new PIN"))
            case "retries":
                let state = try await session.pinRetries()
                Swift.print("\(state.retries) retries\(state.powerCycleRequired ? "; power-cycle the key before the next try" : "")")
                return
            default: throw ValidationError("the action is set, change or retries")
            }
            Swift.print("PIN \(action == "set" ? "set" : "changed")")
        }
    }

    struct Credentials: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the discoverable credentials (reads the PIN) as JSON.")
        @OptionGroup var target: Target
        func run() async throws {
            let session = try await target.session()
            let pin = try FIDO2KeyCommand.readPIN("PIN")
            let token = try await session.pinToken(pin: pin, permissions: .credentialManagement)
            let metadata = try await session.credentialMetadata(token: token)
            var relyingParties: [[String: Any]] = []
            for rpID in try await session.relyingParties(token: token) {
                let credentials = try await session.credentials(rpID: rpID, token: token).map { credential -> [String: Any] in
                    ["id": FIDO2Command.b64(credential.credentialID), "userId": FIDO2Command.b64(credential.userID),
                     "userName": credential.userName ?? "", "displayName": credential.userDisplayName ?? "",
                     "algorithm": credential.publicKey.algorithm.rawValue, "credProtect": credential.protection?.rawValue ?? 1]
                }
                relyingParties.append(["rpId": rpID, "credentials": credentials])
            }
            try FIDO2Command.print(json: ["existing": metadata.existing, "remaining": metadata.remaining, "relyingParties": relyingParties])
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a discoverable credential (reads the PIN).")
        @Argument(help: "The credential ID, base64url.") var credential: String
        @OptionGroup var target: Target
        func run() async throws {
            guard let id = try? Base64URL.decode(credential, padding: .either), (1...1023).contains(id.count) else {
                throw ValidationError("the credential ID is base64url, 1 to 1023 bytes")
            }
            let session = try await target.session()
            let token = try await session.pinToken(pin: try FIDO2KeyCommand.readPIN("PIN"), permissions: .credentialManagement)
            try await session.deleteCredential(id, token: token)
            Swift.print("deleted")
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase every credential and the PIN (a real key asks for a touch, within seconds of being plugged in).")
        @OptionGroup var target: Target
        @Flag(help: "Confirm: everything on the key is lost.") var yes = false
        func run() async throws {
            guard yes else { throw ValidationError("reset erases the key: add --yes") }
            try await target.session().reset()
            Swift.print("reset")
        }
    }
}
