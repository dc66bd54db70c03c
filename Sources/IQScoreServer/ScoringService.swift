import Assembly
import Foundation
import Norming
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus
import Psychometrics
import PsychometricsIO
import Synchronization

/// The scoring engine behind HTTP: the served state, the limits, metrics and logging, and one handler per
/// endpoint. Mount it in any Hummingbird router with `addRoutes(to:)`, or run the whole server with
/// `IQScoreApplication`.
///
/// Stateless: every request carries what it needs (a finished session, or an adaptive test's history), so any
/// number of instances behind a load balancer answer alike. Each request reads the current `ServingState` once
/// and answers from it; `reload(trigger:)` swaps in a new one without stopping.
public final class ScoringService: Sendable {
    package let store: ServingStateStore
    package let limits: ServerLimits
    package let metrics: ServerMetrics
    package let logger: Logger
    /// The name of this instance, in `X-IQScore-Instance` on every response (`iqscore serve --instance`).
    package let instance: String
    /// Where request lines go without building `Logger.Metadata` (`ServerLogHandler.logRequest`); nil: through
    /// `logger` at info.
    let requestLog: ServerLogHandler?
    /// Requests a second per client (`ServerLimits.rateLimit`); nil without a limit.
    let rateLimiter: RateLimiter?
    let requestIDs = RequestIDs()
    private let draining = Atomic<Bool>(false)
    private let reloads = ReloadQueue()
    /// Form assemblies run inside it (`ServerLimits.maxConcurrentForms`).
    let formGate: AsyncGate

    /// Loads `configuration` (a bad file throws the loader's error naming it) and prepares the service.
    /// - Throws: the loaders' errors (`InputError`/`InputErrors` naming the file, line and column;
    ///   `PsychometricsError`, `AssemblyError` for a configuration that cannot serve this bank).
    public convenience init(
        configuration: ServerConfiguration, limits: ServerLimits = ServerLimits(), instance: String = ScoringService.defaultInstance,
        logger: Logger = Logger(label: "iqscore.serve"), requestLog: ServerLogHandler? = nil,
        metrics: ServerMetrics = ServerMetrics()
    ) throws {
        self.init(
            state: try ServingState.load(configuration), limits: limits, instance: instance, logger: logger, requestLog: requestLog, metrics: metrics)
    }

    /// A service answering from `state`; reloads re-read `state.configuration`. Request lines go to `requestLog`
    /// when given (the handler `logger` writes through, so the line is written without building its metadata),
    /// else through `logger` at info.
    package init(
        state: ServingState, limits: ServerLimits = ServerLimits(), instance: String = ScoringService.defaultInstance,
        logger: Logger = Logger(label: "iqscore.serve"), requestLog: ServerLogHandler? = nil, metrics: ServerMetrics = ServerMetrics()
    ) {
        self.requestLog = requestLog
        store = ServingStateStore(state)
        self.limits = limits
        self.instance = instance
        self.logger = logger
        self.metrics = metrics
        rateLimiter = limits.makeRateLimiter()
        formGate = AsyncGate(width: limits.maxConcurrentForms, queueLimit: limits.maxQueuedForms)
        metrics.setBank(version: state.bankVersion, items: state.bank.items.count)
    }

    /// The state new requests are answered from.
    package var state: ServingState { store.current }

    /// The host's name: the default instance name (a container's host name is its id).
    public static var defaultInstance: String { ProcessInfo.processInfo.hostName }

    /// Marks the service as draining: `GET /readyz` answers 503 `not-ready` from now on, so a load balancer stops
    /// sending it requests, while every endpoint keeps answering (`IQScoreApplication.run` drains on SIGTERM
    /// before it stops accepting connections).
    package func beginDraining() {
        if !draining.exchange(true, ordering: .relaxed) { metrics.setReady(false) }
    }

    /// Whether `beginDraining()` was called.
    package var isDraining: Bool { draining.load(ordering: .relaxed) }

    // MARK: Reload

    /// What a reload did.
    public struct ReloadOutcome: Sendable, Hashable {
        public var previousVersion: String
        public var currentVersion: String
    }

