import Synchronization

/// The request-body bytes all connections together may hold (`ConnectionLimits.maxBufferedBodyBytes`): a request
/// takes its bytes as they arrive and gives them back when its response has been written or its connection closes
/// (a `Content-Length` that cannot fit what is left is refused at the head). A request that would go over the budget is refused with
/// 503 `overloaded`, so memory is bounded for the process, not only per request.
final class BodyBudget: Sendable {
    let limit: Int
    private let held = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Bytes held now.
    var bytesHeld: Int { held.load(ordering: .relaxed) }

    /// Takes `bytes` when they fit under the limit; false (taking nothing) when they do not.
    func take(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        var current = held.load(ordering: .relaxed)
        while true {
            guard current + bytes <= limit else { return false }
            let (exchanged, original) = held.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back bytes taken before.
    func give(_ bytes: Int) {
        if bytes > 0 { held.subtract(bytes, ordering: .relaxed) }
    }
}
