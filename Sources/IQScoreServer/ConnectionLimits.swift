import Psychometrics

/// What one connection, and all of them together, may hold of the server: time, memory and places. Each limit is
/// enforced by `ConnectionGuard` below the routes, so a client that sends slowly, sends nothing, or sends much at
/// once cannot take the server away from the clients that behave; every value can be set on the command line
/// (`iqscore serve --header-timeout …`).
///
/// The process's memory for connections is bounded by these limits together (`memoryBound`):
///
/// ```
/// maxConnections × (maxHeaderBytes + perConnectionOverhead) + maxBufferedBodyBytes + parseWorkers × 16 × maxBodyBytes
/// ```
///
/// where the last term is the JSON parse of the bodies being decoded at that moment (at most one per core; a parsed
/// body takes about 16 times its size while it is decoded), and `perConnectionOverhead` is the allowance for what an
/// open connection costs the process besides its head (socket, pipeline, parser and timer state).
public struct ConnectionLimits: Sendable, Hashable {
    /// A new connection must deliver its first request head within this time of opening, and a kept-alive one
    /// within this time of the first byte of the next request: 10 s (a slow-header client is closed with 408).
    public var headerTimeout: Duration = .seconds(10)
    /// A request's whole body must arrive within this time of its head: 30 s, so the largest body allowed
    /// (`ServerLimits.maxBodyBytes`, 4 MiB by default) needs at least 140 kB/s (a slow-body client gets 408).
    public var bodyTimeout: Duration = .seconds(30)
    /// A client that leaves responses unread (the socket's buffer full and the connection's outbound bytes over its
    /// high water mark, 64 KiB) is closed after this time: 30 s. Meanwhile no next request of its is read.
    public var sendTimeout: Duration = .seconds(30)
    /// A kept-alive connection with no request under way is closed after this time: 60 s.
    public var idleTimeout: Duration = .seconds(60)
    /// Connections held open at once: 10,000. At the limit a new connection closes the connection that has waited
    /// longest without a request under way (kept-alive idle first, then the slowest request still being read), so
    /// silent or slow clients cannot lock the others out; it is refused only when every connection is being answered.
    public var maxConnections = 10_000
    /// The most bytes of one request head (request line and header fields): 16 KiB; a larger one gets 431.
    public var maxHeaderBytes = 16 << 10
    /// Request-body bytes held by all connections together, received and not yet answered: 256 MiB. A request that
    /// would go over it gets 503 `overloaded` with `Retry-After: 1` (at its head when it declares its length).
    public var maxBufferedBodyBytes = 256 << 20
    /// After SIGTERM/SIGINT, requests under way may take this long to finish; then every connection is closed and
    /// the process exits: 10 s.
    public var shutdownTimeout: Duration = .seconds(10)

    /// The ranges each limit may be set to: timeouts 1 s … 1 h (shutdown 0 … 1 h), 1 … 1,000,000 connections,
    /// heads of 1 KiB … 1 MiB, 1 MiB … 64 GiB of buffered bodies.
    package static let allowedTimeoutSeconds = 1...3_600
    package static let allowedShutdownSeconds = 0...3_600
    package static let allowedMaxConnections = 1...1_000_000
    package static let allowedMaxHeaderBytes = 1 << 10...1 << 20
    package static let allowedMaxBufferedBodyBytes = 1 << 20...64 << 30

    /// The allowance for what an open connection costs besides its head, used in `memoryBound`: 12 KiB.
    /// `scripts/hostile-connections.py` checks the bound it implies: 4,000 connections at the limit, half of them
    /// mid-head, with 64 MiB of bodies, peaked at 216 MB against 354 MB (about 25 KB a connection, heads included).
    package static let perConnectionOverhead = 12 << 10

    /// How messages name a limit: in words for a program that sets these limits in code ("header timeout"), as
    /// options for `iqscore serve` ("--header-timeout").
    package var naming = SettingNaming.words

    public init() {}

    /// The name of the limit whose key is `key` ("max_connections"), as `naming` says.
    package func name(_ key: String) -> String { naming.name(key) }

    /// The most memory connections and their requests can hold at once (bytes), with `parseWorkers` requests
    /// being decoded at a time (the cores) and bodies of at most `maxBodyBytes`.
    package func memoryBound(maxBodyBytes: Int, parseWorkers: Int) -> Int {
        maxConnections * (maxHeaderBytes + Self.perConnectionOverhead) + maxBufferedBodyBytes + parseWorkers * 16 * maxBodyBytes
    }

    /// One sentence per limit outside its range, naming it (`header timeout must be 1…3600 seconds, got 0`; as an
    /// option for `iqscore serve`).
    package func validationProblems() -> [String] {
        var problems: [String] = []
        func check(_ value: Int, _ range: ClosedRange<Int>, _ key: String, _ unit: String = "") {
            if !range.contains(value) { problems.append("\(name(key)) must be \(range.lowerBound)…\(range.upperBound)\(unit), got \(value)") }
        }
        check(Int(headerTimeout.components.seconds), Self.allowedTimeoutSeconds, "header_timeout", " seconds")
        check(Int(bodyTimeout.components.seconds), Self.allowedTimeoutSeconds, "body_timeout", " seconds")
        check(Int(sendTimeout.components.seconds), Self.allowedTimeoutSeconds, "send_timeout", " seconds")
        check(Int(idleTimeout.components.seconds), Self.allowedTimeoutSeconds, "idle_timeout", " seconds")
        check(Int(shutdownTimeout.components.seconds), Self.allowedShutdownSeconds, "shutdown_timeout", " seconds")
        check(maxConnections, Self.allowedMaxConnections, "max_connections")
        check(maxHeaderBytes, Self.allowedMaxHeaderBytes, "max_header_bytes")
        check(maxBufferedBodyBytes, Self.allowedMaxBufferedBodyBytes, "max_buffered_body_bytes")
        return problems
    }
}

extension Duration {
    /// Whole nanoseconds (for NIO's `TimeAmount` and `NIODeadline`).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
