import Psychometrics

/// A parsed response-time cell (seconds): `ResponseFileOptions.timeColumn` in the long layout, the
/// `timeSuffix` columns in the wide one, the score files' time columns.
package enum ResponseTimeCell: Sendable, Hashable {
    /// Empty or `NA`: no time recorded.
    case missing
    /// A time in `ResponseTimes.allowedSeconds`.
    case seconds(Float)
    /// A number outside `ResponseTimes.allowedSeconds` that a clock leaves (0, a few microseconds, more than a day):
    /// the response is kept without its time, and the reader counts it.
    case dropped
    /// Not a number in plain decimal notation (`DecimalNumber`), or negative: an error naming the cell.
    case invalid

    /// Parses one cell; surrounding spaces are ignored. Plain `digits[.digits]` is read without allocating;
    /// anything else goes through `DecimalNumber`'s grammar.
    @inline(__always)
    package static func parse(_ raw: UnsafeBufferPointer<UInt8>) -> ResponseTimeCell {
        let b = raw.trimmingSpaces()
        if b.count == 0 { return .missing }
        if b.count == 2 && (b[0] | 0x20) == UInt8(ascii: "n") && (b[1] | 0x20) == UInt8(ascii: "a") { return .missing }
        var value = 0.0, scale = 1.0, point = false, simple = b.count <= 15
        if simple {
            for c in b {
                if c == UInt8(ascii: ".") && !point { point = true; continue }
                guard c >= 48 && c <= 57 else { simple = false; break }
                value = value * 10 + Double(c - 48)
                if point { scale *= 10 }
            }
        }
        if simple {
            if b.count == 1 && point { return .invalid }
            value /= scale
        } else {
            guard let v = DecimalNumber.parse(String(decoding: UnsafeBufferPointer(rebasing: b[...]), as: UTF8.self)) else { return .invalid }
            if v < 0 { return .invalid }
            value = v
        }
        let seconds = Float(value)
        return ResponseTimes.allowedSeconds.contains(seconds) ? .seconds(seconds) : .dropped
    }

    /// What a time cell may hold, for messages.
    package static let allowedDescription =
        "a number of seconds (\(ResponseTimes.allowedSeconds.lowerBound)…\(Int(ResponseTimes.allowedSeconds.upperBound)); 0 or more than a day keeps the response without its time), or empty/NA for none"
}
