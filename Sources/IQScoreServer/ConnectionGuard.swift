import HTTPTypes
import Logging
import Psychometrics
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// What every connection of one server shares: the limits, the registry of open connections, the body budget,
/// metrics, and the bank version that problem responses name.
final class ConnectionGuardShared: Sendable {
    let limits: ConnectionLimits
    let maxBodyBytes: Int
    /// How a refusal names `maxBodyBytes` (`ConnectionLimits.naming`).
    let maxBodyBytesName: String
    let registry: ConnectionRegistry
    let budget: BodyBudget
    let metrics: ServerMetrics
    let logger: Logger
    let bankVersion: @Sendable () -> String
    /// The shortest of the timeouts: a connection's timer looks again at least this often.
    let recheck: TimeAmount

    init(limits: ConnectionLimits, maxBodyBytes: Int, metrics: ServerMetrics, logger: Logger, bankVersion: @escaping @Sendable () -> String) {
        self.limits = limits
        self.maxBodyBytes = maxBodyBytes
        maxBodyBytesName = limits.name("max_body_bytes")
        self.metrics = metrics
        self.logger = logger
        self.bankVersion = bankVersion
        registry = ConnectionRegistry(limit: limits.maxConnections)
        budget = BodyBudget(limit: limits.maxBufferedBodyBytes)
        recheck = .nanoseconds(min(limits.headerTimeout, limits.bodyTimeout, limits.idleTimeout, limits.sendTimeout).nanoseconds)
    }
}

/// Why a connection was closed by the server (the `reason` of `iqscore_connections_closed_total`).
enum ConnectionCloseReason: String, CaseIterable, Sendable {
    case headerTimeout = "header-timeout"
    case bodyTimeout = "body-timeout"
    case idleTimeout = "idle-timeout"
    /// A response the client did not read within `ConnectionLimits.sendTimeout`.
    case sendTimeout = "send-timeout"
    /// Closed to admit a new connection at `ConnectionLimits.maxConnections`.
    case evicted
    /// A new connection refused: the server was full and every connection was being answered.
    case refused
    case shutdown
    /// Not HTTP/1.1 as RFC 9112 has it (a parse error, a bad chunk, an unknown `Expect`, no `Host`), answered and
    /// closed.
    case protocolError = "protocol-error"
    /// A body over `ServerLimits.maxBodyBytes` or over the process's body budget, answered before it was read.
    case refusedBody = "refused-body"
}

/// The error the routes see when a request's connection closed before its body was read: the guard answered the
/// request itself (a body that came too slowly, that the budget cannot hold, that broke HTTP's framing; `answered`,
/// and counted there), or the client went away.
struct ConnectionAbandoned: Error, CustomStringConvertible {
    var reason: ConnectionCloseReason
    var answered: Bool
    var description: String { "the connection was closed: \(reason.rawValue)" }
}

/// Counts the bytes of a connection before HTTP parsing: the first byte of a next request starts its head's clock.
final class ByteActivityHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let connectionGuard: ConnectionGuard

    init(_ connectionGuard: ConnectionGuard) { self.connectionGuard = connectionGuard }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connectionGuard.bytesArrived()
        context.fireChannelRead(data)
    }
}