    /// Re-reads the bank and configuration files and, when every one loads, serves them to new requests
    /// (requests under way finish on the state they started with). A file that fails to load is refused: the
    /// error is logged and thrown, and the current state keeps serving. Reloads run one at a time.
    /// - Throws: the first loader error, as `init(configuration:)`; the state in service is then unchanged.
    @discardableResult
    public func reload(trigger: String) async throws -> ReloadOutcome {
        try await reloads.run { [self] in
            let previous = store.current
            let next: ServingState
            do {
                next = try ServingState.load(previous.configuration)
            } catch {
                metrics.recordReload(applied: false)
                logger.error("reload refused (\(trigger)): \(error); still serving bank \(previous.bankVersion)")
                throw error
            }
            store.replace(with: next)
            metrics.setBank(version: next.bankVersion, items: next.bank.items.count)
            metrics.recordReload(applied: true)
            if next.access != previous.access {
                logger.info(
                    "tokens: \(next.access.scoringCount) scoring, \(next.access.adminCount) admin (were \(previous.access.scoringCount) and \(previous.access.adminCount))"
                )
            }
            let exposure = "; exposure control \(next.exposureControl)"
            logger.notice(
                "reloaded (\(trigger)): bank \(previous.bankVersion) → \(next.bankVersion), \(next.bank.items.count) items from \(next.configuration.bankPath)\(exposure)"
            )
            return ReloadOutcome(previousVersion: previous.bankVersion, currentVersion: next.bankVersion)
        }
    }

    // MARK: Answering

    /// Runs one endpoint: reads the state once, checks the bearer token (`AccessTokens`) and the client's rate
    /// (`RateLimiter`) for the API's endpoints, reads the body within the limit when the endpoint takes one, turns
    /// every error into a problem response, sets `X-Bank-Version`, `X-Request-Id` and `X-IQScore-Instance`, and
    /// counts and logs the request (one line at info). `peer` is the connection's remote address.
    func answer(
        _ route: ServerRoute, _ request: Request, peer: SocketAddress?, readsBody: Bool,
        _ handler: (ServingState, ByteBuffer) async throws -> Response
    ) async -> Response {
        let started = ContinuousClock.now
        let state = store.current
        let requestID = requestIDs.id(from: request.headers[.requestID])
        var response: Response
        var problemKind: Problem.Kind?
        var token: String?
        do {
            token = try authorize(route, authorization: request.headers[.authorization], state)
            try admit(route, token: token, peer: peer, forwardedFor: request.headers[values: .forwardedFor])
            let body = readsBody ? try await readBody(request) : ByteBuffer()
            response = try await handler(state, body)
        } catch let abandoned as ConnectionAbandoned {
            // The connection guard answered this request, counted it and closed the connection: nothing to add.
            logger.debug("\(request.method) \(request.uri.path): \(abandoned)", metadata: ["request_id": .string(requestID)])
            return Problem(.connectionClosed, abandoned.description).response(bankVersion: state.bankVersion)
        } catch {
            let problem = Self.problem(for: error)
            problemKind = problem.kind
            switch problem.kind {
            case .internal: logger.error("\(request.method) \(request.uri.path): \(error)", metadata: ["request_id": .string(requestID)])
            case .connectionClosed:
                logger.debug("\(request.method) \(request.uri.path): \(problem.detail)", metadata: ["request_id": .string(requestID)])
            default: break
            }
            response = problem.response(bankVersion: state.bankVersion)
        }
        // The version that answered (a reload's response names the version it installed).
        if !response.headers.contains(.bankVersion) { response.headers.append(HTTPField(name: .bankVersion, value: state.bankVersion)) }
        // No handler sets these two: appended, not searched for.
        response.headers.append(HTTPField(name: .requestID, value: requestID))
        response.headers.append(HTTPField(name: .instance, value: instance))
        finish(
            route, method: request.method.rawValue, path: request.uri.path, status: response.status.code, problemKind, started: started,
            requestID: requestID, peer: peer, token: token)
        return response
    }

