import Foundation
import Logging

/// `iqscore serve`'s log lines on stderr: `2026-11-23T15:06:59Z info iqscore.serve: message key=value`.
///
/// swift-log's `StreamLogHandler` formats its metadata again whenever metadata is set, and Hummingbird sets a
/// request id on every request's logger: that was 3% of the server's CPU under load with nothing logged. This
/// handler formats only the lines it writes. One `write(2)` per line, so lines from several threads never mix.
struct StandardErrorLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(label: String, level: Logger.Level) {
        self.label = label
        logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let fields = merged.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        let text = "\(ISO8601DateFormatter().string(from: Date())) \(event.level) \(label): \(event.message)\(fields)\n"
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { if errno == EINTR { continue }; return }
                offset += n
            }
        }
    }
}
