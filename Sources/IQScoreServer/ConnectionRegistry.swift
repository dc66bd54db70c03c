import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// What an open connection is doing, for its timeouts and for choosing which connection to close when the server
/// is full.
enum ConnectionActivity: UInt64, Sendable {
    /// Kept alive between requests, no byte of the next one yet (`ConnectionLimits.idleTimeout`).
    case idle = 0
    /// A request head under way, or a new connection's first (`ConnectionLimits.headerTimeout`).
    case readingHead = 1
    /// A request body under way (`ConnectionLimits.bodyTimeout`).
    case readingBody = 2
    /// Responses wait for a client that does not read them (the channel is over its high water mark;
    /// `ConnectionLimits.sendTimeout`).
    case sending = 3
    /// Every request read is with the routes: no deadline, never closed to make room.
    case answering = 4
    /// Chosen to be closed; the close is on its way.
    case closing = 5
}

/// One open connection as `ConnectionRegistry` sees it: its channel, and what it has been doing since when, in one
/// atomic word that the connection's event loop writes and any thread choosing a connection to close reads.
final class RegisteredConnection: Sendable {
    let channel: any Channel
    /// `activity << 56 | milliseconds` of `NIODeadline.now()` when the activity began.
    private let word = Atomic<UInt64>(0)

    init(channel: any Channel) { self.channel = channel }

    private static func pack(_ activity: ConnectionActivity, _ since: NIODeadline) -> UInt64 {
        activity.rawValue << 56 | (since.uptimeNanoseconds / 1_000_000 & (1 << 56 - 1))
    }

    /// The activity and when it began, in milliseconds of uptime.
    var state: (activity: ConnectionActivity, sinceMilliseconds: UInt64) {
        let value = word.load(ordering: .relaxed)
        return (ConnectionActivity(rawValue: value >> 56) ?? .closing, value & (1 << 56 - 1))
    }

    /// Records a new activity, unless the connection is being closed.
    func set(_ activity: ConnectionActivity, since: NIODeadline) {
        var current = word.load(ordering: .relaxed)
        let desired = Self.pack(activity, since)
        while current >> 56 != ConnectionActivity.closing.rawValue {
            let (exchanged, original) = word.compareExchange(expected: current, desired: desired, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Marks the connection as closing if it is still in the state `observed` (packed) read before: a connection
    /// that has moved on meanwhile (its request completed) is not taken.
    fileprivate func claimForClosing(observed: UInt64) -> Bool {
        word.compareExchange(expected: observed, desired: ConnectionActivity.closing.rawValue << 56, ordering: .relaxed).exchanged
    }

    fileprivate var packed: UInt64 { word.load(ordering: .relaxed) }
}

/// Sent through a connection's pipeline to tell its `ConnectionGuard` it was chosen to make room.
struct ConnectionEviction {}

/// Every open connection of one server, the connection limit, and shutdown's deadline.
///
/// At `ConnectionLimits.maxConnections`, a new connection is admitted by closing the connection that has waited
/// longest without a request under way: kept alive and silent, still sending a head or a body, or still reading a
/// response, counted from when that began (a new connection's first head from its opening). Connections whose
/// requests are with the routes are never chosen; when every connection is such, the new one is refused (closed at once). A client that
/// sends its request and reads the answer spends milliseconds in those states, a silent or slow one seconds, so
/// thousands of silent or slow connections cost each other their places, not the clients that behave.
///
/// Choosing scans the open connections (about 10 µs for 10,000), and only when the server is full; opening and
/// closing a connection take one lock each, and nothing a request does takes it.
final class ConnectionRegistry: Sendable {
    private struct Table {
        var connections: [ObjectIdentifier: RegisteredConnection] = [:]
        var closing = 0
    }

    let limit: Int
    private let table = NIOLockedValueBox(Table())
    private let shutdownStarted = Atomic<Bool>(false)

    init(limit: Int) { self.limit = limit }

    /// Connections open now (those being closed included until they are).
    var openCount: Int { table.withLockedValue { $0.connections.count } }

    enum Admission { case admitted, refused }

    /// Registers `connection`; at the limit, closes another connection to make room, or refuses this one.
    func admit(_ connection: RegisteredConnection) -> Admission {
        let (admission, victim): (Admission, RegisteredConnection?) = table.withLockedValue { table in
            table.connections[ObjectIdentifier(connection)] = connection
            guard table.connections.count - table.closing > limit else { return (.admitted, nil) }
            // Two tries: a connection chosen may have moved on to being answered between the scan and the claim.
            for _ in 0..<2 {
                var best: RegisteredConnection?
                var bestKey = UInt64.max
                var bestObserved: UInt64 = 0
                for other in table.connections.values where other !== connection {
                    let observed = other.packed
                    let activity = observed >> 56, since = observed & (1 << 56 - 1)
                    guard activity <= ConnectionActivity.sending.rawValue else { continue }
                    if since < bestKey { best = other; bestKey = since; bestObserved = observed }
                }
                guard let best else { break }
                if best.claimForClosing(observed: bestObserved) {
                    table.closing += 1
                    return (.admitted, best)
                }
            }
            table.connections[ObjectIdentifier(connection)] = nil
            return (.refused, nil)
        }
        // The victim's guard answers a request under way (503) and closes, on its own event loop.
        victim?.channel.pipeline.fireUserInboundEventTriggered(ConnectionEviction())
        return admission
    }

    /// Forgets a connection that has closed.
    func remove(_ connection: RegisteredConnection) {
        table.withLockedValue { table in
            if table.connections.removeValue(forKey: ObjectIdentifier(connection)) != nil,
                connection.state.activity == .closing
            {
                table.closing -= 1
            }
        }
    }

    /// The first call starts shutdown's clock: after `timeout`, every connection still open is closed. Later calls
    /// do nothing. True for the first.
    @discardableResult
    func beginShutdown(timeout: Duration, on eventLoop: any EventLoop) -> Bool {
        guard !shutdownStarted.exchange(true, ordering: .relaxed) else { return false }
        eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) { [self] in closeAll() }
        return true
    }

    var isShuttingDown: Bool { shutdownStarted.load(ordering: .relaxed) }

    /// Closes every open connection.
    func closeAll() {
        let open = table.withLockedValue { Array($0.connections.values) }
        for connection in open { connection.channel.close(promise: nil) }
    }
}
