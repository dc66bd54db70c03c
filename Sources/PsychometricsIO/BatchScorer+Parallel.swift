import Foundation
import Psychometrics

// The parallel path of `BatchScorer` for long files (one row per response) whose sessions are contiguous.
//
// The file is read in parallel rounds of chunks by `ParallelCSVChunks` (shared with `ResponseMatrix.load`):
// every worker parses its chunk with the same `CSVRecordScanner` as `CSVReader` and scores the sessions that
// lie wholly inside it. A chunk's first session may continue the previous chunk's last one, and its last may
// continue into the next chunk: those two are handed back unscored and replayed as the serial reader's events, in
// order, on a background thread (`StreamingSessions.join`). Results are therefore byte-identical to the serial
// path (`SessionReader.readLongRows`), which stays in use for wide files and for the regrouping pass.

extension BatchScorer {
    /// Column positions of a long file.
    struct LongColumns {
        let session: Int, item: Int, response: Int
        /// The age column (−1: ages are not read).
        let age: Int
        /// The time column (−1: times are not read).
        let time: Int
        /// Fields every row has (as the header).
        let headerCount: Int
        let sessionName: String, responseName: String, timeName: String
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
        /// Seconds of each response (NaN: none).
        var times: [Float] = []
        /// Line of each response (to name the first line of an item answered twice across a chunk border).
        var itemLines: [Int] = []
        /// The first error, leaving out a differing age: that depends on the age the joined session had before.
        var error: RowError?
        /// The run's first age and the first different one, with their lines (NaN: none): replayed in line order,
        /// they give the joined session its age and any "age differs" error.
        var age = Double.nan, ageLine = 0
        var differingAge = Double.nan, differingLine = 0
    }

    /// Everything one chunk's worker produced.
    final class LongChunk: ParsedCSVChunk {
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
        var flags = [Int](repeating: 0, count: BatchScorer.flagSlots)
        var inner = 0
        var rows = 0
        var blanks = 0
        var droppedTimes = 0
    }

    /// Parses `range` of `buf` and scores its inner sessions. Runs on a worker thread; touches only its chunk and
    /// `stamps`.
    func parseLongChunk(
        _ range: CSVChunkRange, _ buf: UnsafePointer<UInt8>, columns: LongColumns, fileIndex: Int, path: String,
        stamps: Stamps, labels: OutputLabels
    ) -> LongChunk {
        let chunk = LongChunk()
        var parser = LongChunkParser(
            owner: self, columns: columns, fileIndex: fileIndex, stamps: stamps, labels: labels,
            expectedRows: (range.end - range.start) / 12)
        let end = range.scanRecords(buf, delimiter: fileOptions.delimiter, path: path, into: &parser)
        (chunk.stop, chunk.nextLine, chunk.syntaxError) = (end.stop, end.nextLine, end.syntaxError)
        parser.finish(into: chunk)
        parser.score(into: chunk)
        parser.deallocate()
        return chunk
    }

    /// The worker state of `parseLongChunk`: a struct with mutating methods (no captured variables, so no
    /// dynamic exclusivity checks on the per-row path) and raw buffers.
    ///
    /// Two phases: the whole chunk is parsed into a compact list of sessions first, then they are scored. (Scoring
    /// each session as soon as it closes let the EAP tables, 1.5 MB for 1,500 items, evict the item-id table
    /// and duplicate stamps from the core's cache between rows.)
    struct LongChunkParser: CSVChunkRecords {
        let owner: BatchScorer
        /// The owner's answer keys, and whether a plain 0/1 cell is a response (not with options in every cell).
        let optionKeys: OptionKeys?
        let categoryCells: CategoryCells?
        let plainResponses: Bool
        let table: ByteKeyTable
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
        /// The open session's first age and first different age, with their lines (NaN: none).
        var curAge = Double.nan, curAgeLine = 0
        var curDiffAge = Double.nan, curDiffLine = 0
        var curStart = 0
        // Responses of the chunk's closed inner sessions and the open one.
        var total = 0, capacity: Int
        var items: UnsafeMutablePointer<Int>
        var responses: UnsafeMutablePointer<UInt8>
        /// Seconds of each response (NaN: none); written only when the run reads times.
        var times: UnsafeMutablePointer<Float>
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
            /// NaN: none (or ages are not read).
            var age: Double
        }
        var pending: [Pending] = []
        var idBytes: [UInt8] = []
        var errors: [RowError] = []
        var hashes: [Int] = []
        var rows = 0, blanks = 0, droppedTimes = 0

