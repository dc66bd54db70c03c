import Foundation
import Psychometrics

// The parallel path of `BatchScorer` for long files (one row per response) whose sessions are contiguous.
//
// The file is read in rounds of `parallelChunkBytes × chunks` bytes. Each round is cut into chunks at line
// breaks; the chunks' first line numbers come from counting line breaks (a parallel pass); then every worker
// parses its chunk with the same `CSVRecordScanner` as `CSVReader` and scores the sessions that lie wholly
// inside it. A chunk's first session may continue the previous chunk's last one, and its last may continue
// into the next chunk: those two are handed back unscored and joined in order on a background thread.
//
// A cut that falls inside a quoted field (a line break that is data) is detected, not assumed away: the chunk
// before it then does not end exactly at the cut, so that chunk's work is kept up to its last whole record and
// the round's remaining bytes are parsed again in the next round. Results are therefore byte-identical to the
// serial path (`readFile`), which stays in use for wide files and for the regrouping pass.

extension BatchScorer {
    /// Column positions of a long file.
    struct LongColumns {
        let session: Int, item: Int, response: Int
        /// Fields every row has (as the header).
        let headerCount: Int
        let sessionName: String, responseName: String
    }

    /// A session's rows as parsed from one chunk.
    struct LongRun {
        var id: [UInt8] = []
        /// A row without a session id: rejected on its own, never joined to a neighbour.
        var orphan = false
        var file = 0
        /// Line of the session's first row.
        var line = 0
        var items: [Int] = []
        var responses: [UInt8] = []
        /// Line of each response (to name the first line of an item answered twice across a chunk border).
        var itemLines: [Int] = []
        var error: RowError?
    }

    /// One chunk's input range and everything its worker produced.
    final class LongChunk {
        let start: Int, end: Int, atEOF: Bool
        var firstLine = 0
        var lineBreaks = 0
        /// End of the last whole record parsed, and the line after it.
        var stop = 0
        var nextLine = 0
        var syntaxError: InputError?
        /// The first session; `headOpen` when it was still open at the chunk's end (the chunk's only session).
        var head: LongRun?
        var headOpen = false
        /// The last session, open at the chunk's end (nil when that is the head, or when the chunk ended on a
        /// row without a session id).
        var tail: LongRun?
        /// Score rows, rejects, id hashes and counts of the sessions between head and tail.
        var out: [UInt8] = []
        var rejects: [RejectRecord] = []
        var hashes: [Int] = []
        var flags = [Int](repeating: 0, count: ScoreFlag.allCases.count)
        var inner = 0
        var rows = 0
        var blanks = 0

        init(start: Int, end: Int, atEOF: Bool) {
            self.start = start
            self.end = end
            self.atEOF = atEOF
        }
    }

