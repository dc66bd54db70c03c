#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming RFC 4180 CSV reader over raw bytes.
///
/// Reads the file in 1 MiB chunks with `read(2)`, so memory stays bounded whatever the file size; a record may
/// span chunks. Handles quoted fields (with `""` escapes and embedded newlines), `\n`, `\r\n` and lone `\r`
/// line ends, a UTF-8 byte-order mark, and a missing final newline. Blank lines are skipped but counted, so
/// `line` is always the 1-based physical line on which the current record starts.
///
/// Not thread-safe: one reader per thread.
public final class CSVReader {
    public let path: String
    private let fd: Int32
    /// Mutable reader state lives behind a pointer: stored properties of a class pay a dynamic exclusivity
    /// check on every access, which on this per-byte, per-field path cost more than the parsing itself.
    private struct State {
        var buffer: UnsafeMutablePointer<UInt8>
        var capacity: Int
        var filled = 0
        var position = 0
        var atEOF = false
        var nextLine = 1
        /// Field boundaries of the current record as byte offsets into the buffer: field i spans
        /// `bounds[2i] ..< bounds[2i + 1]`; `quoted[i]` says whether it was quoted (and may hold `""` escapes).
        var bounds: UnsafeMutablePointer<Int>
        var quoted: UnsafeMutablePointer<Bool>
        var fieldCapacity: Int
        var fields = 0
        var line = 0
        var bytesConsumed = 0
    }
    private let state: UnsafeMutablePointer<State>
    private var scratch: [UInt8] = []

    private var buffer: UnsafeMutablePointer<UInt8> { get { state.pointee.buffer } set { state.pointee.buffer = newValue } }
    private var capacity: Int { get { state.pointee.capacity } set { state.pointee.capacity = newValue } }
    private var filled: Int { get { state.pointee.filled } set { state.pointee.filled = newValue } }
    private var position: Int { get { state.pointee.position } set { state.pointee.position = newValue } }
    private var atEOF: Bool { get { state.pointee.atEOF } set { state.pointee.atEOF = newValue } }
    private var nextLine: Int { get { state.pointee.nextLine } set { state.pointee.nextLine = newValue } }
    private var bounds: UnsafeMutablePointer<Int> { get { state.pointee.bounds } set { state.pointee.bounds = newValue } }
    private var quoted: UnsafeMutablePointer<Bool> { get { state.pointee.quoted } set { state.pointee.quoted = newValue } }
    private var fieldCapacity: Int { get { state.pointee.fieldCapacity } set { state.pointee.fieldCapacity = newValue } }
    private var fields: Int { get { state.pointee.fields } set { state.pointee.fields = newValue } }

    /// 1-based line number on which the current record starts.
    public private(set) var line: Int { get { state.pointee.line } set { state.pointee.line = newValue } }
    /// Bytes consumed so far (for progress reporting).
    public private(set) var bytesConsumed: Int { get { state.pointee.bytesConsumed } set { state.pointee.bytesConsumed = newValue } }
    /// Total size of the file in bytes, when known.
    public let fileSize: Int?

    public init(path: String, chunkSize: Int = 1 << 20) throws {
        self.path = path
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw InputError(file: path, message: "cannot open file: \(String(cString: strerror(errno)))")
        }
        var st = stat()
        if fstat(fd, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR {
                close(fd)
                throw InputError(file: path, message: "is a directory, expected a CSV file")
            }
            fileSize = (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : nil
        } else {
            fileSize = nil
        }
        self.fd = fd
        let capacity = max(chunkSize, 4096)
        state = .allocate(capacity: 1)
        state.initialize(to: State(buffer: .allocate(capacity: capacity), capacity: capacity,
                                   bounds: .allocate(capacity: 128), quoted: .allocate(capacity: 64), fieldCapacity: 64))
        try fill()
        // Skip a UTF-8 byte-order mark.
        if filled >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { position = 3 }
    }

