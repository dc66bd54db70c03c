import Psychometrics
/// The RFC 4180 record grammar shared by `CSVReader` (one stream, one thread) and the parallel chunk parser of
/// `BatchScorer` (many byte ranges of one file at once): both call `scan`, so both read every file the same way.
///
/// Rules: fields are separated by `,` (or the `delimiter` given: `;`, tab, `|`); a record ends at a line break:
/// `\n`; up to `crRunLimit` (4) `\r` followed by `\n` — `\r\n`, and `\r\r\n` (a CRLF file whose line ends were
/// converted once more, one line in `wc -l`); or a lone `\r` (classic Mac, where `\r\r` is a blank line; a longer
/// run of `\r` before an `\n` is that many lone ones first, so that looking ahead stays bounded and 100 KB of
/// `\r` reads in linear time); a field that starts with
/// `"` is quoted (it may hold `,`, line breaks and `""` escapes, and must end at a `,` or the record end); a
/// quote inside an unquoted field is data. A line with nothing on it is blank. Line breaks inside quoted fields
/// count as lines, so callers can give 1-based physical line numbers.
///
/// Field boundaries are kept in manually managed buffers (no exclusivity checks or reference counting on the
/// per-byte path). Not thread-safe: one scanner per thread; `deallocate()` once.
struct CSVRecordScanner {
    /// Field i spans `bounds[2i] ..< bounds[2i + 1]` (byte offsets into the scanned buffer); `quoted[i]` says
    /// whether it was quoted (and may hold `""` escapes).
    private(set) var bounds: UnsafeMutablePointer<Int>
    private(set) var quoted: UnsafeMutablePointer<Bool>
    private var capacity: Int
    /// Fields of the last record scanned.
    private(set) var fieldCount = 0

    enum Outcome: Equatable {
        /// A record ends at `next`; `lines` line breaks were inside its quoted fields.
        case record(next: Int, lines: Int)
        /// A blank line ends at `next`.
        case blank(next: Int)
        /// The record runs past `end` (and `end` is not the end of the input): nothing was consumed.
        case needMore
    }

    /// A malformed record: `lineOffset` line breaks after the line on which the record starts, at 1-based
    /// `column`.
    struct SyntaxError: Error {
        var lineOffset: Int
        var column: Int
        var message: String
    }

    /// The field separator: `,` unless a file says otherwise (`ResponseFileOptions.delimiter`).
    let delimiter: UInt8

    init(delimiter: UInt8 = UInt8(ascii: ",")) {
        self.delimiter = delimiter
        capacity = 64
        bounds = .allocate(capacity: 2 * capacity)
        quoted = .allocate(capacity: capacity)
    }

    func deallocate() {
        bounds.deallocate()
        quoted.deallocate()
    }

    /// Records field `count` (growing the buffers when full) and counts it.
    @inline(__always)
    private mutating func setField(_ count: inout Int, _ start: Int, _ end: Int, quoted isQuoted: Bool) {
        if count == capacity {
            fieldCount = count
            grow()
        }
        bounds[2 * count] = start
        bounds[2 * count + 1] = end
        quoted[count] = isQuoted
        count += 1
    }

    private mutating func grow() {
        let newCapacity = capacity * 2
        let newBounds = UnsafeMutablePointer<Int>.allocate(capacity: 2 * newCapacity)
        newBounds.update(from: bounds, count: 2 * fieldCount)
        bounds.deallocate()
        bounds = newBounds
        let newQuoted = UnsafeMutablePointer<Bool>.allocate(capacity: newCapacity)
        newQuoted.update(from: quoted, count: fieldCount)
        quoted.deallocate()
        quoted = newQuoted
        capacity = newCapacity
    }

    /// Scans one record of `buf[start ..< end]`, `start < end`. `atEOF` says whether `end` is the end of the
    /// input (then a record may end without a line break); otherwise a record that reaches `end` — or a `\r`
    /// just before it, which may be the first half of `\r\n` — gives `.needMore`.
    @inline(__always)
    mutating func scan(_ buf: UnsafePointer<UInt8>, from start: Int, to end: Int, atEOF: Bool) throws(SyntaxError) -> Outcome {
        let newline = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r"), comma = delimiter, quote = UInt8(ascii: "\"")
        var p = start
        var lines = 0
        var nf = 0
        defer { fieldCount = nf }

        // A blank line.
        let first = buf[p]
        if first == newline || first == cr {
            guard let next = Self.lineBreakEnd(buf, p, end, atEOF: atEOF) else { return .needMore }
            return .blank(next: next)
        }

