import NIOConcurrencyHelpers

/// The state being served, swapped whole by a reload.
///
/// A request reads `current` once, at its start, and answers from that snapshot to the end: a reload that
/// installs a new state meanwhile changes nothing for it (the old state lives as long as a request holds it). The
/// read is a lock held for one reference copy — tens of nanoseconds, no allocation — and a reload holds the same
/// lock only to swap the reference, never while loading files.
package final class ServingStateStore: Sendable {
    private let box: NIOLockedValueBox<ServingState>

    package init(_ state: ServingState) {
        box = NIOLockedValueBox(state)
    }

    /// The state new requests are answered from.
    package var current: ServingState { box.withLockedValue { $0 } }

    /// Installs `state` for new requests; returns the one it replaces.
    @discardableResult
    package func replace(with state: ServingState) -> ServingState {
        box.withLockedValue { current in
            let previous = current
            current = state
            return previous
        }
    }
}
