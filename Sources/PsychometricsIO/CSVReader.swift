import Psychometrics
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A streaming RFC 4180 CSV reader over raw bytes.
///
/// Reads the file in 1 MiB chunks with `read(2)`, so memory stays bounded whatever the file size; a record may
/// span chunks. Handles quoted fields (with `""` escapes and embedded newlines), `\n`, `\r\n`, `\r\r\n` and lone `\r`
/// line ends, a UTF-8 byte-order mark, and a missing final newline. Blank lines are skipped but counted, so
/// `line` is always the 1-based physical line on which the current record starts.
///
/// A record may be at most `maxRecordBytes` long (default `defaultMaxRecordBytes`, 16 MiB): a longer one — a
/// file without line breaks, an unterminated quote — is an error naming its first line, not an ever-growing
/// buffer.
///
/// Not thread-safe: one reader per thread.
package final class CSVReader {
    /// The name used in messages (the path, or the name given for a copy such as a spooled pipe).
    package let path: String
    /// The longest record accepted, in bytes.
    package let maxRecordBytes: Int
    /// 16 MiB: a wide row of 8 million items; a long-layout row is tens of bytes.
    package static let defaultMaxRecordBytes = 16 << 20
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
        var scanner: CSVRecordScanner
        var line = 0
        var bytesConsumed = 0
    }
    private let state: UnsafeMutablePointer<State>
    private var scratch: [UInt8] = []

    private var buffer: UnsafeMutablePointer<UInt8> {
        get { state.pointee.buffer }
        set { state.pointee.buffer = newValue }
    }
    private var capacity: Int {
        get { state.pointee.capacity }
        set { state.pointee.capacity = newValue }
    }
    private var filled: Int {
        get { state.pointee.filled }
        set { state.pointee.filled = newValue }
    }
    private var position: Int {
        get { state.pointee.position }
        set { state.pointee.position = newValue }
    }
    private var atEOF: Bool {
        get { state.pointee.atEOF }
        set { state.pointee.atEOF = newValue }
    }

    /// 1-based line number on which the next record (after the current one) can start.
    package private(set) var nextLine: Int {
        get { state.pointee.nextLine }
        set { state.pointee.nextLine = newValue }
    }
    /// 1-based line number on which the current record starts.
    package private(set) var line: Int {
        get { state.pointee.line }
        set { state.pointee.line = newValue }
    }
    /// Bytes consumed so far (for progress reporting).
    package private(set) var bytesConsumed: Int {
        get { state.pointee.bytesConsumed }
        set { state.pointee.bytesConsumed = newValue }
    }
    /// Total size of the file in bytes, when known.
    package let fileSize: Int?

    /// Opens `path`; messages name `displayName` (default: the path). Fields are separated by `delimiter`.
    package init(
        path: String, displayName: String? = nil, chunkSize: Int = 1 << 20, maxRecordBytes: Int = CSVReader.defaultMaxRecordBytes,
        delimiter: UInt8 = UInt8(ascii: ",")
    ) throws {
        self.path = displayName ?? path
        self.maxRecordBytes = max(maxRecordBytes, 64)
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw InputError(file: displayName ?? path, message: "cannot open file: \(String(cString: strerror(errno)))")
        }
        var st = stat()
        if fstat(fd, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR {
                close(fd)
                throw InputError(file: displayName ?? path, message: "is a directory, expected a CSV file")
            }
            fileSize = (st.st_mode & S_IFMT) == S_IFREG ? Int(st.st_size) : nil
        } else {
            fileSize = nil
        }
        self.fd = fd
        let capacity = max(min(chunkSize, self.maxRecordBytes), 64)
        state = .allocate(capacity: 1)
        state.initialize(to: State(buffer: .allocate(capacity: capacity), capacity: capacity, scanner: CSVRecordScanner(delimiter: delimiter)))
        try fill()
        skipByteOrderMark()
    }

    /// Reads `bytes` already in memory (a bank the server read once to hash it); messages name `name`. The same
    /// grammar, line numbers and errors as reading the file they came from, the record limit included: the bytes
    /// are all buffered, so a record's length is checked as it is scanned rather than by the buffer's growth.
    package init(bytes: [UInt8], name: String, delimiter: UInt8 = UInt8(ascii: ","), maxRecordBytes: Int = CSVReader.defaultMaxRecordBytes) {
        path = name
        self.maxRecordBytes = max(maxRecordBytes, 64)
        fd = -1
        fileSize = bytes.count
        let capacity = max(bytes.count, 64)
        state = .allocate(capacity: 1)
        state.initialize(to: State(buffer: .allocate(capacity: capacity), capacity: capacity, scanner: CSVRecordScanner(delimiter: delimiter)))
        // An empty array's buffer may have no base address: nothing to copy then.
        bytes.withUnsafeBufferPointer { if let base = $0.baseAddress { buffer.update(from: base, count: $0.count) } }
        filled = bytes.count
        atEOF = true
        skipByteOrderMark()
    }

    /// Starts after a UTF-8 byte-order mark at the start of the buffer.
    private func skipByteOrderMark() {
        if filled >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { position = 3 }
    }

    deinit {
        if fd >= 0 { close(fd) }
        buffer.deallocate()
        state.pointee.scanner.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
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
            var (grown, size) = (buffer, capacity)
            guard growBuffer(&grown, capacity: &size, filled: filled, limit: maxRecordBytes) else { throw recordTooLong(line: nextLine) }
            (buffer, capacity) = (grown, size)
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
    package func nextRow() throws -> Bool {
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
        let outcome: CSVRecordScanner.Outcome
        do {
            outcome = try state.pointee.scanner.scan(buffer, from: position, to: filled, atEOF: atEOF)
        } catch {
            throw InputError(file: path, line: nextLine + error.lineOffset, column: error.column, message: error.message)
        }
        switch outcome {
        case .needMore:
            return nil
        case .blank(let next):
            guard next - position <= maxRecordBytes else { throw recordTooLong(line: nextLine) }
            bytesConsumed += next - position
            position = next
            nextLine += 1
            return .blank
        case .record(let next, let lines):
            // A file's buffer never holds more than `maxRecordBytes` (`fill` refuses to grow past it); bytes read
            // from memory are all buffered, so the limit is checked here.
            guard next - position <= maxRecordBytes else { throw recordTooLong(line: nextLine) }
            bytesConsumed += next - position
            position = next
            line = nextLine
            nextLine += lines + 1
            return .record
        }
    }

    /// The error for a record that starts on `line` and runs past `maxRecordBytes`.
    package func recordTooLong(line: Int) -> InputError {
        InputError(
            file: path, line: line,
            message: "a record longer than \(maxRecordBytes) bytes starts here (the limit); "
                + "is a line break missing, or a quote left open?")
    }

    /// Advances to the next record with `fields` fields (the header's): a record of another width adds
    /// `fieldCountError(expected:)` to `errors` and is skipped, so that one reading reports every bad row.
    /// Returns `false` at end of file.
    package func nextRow(fields: Int, collecting errors: inout ErrorCollector) throws -> Bool {
        while try nextRow() {
            if fieldCount == fields { return true }
            errors.add(fieldCountError(expected: fields))
        }
        return false
    }

    /// Number of fields in the current record.
    package var fieldCount: Int { state.pointee.scanner.fieldCount }

    /// The error for the current record when it does not have the header's `expected` fields: its file and line,
    /// "expected N fields as in the header, found M".
    package func fieldCountError(expected: Int) -> InputError {
        InputError(file: path, line: line, message: "expected \(expected) fields as in the header, found \(fieldCount)")
    }

    /// Calls `body` with the bytes of field `index` (quotes removed, `""` unescaped).
    @inline(__always)
    package func withField<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try state.pointee.scanner.withField(index, in: buffer, scratch: &scratch, body)
    }

    /// Field `index` as a String (invalid UTF-8 is repaired with U+FFFD).
    package func string(_ index: Int) -> String {
        withField(index) { String(decoding: $0, as: UTF8.self) }
    }

    /// Hands over the rest of the input as raw bytes: first what is buffered but not yet parsed, then further
    /// `read(2)`s. Returns the number of bytes written to `destination` (0 at end of file). After the first
    /// call the reader no longer parses records; the caller continues from line `nextLine`.
    package func readRemaining(into destination: UnsafeMutablePointer<UInt8>, capacity wanted: Int) throws -> Int {
        if position < filled {
            let n = min(wanted, filled - position)
            destination.update(from: buffer + position, count: n)
            position += n
            bytesConsumed += n
            return n
        }
        if atEOF { return 0 }
        while true {
            let n = read(fd, destination, wanted)
            if n < 0 {
                if errno == EINTR { continue }
                throw InputError(file: path, message: "read failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { atEOF = true }
            bytesConsumed += n
            return n
        }
    }

    /// Fills `destination` with up to `wanted` of the bytes after the current record (the buffered ones first) and
    /// returns how many; fewer only at the end of the file. A regular file's bytes are read by `workers` threads,
    /// each `pread`-ing one slice, so that copying a large file out of the page cache is not a serial step of a
    /// parallel reader; other files, and fills under 1 MiB, are read as `readRemaining` reads them.
    package func readFilling(_ destination: UnsafeMutablePointer<UInt8>, capacity wanted: Int, workers: Int) throws -> Int {
        var total = 0
        if position < filled {
            total = min(wanted, filled - position)
            destination.update(from: buffer + position, count: total)
            position += total
            bytesConsumed += total
        }
        let need = wanted - total
        let start = workers < 2 || need < 1 << 20 || fileSize == nil ? -1 : Int(lseek(fd, 0, SEEK_CUR))
        if start < 0 {
            while total < wanted {
                let n = try readRemaining(into: destination + total, capacity: wanted - total)
                if n == 0 { break }
                total += n
            }
            return total
        }
        if atEOF { return total }
        // Slice w is bytes edge[w] ..< edge[w + 1] after `start`; got[w] is how much of it the file had, −errno on failure.
        let edge = (0...workers).map { need * $0 / workers }
        var got = [Int](repeating: 0, count: workers)
        got.withUnsafeMutableBufferPointer { got in
            let box = UncheckedSendableBox((got, destination + total, fd))
            parallelFor(workers) { w in
                let (got, target, fd) = box.value
                var at = edge[w]
                while at < edge[w + 1] {
                    let n = pread(fd, target + at, edge[w + 1] - at, off_t(start + at))
                    if n < 0 {
                        if errno == EINTR { continue }
                        got[w] = -Int(errno)
                        return
                    }
                    if n == 0 { break }
                    at += n
                }
                got[w] = at - edge[w]
            }
        }
        // The bytes run up to the first slice that came back short (the end of the file).
        var taken = 0
        for w in 0..<workers {
            if got[w] < 0 { throw InputError(file: path, message: "read failed: \(String(cString: strerror(Int32(-got[w]))))") }
            taken += got[w]
            if got[w] < edge[w + 1] - edge[w] { atEOF = true; break }
        }
        lseek(fd, off_t(start + taken), SEEK_SET)
        bytesConsumed += taken
        return total + taken
    }

    /// All fields of the current record as Strings.
    package func strings() -> [String] { (0..<fieldCount).map(string) }

    /// All fields of the current record (a header) as Strings, surrounding spaces trimmed; a field that is not
    /// valid UTF-8 is an error naming its line and column (names are ids: see `TextFidelity`).
    package func headerFields() throws -> [String] {
        try (0..<fieldCount).map { c in
            try withField(c) { raw in
                let bytes = raw.trimmingSpaces()
                guard let text = TextFidelity.validString(bytes) else {
                    throw InputError(file: path, line: line, column: c + 1, message: "header \(TextFidelity.invalidUTF8("column name", bytes))")
                }
                return text
            }
        }
    }
}

/// Doubles `buffer` (keeping its first `filled` bytes), to at most `limit` bytes; false, changing nothing, when
/// it already holds `limit`. (A record that does not fit is read again from its start into the bigger buffer.)
func growBuffer(_ buffer: inout UnsafeMutablePointer<UInt8>, capacity: inout Int, filled: Int, limit: Int) -> Bool {
    guard capacity < limit else { return false }
    let size = min(capacity * 2, limit)
    let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
    bigger.update(from: buffer, count: filled)
    buffer.deallocate()
    buffer = bigger
    capacity = size
    return true
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// The bytes with leading and trailing ASCII spaces and tabs removed.
    @inline(__always) func trimmingSpaces() -> UnsafeBufferPointer<UInt8> {
        // Most fields have nothing to trim: two byte tests, no slice.
        if count == 0 || (self[0] != 0x20 && self[0] != 0x09 && self[count - 1] != 0x20 && self[count - 1] != 0x09) { return self }
        var lo = 0, hi = count
        while lo < hi, self[lo] == 0x20 || self[lo] == 0x09 { lo += 1 }
        while hi > lo, self[hi - 1] == 0x20 || self[hi - 1] == 0x09 { hi -= 1 }
        return UnsafeBufferPointer(rebasing: self[lo..<hi])
    }
}