/// One connection's guard, between HTTP/1 parsing and the routes. It
/// - times the connection: the first head within `headerTimeout` of opening, a kept-alive connection's next head
///   within `headerTimeout` of its first byte, a body within `bodyTimeout` of its head, a silent kept-alive
///   connection closed after `idleTimeout` (408 `request-timeout` where a request was under way);
/// - registers it in the `ConnectionRegistry` (the connection limit) and keeps its activity there;
/// - holds request bodies within the process's `BodyBudget` (503 `overloaded`, counted on the bytes that arrive;
///   a declared length that cannot fit is refused at the head) and `ServerLimits.maxBodyBytes` (413 at the head,
///   before the body is read and before `100 Continue`);
/// - speaks HTTP/1.1 as RFC 9110/9112 ask: 400 for a request that
///   breaks the grammar, 431 for a head over `maxHeaderBytes`, `100 Continue` answered, 417 for another
///   expectation, 400 for an HTTP/1.1 request without exactly one `Host` (RFC 9112 §3.2), HTTP/1.0 closed after
///   its response unless it asked for keep-alive, problem+json bodies;
/// - reads no next request while the client leaves responses unread (the channel over its high water mark), and
///   closes the connection when that lasts `sendTimeout`;
/// - on shutdown (`ChannelShouldQuiesceEvent`) closes the connection when nothing is under way, or after the
///   response under way (`ConnectionRegistry.beginShutdown` closes what remains at `shutdownTimeout`).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A request handed to the routes and not answered yet.
    private struct Pending {
        var bodyBytes = 0
        var closeAfter = false
        var keepAlive10 = false
        var responseStarted = false
    }

    private let shared: ConnectionGuardShared
    private let registered: RegisteredConnection
    private var context: ChannelHandlerContext?
    private var admitted = false
    private var pending: [Pending] = []
    private var readingBody = false
    private var headStartedAt: NIODeadline
    private var firstRequest = true
    private var bytesSinceHead = false
    private var idleSince: NIODeadline
    private var quiescing = false
    /// A pipelined request refused while requests before it were being answered: answered after them.
    private var deferredRefusal: (problem: Problem, reason: ConnectionCloseReason)?
    private var closed = false
    private var timer: Scheduled<Void>?
    /// When the channel stopped taking writes (its outbound bytes over the high water mark, the client not
    /// reading); nil while writable.
    private var unwritableSince: NIODeadline?
    /// A read asked for while the channel was unwritable, held until it is writable again.
    private var heldRead = false

    init(shared: ConnectionGuardShared, channel: any Channel) {
        self.shared = shared
        registered = RegisteredConnection(channel: channel)
        let now = NIODeadline.now()
        headStartedAt = now
        idleSince = now
        registered.set(.readingHead, since: now)
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { activate(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        activate(context)
        context.fireChannelActive()
    }

    private func activate(_ context: ChannelHandlerContext) {
        guard !admitted, !closed else { return }
        admitted = true
        switch shared.registry.admit(registered) {
        case .admitted: break
        case .refused:
            shared.metrics.recordConnectionClosed(.refused)
            close(context)
            return
        }
        if shared.registry.isShuttingDown { quiescing = true }
        armTimer(context, at: NIODeadline.now() + shared.recheck)
    }

    func channelInactive(context: ChannelHandlerContext) {
        tearDown()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tearDown()
        self.context = nil
    }

    private func tearDown() {
        guard !closed else { return }
        closed = true
        timer?.cancel()
        timer = nil
        for request in pending { shared.budget.give(request.bodyBytes) }
        pending.removeAll()
        if admitted { shared.registry.remove(registered) }
    }

    // MARK: Inbound

    /// A byte arrived (before parsing): a kept-alive connection's next head starts its clock.
    func bytesArrived() {
        guard !bytesSinceHead else { return }
        bytesSinceHead = true
        if !readingBody && pending.isEmpty {
            if !firstRequest { headStartedAt = .now() }
            updateActivity()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard deferredRefusal == nil else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            bytesSinceHead = false
            firstRequest = false
            let fields = HeadFields(head.headers)
            if let refusal = refusal(of: head, fields) {
                // Requests before it are answered first (a pipelining client); nothing after it is read.
                if pending.isEmpty { answer(context, refusal.problem, reason: refusal.reason) } else { deferredRefusal = refusal }
                return
            }
            var request = Pending()
            if head.version.major == 1 && head.version.minor == 0 {
                request.keepAlive10 = fields.keepAlive
                request.closeAfter = !request.keepAlive10
            }
            if fields.close || quiescing { request.closeAfter = true }
            pending.append(request)
            readingBody = true
            headStartedAt = .now()
            updateActivity()
            if fields.expect != nil {
                // `refusal(of:)` let only 100-continue through: the body is wanted.
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
                context.flush()
            }
            context.fireChannelRead(data)
        case .body(let buffer):
            if !pending.isEmpty {
                guard shared.budget.take(buffer.readableBytes) else {
                    abandon(context, Problem(.overloaded, overloadedDetail), reason: .refusedBody)
                    return
                }
                pending[pending.count - 1].bodyBytes += buffer.readableBytes
            }
            context.fireChannelRead(data)
        case .end:
            readingBody = false
            idleSince = .now()
            updateActivity()
            context.fireChannelRead(data)
        }
    }

    private var overloadedDetail: String {
        "the server holds \(shared.limits.maxBufferedBodyBytes) bytes of request bodies already (limit: \(shared.limits.name("max_buffered_body_bytes"))); retry in a second"
    }

    /// A request the guard answers itself, before the routes see it; nil for a request to pass on. A refused head
    /// gets its problem and the connection closes (its body, if any, is not read).
    private func refusal(of head: HTTPRequestHead, _ fields: HeadFields) -> (problem: Problem, reason: ConnectionCloseReason)? {
        if head.version.major == 1 && head.version.minor >= 1 && fields.hosts != 1 {
            return (
                Problem(.badRequest, "an HTTP/1.1 request carries exactly one Host header (RFC 9112 §3.2); this one has \(fields.hosts)"),
                .protocolError
            )
        }
        if let expectation = fields.expect, expectation.lowercased() != "100-continue" {
            return (
                Problem(.expectationFailed, "the only expectation answered is 100-continue; got \(TextFidelity.quoted(expectation))"), .protocolError
            )
        }
        let lengths = fields.contentLengths
        if let text = lengths.first {
            guard lengths.count == 1, let length = Int(text), length >= 0 else {
                return (
                    Problem(
                        .badRequest, "Content-Length must be one non-negative integer; got \(TextFidelity.quoted(lengths.joined(separator: ", ")))"),
                    .protocolError
                )
            }
            if length > shared.maxBodyBytes { return (Problem.bodyTooLarge(limit: shared.maxBodyBytes, name: shared.maxBodyBytesName), .refusedBody) }
            // A body that cannot fit the budget now is refused before it is sent (before `100 Continue`).
            if length > shared.budget.limit - shared.budget.bytesHeld { return (Problem(.overloaded, overloadedDetail), .refusedBody) }
        }
        return nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A parser keeps failing on the bytes after its first error until the close lands: answer the first only.
        guard !closed else { return }
        let problem: Problem
        switch error {
        case HTTPParserError.invalidEOFState, HTTPParserError.closedConnection:
            // The client closed in the middle of a request: nobody to answer.
            if readingBody || !pending.isEmpty { context.fireErrorCaught(ConnectionAbandoned(reason: .protocolError, answered: false)) }
            close(context)
            return
        case HTTPParserError.headerOverflow:
            problem = Problem(
                .headerTooLarge, "the request head is over \(shared.limits.maxHeaderBytes) bytes (limit: \(shared.limits.name("max_header_bytes")))")
        case HTTPParserError.unknown:
            problem = Problem(
                .badRequest,
                "the request is not valid HTTP/1.1 (RFC 9112): a Transfer-Encoding other than chunked, or a framing the parser cannot read")
        case let error as HTTPParserError:
            problem = Problem(.badRequest, "the request is not valid HTTP/1.1 (RFC 9112): \(error)")
        default:
            // The socket failed (reset by the peer, …): nothing to answer.
            shared.logger.debug("connection error: \(error)")
            context.fireErrorCaught(ConnectionAbandoned(reason: .protocolError, answered: false))
            close(context)
            return
        }
        abandon(context, problem, reason: .protocolError)
    }

    // MARK: Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200:
            if !pending.isEmpty {
                pending[0].responseStarted = true
                if quiescing { pending[0].closeAfter = true }
                if pending[0].closeAfter {
                    head.headers.replaceOrAdd(name: "connection", value: "close")
                } else if pending[0].keepAlive10 {
                    head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
                }
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            guard !pending.isEmpty else { context.write(data, promise: promise); return }
            let request = pending.removeFirst()
            shared.budget.give(request.bodyBytes)
            if pending.isEmpty, let refusal = deferredRefusal {
                context.write(data, promise: promise)
                answer(context, refusal.problem, reason: refusal.reason)
                return
            }
            if request.closeAfter {
                context.writeAndFlush(data, promise: promise)
                close(context)
                return
            }
            idleSince = .now()
            // Bytes of a pipelined head that came while this request was answered: its clock starts now.
            if bytesSinceHead && pending.isEmpty { headStartedAt = idleSince }
            updateActivity()
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    // MARK: Back-pressure

    /// No next request is read while responses wait for a client that does not read them: what a connection
    /// holds of responses stays under the channel's high water mark plus one response.
    func read(context: ChannelHandlerContext) {
        if context.channel.isWritable { context.read() } else { heldRead = true }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            unwritableSince = nil
            if heldRead {
                heldRead = false
                context.read()
            }
        } else if unwritableSince == nil {
            unwritableSince = .now()
        }
        updateActivity()
        context.fireChannelWritabilityChanged()
    }

    // MARK: Shutdown

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ConnectionEviction {
            // Chosen by the registry to make room: a request under way is told why.
            if readingBody || !pending.isEmpty {
                abandon(
                    context,
                    Problem(
                        .overloaded,
                        "the server is at its connection limit (\(shared.limits.name("max_connections"))) and this request was the slowest to arrive; retry"
                    ),
                    reason: .evicted)
            } else {
                shared.metrics.recordConnectionClosed(.evicted)
                close(context)
            }
            return
        }
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        quiescing = true
        if shared.registry.beginShutdown(timeout: shared.limits.shutdownTimeout, on: context.eventLoop) {
            shared.logger.info(
                "shutting down: \(shared.registry.openCount) connections open; requests under way have \(shared.limits.shutdownTimeout) to finish")
        }
        if pending.isEmpty && !readingBody {
            shared.metrics.recordConnectionClosed(.shutdown)
            close(context)
        } else {
            for k in pending.indices { pending[k].closeAfter = true }
        }
    }

    // MARK: Timing

    /// What the connection is doing and since when: the one reading of its state, for the registry and the timer.
    private var activity: (activity: ConnectionActivity, since: NIODeadline) {
        if readingBody { return (.readingBody, headStartedAt) }
        if let unwritableSince { return (.sending, unwritableSince) }
        if !pending.isEmpty { return (.answering, idleSince) }
        if bytesSinceHead || firstRequest { return (.readingHead, headStartedAt) }
        return (.idle, idleSince)
    }

    private func updateActivity() {
        let (activity, since) = self.activity
        registered.set(activity, since: since)
    }

    /// One timer a connection, never moved earlier: it fires at the current deadline or one `recheck` after it
    /// was armed, whichever is sooner, so no activity begun since can have an earlier deadline.
    private func armTimer(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            guard !closed, let context = self.context else { return }
            checkDeadline(context)
        }
    }

    private func checkDeadline(_ context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        let limits = shared.limits
        let (activity, since) = self.activity
        let limit: (timeout: Duration, reason: ConnectionCloseReason)? =
            switch activity {
            case .readingBody: (limits.bodyTimeout, .bodyTimeout)
            case .readingHead: (limits.headerTimeout, .headerTimeout)
            case .idle: (limits.idleTimeout, .idleTimeout)
            case .sending: (limits.sendTimeout, .sendTimeout)
            case .answering, .closing: nil
            }
        let deadline = limit.map { since + .nanoseconds($0.timeout.nanoseconds) }
        guard let limit, let deadline, now >= deadline else {
            armTimer(context, at: min(deadline ?? .distantFuture, now + shared.recheck))
            return
        }
        switch limit.reason {
        case .idleTimeout, .sendTimeout:
            // Nothing to answer: no request under way, or a response begun that the client does not read.
            if limit.reason == .sendTimeout { context.fireErrorCaught(ConnectionAbandoned(reason: .sendTimeout, answered: true)) }
            shared.metrics.recordConnectionClosed(limit.reason)
            close(context)
        case .headerTimeout where !bytesSinceHead:
            // A new connection that never sent a byte: nothing to answer.
            shared.metrics.recordConnectionClosed(.headerTimeout)
            close(context)
        default:
            let (what, key) = limit.reason == .bodyTimeout ? ("body", "body_timeout") : ("head", "header_timeout")
            abandon(
                context, Problem(.requestTimeout, "the request \(what) did not arrive within \(limit.timeout) (limit: \(shared.limits.name(key)))"),
                reason: limit.reason)
        }
    }

    // MARK: Answering and closing

    /// Answers the request under way with `problem` (unless the routes have begun its response), tells the routes
    /// it is abandoned, and closes the connection.
    private func abandon(_ context: ChannelHandlerContext, _ problem: Problem, reason: ConnectionCloseReason) {
        if readingBody || !pending.isEmpty { context.fireErrorCaught(ConnectionAbandoned(reason: reason, answered: true)) }
        answer(context, problem, reason: reason)
    }

    /// Writes `problem` as the response (when no response has begun on this connection) and closes.
    private func answer(_ context: ChannelHandlerContext, _ problem: Problem, reason: ConnectionCloseReason) {
        guard !closed else { return }
        shared.metrics.recordConnectionClosed(reason)
        shared.metrics.record(problem.kind)
        if !(pending.first?.responseStarted ?? false) {
            let bankVersion = shared.bankVersion()
            let body = problem.body(bankVersion: bankVersion)
            var fields = problem.headerFields(bankVersion: bankVersion)
            fields[.contentLength] = String(body.readableBytes)
            fields[.connection] = "close"
            context.write(wrapOutboundOut(.head(HTTPResponseHead(HTTPResponse(status: problem.status, headerFields: fields)))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        shared.logger.debug("closed a connection: \(reason.rawValue): \(problem.detail)")
        close(context)
    }

    /// Marks the connection closed before closing it: the close makes the parser report the cut-off input, which
    /// must not be answered again.
    private func close(_ context: ChannelHandlerContext) {
        tearDown()
        context.close(promise: nil)
    }
}
