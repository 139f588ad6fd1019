#if HTTPClient
import TokenMintCore
public import AsyncHTTPClient
import NIOCore
import NIOHTTP1

extension HTTPClient {
    /// The client TokenMintHTTP's types use unless given one: AsyncHTTPClient's
    /// shared event loops, and no redirect ever followed. A redirect that
    /// crosses origins would carry the request's body (a client secret, a
    /// refresh token, a code verifier) and headers such as the service key to
    /// wherever it points; TokenMint's servers never redirect an API call, so
    /// any 3xx is an error instead. It lives as long as the process and is
    /// never shut down. A client a host passes in should be configured the
    /// same way (`redirectConfiguration = .disallow`).
    public static let tokenMint: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}

/// One JSON exchange over AsyncHTTPClient: the status, and the body read
/// with the strict parser under a size cap. Anything that keeps the answer
/// from arriving (no connection, a timeout, a reset) is `transport`.
struct JSONExchange: Sendable {
    let client: HTTPClient
    let timeout: TimeAmount
    /// A Swift duration as NIO's, saturating.
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        let (nanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return .nanoseconds(overflow ? .max : nanos.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
    }

    /// The largest answer read.
    static let maximumBody = 1 << 20

    enum Failure: Error {
        /// No answer: connection refused, timeout, reset.
        case transport(any Error)
        /// An answer that is not JSON.
        case malformed(status: Int)
    }

    /// Sends `body` (JSON) or nothing; returns the status and the JSON object
    /// answered (empty for an empty body).
    func send(_ method: HTTPMethod, _ url: String, bearer: String?, body: JSONObject?, contentType: String = "application/json",
              rawBody: [UInt8]? = nil, extraHeaders: [(String, String)] = []) async throws(Failure) -> (status: Int, object: JSONObject) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        for (name, value) in extraHeaders { request.headers.add(name: name, value: value) }
        if let bytes = rawBody ?? body.map({ JSONWriter.encode(.object($0)) }) {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: bytes))
        }
        let status: Int
        let bytes: [UInt8]
        do {
            let response = try await client.execute(request, timeout: timeout)
            status = Int(response.status.code)
            bytes = Array(buffer: try await response.body.collect(upTo: Self.maximumBody))
        } catch {
            throw .transport(error)
        }
        // A redirect is never followed, whatever the client does with it.
        if (300..<400).contains(status) { throw .malformed(status: status) }
        if bytes.isEmpty { return (status, JSONObject()) }
        var limits = JSONParser.Limits()
        limits.maximumBytes = Self.maximumBody
        limits.maximumDepth = 16
        guard let object = (try? JSONParser.parse(bytes, limits: limits))?.objectValue else { throw .malformed(status: status) }
        return (status, object)
    }
}
#endif
