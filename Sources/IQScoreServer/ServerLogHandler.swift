import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// `iqscore serve`'s log lines on stderr, whole lines only, so lines from several threads never mix:
///
/// - `text`: `2026-11-23T15:06:59.123Z info iqscore.serve: message key=value …`;
/// - `json`: one object a line (JSON Lines), for a log collector:
///   `{"time":"2026-11-23T15:06:59.123Z","level":"info","logger":"iqscore.serve","message":"…","request_id":"…",…}`,
///   the metadata as members (a key that would replace `time`, `level`, `logger` or `message` is written with a
///   `meta_` prefix).
///
/// swift-log's `StreamLogHandler` formats its metadata again whenever metadata is set, and Hummingbird sets a
/// request id on every request's logger: this handler formats only the lines it writes, and writes the time from
/// `clock_gettime` by hand (an `ISO8601DateFormatter` a line cost more than the request it logged). Lines go
/// through a `LogSink`: lines at `info` and below are written in batches (at most 50 ms late), warnings and
/// errors at once with everything before them.
public struct ServerLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public let label: String
    public let format: Format
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    /// Where lines go.
    let sink: LogSink

    public init(label: String, level: Logger.Level, format: Format = .text) {
        self.init(label: label, level: level, format: format, sink: .standardError)
    }

    init(label: String, level: Logger.Level, format: Format, sink: LogSink) {
        self.label = label
        logLevel = level
        self.format = format
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let line = Self.line(time: Self.now(), level: event.level, label: label, message: "\(event.message)", metadata: merged, format: format)
        sink.append(line, now: event.level >= .notice)
    }

    /// One request's line at `info` (as `ScoringService` logs it), written without building `Logger.Metadata`: the
    /// same bytes `log(event:)` writes for the message `"METHOD 'path' STATUS"` with the metadata `client`,
    /// `duration_us`, `problem`, `request_id`, `route`, `status` and `token` (a test compares the two). Nil-free
    /// fields only; `problem` and `token` are left out when nil. Returns false when `info` is below the level.
    @discardableResult
    public func logRequest(
        method: String, path: String, status: Int, durationMicroseconds: Int64, requestID: String, route: String,
        client: String, token: String?, problem: String?
    ) -> Bool {
        guard logLevel <= .info else { return false }
        sink.append(
            Self.requestLine(
                time: Self.now(), label: label, format: format, method: method, path: path, status: status,
                durationMicroseconds: durationMicroseconds, requestID: requestID, route: route, client: client,
                token: token, problem: problem), now: false)
        return true
    }

    static func requestLine(
        time: String, label: String, format: Format, method: String, path: String, status: Int, durationMicroseconds: Int64,
        requestID: String, route: String, client: String, token: String?, problem: String?
    ) -> ByteBuffer {
        let message = "\(method) \(path) \(status)"
        switch format {
        case .text:
            var text = "\(time) info \(label): \(message) client=\(client) duration_us=\(durationMicroseconds)"
            if let problem { text += " problem=\(problem)" }
            text += " request_id=\(requestID) route=\(route) status=\(status)"
            if let token { text += " token=\(token)" }
            text += "\n"
            return ByteBuffer(string: text)
        case .json:
            var json = Self.jsonLine(capacity: 320, time: time, level: .info, label: label, message: message)
            json.key("client"); json.string(client)
            json.key("duration_us"); json.integer(durationMicroseconds)
            if let problem { json.key("problem"); json.string(problem) }
            json.key("request_id"); json.string(requestID)
            json.key("route"); json.string(route)
            json.key("status"); json.integer(status)
            if let token { json.key("token"); json.string(token) }
            json.endObject()
            var buffer = json.buffer
            buffer.writeInteger(UInt8(ascii: "\n"))
            return buffer
        }
    }

    /// A JSON line's object begun with its four fixed members.
    private static func jsonLine(capacity: Int, time: String, level: Logger.Level, label: String, message: String) -> JSONWriter {
        var json = JSONWriter(capacity: capacity)
        json.beginObject()
        json.key("time"); json.string(time)
        json.key("level"); json.string(level.rawValue)
        json.key("logger"); json.string(label)
        json.key("message"); json.string(message)
        return json
    }

    /// One line, ending in a newline.
    static func line(time: String, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, format: Format) -> ByteBuffer {
        let fields = metadata.sorted { $0.key < $1.key }
        switch format {
        case .text:
            var text = "\(time) \(level) \(label): \(message)"
            for (key, value) in fields { text += " \(key)=\(value)" }
            text += "\n"
            return ByteBuffer(string: text)
        case .json:
            var json = Self.jsonLine(capacity: 256, time: time, level: level, label: label, message: message)
            for (key, value) in fields {
                json.key(dynamic: ["time", "level", "logger", "message"].contains(key) ? "meta_" + key : key)
                write(value, to: &json)
            }
            json.endObject()
            var buffer = json.buffer
            buffer.writeInteger(UInt8(ascii: "\n"))
            return buffer
        }
    }

    private static func write(_ value: Logger.MetadataValue, to json: inout JSONWriter) {
        switch value {
        case .string(let s): json.string(s)
        case .stringConvertible(let c):
            // Concrete casts: a cast to `any BinaryInteger` looks its conformance up on every line.
            if let n = c as? Int {
                json.integer(n)
            } else if let n = c as? Int64 {
                json.integer(n)
            } else if let n = c as? UInt64 {
                json.integer(n)
            } else {
                json.string(c.description)
            }
        case .array(let values):
            json.beginArray()
            for v in values { write(v, to: &json) }
            json.endArray()
        case .dictionary(let members):
            json.beginObject()
            for (k, v) in members.sorted(by: { $0.key < $1.key }) { json.key(dynamic: k); write(v, to: &json) }
            json.endObject()
        }
    }

    /// The time now in UTC, ISO 8601 with milliseconds: `2026-11-23T15:06:59.123Z`.
    static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return iso8601(seconds: spec.tv_sec, milliseconds: Int(spec.tv_nsec / 1_000_000))
    }

    static func iso8601(seconds: Int, milliseconds: Int) -> String {
        var t = seconds
        var parts = tm()
        gmtime_r(&t, &parts)
        var bytes = [UInt8](repeating: 0, count: 23)
        func put(_ value: Int, _ at: Int, _ width: Int) {
            var v = value
            for k in stride(from: at + width - 1, through: at, by: -1) { bytes[k] = UInt8(ascii: "0") + UInt8(v % 10); v /= 10 }
        }
        put(Int(parts.tm_year) + 1900, 0, 4); bytes[4] = UInt8(ascii: "-")
        put(Int(parts.tm_mon) + 1, 5, 2); bytes[7] = UInt8(ascii: "-")
        put(Int(parts.tm_mday), 8, 2); bytes[10] = UInt8(ascii: "T")
        put(Int(parts.tm_hour), 11, 2); bytes[13] = UInt8(ascii: ":")
        put(Int(parts.tm_min), 14, 2); bytes[16] = UInt8(ascii: ":")
        put(Int(parts.tm_sec), 17, 2); bytes[19] = UInt8(ascii: ".")
        put(milliseconds, 20, 3)
        return String(decoding: bytes, as: UTF8.self) + "Z"
    }
}

