import ArgumentParser
import Foundation
import TokenMint
#if HTTPClient
import TokenMintHTTP
#endif

/// `pay desk` when the CLI is built with the HTTPClient trait.
#if HTTPClient
let deskCommands: [any ParsableCommand.Type] = [Desk.self]
#else
let deskCommands: [any ParsableCommand.Type] = []
#endif

#if HTTPClient
/// `tokenmint pay desk`: a cash desk at a WhitelabelPay server.
struct Desk: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Act as a cash desk at a WhitelabelPay server: enrol a scanned enrolment token, present a payment token.",
        discussion: "JSON on standard output. Exit 0 accepted, 1 refused, 2 error. The client secret is read from the first line of standard input.",
        subcommands: [Enrol.self, Pay.self])

    /// What both desk commands take.
    struct Options: ParsableArguments {
        @Option(help: "The server's base URL.") var server: String
        @Option(name: .customLong("client-id"), help: "The desk's OAuth client ID.") var clientID: String
        @Flag(name: .customLong("client-secret-stdin"), help: "Read the client secret from standard input (required).") var secretStdin = false

        func validate() throws {
            guard secretStdin else { throw ValidationError("--client-secret-stdin is required: the secret never goes on the command line") }
        }

        func desk() throws -> WhitelabelPayDesk {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError(message: "no client secret on standard input") }
            return try WhitelabelPayDesk(baseURL: server, clientID: clientID, clientSecret: SecureBytes(Array(line.utf8)))
        }
    }

    static func print(_ object: [String: Any]) throws {
        try Output.line(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
    }

    struct Enrol: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enrol a scanned enrolment token; prints the subject ID and payment means.")
        @OptionGroup var options: Options
        @Option(name: .customLong("payment-means"), help: "The payment means to link (default: the server creates one).") var paymentMeans: String?
        @Argument(help: "The enrolment token (01/…).") var token: String

        func run() async throws {
            let enrolment = try await options.desk().enrol(token, paymentMeansID: paymentMeans)
            try Desk.print(["status": "enrolled", "subjectId": enrolment.subjectID, "paymentMeansId": enrolment.paymentMeansID])
        }
    }

    struct Pay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Present a scanned payment token: exit 0 accepted, 1 refused (the reason is printed), 2 error.",
            discussion: "A lost answer is retried with the same --attempt: the server answers with the same transaction.")
        @OptionGroup var options: Options
        @Option(help: "The amount in the currency's units, e.g. 12.50.") var amount: String
        @Option(help: "The ISO 4217 currency code.") var currency: String
        @Option(help: "The payment attempt's ID (default: derived from the token, so running the command again after a lost answer is a retry).")
        var attempt: String?
        @Argument(help: "The payment token (02/…).") var token: String

        func run() async throws {
            guard currency.utf8.count == 3, currency.utf8.allSatisfy({ (65...90).contains($0) }) else {
                throw ValidationError("--currency is an ISO 4217 code such as EUR")
            }
            let minor = try WhitelabelPayDesk.minorUnits(amount, currency: currency)
            // One token is one payment: the same command again is the same attempt.
            let attemptID = attempt ?? "t-" + Base64URL.encode(HashFunction.sha256.hash(Array(token.utf8)).prefix(18))
            switch try await options.desk().pay(token, amount: minor, currency: currency, attemptID: attemptID) {
            case .accepted(let transaction):
                try Desk.print(["status": "accepted", "transactionId": transaction, "attemptId": attemptID, "amount": ["value": minor, "currency": currency]])
            case .refused(let code, let message):
                try Desk.print(["status": "refused", "error": code, "message": message, "attemptId": attemptID])
                try Output.flush()
                throw CLIError(message: "refused: \(code)", status: 1)
            }
        }
    }
}
#endif
