import Assembly
import HTTPTypes
import Hummingbird
import Psychometrics

/// An error response as `application/problem+json` (RFC 9457): `type` (`urn:iqscore:problem:<kind>`), `title`,
/// `status`, `detail`, the offending `field` as a JSON Pointer (RFC 6901) into the request body when there is one,
/// and the `bank_version` that answered.
///
/// | kind | status | when |
/// |---|---|---|
/// | `malformed-json` | 400 | the body is not JSON (RFC 8259: syntax, a key twice in one object, nesting over 64) |
/// | `bad-request` | 400 | not HTTP/1.1 as RFC 9112 has it: a parse error, a bad chunk size, an unknown `Transfer-Encoding`, no `Host` |
/// | `request-timeout` | 408 | a head or body slower than `ConnectionLimits.headerTimeout`/`bodyTimeout` (the connection closes) |
/// | `expectation-failed` | 417 | an `Expect` other than `100-continue` |
/// | `header-too-large` | 431 | a request head over `ConnectionLimits.maxHeaderBytes` |
/// | `body-too-large` | 413 | the body is over `ServerLimits.maxBodyBytes` |
/// | `invalid-request` | 422 | valid JSON of the wrong shape: not an object, a missing or unknown key, a wrong type |
/// | `unknown-item`, `repeated-item`, `invalid-response`, `length-mismatch`, `no-responses`, `unscorable` | 422 | a session the bank cannot score as given |
/// | `too-many-items`, `too-many-sessions` | 422 | over `ServerLimits` |
/// | `invalid-blueprint`, `infeasible-blueprint` | 422 | a blueprint that is wrong, or that the bank cannot meet |
/// | `reload-failed` | 422 | a reload whose new files are refused (the old bank keeps serving) |
/// | `unauthorized` | 401 | no bearer token, or one the server does not accept, where tokens are configured (with `WWW-Authenticate: Bearer`) |
/// | `forbidden` | 403 | a scoring token on `POST /v1/admin/reload`, or reloading over HTTP with no admin token configured |
/// | `rate-limited` | 429 | over `ServerLimits.rateLimit` requests a second for this client (with `Retry-After`) |
/// | `not-ready` | 503 | `GET /readyz` while the server drains before shutting down |
/// | `not-found`, `method-not-allowed` | 404, 405 | an unknown path, a known path with another method |
/// | `busy` | 503 | `ServerLimits.maxQueuedForms` form requests wait already (with `Retry-After: 1`) |
/// | `overloaded` | 503 | the request bodies held by all connections would go over `ConnectionLimits.maxBufferedBodyBytes` (with `Retry-After: 1`) |
/// | `connection-closed` | — | never sent: the client closed the connection, or the guard answered and closed it, before the body was read (counted; logged at debug) |
/// | `internal` | 500 | a fault of the server, never the client's input |
package struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as the last part of the problem's `type` (`urn:iqscore:problem:unknown-item`); each kind has
    /// one status and one title.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case malformedJSON = "malformed-json"
        case badRequest = "bad-request"
        case requestTimeout = "request-timeout"
        case expectationFailed = "expectation-failed"
        case headerTooLarge = "header-too-large"
        case bodyTooLarge = "body-too-large"
        case invalidRequest = "invalid-request"
        case unknownItem = "unknown-item"
        case repeatedItem = "repeated-item"
        case invalidResponse = "invalid-response"
        case lengthMismatch = "length-mismatch"
        case noResponses = "no-responses"
        case unscorable
        case tooManyItems = "too-many-items"
        case tooManySessions = "too-many-sessions"
        case invalidBlueprint = "invalid-blueprint"
        case infeasibleBlueprint = "infeasible-blueprint"
        case reloadFailed = "reload-failed"
        case unauthorized
        case forbidden
        case rateLimited = "rate-limited"
        case notReady = "not-ready"
        case notFound = "not-found"
        case methodNotAllowed = "method-not-allowed"
        case busy
        case overloaded
        case connectionClosed = "connection-closed"
        case `internal`

        package var status: HTTPResponse.Status {
            switch self {
            case .malformedJSON, .badRequest, .connectionClosed: .badRequest
            case .requestTimeout: .requestTimeout
            case .expectationFailed: .expectationFailed
            case .headerTooLarge: .requestHeaderFieldsTooLarge
            case .bodyTooLarge: .contentTooLarge
            case .unauthorized: .unauthorized
            case .forbidden: .forbidden
            case .rateLimited: .tooManyRequests
            case .notReady: .serviceUnavailable
            case .notFound: .notFound
            case .methodNotAllowed: .methodNotAllowed
            case .busy, .overloaded: .serviceUnavailable
            case .internal: .internalServerError
            default: .unprocessableContent
            }
        }

        package var title: String {
            switch self {
            case .malformedJSON: "The request body is not valid JSON"
            case .badRequest: "The request is not valid HTTP/1.1"
            case .requestTimeout: "The request came too slowly"
            case .expectationFailed: "The expectation cannot be met"
            case .headerTooLarge: "The request head is too large"
            case .bodyTooLarge: "The request body is too large"
            case .invalidRequest: "The request does not match the API"
            case .unknownItem: "An item is not in the bank"
            case .repeatedItem: "An item is given twice"
            case .invalidResponse: "A response is not one of its item's categories (0 or 1 for a right/wrong item)"
            case .lengthMismatch: "Item ids and responses differ in length"
            case .noResponses: "The session has no responses"
            case .unscorable: "The session cannot be scored"
            case .tooManyItems: "Too many items"
            case .tooManySessions: "Too many sessions"
            case .invalidBlueprint: "The blueprint is not valid"
            case .infeasibleBlueprint: "The bank cannot meet the blueprint"
            case .reloadFailed: "The new files were refused; the previous bank keeps serving"
            case .unauthorized: "A bearer token is needed"
            case .forbidden: "Forbidden"
            case .rateLimited: "Too many requests from this client; retry later"
            case .notReady: "The server is not ready for requests"
            case .notFound: "Not found"
            case .methodNotAllowed: "Method not allowed"
            case .busy: "Too many form requests are waiting; retry"
            case .overloaded: "The server holds as many request bodies as it may; retry"
            case .connectionClosed: "The connection closed before the request was read"
            case .internal: "Internal server error"
            }
        }

        /// The problem's `type` URI.
        package var type: String { "urn:iqscore:problem:" + rawValue }
    }

    package var kind: Kind
    package var detail: String
    /// A JSON Pointer into the request body (`/responses/3`, `/administered/2/item_id`; `""` is the whole body).
    package var field: String?
    /// The methods a path accepts, for the `Allow` header of a 405.
    package var allow: String?
    /// Seconds for `Retry-After` (a 429; 503s the client may retry say 1 without it).
    package var retryAfter: Int?

    package init(_ kind: Kind, _ detail: String, field: String? = nil, allow: String? = nil, retryAfter: Int? = nil) {
        self.kind = kind
        self.detail = detail
        self.field = field
        self.allow = allow
        self.retryAfter = retryAfter
    }

    package var status: HTTPResponse.Status { kind.status }
    package var description: String { "\(kind.rawValue): \(detail)" + (field.map { " (field \($0))" } ?? "") }

    /// A body over `ServerLimits.maxBodyBytes` (`limit`): refused by the connection guard on its `Content-Length`,
    /// or by the routes when reading passes the limit.
    static func bodyTooLarge(limit: Int, name: String) -> Problem {
        Problem(.bodyTooLarge, "the request body is larger than \(limit) bytes (limit: \(name))")
    }

    /// A library's scoring error, with the field it concerns when the caller knows it.
    init(_ error: PsychometricsError, field: String? = nil) {
        let kind: Kind =
            switch error.code {
            case .unknownItem: .unknownItem
            case .invalidResponse: .invalidResponse
            case .repeatedItem: .repeatedItem
            case .lengthMismatch: .lengthMismatch
            case .noResponses: .noResponses
            case .unscorable, .insufficientData: .unscorable
            case .invalidOptions: .invalidRequest
            case .resourceLimit: .bodyTooLarge
            case .invalidParameters, .numericalFailure: .internal
            }
        self.init(kind, error.message, field: field)
    }

    /// An assembly or adaptive-testing error; its `field` (`administered[3].item_id`) becomes a JSON Pointer.
    init(_ error: AssemblyError, fieldPrefix: String = "") {
        let kind: Kind =
            switch error.code {
            case .unknownItem: .unknownItem
            case .repeatedItem: .repeatedItem
            case .invalidResponse: .invalidResponse
            case .infeasibleBlueprint: .infeasibleBlueprint
            case .invalidConfiguration: .invalidBlueprint
            case .invalidExposure: .internal
            }
        self.init(kind, error.message, field: error.field.map { fieldPrefix + JSONPointer.from(dottedPath: $0) })
    }

    /// The problem as an HTTP response (`Allow` is set for a 405).
    func response(bankVersion: String?) -> Response {
        Response(status: status, headers: headerFields(bankVersion: bankVersion), body: ResponseBody(byteBuffer: body(bankVersion: bankVersion)))
    }

    /// The response's JSON body.
    func body(bankVersion: String?) -> ByteBuffer {
        var json = JSONWriter()
        json.beginObject()
        json.key("type"); json.string(kind.type)
        json.key("title"); json.string(kind.title)
        json.key("status"); json.integer(status.code)
        json.key("detail"); json.string(detail)
        if let field { json.key("field"); json.string(field) }
        if let bankVersion { json.key("bank_version"); json.string(bankVersion) }
        json.endObject()
        return json.buffer
    }

    /// The response's header fields: the content type, `X-Bank-Version`, `Allow` for a 405, `Retry-After` for a 429
    /// and 1 for a 503 the client may retry, `WWW-Authenticate` for a 401 (RFC 6750 §3).
    func headerFields(bankVersion: String?) -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if let bankVersion { headers[.bankVersion] = bankVersion }
        if let allow { headers[.allow] = allow }
        if let retryAfter {
            headers[.retryAfter] = String(retryAfter)
        } else if kind == .busy || kind == .overloaded || kind == .notReady {
            headers[.retryAfter] = "1"
        }
        if kind == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"iqscore\"" }
        return headers
    }
}

