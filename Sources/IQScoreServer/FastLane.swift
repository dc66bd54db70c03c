#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import HTTPTypes
import NIOCore
import NIOHTTP1

/// The hot endpoints answered where their bytes arrive, on the connection's event loop, before Hummingbird's
/// request loop (`handleHTTP`) sees them: `POST /v1/score`, `GET /healthz`, `GET /livez`, `GET /readyz`.
///
/// Hummingbird answers a request in a task of its own: the parts cross from the event loop to the task through an
/// async sequence, the head is converted to Swift HTTP Types (the path through `URLComponents`), the router and the
/// middleware run, and the response crosses back. On this 2-core machine that is about 70 µs of a `/healthz`
/// answer's 90, where scoring a 25-item session is 2 µs (`Benchmarks/ServeLatency`). This lane does what
/// `ScoringService.answer` does, with the same functions, without the crossing: `authorize`, `admit` (the rate
/// limit), the handler's JSON, the shared headers (`X-Bank-Version`, `X-Request-Id`, `X-IQScore-Instance`, `Date`),
/// `finish` (metrics and the request line).
///
/// It is only ever a shorter way to the same answer. It takes a request only when
/// - it is one of the four endpoints, method and path exactly (no query), and no request passed to the routes
///   is still unanswered on this connection (responses leave in request order: RFC 9112 §9.3.2);
/// - the body has a `Content-Length` of at most `maxBodyBytes` (a GET none), without `Transfer-Encoding`;
/// - `Authorization` and `X-Request-Id` appear at most once, and they and `X-Forwarded-For` are printable ASCII
///   without surrounding spaces (the routes read them through Swift HTTP Types, which would join repeats and
///   replace other bytes).
///
/// A request it took is then answered here only when the answer is a 200; anything else (a token refused, the
/// rate limit reached, a body outside `ScoreRequestScanner`'s subset or a session a check refuses, `/readyz` while
/// draining) is passed on whole, as it arrived, to the routes, which answer it or name its problem as they do
/// every request. The connection guard in front (`ConnectionGuard`) has already applied the timeouts, the body
/// limits and HTTP/1.1's rules, and sees this lane's responses as it sees the routes'.
///
/// A request cut off while the lane held it is passed on too, as far as it came, so the routes count it as the
/// client's doing (`connection-closed`) as they count every other.
///
/// `IQScoreApplication.Options.fastLane` (`iqscore serve --no-fast-lane`) turns it off; the tests answer every
/// request both ways and compare the bytes.
final class FastLane: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The routes the lane answers.
    static let routes: Set<ServerRoute> = [.score, .health, .live, .ready]

    /// The largest body the lane holds: a 64-item session with long ids is under 3 KB.
    static let maxBodyBytes = 16 * 1024

    /// A request the lane took, its body arriving.
    private struct Taken {
        var head: HTTPRequestHead
        var route: ServerRoute
        var fields: Fields
        var body: ByteBuffer?
        var started: ContinuousClock.Instant
    }

    /// The header fields the lane reads, found in one pass over the head.
    struct Fields {
        var authorization: String?
        var requestID: String?
        var forwardedFor: [String] = []
    }

    private enum State {
        /// Between requests.
        case idle
        /// A request the lane took.
        case taking(Taken)
        /// A request passed to the routes: its parts follow it.
        case passing
    }

    private let service: ScoringService
    private var peer: SocketAddress?
    private var state = State.idle
    /// Requests passed to the routes whose response has not ended: while there are any, the lane takes nothing.
    private var passedUnanswered = 0
    private var date = HTTPDate()

    init(service: ScoringService) {
        self.service = service
    }

    func handlerAdded(context: ChannelHandlerContext) {
        peer = context.channel.remoteAddress
    }

    func channelActive(context: ChannelHandlerContext) {
        peer = context.channel.remoteAddress
        context.fireChannelActive()
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if passedUnanswered == 0, let (route, fields) = Self.take(head) {
                state = .taking(Taken(head: head, route: route, fields: fields, body: nil, started: .now))
            } else {
                state = .passing
                passedUnanswered += 1
                context.fireChannelRead(data)
            }
        case .body(var part):
            guard case .taking(var taken) = state else { context.fireChannelRead(data); return }
            state = .idle // no second reference to the body while it grows
            if taken.body == nil { taken.body = part } else { taken.body!.writeBuffer(&part) }
            state = .taking(taken)
        case .end:
            let current = state
            state = .idle
            guard case .taking(let taken) = current else { context.fireChannelRead(data); return }
            answer(context, taken)
        }
    }

    /// The route and header fields of a request the lane takes; nil for one it passes on.
    static func take(_ head: HTTPRequestHead) -> (ServerRoute, Fields)? {
        let route: ServerRoute
        switch head.method {
        case .POST where head.uri == "/v1/score": route = .score
        case .GET where head.uri == "/healthz": route = .health
        case .GET where head.uri == "/livez": route = .live
        case .GET where head.uri == "/readyz": route = .ready
        default: return nil
        }
        var fields = Fields()
        var lengths = 0, length = 0, authorizations = 0, requestIDs = 0
        for (name, value) in head.headers {
            switch name.utf8.count {
            case 14 where HeadFields.equalsLowercase(name.utf8, "content-length"):
                lengths += 1
                length = Int(value) ?? .max
            case 17 where HeadFields.equalsLowercase(name.utf8, "transfer-encoding"):
                return nil
            case 13 where HeadFields.equalsLowercase(name.utf8, "authorization"):
                guard Self.isPlain(value) else { return nil }
                authorizations += 1
                fields.authorization = value
            case 12 where HeadFields.equalsLowercase(name.utf8, "x-request-id"):
                guard Self.isPlain(value) else { return nil }
                requestIDs += 1
                fields.requestID = value
            case 15 where HeadFields.equalsLowercase(name.utf8, "x-forwarded-for"):
                guard Self.isPlain(value) else { return nil }
                fields.forwardedFor.append(value)
            default: break
            }
        }
        guard authorizations <= 1, requestIDs <= 1 else { return nil }
        if route == .score {
            guard lengths == 1, (0...maxBodyBytes).contains(length) else { return nil }
        } else {
            guard lengths == 0 || (lengths == 1 && length == 0) else { return nil }
        }
        return (route, fields)
    }

    /// Printable ASCII, not starting or ending with a space: read alike by NIOHTTP1 and Swift HTTP Types.
    static func isPlain(_ value: String) -> Bool {
        let bytes = value.utf8
        guard let first = bytes.first, let last = bytes.last, first != 0x20, last != 0x20 else { return bytes.isEmpty }
        return bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }

    // MARK: Answering

    /// Answers `taken` with a 200, or passes it on to the routes.
    private func answer(_ context: ChannelHandlerContext, _ taken: Taken) {
        let state = service.store.current
        guard let (json, token) = reply(taken, state) else {
            pass(context, taken)
            return
        }
        let requestID = service.requestIDs.id(from: taken.fields.requestID)
        let body = json.buffer
        service.metrics.recordFastLane(taken.route)
        service.finish(
            taken.route, method: taken.head.method.rawValue, path: taken.head.uri, status: 200, nil, started: taken.started,
            requestID: requestID, peer: peer, token: token)
        var headers = HTTPHeaders()
        headers.reserveCapacity(6)
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: HTTPField.Name.bankVersion.rawName, value: state.bankVersion)
        headers.add(name: HTTPField.Name.requestID.rawName, value: requestID)
        headers.add(name: HTTPField.Name.instance.rawName, value: service.instance)
        headers.add(name: "Date", value: date.now())
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// The 200's body and the token's id, as `ScoringService.answer` would make them; nil when the answer is not
    /// a 200 (the routes then answer).
    private func reply(_ taken: Taken, _ state: ServingState) -> (JSONWriter, String?)? {
        do {
            switch taken.route {
            case .health: return (service.healthJSON(state), nil)
            case .live: return (service.liveJSON(), nil)
            case .ready: return (try service.readyJSON(state), nil)
            case .score:
                let token = try service.authorize(.score, authorization: taken.fields.authorization, state)
                guard let body = taken.body, let members = try service.plainScoreMembers(state, body) else { return nil }
                // Last: a request admitted here is not admitted again by the routes.
                try service.admit(.score, token: token, peer: peer, forwardedFor: taken.fields.forwardedFor)
                return (ScoringService.scoreJSON(members, state), token)
            default: return nil
            }
        } catch {
            return nil
        }
    }

    /// Hands `taken` to the routes as it arrived (`whole`: with its end).
    private func pass(_ context: ChannelHandlerContext, _ taken: Taken, whole: Bool = true) {
        passedUnanswered += 1
        context.fireChannelRead(wrapInboundOut(.head(taken.head)))
        if let body = taken.body { context.fireChannelRead(wrapInboundOut(.body(body))) }
        if whole { context.fireChannelRead(wrapInboundOut(.end(nil))) }
    }

    /// A request cut off (the client went away, or the guard answered it and closed the connection) goes to the
    /// routes as far as it came, before the error: they count and log it as they do every cut-off request.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        passCutOff(context)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        passCutOff(context)
        context.fireChannelInactive()
    }

    private func passCutOff(_ context: ChannelHandlerContext) {
        guard case .taking(let taken) = state else { return }
        state = .passing
        pass(context, taken, whole: false)
    }

    // MARK: Outbound

    /// The routes' responses pass here: the end of one lets the lane take requests again.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), passedUnanswered > 0 { passedUnanswered -= 1 }
        context.write(data, promise: promise)
    }
}

/// The `Date` header's IMF-fixdate (RFC 9110 §5.6.7), `Sun, 06 Nov 1994 08:49:37 GMT`, made again when the second
/// changes.
struct HTTPDate {
    private var second: time_t = -1
    private var text = ""

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    mutating func now() -> String {
        var t = time(nil)
        if t != second {
            second = t
            text = Self.format(&t)
        }
        return text
    }

    static func format(_ t: inout time_t) -> String {
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
