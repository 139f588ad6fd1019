#if Server
import TokenMintCore
import Hummingbird
import HTTPTypes
import Logging
import Foundation

/// JSON bodies in and out, and the one error shape every route answers
/// with: `{"error": <code name>, "message": <reason>}`.
enum HTTPMessages {
    static let jsonContentType = "application/json"

    /// A JSON response.
    static func json(_ status: HTTPResponse.Status, _ object: JSONObject, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = jsonContentType
        fields[.cacheControl] = "no-store"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONWriter.encode(.object(object)))))
    }

    /// The status code a library error answers with.
    static func status(for code: TokenMintError.Code) -> HTTPResponse.Status {
        switch code.domain {
        case "server":
            switch code.name {
            case "badRequest": .badRequest
            case "unauthorized": .unauthorized
            case "forbidden": .forbidden
            case "notFound": .notFound
            case "methodNotAllowed": .methodNotAllowed
            case "conflict": .conflict
            case "payloadTooLarge": .contentTooLarge
            case "unsupportedMediaType": .unsupportedMediaType
            case "tooManyRequests": .tooManyRequests
            case "unavailable": .serviceUnavailable
            default: .internalServerError
            }
        case "json", "cbor": .badRequest
        case "pay":
            switch code.name {
            case "storeFailure", "tampered": .internalServerError
            case "deviceNotEnrolled", "invalidEnrolmentInstance": .notFound
            case "malformedToken", "invalidConfiguration", "failureToRetrievePaymentMeans": .badRequest
            default: .conflict
            }
        case "auth":
            switch code.name {
            case "internalFailure": .internalServerError
            case "accountExists", "credentialExists": .conflict
            case "registrationInvalid": .badRequest
            default: .unauthorized
            }
        case "jose": .unauthorized
        case "store":
            switch code.name {
            case "conflict": .conflict
            case "notFound": .notFound
            default: .internalServerError
            }
        default: .internalServerError
        }
    }

    /// The error body of a library error; failures of the server itself say
    /// no more than that (their detail goes to the log).
    static func error(_ error: TokenMintError, extra: JSONObject = JSONObject()) -> Response {
        let status = status(for: error.code)
        var body = JSONObject([("error", .string(error.code.name))])
        body.set("message", .string(status == .internalServerError ? "the server failed; nothing was changed" : error.reason))
        for member in extra { body.set(member.name, member.value) }
        var headers: HTTPFields = [:]
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return json(status, body, headers: headers)
    }

    /// Reads a JSON object body: `application/json` (415 otherwise), at most
    /// `limit` bytes (413), strictly parsed (400).
    static func object(_ request: Request, limit: Int) async throws(TokenMintError) -> JSONObject {
        try object(try await body(request, limit: limit, contentType: jsonContentType), limit: limit)
    }

    /// `bytes` strictly parsed as a JSON object of at most `limit` bytes,
    /// depth 8 and 64 members per object (400 otherwise).
    static func object(_ bytes: [UInt8], limit: Int) throws(TokenMintError) -> JSONObject {
        var limits = JSONParser.Limits()
        limits.maximumBytes = limit
        limits.maximumDepth = 8
        limits.maximumMembers = 64
        let value: JSONValue
        do { value = try JSONParser.parse(bytes, limits: limits) } catch {
            throw TokenMintError(.server.badRequest, "the body is not JSON: \(error.reason)", underlying: error)
        }
        guard let object = value.objectValue else { throw TokenMintError(.server.badRequest, "the body is not a JSON object") }
        return object
    }

    static let frameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    /// The headers of every page and script a browser loads from the
    /// server: scripts and requests to this origin only, no framing, no
    /// sniffing, no referrer, no caching.
    static func browserHeaders(contentType: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        headers[.contentSecurityPolicy] = "default-src 'none'; script-src 'self'; connect-src 'self'; form-action 'self'; style-src 'unsafe-inline'"
        headers[frameOptions] = "DENY"
        headers[.xContentTypeOptions] = "nosniff"
        headers[referrerPolicy] = "no-referrer"
        headers[.cacheControl] = "no-store"
        return headers
    }

    /// The body bytes, checked for content type and size.
    static func body(_ request: Request, limit: Int, contentType: String) async throws(TokenMintError) -> [UInt8] {
        // `Content-Type: ;` has no media type at all: split keeps one (empty) part.
        let type = request.headers[.contentType].map {
            ($0.split(separator: ";", omittingEmptySubsequences: false).first ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard type == contentType else {
            throw TokenMintError(.server.unsupportedMediaType, "the body must be \(contentType)")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw TokenMintError(.server.payloadTooLarge, "the body is larger than \(limit) bytes")
        }
        var bytes: [UInt8] = []
        do {
            for try await buffer in request.body {
                guard buffer.readableBytes <= limit - bytes.count else {
                    throw TokenMintError(.server.payloadTooLarge, "the body is larger than \(limit) bytes")
                }
                bytes += buffer.readableBytesView
            }
        } catch let error as TokenMintError {
            throw error
        } catch {
            throw TokenMintError(.server.badRequest, "the body could not be read", underlying: error)
        }
        return bytes
    }

    /// A required string field of 1 to `maximum` bytes.
    static func string(_ object: JSONObject, _ name: String, maximum: Int = 512) throws(TokenMintError) -> String {
        guard let value = object[name] else { throw TokenMintError(.server.badRequest, "\(name) is missing") }
        guard let text = value.stringValue, (1...maximum).contains(text.utf8.count) else {
            throw TokenMintError(.server.badRequest, "\(name) is a string of 1 to \(maximum) bytes")
        }
        return text
    }

    /// An optional string field.
    static func optionalString(_ object: JSONObject, _ name: String, maximum: Int = 512) throws(TokenMintError) -> String? {
        guard let value = object[name], !value.isNull else { return nil }
        return try string(object, name, maximum: maximum)
    }
}

/// Turns every error a route throws into the JSON error shape: a library
/// error by its code, a framework error (no route, body too large) by its
/// status, anything else into a 500 that says nothing more. Each refusal is
/// logged as one line with the code and escaped reason, never a body or a
/// credential.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as TokenMintError {
            let response = HTTPMessages.error(error)
            let level: Logger.Level = response.status == .internalServerError ? .error : .info
            logger.log(level: level, "refused", metadata: [
                "method": "\(request.method.rawValue)", "path": "\(SafeText.escaped(request.uri.path.prefix(128)))",
                "status": "\(response.status.code)", "code": "\(error.code)", "reason": "\(error.description)",
            ])
            return response
        } catch let error as any HTTPResponseError {
            let code: TokenMintError.Code = switch error.status {
            case .notFound: .server.notFound
            case .methodNotAllowed: .server.methodNotAllowed
            case .contentTooLarge: .server.payloadTooLarge
            case .unsupportedMediaType: .server.unsupportedMediaType
            case .unauthorized: .server.unauthorized
            case let status where status.kind == .clientError: .server.badRequest
            default: .server.internalFailure
            }
            let message = code == .server.notFound ? "no route \(request.method.rawValue) \(request.uri.path.prefix(128))" : "\(error.status.reasonPhrase)"
            return HTTPMessages.error(TokenMintError(code, message))
        } catch {
            logger.error("failed", metadata: ["path": "\(SafeText.escaped(request.uri.path.prefix(128)))", "error": "\(SafeText.escaped(String(describing: error).prefix(256)))"])
            return HTTPMessages.error(TokenMintError(.server.internalFailure, "internal"))
        }
    }
}
#endif