    /// Counts line breaks as `CSVReader` numbers lines: each `\n`, and each `\r` not followed by `\n`. (Line
    /// breaks inside quoted fields count too, so the count does not depend on quoting.) The caller never ends
    /// a range between `\r` and `\n`.
    static func countLineBreaks(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        // Eight bytes at a time: for x = word XOR the byte repeated, the high bit of each byte of
        // ~(((x & 0x7F…) + 0x7F…) | x | 0x7F…) is set exactly where x has a zero byte (no carries across bytes).
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let lf: UInt64 = 0x0A0A_0A0A_0A0A_0A0A, cr: UInt64 = 0x0D0D_0D0D_0D0D_0D0D
        @inline(__always) func zeroBytes(_ x: UInt64) -> UInt64 { ~(((x & low7) &+ low7) | x | low7) }
        var count = 0, i = 0
        var crSeen: UInt64 = 0
        let raw = UnsafeRawPointer(p)
        while i + 32 <= n {
            let w0 = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self), w1 = raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
            let w2 = raw.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self), w3 = raw.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)
            count += (zeroBytes(w0 ^ lf).nonzeroBitCount + zeroBytes(w1 ^ lf).nonzeroBitCount)
                + (zeroBytes(w2 ^ lf).nonzeroBitCount + zeroBytes(w3 ^ lf).nonzeroBitCount)
            crSeen |= zeroBytes(w0 ^ cr) | zeroBytes(w1 ^ cr) | zeroBytes(w2 ^ cr) | zeroBytes(w3 ^ cr)
            i += 32
        }
        while i < n {
            if p[i] == 10 { count += 1 } else if p[i] == 13 { crSeen = 1 }
            i += 1
        }
        if crSeen != 0 {
            for k in 0..<n where p[k] == 13 && (k + 1 >= n || p[k + 1] != 10) { count += 1 }
        }
        return count
    }

    /// Parses `chunk` of `buf` and scores its inner sessions. Runs on a worker thread; touches only `chunk` and
    /// `stamps`.
    func parseLongChunk(_ chunk: LongChunk, _ buf: UnsafePointer<UInt8>, columns: LongColumns, fileIndex: Int, path: String,
                        stamps: Stamps, labels: OutputLabels) {
        var parser = LongChunkParser(owner: self, columns: columns, fileIndex: fileIndex, stamps: stamps, labels: labels,
                                     expectedRows: (chunk.end - chunk.start) / 12)
        parser.parse(chunk, buf, path: path)
        parser.score(into: chunk)
        parser.deallocate()
    }

    /// The worker state of `parseLongChunk`: a struct with mutating methods (no captured variables, so no
    /// dynamic exclusivity checks on the per-row path) and raw buffers.
    ///
    /// Two phases: the whole chunk is parsed into a compact list of sessions first, then they are scored. (Scoring
    /// each session as soon as it closes let the EAP tables, 1.5 MB for 1,500 items, evict the item-id table
    /// and duplicate stamps from the core's cache between rows.)
    struct LongChunkParser {
        let owner: BatchScorer
        let columns: LongColumns
        let fileIndex: Int
        let stamps: Stamps
        let labels: OutputLabels
        // The open session: id, first line, first error, and its responses at items[curStart ..< total].
        var hasCur = false
        var curID: [UInt8] = []
        /// `ByteKeyTable.word` of the open session's id when it has at most 8 bytes (the usual case): the
        /// same-session test of each row is then one length and one word compare.
        var curWord: UInt64 = 0
        var curCount = -1
        var curOrphan = false
        var curLine = 0
        var curError: RowError?
        var curStart = 0
        // Responses of the chunk's closed inner sessions and the open one.
        var total = 0, capacity: Int
        var items: UnsafeMutablePointer<Int>
        var responses: UnsafeMutablePointer<UInt8>
        /// Line of each response of the open session (index − curStart).
        var lines = UnsafeMutablePointer<Int>.allocate(capacity: 64)
        var lineCapacity = 64
        var ordinal: Int
        var runs = 0
        var head: LongRun?
        /// Closed inner sessions, in order, waiting to be scored.
        struct Pending {
            var idStart: Int, idEnd: Int
            var line: Int
            var itemStart: Int, itemEnd: Int
            /// Index into `errors`, or −1.
            var error: Int
        }
        var pending: [Pending] = []
        var idBytes: [UInt8] = []
        var errors: [RowError] = []
        var hashes: [Int] = []

        init(owner: BatchScorer, columns: LongColumns, fileIndex: Int, stamps: Stamps, labels: OutputLabels, expectedRows: Int) {
            self.owner = owner
            self.columns = columns
            self.fileIndex = fileIndex
            self.stamps = stamps
            self.labels = labels
            ordinal = stamps.lastOrdinal
            // The previous round's buffers when big enough (fresh pages cost page faults).
            if let i = stamps.items, let r = stamps.responses, stamps.bufferCapacity >= expectedRows {
                items = i; responses = r; capacity = stamps.bufferCapacity
            } else {
                stamps.items?.deallocate()
                stamps.responses?.deallocate()
                capacity = max(expectedRows, 64)
                items = .allocate(capacity: capacity)
                responses = .allocate(capacity: capacity)
            }
            stamps.items = nil
            stamps.responses = nil
        }

        /// Hands the (possibly grown) response buffers back to `stamps` for the next round.
        func deallocate() {
            stamps.items = items
            stamps.responses = responses
            stamps.bufferCapacity = capacity
            lines.deallocate()
        }

        /// The open session as a `LongRun` (for joining across chunk borders).
        func run() -> LongRun {
            let n = total - curStart
            return LongRun(id: curID, orphan: curOrphan, file: fileIndex, line: curLine,
                           items: Array(UnsafeBufferPointer(start: items + curStart, count: n)),
                           responses: Array(UnsafeBufferPointer(start: responses + curStart, count: n)),
                           itemLines: Array(UnsafeBufferPointer(start: lines, count: n)), error: curError)
        }

        /// Ends the open session: the chunk's first is kept whole for joining; later ones wait to be scored.
        mutating func close() {
            guard hasCur else { return }
            hasCur = false
            runs += 1
            if runs == 1 {
                head = run()
                total = curStart
                return
            }
            if !curOrphan { hashes.append(curID.withUnsafeBufferPointer { ByteKeyTable.hash($0) }) }
            let idStart = idBytes.count
            idBytes.append(contentsOf: curID)
            var error = -1
            if let e = curError { error = errors.count; errors.append(e) }
            pending.append(Pending(idStart: idStart, idEnd: idBytes.count, line: curLine, itemStart: curStart, itemEnd: total, error: error))
        }

        /// Scores the pending sessions into the chunk's output.
        func score(into chunk: LongChunk) {
            var out = stamps.out ?? ByteBuffer(capacity: pending.count * 100)
            out.removeAll()
            var rejects: [RejectRecord] = []
            var flags = [Int](repeating: 0, count: ScoreFlag.allCases.count)
            idBytes.withUnsafeBufferPointer { ids in
                for s in pending {
                    let id = UnsafeBufferPointer(rebasing: ids[s.idStart..<s.idEnd])
                    owner.emit(id: TextFidelity.validString(id) ?? TextFidelity.display(id),
                               file: fileIndex, line: s.line, error: s.error >= 0 ? errors[s.error] : nil,
                               UnsafeBufferPointer(start: items + s.itemStart, count: s.itemEnd - s.itemStart),
                               UnsafeBufferPointer(start: responses + s.itemStart, count: s.itemEnd - s.itemStart), labels,
                               out: &out, rejects: &rejects, flags: &flags)
                }
            }
            chunk.out = out.array
            stamps.out = out
            chunk.rejects = rejects
            chunk.flags = flags
            chunk.inner = pending.count
            chunk.hashes = hashes
        }

        mutating func start(_ id: UnsafeBufferPointer<UInt8>, line: Int, orphan: Bool = false) {
            ordinal += 1
            curID.removeAll(keepingCapacity: true)
            curID.append(contentsOf: id)
            curCount = id.count
            curWord = id.count <= 8 ? ByteKeyTable.word(id) : 0
            curOrphan = orphan
            curLine = line
            curError = orphan || TextFidelity.validString(id) != nil ? nil
                : (TextFidelity.invalidUTF8("session id", id), fileIndex, line, columns.session + 1)
            curStart = total
            hasCur = true
        }

        @inline(__always)
        mutating func append(_ item: Int, _ response: UInt8, line: Int) {
            if total == capacity {
                let bigger = capacity * 2
                let i = UnsafeMutablePointer<Int>.allocate(capacity: bigger), r = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
                i.update(from: items, count: total); r.update(from: responses, count: total)
                items.deallocate(); responses.deallocate()
                items = i; responses = r
                capacity = bigger
            }
            let k = total - curStart
            if k == lineCapacity {
                let l = UnsafeMutablePointer<Int>.allocate(capacity: 2 * lineCapacity)
                l.update(from: lines, count: k)
                lines.deallocate()
                lines = l
                lineCapacity *= 2
            }
            items[total] = item
            responses[total] = response
            lines[k] = line
            total += 1
        }

        mutating func fail(_ reason: String, line: Int, column: Int?) {
            if curError == nil { curError = (reason, fileIndex, line, column) }
        }

        mutating func orphan(line: Int, column: Int, reason: String) {
            close()
            start(UnsafeBufferPointer(start: nil, count: 0), line: line, orphan: true)
            curError = (reason, fileIndex, line, column)
            close()
        }

        /// Whether `id` continues the open session (else it closes it and opens a new one); nil for an empty id.
        @inline(__always)
        mutating func enter(_ raw: UnsafeBufferPointer<UInt8>, line: Int) -> Bool? {
            let id = raw.trimmingSpaces()
            if id.isEmpty { return nil }
            if hasCur && !curOrphan && id.count == curCount {
                if id.count <= 8 {
                    if ByteKeyTable.word(id) == curWord { return true }
                } else if curID.withUnsafeBufferPointer({ bytesEqual($0.baseAddress!, id.baseAddress!, id.count) }) {
                    return true
                }
            }
            close()
            start(id, line: line)
            return false
        }

        /// The common row, handled without the general field access: a plain record (as `scanPlain` found it,
        /// no quotes) with a non-empty session id, a 0/1 response and an item of the bank. Returns false — with
        /// nothing changed — for any other row, which the general path then reads (and reports, if it is bad).
        @inline(__always)
        mutating func plainRow(_ buf: UnsafePointer<UInt8>, _ fields: borrowing CSVRecordScanner, line rowLine: Int, table: ByteKeyTable) -> Bool {
            guard fields.fieldCount == columns.headerCount else { return false }
            let bounds = fields.bounds
            let sc = 2 * columns.session, rc = 2 * columns.response, ic = 2 * columns.item
            let id = UnsafeBufferPointer(start: buf + bounds[sc], count: bounds[sc + 1] - bounds[sc]).trimmingSpaces()
            let response = UnsafeBufferPointer(start: buf + bounds[rc], count: bounds[rc + 1] - bounds[rc]).trimmingSpaces()
            guard !id.isEmpty, response.count == 1, response[0] == 48 || response[0] == 49,
                  let j = table.index(of: UnsafeBufferPointer(start: buf + bounds[ic], count: bounds[ic + 1] - bounds[ic]).trimmingSpaces())
            else { return false }
            _ = enter(id, line: rowLine)
            answer(j, response[0] &- 48, line: rowLine)
            return true
        }

        /// A response of the open session to bank item `j`: kept, or the session's error when the item was
        /// answered before in it.
        @inline(__always)
        mutating func answer(_ j: Int, _ value: UInt8, line rowLine: Int) {
            if stamps.session[j] == ordinal {
                fail("item '\(owner.scorer.bank.items[j].itemID)' answered twice in the session (first on line \(stamps.line[j]))",
                     line: rowLine, column: columns.item + 1)
                return
            }
            stamps.session[j] = ordinal
            stamps.line[j] = rowLine
            append(j, value, line: rowLine)
        }

        mutating func parse(_ chunk: LongChunk, _ buf: UnsafePointer<UInt8>, path: String) {
            let table = owner.scorer.itemTable
            let sc = columns.session, ic = columns.item, rc = columns.response
            var scanner = CSVRecordScanner(delimiter: owner.fileOptions.delimiter)
            defer { scanner.deallocate() }
            var scratch: [UInt8] = []
            var p = chunk.start, line = chunk.firstLine
            var rows = 0, blanks = 0
            parsing: while p < chunk.end {
                let rowLine = line
                if let next = scanner.scanPlain(buf, from: p, to: chunk.end) {
                    p = next
                    line += 1
                    if plainRow(buf, scanner, line: rowLine, table: table) {
                        rows += 1
                        continue parsing
                    }
                } else {
                    let outcome: CSVRecordScanner.Outcome
                    do {
                        outcome = try scanner.scan(buf, from: p, to: chunk.end, atEOF: chunk.atEOF)
                    } catch {
                        chunk.syntaxError = InputError(file: path, line: line + error.lineOffset, column: error.column, message: error.message)
                        break parsing
                    }
                    switch outcome {
                    case .needMore:
                        break parsing
                    case .blank(let next):
                        p = next
                        line += 1
                        continue parsing
                    case .record(let next, let lines):
                        p = next
                        line += lines + 1
                    }
                }
                rows += 1
                let fields = scanner.fieldCount
                if fields <= sc {
                    orphan(line: rowLine, column: fields,
                           reason: "malformed row: expected \(columns.headerCount) fields as in the header, found \(fields); no session id")
                    continue
                }
                let entered = scanner.withField(sc, in: buf, scratch: &scratch) { enter($0, line: rowLine) }
                if entered == nil {
                    orphan(line: rowLine, column: sc + 1, reason: "empty \(columns.sessionName): the row belongs to no session")
                    continue
                }
                if fields != columns.headerCount {
                    fail("malformed row: expected \(columns.headerCount) fields as in the header, found \(fields)",
                         line: rowLine, column: min(fields, columns.headerCount) + (fields > columns.headerCount ? 1 : 0))
                    continue
                }
                let cell = scanner.withField(rc, in: buf, scratch: &scratch) { ResponseCell.parse($0) }
                if cell == .missing { blanks += 1; continue }
                if cell == .invalid {
                    let text = scanner.withField(rc, in: buf, scratch: &scratch) { TextFidelity.quoted($0) }
                    fail("\(columns.responseName) \(text) is not a response; allowed: \(ResponseCell.allowedDescription)",
                         line: rowLine, column: rc + 1)
                    continue
                }
                guard let j = scanner.withField(ic, in: buf, scratch: &scratch, { table.index(of: $0.trimmingSpaces()) }) else {
                    let text = scanner.withField(ic, in: buf, scratch: &scratch) { TextFidelity.quoted($0.trimmingSpaces()) }
                    fail("unknown item id \(text) (not in the bank)",
                         line: rowLine, column: ic + 1)
                    continue
                }
                answer(j, cell == .correct ? 1 : 0, line: rowLine)
            }
            stamps.lastOrdinal = ordinal
            chunk.stop = p
            chunk.nextLine = line
            chunk.rows = rows
            chunk.blanks = blanks
            if hasCur {
                if runs == 0 { head = run(); chunk.headOpen = true } else { chunk.tail = run() }
            }
            chunk.head = head
        }
    }
}

