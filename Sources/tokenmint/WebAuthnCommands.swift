import ArgumentParser
import Foundation
import TokenMint

/// `tokenmint webauthn …`: data the relying party verifies with.
struct WebAuthnCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webauthn", abstract: "Relying-party data: the FIDO Metadata Service (MDS3) BLOB.", subcommands: [MDS.self])

    /// `tokenmint webauthn mds …`.
    struct MDS: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "mds", abstract: "The FIDO metadata BLOB the relying party uses.",
                                                        subcommands: [Load.self])

        /// `tokenmint webauthn mds load FILE`.
        struct Load: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Verify an MDS3 BLOB file and keep it in the RP store (rp.sqlite); prints a summary as JSON.",
                discussion: """
                    The BLOB is the JWS the metadata service publishes; its x5c must chain to a root in --root (for the FIDO \
                    Alliance's service, GlobalSign Root CA - R3). A BLOB whose number is not newer than the kept one is refused. \
                    `fido2 verify-registration --mds-root PEM` then applies it.
                    """)

            @OptionGroup var store: StoreOptions
            @Option(help: "A PEM file with the root(s) the BLOB's signing certificate must chain to.") var root: String
            @Argument(help: "The BLOB file.") var file: String

            func run() async throws {
                let roots = try WebAuthnCommand.roots(root)
                let blob = try MetadataBLOB(jws: String(decoding: try readFile(file, limit: MetadataBLOB.maximumBytes), as: UTF8.self), roots: roots)
                try blob.save(in: try store.open("rp.sqlite"), roots: roots)
                let refused = blob.entries.filter { $0.status.map(MetadataPolicy().refusedStatuses.contains) ?? false }.count
                try FIDO2Command.print(json: ["no": Int(blob.number), "nextUpdate": blob.nextUpdate, "entries": blob.entries.count, "refused": refused])
            }
        }
    }

    /// The certificates of a PEM file.
    static func roots(_ path: String) throws -> [[UInt8]] {
        try X509Certificate.derCertificates(pem: String(decoding: try readFile(path, limit: 1 << 20), as: UTF8.self))
    }
}