/// Whole log lines to a file descriptor, in batches: `append` copies a line into a buffer; a background thread
/// writes the buffer every 50 ms, or as soon as it holds 64 KiB, or the caller does at once when the line must not
/// wait (`now`, for warnings and errors). One `write(2)` per batch instead of one per request line: the lines a
/// server writes per request cost a system call each before. The caller (an event loop, answering `FastLane`'s
/// requests) does not write request lines itself unless the buffer reaches 8 MiB, the bound on what the sink holds
/// when the file takes lines more slowly than they come. `flush()` writes what is buffered (at exit).
package final class LogSink: Sendable {
    /// Standard error, flushed at exit.
    package static let standardError: LogSink = {
        let sink = LogSink(descriptor: 2)
        atexit { LogSink.standardError.flush() }
        return sink
    }()

    /// A batch this large wakes the writing thread.
    static let batchBytes = 64 << 10
    /// A buffer this large is written by the caller: the most the sink holds.
    static let maxBufferedBytes = 8 << 20

    private let descriptor: Int32
    private let buffer = NIOLockedValueBox<[UInt8]>([])
    /// Serialises the writes themselves, so batches reach the file in order.
    private let writing = NIOLock()
    /// Wakes the writing thread before its 50 ms are up.
    private let wake = DispatchSemaphore(value: 0)

    init(descriptor: Int32) {
        self.descriptor = descriptor
        let thread = Thread { [weak self] in
            while let sink = self {
                sink.flush()
                let wake = sink.wake
                _ = wake.wait(timeout: .now() + .milliseconds(50))
            }
        }
        thread.name = "iqscore-log"
        thread.start()
    }

    func append(_ line: ByteBuffer, now: Bool) {
        let held = buffer.withLockedValue { bytes in
            line.withUnsafeReadableBytes { bytes.append(contentsOf: $0) }
            return bytes.count
        }
        if now || held >= Self.maxBufferedBytes {
            flush()
        } else if held >= Self.batchBytes && held - line.readableBytes < Self.batchBytes {
            wake.signal()
        }
    }

    /// Writes every buffered line.
    package func flush() {
        writing.withLock {
            let bytes = buffer.withLockedValue { bytes -> [UInt8] in
                defer { bytes.removeAll(keepingCapacity: true) }
                return bytes
            }
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
                    offset += n
                }
            }
        }
    }
}