extension BatchScorer.RunState {
    /// Reads the rest of a long file (after its header) in parallel rounds; see the file comment.
    ///
    /// Each round's chunks are joined (and their rows written) on a background thread while the next round is
    /// read and parsed; joins run one at a time, in order, and only they touch this state (the reading loop
    /// keeps to its locals), so the output is that of joining on the calling thread.
    mutating func readLongParallel(_ reader: CSVReader, fileIndex: Int, columns: BatchScorer.LongColumns) throws {
        let chunks = max(1, owner.workers * 2)
        var capacity = max(owner.budgetedChunkBytes, 64) * chunks
        let maxCapacity = max(capacity, reader.maxRecordBytes)
        var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var filled = 0, line = reader.nextLine, eof = false, oneChunk = false
        let labels = BatchScorer.OutputLabels(owner)
        while chunkStamps.count < chunks { chunkStamps.append(BatchScorer.Stamps(count: owner.scorer.bank.items.count)) }
        let (owner, stamps, path) = (owner, chunkStamps, reader.path)

        try withUnsafeMutablePointer(to: &self) { state in
            let joiner = BackgroundJoiner()
            defer { joiner.finish() }
            while true {
                while filled < capacity && !eof {
                    let n = try reader.readRemaining(into: buffer + filled, capacity: capacity - filled)
                    if n == 0 { eof = true } else { filled += n }
                }
                if filled == 0 { break }
                // Cut after a line feed near each k/chunks of the bytes; the last chunk runs to the end of the bytes.
                var cuts = [0]
                for k in 1..<(oneChunk ? 1 : chunks) {
                    var c = max(filled * k / chunks, cuts[cuts.count - 1])
                    while c < filled && buffer[c] != 10 { c += 1 }
                    if c + 1 >= filled { break }
                    if c + 1 > cuts[cuts.count - 1] { cuts.append(c + 1) }
                }
                let work = (0..<cuts.count).map { k in
                    BatchScorer.LongChunk(start: cuts[k], end: k + 1 < cuts.count ? cuts[k + 1] : filled, atEOF: eof && k + 1 == cuts.count)
                }
                let base = UnsafePointer(buffer)
                let box = UncheckedSendableBox((work, base, owner, stamps, path, labels))
                // At most `workers` threads; each takes every lanes-th chunk.
                let lanes = max(1, min(owner.workers, work.count))
                parallelFor(lanes) { lane in
                    let (work, base, _, _, _, _) = box.value
                    for k in stride(from: lane, to: work.count - 1, by: lanes) {
                        work[k].lineBreaks = BatchScorer.countLineBreaks(base + work[k].start, work[k].end - work[k].start)
                    }
                }
                var next = line
                for chunk in work { chunk.firstLine = next; next += chunk.lineBreaks }
                parallelFor(lanes) { lane in
                    let (work, base, owner, stamps, path, labels) = box.value
                    for k in stride(from: lane, to: work.count, by: lanes) {
                        owner.parseLongChunk(work[k], base, columns: columns, fileIndex: fileIndex, path: path, stamps: stamps[k], labels: labels)
                    }
                }

                // The chunks up to the first one whose start is not a record start (or that hit a syntax error).
                var valid: [BatchScorer.LongChunk] = []
                var consumed = 0, failed = false
                for (k, chunk) in work.enumerated() {
                    if k > 0 && work[k - 1].stop != chunk.start { break }
                    valid.append(chunk)
                    if chunk.syntaxError != nil { failed = true; break }
                    consumed = chunk.stop
                    line = chunk.nextLine
                }
                try joiner.wait()
                if !valid.isEmpty && (consumed > 0 || failed) {
                    let job = UncheckedSendableBox((state, valid, columns, consumed))
                    joiner.start {
                        let (state, valid, columns, consumed) = job.value
                        for chunk in valid {
                            state.pointee.report.rowsRead += chunk.rows
                            state.pointee.report.blankResponses += chunk.blanks
                            if let error = chunk.syntaxError { throw error }
                            try state.pointee.join(chunk, columns: columns)
                        }
                        state.pointee.parallelProgress(consumed)
                    }
                }
                if failed { break }
                if consumed == 0 {
                    if eof && work.count == 1 { throw InputError(file: reader.path, line: line, message: "unterminated quoted field at end of file") }
                    if work.count > 1 { oneChunk = true; continue }
                    // One record is longer than the buffer: grow it, up to the record limit.
                    guard capacity < maxCapacity else { throw reader.recordTooLong(line: line) }
                    let size = min(capacity * 2, maxCapacity)
                    let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
                    bigger.update(from: buffer, count: filled)
                    buffer.deallocate()
                    buffer = bigger
                    capacity = size
                    continue
                }
                oneChunk = false
                if consumed < filled { buffer.update(from: buffer + consumed, count: filled - consumed) }
                filled -= consumed
            }
            try joiner.wait()
        }
    }