        while true {
            // One field starting at p.
            if p < end && buf[p] == quote {
                let fieldStart = p + 1
                var q = fieldStart
                while true {
                    if q >= end { return .needMore }
                    let ch = buf[q]
                    if ch == quote {
                        if q + 1 >= end { if atEOF { break } else { return .needMore } }
                        if buf[q + 1] == quote { q += 2; continue }
                        break
                    }
                    if ch == newline { lines += 1 }
                    if ch == cr {
                        // A lone CR is a line break too; up to `crRunLimit` CRs ending in LF count once (at the LF).
                        guard let breakEnd = Self.lineBreakEnd(buf, q, end, atEOF: atEOF) else { return .needMore }
                        if breakEnd == q + 1 { lines += 1 }
                    }
                    q += 1
                }
                setField(&nf, fieldStart, q, quoted: true)
                p = q + 1
                if p < end {
                    let ch = buf[p]
                    if ch != comma && ch != newline && ch != cr {
                        throw SyntaxError(
                            lineOffset: lines, column: nf,
                            message:
                                "unexpected character '\(Character(Unicode.Scalar(ch)))' after a closing quote; a quoted field must end at \(delimiter == UInt8(ascii: ",") ? "a comma" : "the delimiter") or line end"
                        )
                    }
                } else if !atEOF {
                    return .needMore
                }
            } else {
                let fieldStart = p
                while p < end {
                    let ch = buf[p]
                    if ch == comma || ch == newline || ch == cr { break }
                    p += 1
                }
                if p >= end && !atEOF { return .needMore }
                setField(&nf, fieldStart, p, quoted: false)
            }
            // Separator or record end.
            if p >= end { return .record(next: p, lines: lines) } // end of input without a final newline
            let ch = buf[p]
            if ch == comma {
                p += 1
                if p >= end {
                    if !atEOF { return .needMore }
                    setField(&nf, p, p, quoted: false)
                    return .record(next: p, lines: lines)
                }
                continue
            }
            guard let next = Self.lineBreakEnd(buf, p, end, atEOF: atEOF) else { return .needMore }
            return .record(next: next, lines: lines)
        }
    }

    /// The most `\r` before an `\n` that make one line break with it (`\r\n`, `\r\r\n`, …).
    static let crRunLimit = 4

    /// The end of the line break at `p` (`buf[p]` is `\r` or `\n`): after the `\n`; after up to `crRunLimit` `\r`
    /// and the `\n` that ends them; else after the one `\r` (the next is a line break of its own). nil when the
    /// look-ahead reaches `end` before the end of the input (an `\n` may follow). Reads at most `crRunLimit` + 1
    /// bytes.
    @inline(__always)
    static func lineBreakEnd(_ buf: UnsafePointer<UInt8>, _ p: Int, _ end: Int, atEOF: Bool) -> Int? {
        let newline = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        if buf[p] == newline { return p + 1 }
        var q = p
        while q < end && q - p < crRunLimit && buf[q] == cr { q += 1 }
        if q >= end { return atEOF ? p + 1 : nil }
        return buf[q] == newline ? q + 1 : p + 1
    }

    /// The common case of `scan`, eight bytes at a time: a record of unquoted fields ending in `\n` or `\r\n`,
    /// wholly before `end`. Returns where the next record starts (the record spans one line), or nil — having
    /// consumed nothing — for anything else (a blank line, a quote anywhere, a lone `\r`, a record reaching
    /// within 8 bytes of `end`), which `scan` then reads by the full rules.
    ///
    /// Bytes below 0x2D (`,` `"` `\r` `\n`, also space, `!`…`+` and controls) are found with one SWAR test per
    /// word: for w & 0x7F… + 0x53… the high bit of a byte is set exactly when the byte's low 7 bits are ≥ 0x2D,
    /// so ~(that | w) & 0x80… flags the bytes < 0x2D (no carries cross bytes); each flagged byte is checked.
    @inline(__always)
    /// A delimiter at or above 0x2D (`;`, `|`) is not among the bytes the word test flags: such files always take
    /// the full rules.
    mutating func scanPlain(_ buf: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int? {
        guard delimiter < 0x2D else { return nil }
        let newline = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r"), comma = delimiter, quote = UInt8(ascii: "\"")
        if buf[start] == newline || buf[start] == cr { return nil }
        let raw = UnsafeRawPointer(buf)
        var q = start, fieldStart = start, nf = 0
        while q + 8 <= end {
            let w = raw.loadUnaligned(fromByteOffset: q, as: UInt64.self)
            var m = ~(((w & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x5353_5353_5353_5353) | w) & 0x8080_8080_8080_8080
            while m != 0 {
                let pos = q + m.trailingZeroBitCount >> 3
                let ch = buf[pos]
                if ch == comma || ch == newline || ch == cr {
                    var next = pos + 1
                    if ch == cr {
                        guard pos + 1 < end, buf[pos + 1] == newline else { return nil }
                        next = pos + 2
                    }
                    setField(&nf, fieldStart, pos, quoted: false)
                    if ch != comma {
                        fieldCount = nf
                        return next
                    }
                    fieldStart = next
                } else if ch == quote {
                    return nil
                }
                m &= m &- 1
            }
            q += 8
        }
        return nil
    }

    /// Calls `body` with the bytes of field `index` of the last record of `buf` (quotes removed, `""`
    /// unescaped into `scratch`).
    @inline(__always)
    func withField<R>(
        _ index: Int, in buf: UnsafePointer<UInt8>, scratch: inout [UInt8],
        _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R {
        precondition(index >= 0 && index < fieldCount, "field \(index) out of range (record has \(fieldCount))")
        let s = bounds[2 * index], e = bounds[2 * index + 1]
        if !quoted[index] {
            return try body(UnsafeBufferPointer(start: buf + s, count: e - s))
        }
        scratch.removeAll(keepingCapacity: true)
        var i = s
        while i < e {
            let ch = buf[i]
            scratch.append(ch)
            i += (ch == UInt8(ascii: "\"") && i + 1 < e && buf[i + 1] == UInt8(ascii: "\"")) ? 2 : 1
        }
        return try scratch.withUnsafeBufferPointer { try body($0) }
    }
}
