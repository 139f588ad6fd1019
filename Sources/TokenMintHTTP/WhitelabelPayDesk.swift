#if HTTPClient
public import TokenMintCore
public import TokenMintCrypto
import TokenMintPay
public import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Foundation

/// A cash desk at a WhitelabelPay server: it signs in with the OAuth
/// client-credentials grant (its client ID and secret), enrols scanned
/// enrolment tokens and presents scanned payment tokens.
public struct WhitelabelPayDesk: Sendable {
    /// The server's base URL.
    public let baseURL: String
    /// The desk's OAuth client ID.
    public let clientID: String
    let secret: SecureBytes
    let exchange: JSONExchange

    /// A desk of the server at `baseURL`.
    /// - Throws: `pay.invalidConfiguration` for a URL that is not http(s).
    public init(baseURL: String, clientID: String, clientSecret: SecureBytes, client: HTTPClient = .tokenMint,
                timeout: Duration = .seconds(10)) throws(TokenMintError) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        guard base.hasPrefix("http://") || base.hasPrefix("https://"), base.utf8.count <= 512, !base.contains("?") else {
            throw TokenMintError(.pay.invalidConfiguration, "the server URL is an http(s) URL without a query")
        }
        self.baseURL = base
        self.clientID = clientID
        self.secret = clientSecret
        self.exchange = JSONExchange(client: client, timeout: JSONExchange.timeAmount(timeout))
    }

    /// What a desk's enrolment returns.
    public struct Enrolment: Sendable, Hashable {
        /// The device's subject ID.
        public let subjectID: String
        /// The payment means now active for the device.
        public let paymentMeansID: String
    }

    /// The server's answer to a payment.
    public enum Payment: Sendable, Hashable {
        /// Accepted, as the transaction `transactionID`.
        case accepted(transactionID: String)
        /// Refused: the reason's code (`replayedToken`, `expiredToken`,
        /// `offlineTokenLimitReached`, …) and message.
        case refused(code: String, message: String)
    }

    func failure(_ error: JSONExchange.Failure) -> TokenMintError {
        switch error {
        case .transport(let cause): TokenMintError(.pay.backendUnreachable, "no answer from \(baseURL): \(cause)", underlying: cause)
        case .malformed(let status): TokenMintError(status >= 500 ? .pay.backendUnreachable : .pay.backendRefused, "the answer (\(status)) is not JSON")
        }
    }

    /// An access token from the client-credentials grant (`wlp.desk` scope).
    public func accessToken() async throws(TokenMintError) -> String {
        let form = "grant_type=client_credentials&client_id=" + clientID.addingPercentEncodingForQuery() + "&client_secret="
        let body = secret.withUnsafeBytes { Array(form.utf8) + Array(String(decoding: $0, as: UTF8.self).addingPercentEncodingForQuery().utf8) }
        let answer: (status: Int, object: JSONObject)
        do { answer = try await exchange.send(.POST, baseURL + "/oauth/token", bearer: nil, body: nil,
                                              contentType: "application/x-www-form-urlencoded", rawBody: body) } catch { throw failure(error) }
        guard answer.status == 200, let token = answer.object["access_token"]?.stringValue else {
            let name = answer.object["error"]?.stringValue ?? "status \(answer.status)"
            throw TokenMintError(answer.status >= 500 ? .pay.backendUnreachable : .pay.backendRefused,
                                 "the token endpoint refused the desk: \(name) \(answer.object["error_description"]?.stringValue ?? "")")
        }
        return token
    }

    /// Enrols a scanned enrolment token, linking `paymentMeansID` (or a
    /// means the server creates).
    public func enrol(_ enrolmentToken: String, paymentMeansID: String? = nil, accessToken: String? = nil) async throws(TokenMintError) -> Enrolment {
        let token: String
        if let accessToken { token = accessToken } else { token = try await self.accessToken() }
        var body = JSONObject([("enrolmentToken", .string(enrolmentToken))])
        if let paymentMeansID { body.set("paymentMeansId", .string(paymentMeansID)) }
        let answer: (status: Int, object: JSONObject)
        do { answer = try await exchange.send(.POST, baseURL + "/wlp/v1/enrolments", bearer: token, body: body) } catch { throw failure(error) }
        guard answer.status == 201, let subject = answer.object["subjectId"]?.stringValue, let means = answer.object["paymentMeansId"]?.stringValue else {
            throw TokenMintError(answer.status >= 500 ? .pay.backendUnreachable : .pay.enrollmentError,
                                 "\(answer.object["error"]?.stringValue ?? "status \(answer.status)"): \(answer.object["message"]?.stringValue ?? "")")
        }
        return Enrolment(subjectID: subject, paymentMeansID: means)
    }

    /// Presents a payment token for `amount` minor units of `currency`.
    /// The same `attemptID` retried after a lost answer gets the same
    /// transaction; a refusal is an answer, not an error.
    public func pay(_ paymentToken: String, amount: Int64, currency: String, attemptID: String,
                    accessToken: String? = nil) async throws(TokenMintError) -> Payment {
        let token: String
        if let accessToken { token = accessToken } else { token = try await self.accessToken() }
        let body = JSONObject([
            ("paymentToken", .string(paymentToken)),
            ("amount", .object(JSONObject([("value", .number(amount)), ("currency", .string(currency))]))),
            ("attemptId", .string(attemptID)),
        ])
        let answer: (status: Int, object: JSONObject)
        do { answer = try await exchange.send(.POST, baseURL + "/wlp/v1/payments", bearer: token, body: body) } catch { throw failure(error) }
        if answer.status == 200, let id = answer.object["transactionId"]?.stringValue { return .accepted(transactionID: id) }
        if answer.status == 409, answer.object["status"]?.stringValue == "refused", let code = answer.object["error"]?.stringValue {
            return .refused(code: code, message: answer.object["message"]?.stringValue ?? "")
        }
        throw TokenMintError(answer.status >= 500 ? .pay.backendUnreachable : .pay.backendRefused,
                             "\(answer.object["error"]?.stringValue ?? "status \(answer.status)"): \(answer.object["message"]?.stringValue ?? "")")
    }

    /// Minor units of `currency` from a decimal amount (`12.50` → 1250 for
    /// EUR; the ISO 4217 exponent: 0 for JPY, KRW and a few others, 3 for
    /// BHD, KWD, OMR, JOD, TND, LYD, IQD, 2 otherwise).
    /// - Throws: `pay.invalidConfiguration` for more fraction digits than the
    ///   currency has, a sign, or more than 11 digits of minor units.
    public static func minorUnits(_ amount: String, currency: String) throws(TokenMintError) -> Int64 {
        let exponent = ["JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "XAF": 0, "XOF": 0, "PYG": 0, "UGX": 0,
                        "BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3, "TND": 3, "LYD": 3, "IQD": 3][currency] ?? 2
        let parts = amount.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].utf8.allSatisfy({ (48...57).contains($0) }),
            parts.count == 1 || (!parts[1].isEmpty && parts[1].utf8.count <= exponent && parts[1].utf8.allSatisfy({ (48...57).contains($0) }))
        else { throw TokenMintError(.pay.invalidConfiguration, "an amount is digits with at most \(exponent) decimals for \(currency)") }
        let fraction = parts.count == 2 ? String(parts[1]) : ""
        let digits = String(parts[0]) + fraction + String(repeating: "0", count: exponent - fraction.utf8.count)
        guard digits.utf8.count <= 18, let value = Int64(digits), (1...99_999_999_999).contains(value) else {
            throw TokenMintError(.pay.invalidConfiguration, "an amount is 1 to 99999999999 minor units")
        }
        return value
    }
}
#endif
