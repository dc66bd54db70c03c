import Synchronization

/// The id of a request, for following it through a proxy's log, the server's log and the client's: the client's
/// own `X-Request-Id` when it is 1…128 characters of `A–Z a–z 0–9 . _ ~ : + / = -` (what UUIDs, ULIDs, base64 and
/// haproxy's `unique-id-format` produce, and nothing that could forge a log line), else one the server makes.
/// Returned in `X-Request-Id` on every response and logged with the request.
///
/// A made id is `<16 hex digits>-<counter>`: random per process, then counting, so ids of several instances
/// behind one load balancer do not collide (two processes share a prefix with probability 2⁻⁶⁴) and making one
/// costs an atomic increment.
final class RequestIDs: Sendable {
    private let prefix: String
    private let counter = Atomic<UInt64>(0)

    init() {
        var generator = SystemRandomNumberGenerator()
        let bits = generator.next() as UInt64
        let hex = String(bits, radix: 16)
        prefix = String(repeating: "0", count: 16 - hex.count) + hex + "-"
    }

    /// The client's id when acceptable, else a new one.
    func id(from header: String?) -> String {
        if let header, Self.isAcceptable(header) { return header }
        return prefix + String(counter.add(1, ordering: .relaxed).newValue)
    }

    /// The longest id kept.
    static let maxLength = 128

    static func isAcceptable(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...maxLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy { b in
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "+"), UInt8(ascii: "/"),
                UInt8(ascii: "="), UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }
}