    /// Takes a token from the client's bucket when `route` is rate-limited (`ServerLimits.rateLimit`); throws 429
    /// `rate-limited` with `Retry-After` when the bucket is empty. The client is the token's id when the request
    /// carried one, else `clientAddress`.
    func admit(_ route: ServerRoute, token: String?, peer: SocketAddress?, forwardedFor: @autoclosure () -> [String]) throws {
        guard route.scope != nil, let rateLimiter else { return }
        let client = token.map { "token " + $0 } ?? clientAddress(forwardedFor: forwardedFor(), peer: peer)
        if let wait = rateLimiter.admit(client, at: NIODeadline.now().uptimeNanoseconds) {
            throw Problem(
                .rateLimited,
                "more than \(rateLimiter.rate) requests a second (bursts of \(Int(rateLimiter.burst))) from this client (limit: \(limits.name("rate_limit"))); retry in \(wait) s",
                retryAfter: wait)
        }
    }

    /// Counts an answered request, and logs it at info: method, path and status as the message; the request id,
    /// route, status, duration, client address, token id (`AccessTokens.identify`) and problem kind as metadata.
    /// Both ways a request is answered (the routes' `answer`, and `FastLane`) end here.
    func finish(
        _ route: ServerRoute, method: String, path: String, status: Int, _ problem: Problem.Kind?, started: ContinuousClock.Instant,
        requestID: String, peer: SocketAddress?, token: String?
    ) {
        let nanoseconds = (ContinuousClock.now - started).nanoseconds
        metrics.record(route, status: status, nanoseconds: nanoseconds)
        if let problem { metrics.record(problem) }
        let path = TextFidelity.quoted(String(path.prefix(200)))
        if let requestLog {
            requestLog.logRequest(
                method: method, path: path, status: status, durationMicroseconds: nanoseconds / 1000, requestID: requestID,
                route: route.label, client: peer?.ipAddress ?? "local", token: token, problem: problem?.rawValue)
            return
        }
        logger.info(
            "\(method) \(path) \(status)",
            metadata: {
                var metadata: Logger.Metadata = [
                    "request_id": .string(requestID), "route": .string(route.label), "status": .stringConvertible(status),
                    "duration_us": .stringConvertible(nanoseconds / 1000), "client": .string(peer?.ipAddress ?? "local")
                ]
                if let token { metadata["token"] = .string(token) }
                if let problem { metadata["problem"] = .string(problem.rawValue) }
                return metadata
            }())
    }

    /// The token's id when `route` needs one and the request has a valid one; nil when the route is open (or tokens
    /// are not configured for it). Throws 401 `unauthorized` without a valid token, 403 `forbidden` for a scoring
    /// token on an admin route or an admin route with no admin token configured.
    func authorize(_ route: ServerRoute, authorization header: String?, _ state: ServingState) throws -> String? {
        guard let needed = route.scope else { return nil }
        let access = state.access
        if needed == .admin && access.adminCount == 0 {
            throw Problem(
                .forbidden,
                "no admin token is configured, so reloading over HTTP is off (a proxy on this host would relay anyone's request): configure one (\(state.configuration.naming.name("tokens")) or $\(AccessTokens.adminVariable)), or send SIGHUP"
            )
        }
        if needed == .scoring && !access.requiresScoringToken { return nil }
        guard let identified = access.identify(authorization: header) else {
            throw Problem(
                .unauthorized,
                header == nil
                    ? "\(route.label) needs a bearer token: Authorization: Bearer TOKEN"
                    : "the Authorization header does not carry a bearer token this server accepts")
        }
        guard identified.scope >= needed else {
            throw Problem(.forbidden, "\(route.label) needs an admin token; token \(identified.id) is a scoring token")
        }
        return identified.id
    }

    /// The client a request without a token is counted as: the peer's address, or the last address of
    /// `X-Forwarded-For` when `ServerLimits.clientFromForwardedFor` says the proxy in front sets it.
    func clientAddress(forwardedFor: [String], peer: SocketAddress?) -> String {
        if limits.clientFromForwardedFor, let forwarded = forwardedFor.last, let last = forwarded.split(separator: ",").last {
            let address = last.trimmingPrefix(while: { $0 == " " })
            if !address.isEmpty { return String(address.prefix(64)) }
        }
        return peer?.ipAddress ?? "local"
    }