    deinit {
        close(fd)
        buffer.deallocate()
        bounds.deallocate()
        quoted.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Grows the field-bound buffers (rare: records wider than any before).
    private func growFields() {
        let newCapacity = fieldCapacity * 2
            let newBounds = UnsafeMutablePointer<Int>.allocate(capacity: 2 * newCapacity)
            newBounds.update(from: bounds, count: 2 * fields)
            bounds.deallocate()
            bounds = newBounds
            let newQuoted = UnsafeMutablePointer<Bool>.allocate(capacity: newCapacity)
            newQuoted.update(from: quoted, count: fields)
            quoted.deallocate()
            quoted = newQuoted
        fieldCapacity = newCapacity
    }

    /// Reads more bytes after compacting the unread tail to the front; grows the buffer when a single record
    /// fills it.
    private func fill() throws {
        if position > 0 {
            let tail = filled - position
            if tail > 0 { buffer.update(from: buffer + position, count: tail) }
            filled = tail
            position = 0
        }
        if filled == capacity {
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
            bigger.update(from: buffer, count: filled)
            buffer.deallocate()
            buffer = bigger
            capacity *= 2
        }
        while filled < capacity {
            let n = read(fd, buffer + filled, capacity - filled)
            if n < 0 {
                if errno == EINTR { continue }
                throw InputError(file: path, line: nextLine, message: "read failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { atEOF = true; break }
            filled += n
            if filled - position >= 1 << 16 { break }
        }
    }

    /// Advances to the next non-blank record. Returns `false` at end of file.
    /// Throws an `InputError` for a malformed record (text after a closing quote, unterminated quoted field).
    /// A quote inside an unquoted field is kept as data, as most CSV writers and readers do.
    public func nextRow() throws -> Bool {
        while true {
            switch try parseRecord() {
            case .record: return true
            case .blank: continue
            case .end: return false
            }
        }
    }

    private enum ParseOutcome { case record, blank, end }

    private func parseRecord() throws -> ParseOutcome {
        while true {
            if position >= filled {
                if atEOF { return .end }
                try fill()
                continue
            }
            if let outcome = try scanRecord() { return outcome }
            // The record runs past the buffered bytes: read more and scan it again from its start.
            if atEOF {
                throw InputError(file: path, line: nextLine, message: "unterminated quoted field at end of file")
            }
            try fill()
        }
    }

    /// Scans one record starting at `position`. Returns nil when more input is needed (nothing committed).
    private func scanRecord() throws -> ParseOutcome? {
        let buf = buffer
        let end = filled
        var p = position
        var lines = 0
        // Field bookkeeping in locals (class properties cost an exclusivity check per access).
        var nf = 0
        var bnd = bounds, qtd = quoted, cap = fieldCapacity
        defer { fields = nf }
        @inline(__always) func appendField(_ start: Int, _ stop: Int, quoted isQuoted: Bool) {
            if nf == cap {
                fields = nf
                growFields()
                bnd = bounds; qtd = quoted; cap = fieldCapacity
            }
            bnd[2 * nf] = start
            bnd[2 * nf + 1] = stop
            qtd[nf] = isQuoted
            nf += 1
        }

        // A blank line.
        if buf[p] == UInt8(ascii: "\n") || buf[p] == UInt8(ascii: "\r") {
            if buf[p] == UInt8(ascii: "\r") {
                if p + 1 >= end && !atEOF { return nil }
                p += (p + 1 < end && buf[p + 1] == UInt8(ascii: "\n")) ? 2 : 1
            } else {
                p += 1
            }
            bytesConsumed += p - position
            position = p
            nextLine += 1
            return .blank
        }

        while true {
            // One field starting at p.
            if p < end && buf[p] == UInt8(ascii: "\"") {
                let fieldStart = p + 1
                var q = fieldStart
                while true {
                    if q >= end { return nil }
                    let ch = buf[q]
                    if ch == UInt8(ascii: "\"") {
                        if q + 1 >= end { if atEOF { break } else { return nil } }
                        if buf[q + 1] == UInt8(ascii: "\"") { q += 2; continue }
                        break
                    }
                    if ch == UInt8(ascii: "\n") { lines += 1 }
                    if ch == UInt8(ascii: "\r") {
                        // A lone CR is a line break too; CRLF counts once (at its LF).
                        if q + 1 >= end && !atEOF { return nil }
                        if q + 1 >= end || buf[q + 1] != UInt8(ascii: "\n") { lines += 1 }
                    }
                    q += 1
                }
                appendField(fieldStart, q, quoted: true)
                p = q + 1
                if p < end {
                    let ch = buf[p]
                    if ch != UInt8(ascii: ",") && ch != UInt8(ascii: "\n") && ch != UInt8(ascii: "\r") {
                        let column = nf
                        throw InputError(file: path, line: nextLine + lines, column: column,
                                         message: "unexpected character '\(Character(Unicode.Scalar(ch)))' after a closing quote; a quoted field must end at a comma or line end")
                    }
                } else if !atEOF {
                    return nil
                }
            } else {
                let fieldStart = p
                while p < end {
                    let ch = buf[p]
                    if ch == UInt8(ascii: ",") || ch == UInt8(ascii: "\n") || ch == UInt8(ascii: "\r") { break }
                    p += 1
                }
                if p >= end && !atEOF { return nil }
                appendField(fieldStart, p, quoted: false)
            }
            // Separator or record end.
            if p >= end {
                // End of file without a final newline.
                bytesConsumed += p - position
                position = p
                line = nextLine
                nextLine += lines + 1
                return .record
            }
            let ch = buf[p]
            if ch == UInt8(ascii: ",") {
                p += 1
                if p >= end {
                    if !atEOF { return nil }
                    appendField(p, p, quoted: false)
                    bytesConsumed += p - position
                    position = p
                    line = nextLine
                    nextLine += lines + 1
                    return .record
                }
                continue
            }
            if ch == UInt8(ascii: "\r") {
                if p + 1 >= end && !atEOF { return nil }
                p += (p + 1 < end && buf[p + 1] == UInt8(ascii: "\n")) ? 2 : 1
            } else {
                p += 1
            }
            bytesConsumed += p - position
            position = p
            line = nextLine
            nextLine += lines + 1
            return .record
        }
    }

    /// Number of fields in the current record.
    public var fieldCount: Int { fields }

    /// Calls `body` with the bytes of field `index` (quotes removed, `""` unescaped).
    @inline(__always)
    public func withField<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        precondition(index >= 0 && index < fields, "field \(index) out of range (record has \(fields))")
        let s = bounds[2 * index], e = bounds[2 * index + 1]
        if !quoted[index] {
            return try body(UnsafeBufferPointer(start: buffer + s, count: e - s))
        }
        scratch.removeAll(keepingCapacity: true)
        var i = s
        while i < e {
            let ch = buffer[i]
            scratch.append(ch)
            i += (ch == UInt8(ascii: "\"") && i + 1 < e && buffer[i + 1] == UInt8(ascii: "\"")) ? 2 : 1
        }
        return try scratch.withUnsafeBufferPointer { try body($0) }
    }

    /// Field `index` as a String (invalid UTF-8 is repaired with U+FFFD).
    public func string(_ index: Int) -> String {
        withField(index) { String(decoding: $0, as: UTF8.self) }
    }

    /// All fields of the current record as Strings.
    public func strings() -> [String] { (0..<fieldCount).map(string) }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// The bytes with leading and trailing ASCII spaces and tabs removed.
    @inline(__always) func trimmingSpaces() -> UnsafeBufferPointer<UInt8> {
        var lo = 0, hi = count
        while lo < hi, self[lo] == 0x20 || self[lo] == 0x09 { lo += 1 }
        while hi > lo, self[hi - 1] == 0x20 || self[hi - 1] == 0x09 { hi -= 1 }
        return UnsafeBufferPointer(rebasing: self[lo..<hi])
    }
}
