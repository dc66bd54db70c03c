import Foundation
import NIOConcurrencyHelpers
import Prometheus
import Psychometrics

/// The routes the server answers, as metric labels (the route template, never the raw path, so a client cannot
/// create series at will).
package enum ServerRoute: Int, Sendable, Hashable, CaseIterable {
    case score, scoreBatch, catNext, forms, bank, live, ready, health, metrics, openAPI, reload, unmatched

    /// The path, or `unmatched` for a request no route took.
    package var label: String {
        switch self {
        case .score: "/v1/score"
        case .scoreBatch: "/v1/score/batch"
        case .catNext: "/v1/cat/next"
        case .forms: "/v1/forms"
        case .bank: "/v1/bank"
        case .live: "/livez"
        case .ready: "/readyz"
        case .health: "/healthz"
        case .metrics: "/metrics"
        case .openAPI: "/openapi.json"
        case .reload: "/v1/admin/reload"
        case .unmatched: "unmatched"
        }
    }

    /// The token a route needs when tokens are configured (`AccessTokens`), and whether it is rate-limited: the
    /// API's endpoints; nil for the probes, `/metrics`, `/openapi.json` and unknown paths.
    package var scope: AccessTokens.Scope? {
        switch self {
        case .score, .scoreBatch, .catNext, .forms, .bank: .scoring
        case .reload: .admin
        case .live, .ready, .health, .metrics, .openAPI, .unmatched: nil
        }
    }
}

/// The server's Prometheus metrics, each with its `# HELP` line, on the server's own registry (so several servers in
/// one process, or the tests, never share counts, and nothing is bootstrapped process-wide):
///
/// - `iqscore_http_requests_total{route, status}`: requests answered;
/// - `iqscore_http_request_duration_seconds{route}`: a histogram of the time from routing to the response
///   (buckets 50 µs … 2.5 s);
/// - `iqscore_problems_total{kind}`: problem responses by kind (`Problem.Kind`);
/// - `iqscore_fast_lane_requests_total{route}`: the requests of `iqscore_http_requests_total` answered on the
///   connection's event loop (`FastLane`), by route; the others went through the router;
/// - `iqscore_build_info{version}`: 1, with the version of iqscore (`iqscoreVersion`);
/// - `iqscore_bank_info{bank_version, n_items}`: 1 for the bank being served;
/// - `iqscore_reloads_total{result}`: reloads `applied` or `refused`; `iqscore_last_reload_success` (1 when the
///   last reload was applied or none was tried, 0 when it was refused) and `iqscore_last_reload_timestamp_seconds`;
/// - `iqscore_ready`: 1 while `GET /readyz` answers 200, 0 while draining;
/// - `iqscore_connections_open`: connections open now (`ConnectionLimits.maxConnections` at most);
/// - `iqscore_connections_closed_total{reason}`: connections the server closed, by `ConnectionCloseReason`
///   (timeouts, evictions at the connection limit, refusals, protocol errors, shutdown);
/// - `iqscore_request_body_bytes_buffered`: request-body bytes held now (`ConnectionLimits.maxBufferedBodyBytes`
///   at most);
/// - the process, as Prometheus's client libraries name them: `process_resident_memory_bytes`,
///   `process_virtual_memory_bytes`, `process_open_fds`, `process_max_fds`, `process_cpu_seconds_total`,
///   `process_start_time_seconds` (read from `/proc/self` when `GET /metrics` is answered).
///
/// Every handle a request touches is made at start-up and kept in arrays, so counting a request takes no lock.
public final class ServerMetrics: Sendable {
    /// The registry `GET /metrics` prints.
    public let registry: PrometheusCollectorRegistry
    /// Statuses counted through preallocated handles; any other goes through a locked table.
    static let commonStatuses: [Int] = [200, 400, 401, 403, 404, 405, 413, 422, 429, 500, 503]
    private let requests: [Counter]
    private let otherStatuses: NIOLockedValueBox<[String: Counter]>
    private let durations: [DurationHistogram]
    private let problems: [Counter]
    /// By `ServerRoute.rawValue`; nil for the routes `FastLane` does not answer.
    private let fastLane: [Counter?]
    private let bankInfo: NIOLockedValueBox<Gauge?>
    private let reloadsApplied: Counter
    private let reloadsRefused: Counter
    private let lastReloadSuccess: Gauge
    private let lastReloadTime: Gauge
    private let ready: Gauge
    private let connectionsClosed: [Counter]
    private let connectionsOpen: Gauge
    private let bodyBytesBuffered: Gauge
    private let process: ProcessGauges
    /// Reads the open connections and buffered body bytes when `GET /metrics` is answered (set by the application).
    private let connectionSource = NIOLockedValueBox<(@Sendable () -> (open: Int, bodyBytes: Int))?>(nil)

