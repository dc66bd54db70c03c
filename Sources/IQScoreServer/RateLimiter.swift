import NIOConcurrencyHelpers

/// Requests per second per client: a token bucket (Turner 1986; as in RFC 2697's single-rate meter) for each
/// client, refilled at `rate` tokens a second up to `burst`; a request takes one token, and a request finding
/// none gets 429 `rate-limited` with `Retry-After` (the whole seconds until a token is back).
///
/// ```
/// tokens ← min(burst, tokens + rate·(now − last));  admit ⇔ tokens ≥ 1, then tokens ← tokens − 1
/// ```
///
/// A client is its bearer token when it presents a valid one (every instance of a customer's back end shares it),
/// else its address. The table holds at most `maxClients` buckets in 64 shards, each under its own lock, so
/// clients on different cores rarely meet; a full shard first forgets the buckets that have refilled (a full
/// bucket is the same as none), then the half that waited longest, so memory stays bounded whatever the number
/// of addresses an attacker uses.
package final class RateLimiter: Sendable {
    package let rate: Double
    package let burst: Double
    package let maxClients: Int

    private struct Bucket {
        var tokens: Double
        var last: UInt64
    }

    private static let shardCount = 64
    private let shards: [NIOLockedValueBox<[String: Bucket]>]
    private let perShard: Int

    /// `rate` requests a second with bursts of `burst`, for at most `maxClients` clients at once.
    package init(rate: Double, burst: Double, maxClients: Int = 100_000) {
        self.rate = rate
        self.burst = max(1, burst)
        self.maxClients = maxClients
        perShard = max(1, maxClients / Self.shardCount)
        shards = (0..<Self.shardCount).map { _ in NIOLockedValueBox([:]) }
    }

    /// Takes a token for `client` at `nanoseconds` (a monotonic clock): nil when admitted, else the seconds to wait.
    package func admit(_ client: String, at nanoseconds: UInt64) -> Int? {
        var hasher = Hasher()
        hasher.combine(client)
        let shard = shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(Self.shardCount))]
        return shard.withLockedValue { table in
            var bucket = table[client] ?? Bucket(tokens: burst, last: nanoseconds)
            let elapsed = Double(nanoseconds &- bucket.last) / 1e9
            if nanoseconds > bucket.last {
                bucket.tokens = min(burst, bucket.tokens + rate * elapsed)
                bucket.last = nanoseconds
            }
            let admitted = bucket.tokens >= 1
            if admitted { bucket.tokens -= 1 }
            if table[client] == nil && table.count >= perShard { makeRoom(&table, now: nanoseconds) }
            table[client] = bucket
            return admitted ? nil : max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
        }
    }

    /// Clients tracked now.
    package var clientCount: Int { shards.reduce(0) { $0 + $1.withLockedValue { $0.count } } }

    /// Forgets the buckets that are full again, then, if that freed less than a quarter, the older half.
    private func makeRoom(_ table: inout [String: Bucket], now: UInt64) {
        let refill = UInt64(burst / rate * 1e9)
        table = table.filter { now &- $0.value.last < refill }
        guard table.count >= perShard * 3 / 4 else { return }
        let cut = table.values.map(\.last).sorted()[table.count / 2]
        table = table.filter { $0.value.last > cut }
    }
}