        init(owner: BatchScorer, columns: LongColumns, fileIndex: Int, stamps: Stamps, labels: OutputLabels, expectedRows: Int) {
            self.owner = owner
            table = owner.scorer.itemTable
            optionKeys = owner.optionKeys
            categoryCells = owner.categoryCells
            // A bank with items in more than two categories reads every row by the general path (a "1" may be
            // an item's first category).
            plainResponses = owner.optionKeys?.everyCell != true && owner.categoryCells == nil
            self.columns = columns
            self.fileIndex = fileIndex
            self.stamps = stamps
            self.labels = labels
            ordinal = stamps.lastOrdinal
            // The previous round's buffers when big enough (fresh pages cost page faults).
            if let i = stamps.items, let r = stamps.responses, let t = stamps.times, stamps.bufferCapacity >= expectedRows {
                items = i; responses = r; times = t; capacity = stamps.bufferCapacity
            } else {
                stamps.items?.deallocate()
                stamps.responses?.deallocate()
                stamps.times?.deallocate()
                capacity = max(expectedRows, 64)
                items = .allocate(capacity: capacity)
                responses = .allocate(capacity: capacity)
                times = .allocate(capacity: capacity)
            }
            stamps.items = nil
            stamps.responses = nil
            stamps.times = nil
        }

        /// Hands the (possibly grown) response buffers back to `stamps` for the next round.
        func deallocate() {
            stamps.items = items
            stamps.responses = responses
            stamps.times = times
            stamps.bufferCapacity = capacity
            lines.deallocate()
        }

        /// The open session as a `LongRun` (for joining across chunk borders).
        func run() -> LongRun {
            let n = total - curStart
            return LongRun(
                id: curID, orphan: curOrphan, file: fileIndex, line: curLine,
                items: Array(UnsafeBufferPointer(start: items + curStart, count: n)),
                responses: Array(UnsafeBufferPointer(start: responses + curStart, count: n)),
                times: columns.time >= 0 ? Array(UnsafeBufferPointer(start: times + curStart, count: n)) : [],
                itemLines: Array(UnsafeBufferPointer(start: lines, count: n)), error: curError,
                age: curAge, ageLine: curAgeLine, differingAge: curDiffAge, differingLine: curDiffLine)
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
            if let e = sessionError() { error = errors.count; errors.append(e) }
            pending.append(
                Pending(idStart: idStart, idEnd: idBytes.count, line: curLine, itemStart: curStart, itemEnd: total, error: error, age: curAge))
        }

        /// The error of the open session as a whole (it lies wholly inside the chunk), as `SessionAssembler` finds it: the
        /// first in line order of its row errors and a differing age (an age comes before the rest of its row),
        /// else no age at all.
        func sessionError() -> RowError? {
            guard columns.age >= 0, !curOrphan else { return curError }
            if !curDiffAge.isNaN, curError.map({ $0.line >= curDiffLine }) ?? true {
                return (
                    SessionAge.differs(first: curAge, firstLine: curAgeLine, firstFile: nil, second: curDiffAge, secondLine: curDiffLine),
                    fileIndex, curDiffLine, columns.age + 1
                )
            }
            if curError == nil && curAge.isNaN { return (SessionAge.missing, fileIndex, curLine, columns.age + 1) }
            return curError
        }

        /// An age on a row of the open session.
        @inline(__always)
        mutating func noteAge(_ age: Double, line: Int) {
            if curAge.isNaN {
                curAge = age
                curAgeLine = line
            } else if curDiffAge.isNaN && age != curAge {
                curDiffAge = age
                curDiffLine = line
            }
        }