    /// Any error as a problem: client mistakes keep their kind; anything else is `internal` (500).
    static func problem(for error: any Error) -> Problem {
        switch error {
        case let problem as Problem: problem
        case let error as PsychometricsError: Problem(error)
        case let error as AssemblyError: Problem(error)
        case is NIOTooManyBytesError: Problem(.bodyTooLarge, "the request body is over the limit")
        default: Problem(.internal, "the server failed to answer; the error is in its log")
        }
    }

    /// The request body, at most `limits.maxBodyBytes`: a larger `Content-Length` is refused before reading. A
    /// body that cannot be read to its end because the client went away is the client's doing: `connection-closed`,
    /// never a 500; one the connection guard answered itself (`ConnectionAbandoned.answered`) is passed on as it is.
    func readBody(_ request: Request) async throws -> ByteBuffer {
        let limit = limits.maxBodyBytes
        if let text = request.headers[.contentLength], let length = Int(text), length > limit {
            throw Problem.bodyTooLarge(limit: limit, name: limits.name("max_body_bytes"))
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw Problem.bodyTooLarge(limit: limit, name: limits.name("max_body_bytes"))
        } catch let abandoned as ConnectionAbandoned where abandoned.answered {
            throw abandoned
        } catch {
            throw Problem(.connectionClosed, "the request body was not read to its end: \(error)")
        }
    }

