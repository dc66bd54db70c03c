import Foundation
import Logging
import NIOCore

/// `iqscore serve`'s log lines on stderr, one `write(2)` each so lines from several threads never mix:
///
/// - `text`: `2026-11-23T15:06:59.123Z info iqscore.serve: message key=value …`;
/// - `json`: one object a line (JSON Lines), for a log collector:
///   `{"time":"2026-11-23T15:06:59.123Z","level":"info","logger":"iqscore.serve","message":"…","request_id":"…",…}`,
///   the metadata as members (a key that would replace `time`, `level`, `logger` or `message` is written with a
///   `meta_` prefix).
///
/// swift-log's `StreamLogHandler` formats its metadata again whenever metadata is set, and Hummingbird sets a
/// request id on every request's logger: this handler formats only the lines it writes, and writes the time from
/// `clock_gettime` by hand (an `ISO8601DateFormatter` a line cost more than the request it logged).
public struct ServerLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    public let label: String
    public let format: Format
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    /// Where lines go: a file descriptor (2, standard error, unless a test says otherwise).
    let descriptor: Int32

    public init(label: String, level: Logger.Level, format: Format = .text) {
        self.init(label: label, level: level, format: format, descriptor: 2)
    }

    init(label: String, level: Logger.Level, format: Format, descriptor: Int32) {
        self.label = label
        logLevel = level
        self.format = format
        self.descriptor = descriptor
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let line = Self.line(time: Self.now(), level: event.level, label: label, message: "\(event.message)", metadata: merged, format: format)
        line.withUnsafeReadableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
                offset += n
            }
        }
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
            var json = JSONWriter(capacity: 256)
            json.beginObject()
            json.key("time"); json.string(time)
            json.key("level"); json.string(level.rawValue)
            json.key("logger"); json.string(label)
            json.key("message"); json.string(message)
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
            if let n = c as? any BinaryInteger { json.integer(n) } else { json.string(c.description) }
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