        /// Scores the pending sessions into the chunk's output.
        func score(into chunk: LongChunk) {
            var out = stamps.out ?? ByteBuffer(capacity: pending.count * 100)
            out.removeAll()
            var rejects: [RejectRecord] = []
            var flags = [Int](repeating: 0, count: BatchScorer.flagSlots)
            idBytes.withUnsafeBufferPointer { ids in
                for s in pending {
                    let id = UnsafeBufferPointer(rebasing: ids[s.idStart..<s.idEnd])
                    owner.emit(
                        id: TextFidelity.validString(id) ?? TextFidelity.display(id),
                        file: fileIndex, line: s.line, error: s.error >= 0 ? errors[s.error] : nil, age: s.age,
                        UnsafeBufferPointer(start: items + s.itemStart, count: s.itemEnd - s.itemStart),
                        UnsafeBufferPointer(start: responses + s.itemStart, count: s.itemEnd - s.itemStart),
                        UnsafeBufferPointer(
                            start: columns.time >= 0 ? times + s.itemStart : nil, count: columns.time >= 0 ? s.itemEnd - s.itemStart : 0), labels,
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
            curError =
                orphan || TextFidelity.validString(id) != nil
                ? nil
                : (TextFidelity.invalidUTF8("session id", id), fileIndex, line, columns.session + 1)
            curAge = .nan
            curDiffAge = .nan
            curStart = total
            hasCur = true
        }

        @inline(__always)
        mutating func append(_ item: Int, _ response: UInt8, seconds: Float, line: Int) {
            if total == capacity {
                let bigger = capacity * 2
                let i = UnsafeMutablePointer<Int>.allocate(capacity: bigger), r = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
                let t = UnsafeMutablePointer<Float>.allocate(capacity: bigger)
                i.update(from: items, count: total); r.update(from: responses, count: total); t.update(from: times, count: total)
                items.deallocate(); responses.deallocate(); times.deallocate()
                items = i; responses = r; times = t
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
            times[total] = seconds
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
        mutating func plainRow(_ buf: UnsafePointer<UInt8>, _ fields: borrowing CSVRecordScanner, line rowLine: Int) -> Bool {
            // With options in every cell, "1" is an option, not "correct": the general path scores it.
            guard fields.fieldCount == columns.headerCount, plainResponses else { return false }
            let bounds = fields.bounds
            let sc = 2 * columns.session, rc = 2 * columns.response, ic = 2 * columns.item
            let id = UnsafeBufferPointer(start: buf + bounds[sc], count: bounds[sc + 1] - bounds[sc]).trimmingSpaces()
            let response = UnsafeBufferPointer(start: buf + bounds[rc], count: bounds[rc + 1] - bounds[rc]).trimmingSpaces()
            guard !id.isEmpty, response.count == 1, response[0] == 48 || response[0] == 49,
                let j = table.index(of: UnsafeBufferPointer(start: buf + bounds[ic], count: bounds[ic + 1] - bounds[ic]).trimmingSpaces())
            else { return false }
            var age = Double.nan
            if columns.age >= 0 {
                let ac = 2 * columns.age
                switch SessionAge.parse(UnsafeBufferPointer(start: buf + bounds[ac], count: bounds[ac + 1] - bounds[ac])) {
                case .blank: break
                case .age(let a): age = a
                case .invalid: return false
                }
            }
            var seconds = Float.nan
            if columns.time >= 0 {
                let tc = 2 * columns.time
                switch ResponseTimeCell.parse(UnsafeBufferPointer(start: buf + bounds[tc], count: bounds[tc + 1] - bounds[tc])) {
                case .seconds(let t): seconds = t
                case .missing: break
                case .dropped: droppedTimes += 1
                case .invalid: return false
                }
            }
            _ = enter(id, line: rowLine)
            if !age.isNaN { noteAge(age, line: rowLine) }
            answer(j, response[0] &- 48, seconds: seconds, line: rowLine)
            return true
        }

        /// A response of the open session to bank item `j`: kept, or the session's error when the item was
        /// answered before in it.
        @inline(__always)
        mutating func answer(_ j: Int, _ value: UInt8, seconds: Float = .nan, line rowLine: Int) {
            if stamps.session[j] == ordinal {
                fail(
                    "item '\(owner.scorer.bank.items[j].itemID)' answered twice in the session (first on line \(stamps.line[j]))",
                    line: rowLine, column: columns.item + 1)
                return
            }
            stamps.session[j] = ordinal
            stamps.line[j] = rowLine
            append(j, value, seconds: seconds, line: rowLine)
        }

        /// One record of the chunk: the common row by `plainRow`, any other by the general field access.
        @inline(__always)
        mutating func record(_ buf: UnsafePointer<UInt8>, _ scanner: borrowing CSVRecordScanner, line rowLine: Int, plain: Bool) {
            rows += 1
            if plain, plainRow(buf, scanner, line: rowLine) { return }
            var scratch: [UInt8] = []
            generalRow(buf, scanner, line: rowLine, scratch: &scratch)
        }

        /// The row's time (NaN: none or not read); nil after a bad cell, which is the session's error.
        mutating func seconds(_ buf: UnsafePointer<UInt8>, _ scanner: borrowing CSVRecordScanner, line rowLine: Int, scratch: inout [UInt8]) -> Float?
        {
            guard columns.time >= 0 else { return .nan }
            switch scanner.withField(columns.time, in: buf, scratch: &scratch, { ResponseTimeCell.parse($0) }) {
            case .seconds(let t): return t
            case .missing: return .nan
            case .dropped: droppedTimes += 1; return .nan
            case .invalid:
                let text = scanner.withField(columns.time, in: buf, scratch: &scratch) { TextFidelity.quoted($0) }
                fail(
                    "\(columns.timeName) \(text) is not a response time; allowed: \(ResponseTimeCell.allowedDescription)", line: rowLine,
                    column: columns.time + 1)
                return nil
            }
        }

        /// A row that `plainRow` did not take, by the general field access.
        mutating func generalRow(_ buf: UnsafePointer<UInt8>, _ scanner: borrowing CSVRecordScanner, line rowLine: Int, scratch: inout [UInt8]) {
            let sc = columns.session, ic = columns.item, rc = columns.response
            // Only quoted fields are copied into `scratch`: no allocation for the others.
            let fields = scanner.fieldCount
            if fields <= sc {
                orphan(
                    line: rowLine, column: fields,
                    reason: "malformed row: expected \(columns.headerCount) fields as in the header, found \(fields); no session id")
                return
            }
            let entered = scanner.withField(sc, in: buf, scratch: &scratch) { enter($0, line: rowLine) }
            if entered == nil {
                orphan(line: rowLine, column: sc + 1, reason: "empty \(columns.sessionName): the row belongs to no session")
                return
            }
            if fields != columns.headerCount {
                fail(
                    "malformed row: expected \(columns.headerCount) fields as in the header, found \(fields)",
                    line: rowLine, column: min(fields, columns.headerCount) + (fields > columns.headerCount ? 1 : 0))
                return
            }
            if columns.age >= 0 {
                switch scanner.withField(columns.age, in: buf, scratch: &scratch, { SessionAge.parse($0) }) {
                case .blank: break
                case .age(let a): noteAge(a, line: rowLine)
                case .invalid(let reason): fail(reason, line: rowLine, column: columns.age + 1)
                }
            }
            // The item, looked up once (`known`: nil until looked up) for the category and the 0/1 paths.
            var known: Int?? = nil
            if categoryCells != nil { known = .some(scanner.withField(ic, in: buf, scratch: &scratch, { table.index(of: $0.trimmingSpaces()) })) }
            if let categories = categoryCells, let j = known ?? nil, categories.isCategoryItem(j) {
                let v = scanner.withField(rc, in: buf, scratch: &scratch) { categories.value($0, item: j) }
                if v == ResponseCell.missingCategory { blanks += 1; return }
                if v == ResponseCell.invalidCategory {
                    let text = scanner.withField(rc, in: buf, scratch: &scratch) { TextFidelity.quoted($0) }
                    fail(
                        "\(columns.responseName) \(text) is not a response to item \(TextFidelity.quoted(owner.scorer.bank.items[j].itemID)); allowed: \(categories.allowed(item: j))",
                        line: rowLine, column: rc + 1)
                    return
                }
                guard let t = seconds(buf, scanner, line: rowLine, scratch: &scratch) else { return }
                answer(j, UInt8(v), seconds: t, line: rowLine)
                return
            }
            var cell = scanner.withField(rc, in: buf, scratch: &scratch) { ResponseCell.parse($0) }
            if let keys = optionKeys, keys.mayBeOption(cell) {
                if known == nil { known = .some(scanner.withField(ic, in: buf, scratch: &scratch, { table.index(of: $0.trimmingSpaces()) })) }
            }
            if let keys = optionKeys, keys.mayBeOption(cell), let j = known ?? nil,
                let keyed = scanner.withField(rc, in: buf, scratch: &scratch, { keys.score($0, item: j) })
            {
                cell = keyed
            }
            if cell == .missing { blanks += 1; return }
            if cell == .invalid {
                let text = scanner.withField(rc, in: buf, scratch: &scratch) { TextFidelity.quoted($0) }
                fail(
                    "\(columns.responseName) \(text) is not a response; allowed: \(ResponseCell.allowedDescription)",
                    line: rowLine, column: rc + 1)
                return
            }
            if known == nil { known = .some(scanner.withField(ic, in: buf, scratch: &scratch, { table.index(of: $0.trimmingSpaces()) })) }
            guard let j = known ?? nil else {
                let text = scanner.withField(ic, in: buf, scratch: &scratch) { TextFidelity.quoted($0.trimmingSpaces()) }
                fail(
                    "unknown item id \(text) (not in the bank)",
                    line: rowLine, column: ic + 1)
                return
            }
            guard let t = seconds(buf, scanner, line: rowLine, scratch: &scratch) else { return }
            answer(j, cell == .correct ? 1 : 0, seconds: t, line: rowLine)
        }

        /// After the last record: the counts, and the open session as the chunk's head or tail.
        mutating func finish(into chunk: LongChunk) {
            stamps.lastOrdinal = ordinal
            chunk.rows = rows
            chunk.blanks = blanks
            chunk.droppedTimes = droppedTimes
            if hasCur {
                if runs == 0 { head = run(); chunk.headOpen = true } else { chunk.tail = run() }
            }
            chunk.head = head
        }
    }
}