    static func json(_ writer: JSONWriter, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: writer.buffer))
    }

    // MARK: POST /v1/score, /v1/score/batch

    /// The response to `POST /v1/score` with `body` (200 with the score, or throws the problem), before `answer`
    /// adds the shared headers; `Benchmarks/ServeLatency` times it.
    package func score(_ state: ServingState, _ body: ByteBuffer) throws -> Response {
        let members =
            try plainScoreMembers(state, body)
            ?? scoreMembers(RequestDecoding.scoreRequest(RequestDecoding.document(body, limits: limits)), state, at: "")
        return Self.json(Self.scoreJSON(members, state))
    }

    /// The body of a 200 to `POST /v1/score`: a session's score members and the bank version.
    static func scoreJSON(_ members: [UInt8], _ state: ServingState) -> JSONWriter {
        var json = JSONWriter(capacity: members.count + 64)
        json.beginObject()
        json.members(members)
        json.key("bank_version"); json.string(state.bankVersion)
        json.endObject()
        return json
    }

    func scoreBatch(_ state: ServingState, _ body: ByteBuffer) throws -> Response {
        let sessions = try RequestDecoding.batchRequest(RequestDecoding.document(body, limits: limits))
        guard sessions.count <= limits.maxSessionsPerBatch else {
            throw Problem(
                .tooManySessions,
                "\(sessions.count) sessions; at most \(limits.maxSessionsPerBatch) per batch (limit: \(limits.name("max_sessions_per_batch")))",
                field: "/sessions")
        }
        var json = JSONWriter(capacity: 400 * sessions.count + 64)
        var rejects: [(index: Int, sessionID: String?, problem: Problem)] = []
        json.beginObject()
        json.key("scores"); json.beginArray()
        for (k, session) in sessions.enumerated() {
            do {
                let members = try scoreMembers(session.request.get(), state, at: "/sessions/\(k)")
                json.beginObject()
                json.key("index"); json.integer(k)
                json.members(members)
                json.key("bank_version"); json.string(state.bankVersion)
                json.endObject()
            } catch {
                rejects.append((k, session.sessionID, Self.problem(for: error)))
            }
        }
        json.endArray()
        json.key("rejects"); json.beginArray()
        for reject in rejects {
            json.beginObject()
            json.key("index"); json.integer(reject.index)
            json.key("session_id"); json.optionalString(reject.sessionID)
            json.key("reason"); json.string(reject.problem.detail)
            json.key("kind"); json.string(reject.problem.kind.rawValue)
            json.key("field"); json.optionalString(reject.problem.field)
            json.endObject()
            metrics.record(reject.problem.kind)
        }
        json.endArray()
        json.key("bank_version"); json.string(state.bankVersion)
        json.endObject()
        return Self.json(json)
    }

    /// One session's score members (`score --format jsonl`'s fields), after checking it against the limits and
    /// the bank with problems located under `prefix` (`/sessions/3`).
    func scoreMembers(_ request: ScoreRequest, _ state: ServingState, at prefix: String) throws -> [UInt8] {
        var method: AbilityMethod?
        if let name = request.method {
            guard let m = AbilityMethod(rawValue: name) else {
                throw Problem(
                    .invalidRequest,
                    "method must be one of \(AbilityMethod.allCases.map(\.rawValue).joined(separator: ", ")); got \(TextFidelity.quoted(name))",
                    field: prefix + "/method")
            }
            method = m
        }
        guard let writer = state.writer(for: method) else {
            throw Problem(
                .invalidRequest,
                "the bank is a battery (\(state.model)), scored by EAP or MAP; got method \(TextFidelity.quoted(request.method ?? ""))",
                field: prefix + "/method")
        }
        let ids = request.itemIDs, responses = request.responses, n = ids.count
        guard n <= limits.maxItemsPerSession else {
            throw Problem(
                .tooManyItems, "\(n) items; at most \(limits.maxItemsPerSession) per session (limit: \(limits.name("max_items_per_session")))",
                field: prefix + "/item_ids")
        }
        // The session's items checked as every scorer checks them (`SessionScorer.validatedIndices`); a problem
        // points at the item's position.
        let indices: [Int]
        do {
            indices = try writer.scorer.validatedIndices(itemIDs: ids, responses: responses)
        } catch {
            throw Problem(error, field: Self.pointer(to: error, at: prefix))
        }
        try requireAge(request.age, state, field: prefix + "/age")
        if let seconds = request.seconds {
            guard seconds.count == n else {
                throw Problem(.lengthMismatch, "\(n) item ids but \(seconds.count) response times", field: prefix + "/seconds")
            }
            guard writer.timedScorer != nil else { throw Problem(ScoreJSONWriter.noTimeModel, field: prefix + "/seconds") }
        }
        let values = responses.map { UInt8($0) }
        return try Self.members(
            writer, sessionID: request.sessionID, items: indices, responses: values, seconds: request.seconds, age: request.age, at: prefix)
    }

    /// Where in a score request `error` (from `SessionScorer.validatedIndices`) is: the item's id or response at
    /// its position, the responses when the lengths differ, the item ids when there are none.
    static func pointer(to error: PsychometricsError, at prefix: String) -> String {
        switch (error.code, error.position) {
        case (.invalidResponse, let k?): "\(prefix)/responses/\(k)"
        case (_, let k?): "\(prefix)/item_ids/\(k)"
        case (.lengthMismatch, nil): prefix + "/responses"
        default: prefix + "/item_ids"
        }
    }

    /// The members of a checked session's score (`ScoreJSONWriter.members`); a scoring failure as a problem at `prefix`.
    static func members(
        _ writer: ScoreJSONWriter, sessionID: String?, items: [Int], responses: [UInt8], seconds: [Float]? = nil, age: Double?,
        at prefix: String
    ) throws -> [UInt8] {
        do {
            return try items.withUnsafeBufferPointer { items in
                try responses.withUnsafeBufferPointer { responses in
                    guard let seconds else { return try writer.members(sessionID: sessionID, items: items, responses: responses, age: age) }
                    return try seconds.withUnsafeBufferPointer {
                        try writer.members(sessionID: sessionID, items: items, responses: responses, seconds: $0, age: age)
                    }
                }
            }
        } catch let error as PsychometricsError {
            throw Problem(error, field: prefix.isEmpty ? nil : prefix)
        }
    }

    /// `scoreMembers` for the body clients usually send, read by `ScoreRequestScanner` and its item ids looked up
    /// in the bank's table straight from the body's bytes. Nil when the body is outside the scanner's subset or
    /// the session fails any check of `scoreMembers` (an unknown method or item, a repeated item, no responses,
    /// too many, lengths that differ, an age the norms need, more than 64 items): the strict way then scores it or
    /// names its problem, so both ways answer every body alike.
    func plainScoreMembers(_ state: ServingState, _ body: ByteBuffer) throws -> [UInt8]? {
        if state.ageNorms?.norms.coveredAges != nil { return nil }
        let limits = limits
        return try ScoreRequestScanner.scan(body, maximumArrayLength: RequestDecoding.longestArray(limits)) { scanned, bytes in
            var method: AbilityMethod?
            if let name = scanned.method {
                guard let m = AbilityMethod(rawValue: name) else { return nil }
                method = m
            }
            let n = scanned.itemIDs.count
            guard n > 0, n <= min(64, limits.maxItemsPerSession), n == scanned.responses.count else { return nil }
            guard let writer = state.writer(for: method) else { return nil }
            if let seconds = scanned.seconds, seconds.count != n || writer.timedScorer == nil { return nil }
            let table = writer.scorer.itemTable
            var indices = [Int](repeating: 0, count: n)
            for k in 0..<n {
                let id = UnsafeRawBufferPointer(rebasing: bytes[scanned.itemIDs[k]]).assumingMemoryBound(to: UInt8.self)
                guard let j = table.index(of: id), !indices[0..<k].contains(j) else { return nil }
                indices[k] = j
            }
            return try Self.members(
                writer, sessionID: scanned.sessionID, items: indices, responses: scanned.responses, seconds: scanned.seconds, age: nil, at: "")
        }
    }

    /// Age-specific norms score nobody without an age: a 422 at `field` when `age` is nil.
    func requireAge(_ age: Double?, _ state: ServingState, field: String) throws {
        guard age == nil, let ageNorms = state.ageNorms, let ages = ageNorms.norms.coveredAges else { return }
        throw Problem(
            .invalidRequest,
            "\"age\" is required: the norms \(ageNorms.norms.label) are age-specific (ages \(SessionAge.text(ages.lowerBound))–\(SessionAge.text(ages.upperBound)))",
            field: field)
    }

    // MARK: POST /v1/cat/next

    func catNext(_ state: ServingState, _ body: ByteBuffer) throws -> Response {
        let request = try RequestDecoding.catNextRequest(RequestDecoding.document(body, limits: limits))
        try requireAge(request.age, state, field: "/age")
        let pool = state.pool
        // A history longer than the test's own maximum cannot come from following this server's steps; refusing it
        // bounds a step's replay to the configured length.
        let maxItems = min(limits.maxItemsPerSession, pool.configuration.maxItems)
        guard request.administered.count <= maxItems else {
            throw Problem(
                .tooManyItems,
                "\(request.administered.count) administered items; the adaptive test has at most \(pool.configuration.maxItems) (max_items of the CAT configuration)"
                    + (maxItems < pool.configuration.maxItems
                        ? " and a session at most \(limits.maxItemsPerSession) (limit: \(limits.name("max_items_per_session")))" : ""),
                field: "/administered")
        }
        let exclude = request.exclude
        guard exclude.count <= limits.maxExcludedItems else {
            throw Problem(
                .tooManyItems, "\(exclude.count) excluded items; at most \(limits.maxExcludedItems) (limit: \(limits.name("max_excluded_items")))",
                field: "/exclude")
        }
        let history = request.administered
        if let seconds = request.seconds, state.writer(for: nil)?.timedScorer == nil {
            throw Problem(ScoreJSONWriter.noTimeModel, field: "/administered/\(seconds.firstIndex { !$0.isNaN } ?? 0)/seconds")
        }
        let seed = BankVersion.catSeed(sessionID: request.sessionID, bankVersion: state.bankVersion)
        let step = try pool.nextStep(administered: history, excluding: exclude, exposure: state.exposure, seed: seed)
        var json = JSONWriter(capacity: 512)
        json.beginObject()
        switch step.action {
        case .administer(let itemID, let domain):
            json.key("action"); json.string("administer")
            json.key("item_id"); json.string(itemID)
            json.key("domain"); json.string(domain)
            json.key("theta"); json.fixed(step.estimate.theta, decimals: 4)
            json.key("se"); json.fixed(step.estimate.standardError, decimals: 4)
            json.key("n_items"); json.integer(step.itemCount)
        case .stop(let reason):
            json.key("action"); json.string("stop")
            json.key("reason"); json.string(reason.rawValue)
            json.key("score")
            // The finished test scored as POST /v1/score scores it; null when nothing scorable was administered
            // (the pool was exhausted before the first item, or only unscored items were given).
            let scoreRequest = ScoreRequest(
                sessionID: request.sessionID, itemIDs: history.map(\.itemID), responses: history.map(\.response), method: nil,
                age: request.age, seconds: request.seconds)
            if !history.isEmpty, let members = try? scoreMembers(scoreRequest, state, at: "") {
                json.beginObject()
                json.members(members)
                json.key("bank_version"); json.string(state.bankVersion)
                json.endObject()
            } else {
                json.null()
            }
        }
        json.key("bank_version"); json.string(state.bankVersion)
        json.endObject()
        return Self.json(json)
    }

    // MARK: POST /v1/forms

    func forms(_ state: ServingState, _ body: ByteBuffer) async throws -> Response {
        let request = try RequestDecoding.formsRequest(RequestDecoding.document(body, limits: limits))
        let bank = state.assemblyBank
        let exclude = request.exclude
        guard exclude.count <= limits.maxExcludedItems else {
            throw Problem(
                .tooManyItems, "\(exclude.count) excluded items; at most \(limits.maxExcludedItems) (limit: \(limits.name("max_excluded_items")))",
                field: "/exclude")
        }
        let assembler: FormAssembler
        let fieldPrefix: String?
        if let blueprint = request.blueprint {
            fieldPrefix = "/blueprint"
            let problems = blueprint.validationProblems()
            guard problems.isEmpty else { throw Problem(.invalidBlueprint, problems.joined(separator: "; "), field: "/blueprint") }
            guard (blueprint.forms ?? 1) == 1 else {
                throw Problem(
                    .invalidBlueprint,
                    "\"forms\" is \(blueprint.forms ?? 1); this endpoint assembles one form per request (ask again with another seed)",
                    field: "/blueprint/forms")
            }
            guard blueprint.length <= limits.maxItemsPerSession else {
                throw Problem(
                    .tooManyItems,
                    "length \(blueprint.length); at most \(limits.maxItemsPerSession) items per form (limit: \(limits.name("max_items_per_session")))",
                    field: "/blueprint/length")
            }
            guard (blueprint.exclude?.count ?? 0) <= limits.maxExcludedItems else {
                throw Problem(
                    .tooManyItems,
                    "\(blueprint.exclude?.count ?? 0) excluded items; at most \(limits.maxExcludedItems) (limit: \(limits.name("max_excluded_items")))",
                    field: "/blueprint/exclude")
            }
            do {
                assembler = try FormAssembler(bank: bank, blueprint: blueprint)
            } catch let error as AssemblyError {
                throw Problem(error.code == .infeasibleBlueprint ? .infeasibleBlueprint : .invalidBlueprint, error.message, field: "/blueprint")
            }
        } else if let defaultAssembler = state.defaultAssembler {
            fieldPrefix = nil
            assembler = defaultAssembler
        } else {
            throw Problem(
                .invalidRequest, "the request has no blueprint, and the server has no default one (\(state.configuration.naming.name("blueprint")))",
                field: "/blueprint")
        }
        let seed = request.seed ?? UInt64.random(in: 0...UInt64.max)
        var options = AssemblyOptions(seed: seed)
        options.excluded = Set(exclude)
        let assembled: [AssembledForm]?
        do {
            assembled = try await formGate.run { try assembler.assemble(options: options) }
        } catch let error as AssemblyError {
            throw Problem(error.code == .infeasibleBlueprint ? .infeasibleBlueprint : .invalidBlueprint, error.message, field: fieldPrefix)
        }
        guard let assembled else {
            throw Problem(
                .busy, "\(limits.maxQueuedForms) form requests are waiting already (limit: \(limits.name("max_queued_forms"))); retry in a second")
        }
        guard let form = assembled.first else { throw Problem(.internal, "no form assembled") }
        var json = JSONWriter(capacity: 128 * form.items.count + 512)
        json.beginObject()
        json.key("items"); json.beginArray()
        for k in form.items {
            let item = bank.items[k]
            json.beginObject()
            json.key("item_id"); json.string(item.id)
            json.key("domain"); json.string(item.domain)
            // Six decimals, as FORM.csv of iqscore assemble writes them (an item in more than two categories as the
            // 2PL with its peak information: `AssemblyItem.slope`, `location`, c = 0).
            json.key("a"); json.fixed(item.slope, decimals: 6)
            json.key("b"); json.fixed(item.location, decimals: 6)
            json.key("c"); json.fixed(item.categoryModel == nil ? item.parameters.guessing : 0, decimals: 6)
            json.endObject()
        }
        json.endArray()
        json.key("information"); json.beginArray()
        for point in form.information {
            json.beginObject()
            json.key("theta"); json.number(point.theta)
            json.key("information"); json.fixed(point.information, decimals: 4)
            json.key("se"); json.fixed(point.standardError, decimals: 4)
            json.endObject()
        }
        json.endArray()
        json.key("relaxed"); json.beginArray()
        for rule in form.relaxed { json.string(rule) }
        json.endArray()
        json.key("seed"); json.integer(seed)
        json.key("bank_version"); json.string(state.bankVersion)
        json.endObject()
        return Self.json(json)
    }

    // MARK: GET endpoints

    func bank(_ state: ServingState) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: state.bankDescription))
    }

    func live() -> Response { Self.json(liveJSON()) }

    func liveJSON() -> JSONWriter {
        var json = JSONWriter(capacity: 32)
        json.beginObject()
        json.key("status"); json.string("live")
        json.endObject()
        return json
    }

    func ready(_ state: ServingState) throws -> Response { Self.json(try readyJSON(state)) }

    /// Ready while the service is not draining: a bank is loaded and verified (a state exists only once its files
    /// passed every check, and a refused reload keeps the previous one).
    func readyJSON(_ state: ServingState) throws -> JSONWriter {
        guard !isDraining else { throw Problem(.notReady, "the server is draining before it shuts down; send requests to another instance") }
        var json = JSONWriter(capacity: 96)
        json.beginObject()
        json.key("status"); json.string("ready")
        json.key("bank_version"); json.string(state.bankVersion)
        json.key("n_items"); json.integer(state.bank.items.count)
        json.endObject()
        return json
    }

    func health(_ state: ServingState) -> Response { Self.json(healthJSON(state)) }

    func healthJSON(_ state: ServingState) -> JSONWriter {
        var json = JSONWriter(capacity: 64)
        json.beginObject()
        json.key("status"); json.string("ok")
        json.key("bank_version"); json.string(state.bankVersion)
        json.key("exposure"); json.optionalString(state.exposureControl)
        json.endObject()
        return json
    }

    func metricsText() -> Response {
        let bytes = metrics.exposition()
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    func openAPI() -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: OpenAPIDocument.buffer))
    }

    // MARK: POST /v1/admin/reload

    /// Reloads (the admin token was checked by `authorize`).
    func adminReload(_ state: ServingState, peer: SocketAddress?) async throws -> Response {
        let outcome: ReloadOutcome
        do {
            outcome = try await reload(trigger: "POST /v1/admin/reload from \(peer?.ipAddress ?? "local")")
        } catch {
            throw Problem(.reloadFailed, "\(error)")
        }
        var json = JSONWriter(capacity: 128)
        json.beginObject()
        json.key("reloaded"); json.bool(true)
        json.key("previous_version"); json.string(outcome.previousVersion)
        json.key("bank_version"); json.string(outcome.currentVersion)
        json.endObject()
        var response = Self.json(json)
        response.headers[.bankVersion] = outcome.currentVersion
        return response
    }
}

/// Runs reloads one at a time.
private actor ReloadQueue {
    func run<T: Sendable>(_ body: @Sendable () throws -> T) throws -> T { try body() }
}
