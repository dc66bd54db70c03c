import NIOConcurrencyHelpers

/// At most `width` callers inside at once, at most `queueLimit` waiting; a caller beyond that is turned away.
///
/// Form assembly is the one request whose cost a client controls (a 1,000-item blueprint with 100 information
/// targets runs a swap search for seconds). Run inside this gate, such requests occupy at most `width` of the
/// threads that answer every endpoint, so scoring and adaptive steps keep answering; when too many wait, the
/// next one gets 503 `busy` instead of queueing without bound.
final class AsyncGate: Sendable {
    private struct State {
        var inside = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
        var head = 0
        var waitingCount: Int { waiting.count - head }
    }

    let width: Int
    let queueLimit: Int
    private let state = NIOLockedValueBox(State())

    init(width: Int, queueLimit: Int) {
        self.width = max(1, width)
        self.queueLimit = max(0, queueLimit)
    }

    /// Callers inside and waiting now.
    var occupancy: (inside: Int, waiting: Int) { state.withLockedValue { ($0.inside, $0.waitingCount) } }

    /// Runs `body` inside the gate; nil, without running it, when the queue is full.
    func run<T>(_ body: () throws -> T) async rethrows -> T? {
        guard await enter() else { return nil }
        defer { leave() }
        return try body()
    }

    /// Takes a place, waiting for one when all are taken; false at once when `queueLimit` callers wait already.
    /// Every `true` must be followed by one `leave()`.
    func enter() async -> Bool {
        enum Decision { case enter, wait, refuse }
        let decision: Decision = state.withLockedValue { state in
            if state.inside < width { state.inside += 1; return .enter }
            return state.waitingCount < queueLimit ? .wait : .refuse
        }
        switch decision {
        case .enter: return true
        case .refuse: return false
        case .wait:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let admitted: Bool = state.withLockedValue { state in
                    // A place may have come free between the decision and now.
                    if state.inside < width { state.inside += 1; return true }
                    state.waiting.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
            return true
        }
    }

    /// Hands the place to the longest waiter, or frees it.
    func leave() {
        let next: CheckedContinuation<Void, Never>? = state.withLockedValue { state in
            guard state.waitingCount > 0 else { state.inside -= 1; return nil }
            let continuation = state.waiting[state.head]
            state.head += 1
            if state.head > 64 && state.head * 2 > state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return continuation // the place passes to it: `inside` stays
        }
        next?.resume()
    }
}