    static let durationBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(1000), .milliseconds(2500)
    ]

    static let help = (
        requests: "Requests answered, by route template and HTTP status.",
        durations: "Time from routing a request to its response, by route template.",
        problems: "Problem responses (application/problem+json), by kind.",
        fastLane:
            "Requests of iqscore_http_requests_total answered on the connection's event loop (the fast lane), by route template; the others went through the router.",
        build: "The version of iqscore this process runs (value 1).",
        bank: "The item bank being served (value 1): its version (first 16 hex digits of its SHA-256) and item count.",
        reloads: "Reloads of the bank and configuration files, applied or refused.",
        lastReload: "1 when the last reload was applied (or none was tried yet), 0 when it was refused and the previous bank keeps serving.",
        lastReloadTime: "Unix time of the last reload tried (the start-up load before any).",
        ready: "1 while GET /readyz answers 200, 0 while the server drains before shutting down.",
        closed: "Connections the server closed, by reason (timeouts, evictions at the connection limit, refusals, protocol errors, shutdown).",
        open: "Connections open now.",
        buffered: "Request-body bytes held now by all connections together."
    )

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var requests: [Counter] = []
        for route in ServerRoute.allCases {
            for status in Self.commonStatuses {
                requests.append(
                    registry.counter(
                        "iqscore_http_requests_total", labels: [("route", route.label), ("status", String(status))],
                        help: Self.help.requests))
            }
        }
        self.requests = requests
        otherStatuses = NIOLockedValueBox([:])
        durations = ServerRoute.allCases.map {
            registry.durations(
                "iqscore_http_request_duration_seconds", labels: [("route", $0.label)], buckets: Self.durationBuckets,
                help: Self.help.durations)
        }
        problems = Problem.Kind.allCases.map {
            registry.counter("iqscore_problems_total", labels: [("kind", $0.rawValue)], help: Self.help.problems)
        }
        fastLane = ServerRoute.allCases.map { route in
            FastLane.routes.contains(route)
                ? registry.counter("iqscore_fast_lane_requests_total", labels: [("route", route.label)], help: Self.help.fastLane) : nil
        }
        registry.gauge("iqscore_build_info", labels: [("version", iqscoreVersion)], help: Self.help.build).set(Int64(1))
        bankInfo = NIOLockedValueBox(nil)
        reloadsApplied = registry.counter("iqscore_reloads_total", labels: [("result", "applied")], help: Self.help.reloads)
        reloadsRefused = registry.counter("iqscore_reloads_total", labels: [("result", "refused")], help: Self.help.reloads)
        lastReloadSuccess = registry.gauge("iqscore_last_reload_success", help: Self.help.lastReload)
        lastReloadSuccess.set(Int64(1))
        lastReloadTime = registry.gauge("iqscore_last_reload_timestamp_seconds", help: Self.help.lastReloadTime)
        lastReloadTime.set(Date().timeIntervalSince1970)
        ready = registry.gauge("iqscore_ready", help: Self.help.ready)
        ready.set(Int64(1))
        connectionsClosed = ConnectionCloseReason.allCases.map {
            registry.counter("iqscore_connections_closed_total", labels: [("reason", $0.rawValue)], help: Self.help.closed)
        }
        connectionsOpen = registry.gauge("iqscore_connections_open", help: Self.help.open)
        bodyBytesBuffered = registry.gauge("iqscore_request_body_bytes_buffered", help: Self.help.buffered)
        process = ProcessGauges(registry: registry)
    }

    /// Counts a connection the server closed.
    func recordConnectionClosed(_ reason: ConnectionCloseReason) {
        if let k = ConnectionCloseReason.allCases.firstIndex(of: reason) { connectionsClosed[k].increment() }
    }

    /// Where the connection gauges are read from.
    func setConnectionSource(_ source: @escaping @Sendable () -> (open: Int, bodyBytes: Int)) {
        connectionSource.withLockedValue { $0 = source }
    }

    /// Counts one answered request and its duration.
    /// Counts a request `FastLane` answered (besides `record(_:status:nanoseconds:)`).
    func recordFastLane(_ route: ServerRoute) {
        fastLane[route.rawValue]?.increment()
    }

    func record(_ route: ServerRoute, status: Int, nanoseconds: Int64) {
        if let s = Self.commonStatuses.firstIndex(of: status) {
            requests[route.rawValue * Self.commonStatuses.count + s].increment()
        } else {
            let key = "\(route.rawValue) \(status)"
            let counter = otherStatuses.withLockedValue { table in
                if let counter = table[key] { return counter }
                let counter = registry.counter(
                    "iqscore_http_requests_total", labels: [("route", route.label), ("status", String(status))],
                    help: Self.help.requests)
                table[key] = counter
                return counter
            }
            counter.increment()
        }
        durations[route.rawValue].recordNanoseconds(nanoseconds)
    }

    /// Counts one problem response.
    func record(_ kind: Problem.Kind) {
        if let k = Problem.Kind.allCases.firstIndex(of: kind) { problems[k].increment() }
    }

    /// Counts a reload and sets the last reload's status and time.
    func recordReload(applied: Bool) {
        (applied ? reloadsApplied : reloadsRefused).increment()
        lastReloadSuccess.set(Int64(applied ? 1 : 0))
        lastReloadTime.set(Date().timeIntervalSince1970)
    }

    /// Sets `iqscore_ready`.
    func setReady(_ isReady: Bool) { ready.set(Int64(isReady ? 1 : 0)) }

    /// Sets the bank-info series to the served bank (the previous bank's series is removed).
    func setBank(version: String, items: Int) {
        bankInfo.withLockedValue { gauge in
            if let gauge { registry.unregisterGauge(gauge) }
            let next = registry.gauge("iqscore_bank_info", labels: [("bank_version", version), ("n_items", String(items))], help: Self.help.bank)
            next.set(Int64(1))
            gauge = next
        }
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func exposition() -> [UInt8] {
        if let source = connectionSource.withLockedValue({ $0 }) {
            let now = source()
            connectionsOpen.set(Int64(now.open))
            bodyBytesBuffered.set(Int64(now.bodyBytes))
        }
        process.update()
        return registry.emitToBuffer()
    }
}

/// The registry's descriptor-based makers (its name-and-help ones are deprecated), with the whole name given.
private extension PrometheusCollectorRegistry {
    static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    func counter(_ name: String, labels: [(String, String)] = [], help: String) -> Counter {
        makeCounter(descriptor: Self.descriptor(name, help), labels: labels)
    }

    func gauge(_ name: String, labels: [(String, String)] = [], help: String) -> Gauge {
        makeGauge(descriptor: Self.descriptor(name, help), labels: labels)
    }

    func durations(_ name: String, labels: [(String, String)], buckets: [Duration], help: String) -> DurationHistogram {
        makeDurationHistogram(descriptor: Self.descriptor(name, help), labels: labels, buckets: buckets)
    }
}
