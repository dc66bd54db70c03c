import Foundation

/// One line of progress on stderr, rewritten in place (`\r`), only when stderr is a terminal and `CI` is not set:
/// piped or redirected stderr (scripts, logs, tests) gets no control characters. At most `maxPerSecond`
/// updates are drawn (a fit of 2 ms cycles would otherwise flood the terminal); `clear()` erases the line
/// before the command's summary.
final class TerminalStatusLine: @unchecked Sendable {
    let isEnabled = isatty(2) == 1 && ProcessInfo.processInfo.environment["CI"] == nil
    private var shown = false
    private var lastDrawn = 0.0
    private let minimumInterval: Double

    init(maxPerSecond: Double = 10) { minimumInterval = 1 / maxPerSecond }

    /// Draws `text` unless the previous draw was less than 1/maxPerSecond ago (`force` draws anyway).
    func show(_ text: String, force: Bool = false) {
        guard isEnabled else { return }
        let now = ProcessInfo.processInfo.systemUptime
        guard force || !shown || now - lastDrawn >= minimumInterval else { return }
        lastDrawn = now
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
        shown = true
    }

    func clear() {
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        shown = false
    }
}
