import Metrics
import NIOConcurrencyHelpers
import class Prometheus.PrometheusCollectorRegistry
import struct Prometheus.PrometheusMetricsFactory

/// The routes the server answers, as metric labels (the route template, never the raw path, so a client cannot
/// create series at will).
public enum ServerRoute: Int, Sendable, Hashable, CaseIterable {
    case score, scoreBatch, catNext, forms, bank, health, metrics, openAPI, reload, unmatched

    /// The path, or `unmatched` for a request no route took.
    public var label: String {
        switch self {
        case .score: "/v1/score"
        case .scoreBatch: "/v1/score/batch"
        case .catNext: "/v1/cat/next"
        case .forms: "/v1/forms"
        case .bank: "/v1/bank"
        case .health: "/healthz"
        case .metrics: "/metrics"
        case .openAPI: "/openapi.json"
        case .reload: "/v1/admin/reload"
        case .unmatched: "unmatched"
        }
    }
}

/// The server's Prometheus metrics, through swift-metrics handles on the server's own registry (so several
/// servers in one process, or the tests, never share counts, and nothing is bootstrapped process-wide):
///
/// - `iqscore_http_requests_total{route, status}`: requests answered;
/// - `iqscore_http_request_duration_seconds{route}`: a histogram of the time from routing to the response
///   (buckets 50 µs … 2.5 s);
/// - `iqscore_problems_total{kind}`: problem responses by kind (`Problem.Kind`);
/// - `iqscore_bank_info{bank_version, n_items}`: 1 for the bank being served;
/// - `iqscore_reloads_total{result}`: reloads `applied` or `refused`;
/// - `iqscore_connections_open`: connections open now (`ConnectionLimits.maxConnections` at most);
/// - `iqscore_connections_closed_total{reason}`: connections the server closed, by `ConnectionCloseReason`
///   (timeouts, evictions at the connection limit, refusals, protocol errors, shutdown);
/// - `iqscore_request_body_bytes_buffered`: request-body bytes held now (`ConnectionLimits.maxBufferedBodyBytes`
///   at most).
///
/// Every handle a request touches is made at start-up and kept in arrays, so counting a request takes no lock.
public final class ServerMetrics: Sendable {
    /// The registry `GET /metrics` prints.
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    /// Statuses counted through preallocated handles; any other goes through a locked table.
    static let commonStatuses: [Int] = [200, 400, 403, 404, 405, 413, 422, 500, 503]
    private let requests: [Counter]
    private let otherStatuses: NIOLockedValueBox<[String: Counter]>
    private let durations: [Metrics.Timer]
    private let problems: [Counter]
    private let bankInfo: NIOLockedValueBox<Gauge?>
    private let reloadsApplied: Counter
    private let reloadsRefused: Counter
    private let connectionsClosed: [Counter]
    private let connectionsOpen: Gauge
    private let bodyBytesBuffered: Gauge
    /// Reads the open connections and buffered body bytes when `GET /metrics` is answered (set by the application).
    private let connectionSource = NIOLockedValueBox<(@Sendable () -> (open: Int, bodyBytes: Int))?>(nil)

    static let durationBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(1000), .milliseconds(2500),
    ]

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        self.factory = factory
        var requests: [Counter] = []
        for route in ServerRoute.allCases {
            for status in Self.commonStatuses {
                requests.append(Counter(label: "iqscore_http_requests_total", dimensions: [("route", route.label), ("status", String(status))], factory: factory))
            }
        }
        self.requests = requests
        otherStatuses = NIOLockedValueBox([:])
        durations = ServerRoute.allCases.map {
            Metrics.Timer(label: "iqscore_http_request_duration_seconds", dimensions: [("route", $0.label)], factory: factory)
        }
        problems = Problem.Kind.allCases.map {
            Counter(label: "iqscore_problems_total", dimensions: [("kind", $0.rawValue)], factory: factory)
        }
        bankInfo = NIOLockedValueBox(nil)
        reloadsApplied = Counter(label: "iqscore_reloads_total", dimensions: [("result", "applied")], factory: factory)
        reloadsRefused = Counter(label: "iqscore_reloads_total", dimensions: [("result", "refused")], factory: factory)
        connectionsClosed = ConnectionCloseReason.allCases.map {
            Counter(label: "iqscore_connections_closed_total", dimensions: [("reason", $0.rawValue)], factory: factory)
        }
        connectionsOpen = Gauge(label: "iqscore_connections_open", factory: factory)
        bodyBytesBuffered = Gauge(label: "iqscore_request_body_bytes_buffered", factory: factory)
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
    func record(_ route: ServerRoute, status: Int, nanoseconds: Int64) {
        if let s = Self.commonStatuses.firstIndex(of: status) {
            requests[route.rawValue * Self.commonStatuses.count + s].increment()
        } else {
            let key = "\(route.rawValue) \(status)"
            let counter = otherStatuses.withLockedValue { table in
                if let counter = table[key] { return counter }
                let counter = Counter(label: "iqscore_http_requests_total", dimensions: [("route", route.label), ("status", String(status))], factory: factory)
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

    /// Counts a reload.
    func recordReload(applied: Bool) {
        (applied ? reloadsApplied : reloadsRefused).increment()
    }

    /// Sets the bank-info series to the served bank (the previous bank's series is removed).
    func setBank(version: String, items: Int) {
        bankInfo.withLockedValue { gauge in
            gauge?.destroy()
            let next = Gauge(label: "iqscore_bank_info", dimensions: [("bank_version", version), ("n_items", String(items))], factory: factory)
            next.record(1)
            gauge = next
        }
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func exposition() -> [UInt8] {
        if let source = connectionSource.withLockedValue({ $0 }) {
            let now = source()
            connectionsOpen.record(now.open)
            bodyBytesBuffered.record(now.bodyBytes)
        }
        return registry.emitToBuffer()
    }
}
