import Foundation
import Psychometrics

/// What one request may ask of the server. Each limit is checked before any work that grows with it, and a request
/// over a limit gets a problem response naming the limit and the option that raises it, never a crash or a
/// stalled process. Every value can be set on the command line (`iqscore serve --max-body-bytes …`).
public struct ServerLimits: Sendable, Hashable {
    /// The largest request body read, in bytes; a larger one gets 413 without being read further. Default 4 MiB:
    /// a full batch of 1,000 sessions × 100 items with 10-character ids is about 1.5 MB.
    public var maxBodyBytes: Int = ServerLimits.defaultMaxBodyBytes
    /// The most items one session may carry (`item_ids` of a score, `administered` of an adaptive step); more
    /// is a 422 `too-many-items`. Default 1,000: tests are tens of items, and an adaptive step replays the
    /// history (one selection scan per item), so this bounds its cost to a few milliseconds on a 1,500-item bank.
    public var maxItemsPerSession: Int = ServerLimits.defaultMaxItemsPerSession
    /// The most sessions one `POST /v1/score/batch` may carry; more is a 422 `too-many-sessions`. Default 1,000
    /// (about 5 ms of scoring at 25 items a session).
    public var maxSessionsPerBatch: Int = ServerLimits.defaultMaxSessionsPerBatch
    /// The most item ids an `exclude` list may hold (adaptive step, form); more is a 422 `too-many-items`.
    /// Default 20,000.
    public var maxExcludedItems: Int = ServerLimits.defaultMaxExcludedItems
    /// Form assemblies run at once (`POST /v1/forms`). A client's blueprint decides an assembly's cost (seconds
    /// for 1,000 items and 100 information targets), so they run on at most this many of the threads that answer
    /// every endpoint. Default: half the cores, at least 1.
    public var maxConcurrentForms: Int = ServerLimits.defaultMaxConcurrentForms
    /// Form requests that may wait for a place; one more gets 503 `busy` with `Retry-After: 1`. Default 64.
    public var maxQueuedForms: Int = ServerLimits.defaultMaxQueuedForms
    /// Requests a second each client may make to the API's endpoints (the probes, `/metrics` and `/openapi.json`
    /// are not counted); one more gets 429 `rate-limited` with `Retry-After` (`RateLimiter`). A client is its bearer
    /// token, else its address. Default 0: no limit (a load balancer in front is one address for every client).
    public var rateLimit: Double = 0
    /// The requests a client may make at once above `rateLimit` (the bucket's size). Default 0: one second's worth
    /// (`rateLimit`, at least 1).
    public var rateBurst: Double = 0
    /// Whether a client without a token is named by the last address of `X-Forwarded-For` (the one the proxy in
    /// front added) instead of the peer's address. Only behind a proxy that sets it: a client reaching the
    /// server directly could name itself anything. Default false.
    public var clientFromForwardedFor = false

    package static let defaultMaxBodyBytes = 4 << 20
    package static let defaultMaxItemsPerSession = 1_000
    package static let defaultMaxSessionsPerBatch = 1_000
    package static let defaultMaxExcludedItems = 20_000
    package static let defaultMaxConcurrentForms = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
    package static let defaultMaxQueuedForms = 64

    /// The ranges each limit may be set to: a body of 1 KiB … 256 MiB; 1 … 10,000 items a session (the longest
    /// test the libraries accept, `TestLength.maximum`); 1 … 100,000 sessions a batch; 0 … 1,000,000 exclusions;
    /// 1 … 1,024 concurrent and 0 … 1,000,000 queued form assemblies.
    package static let allowedMaxBodyBytes = 1 << 10...256 << 20
    package static let allowedMaxItemsPerSession = 1...10_000
    package static let allowedMaxSessionsPerBatch = 1...100_000
    package static let allowedMaxExcludedItems = 0...1_000_000
    package static let allowedMaxConcurrentForms = 1...1_024
    package static let allowedMaxQueuedForms = 0...1_000_000
    /// Rates and bursts: 0 … 1,000,000 requests a second.
    package static let allowedRate: ClosedRange<Double> = 0...1_000_000

    /// The rate limiter these limits ask for; nil when `rateLimit` is 0.
    package func makeRateLimiter() -> RateLimiter? {
        rateLimit > 0 ? RateLimiter(rate: rateLimit, burst: rateBurst > 0 ? rateBurst : max(1, rateLimit)) : nil
    }

    /// How messages name a limit: in words for a program that sets these limits in code ("max items per
    /// session"), as options for `iqscore serve` ("--max-items-per-session").
    package var naming = SettingNaming.words

    public init() {}

    /// The name of the limit whose key is `key` ("max_items_per_session"), as `naming` says.
    package func name(_ key: String) -> String { naming.name(key) }

    /// One sentence per limit outside its range, naming it (`max body bytes must be …, got 0`; as an option
    /// for `iqscore serve`).
    package func validationProblems() -> [String] {
        var problems: [String] = []
        func check(_ value: Int, _ range: ClosedRange<Int>, _ key: String) {
            if !range.contains(value) { problems.append("\(name(key)) must be \(range.lowerBound)…\(range.upperBound), got \(value)") }
        }
        check(maxBodyBytes, Self.allowedMaxBodyBytes, "max_body_bytes")
        check(maxItemsPerSession, Self.allowedMaxItemsPerSession, "max_items_per_session")
        check(maxSessionsPerBatch, Self.allowedMaxSessionsPerBatch, "max_sessions_per_batch")
        check(maxExcludedItems, Self.allowedMaxExcludedItems, "max_excluded_items")
        check(maxConcurrentForms, Self.allowedMaxConcurrentForms, "max_concurrent_forms")
        check(maxQueuedForms, Self.allowedMaxQueuedForms, "max_queued_forms")
        for (value, key) in [(rateLimit, "rate_limit"), (rateBurst, "rate_burst")] where !(Self.allowedRate.contains(value)) {
            problems.append("\(name(key)) must be 0…1000000 requests a second, got \(value)")
        }
        return problems
    }
}