    /// Progress after `bytes` more bytes of a long file were joined.
    mutating func parallelProgress(_ bytes: Int) {
        parallelBytes += bytes
        guard let progress else { return }
        let now = Date()
        guard now.timeIntervalSince(lastProgress) >= 0.25 else { return }
        lastProgress = now
        progress(BatchProgress(bytesRead: bytesBefore + parallelBytes, totalBytes: totalBytes, rows: report.rowsRead,
                               sessions: report.sessionsRead + (hasCurrent ? 1 : 0), seconds: now.timeIntervalSince(started)))
    }

    /// Replays one session run through the serial path's `enter`/`apply` (so joining across chunk borders,
    /// duplicate detection and regrouping behave exactly as there): responses and the run's first error in line
    /// order.
    mutating func replay(_ run: BatchScorer.LongRun, columns: BatchScorer.LongColumns) throws {
        let itemColumn = columns.item
        if run.orphan, let error = run.error {
            try orphan(file: run.file, line: run.line, column: error.column ?? 0, reason: error.reason)
            return
        }
        try run.id.withUnsafeBufferPointer { try enter(session: $0, file: run.file, line: run.line, column: columns.session + 1) }
        var pending = run.error
        for k in 0..<run.items.count {
            if let e = pending, e.line < run.itemLines[k] {
                apply(Self.failure, item: -1, value: 0, file: e.file, line: e.line, column: e.column, reason: e.reason)
                pending = nil
            }
            apply(Self.response, item: run.items[k], value: run.responses[k], file: run.file, line: run.itemLines[k], column: itemColumn + 1, reason: nil)
        }
        if let e = pending { apply(Self.failure, item: -1, value: 0, file: e.file, line: e.line, column: e.column, reason: e.reason) }
    }