/// JSON Pointers (RFC 6901) for problem fields.
enum JSONPointer {
    /// `"/" + token` per path component, with `~` written `~0` and `/` written `~1`.
    static func from(components: [String]) -> String {
        components.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }.joined()
    }

    /// A decoder's coding path as a pointer: keys by name, array positions by number.
    static func from(codingPath: [any CodingKey]) -> String {
        from(
            components: codingPath.map { key in
                if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == String(index) { return String(index) }
                return key.stringValue
            })
    }

    /// The Assembly module's dotted fields (`administered[3].item_id`) as a pointer (`/administered/3/item_id`).
    static func from(dottedPath: String) -> String {
        var components: [String] = []
        for part in dottedPath.split(separator: ".", omittingEmptySubsequences: false) {
            var name = Substring(part)
            var indices: [String] = []
            while name.hasSuffix("]"), let open = name.lastIndex(of: "[") {
                indices.insert(String(name[name.index(after: open)..<name.index(before: name.endIndex)]), at: 0)
                name = name[..<open]
            }
            if !name.isEmpty { components.append(String(name)) }
            components += indices
        }
        return from(components: components)
    }
}

extension HTTPField.Name {
    /// `X-Bank-Version`: the bank version that answered, on every response.
    static let bankVersion = HTTPField.Name("X-Bank-Version")!
    /// `X-Request-Id`: the client's request id (`RequestID`), or one the server made, on every response.
    static let requestID = HTTPField.Name("X-Request-Id")!
    /// `X-IQScore-Instance`: the instance that answered (`iqscore serve --instance`), on every response.
    static let instance = HTTPField.Name("X-IQScore-Instance")!
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
}