    /// Adds one parsed chunk: its head continues or closes the open session; the sessions inside it are already
    /// scored, so the open session is scored and written first, then theirs; its tail becomes the open session.
    mutating func join(_ chunk: BatchScorer.LongChunk, columns: BatchScorer.LongColumns) throws {
        if let head = chunk.head { try replay(head, columns: columns) }
        if chunk.headOpen || (chunk.inner == 0 && chunk.tail == nil) { return }
        try closeCurrent()
        try flush()
        try drainPending()
        for h in chunk.hashes where try !seen.insert(h) { throw BatchScorer.Regroup() }
        try chunk.out.withUnsafeBufferPointer { try scores.write(bytes: $0) }
        try writeRejects(chunk.rejects)
        report.sessionsRead += chunk.inner
        report.sessionsScored += chunk.inner - chunk.rejects.count
        report.sessionsRejected += chunk.rejects.count
        for (k, flag) in ScoreFlag.allCases.enumerated() where chunk.flags[k] > 0 { report.flagCounts[flag, default: 0] += chunk.flags[k] }
        if let tail = chunk.tail { try replay(tail, columns: columns) }
    }
}

/// Runs one job at a time on a background thread; `wait()` blocks until it ends and rethrows its error.
final class BackgroundJoiner: @unchecked Sendable {
    private var group: DispatchGroup?
    private var error: Error?

    func start(_ job: @escaping @Sendable () throws -> Void) {
        let group = DispatchGroup()
        group.enter()
        self.group = group
        DispatchQueue.global().async {
            do { try job() } catch { self.error = error }
            group.leave()
        }
    }

    /// Waits for the running job; throws the error it threw (once).
    func wait() throws {
        guard let group else { return }
        group.wait()
        self.group = nil
        if let error {
            self.error = nil
            throw error
        }
    }

    /// Waits without rethrowing (for clean-up paths).
    func finish() {
        try? wait()
    }
}
