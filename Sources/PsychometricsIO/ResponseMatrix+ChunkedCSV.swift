import Foundation
import Psychometrics

// `ResponseMatrix.load` after the header: the data records of a wide or long file, read by `ParallelCSVChunks`.
//
// Workers parse chunks into compact per-chunk arrays; the chunks are joined in file order (on a background
// thread, while later chunks are parsed); what needs the whole file then runs in parallel again. The result —
// matrix, report, errors and their order, memory checks — is that of reading the records one by one: every
// decision that depends on earlier records (interning ids in first-appearance order, duplicate person ids, the
// row count at which the memory budget is checked) is taken in the join, in file order.
//
// What stays serial, and why it does not limit scaling: parts of the join (a regular file's bytes are copied in
// by the workers, `CSVReader.readFilling`). The join does per chunk O(distinct item ids) dictionary work, its
// errors and the memory checks; a long file's session ids are interned in parallel (`LongJoin`: hash partitions
// owned by workers, then per-chunk numbering), leaving O(new sessions) array growth serial; a wide file's ids
// are one dictionary insertion per row (none without an id column). The join overlaps the next round's parse.

extension ResponseMatrix {
    /// The error for a long row without the header's field count, or a wide row (the same text in both layouts).
    fileprivate static func fieldCountError(path: String, line: Int, found: Int, expected: Int) -> InputError {
        InputError(
            file: path, line: line, column: min(found, expected) + (found > expected ? 1 : 0),
            message: "expected \(expected) fields as in the header, found \(found)")
    }

    /// Splits `0 ..< count` into at most `parts` consecutive ranges of about equal `weight` (cumulative: the
    /// weight of `0 ..< i` is `weight(i)`, nondecreasing).
    fileprivate static func balancedRanges(count: Int, parts: Int, weight: (Int) -> Int) -> [Range<Int>] {
        let total = weight(count)
        var ranges: [Range<Int>] = [], lower = 0
        for p in 1...max(1, parts) where lower < count {
            var upper = lower
            let target = total * p / max(1, parts)
            while upper < count && weight(upper + 1) <= target { upper += 1 }
            if p == parts { upper = count }
            if upper > lower { ranges.append(lower..<upper); lower = upper }
        }
        return ranges
    }
}

// MARK: - Long layout

extension ResponseMatrix {
    /// One chunk of a long file as its worker parses it (arrays in a struct: no class accesses per row). Rows
    /// that intern a session id (as the serial reader defines it: the right field count and a valid UTF-8 id)
    /// are collapsed into runs of consecutive rows of the same id; responses keep the chunk's own item numbering
    /// (`itemIDs`) and their row.
    struct LongChunkParser: CSVChunkRecords {
        let path: String
        let options: ResponseFileOptions
        let fieldCount: Int, sc: Int, ic: Int, rc: Int
        /// The time column, −1 when times are not read.
        let tc: Int
        let firstLine: Int
        /// Line of each data row, less `firstLine`.
        var rowLines: [UInt32] = []
        /// Each response: chunk item index, value (1/0), data row in the chunk.
        var cellItem: [Int32] = [], cellValue: [UInt8] = [], cellRow: [Int32] = []
        /// Each response's time in seconds (NaN: none), when times are read.
        var cellTime: [Float] = []
        /// Times outside `ResponseTimes.allowedSeconds` dropped, and the first one's line.
        var droppedTimes = 0, firstDroppedTime: Int?
        /// Runs of rows of one session: its id, first row, first response (up to the next run's), and the id's
        /// `ByteStringIndex.hash` (which the join's partitions use).
        var runs: [(id: String, firstRow: Int32, cellStart: Int, hash: UInt64)] = []
        /// The open run's id bytes and whether it is empty.
        var runKey: [UInt8] = []
        var runEmpty = false
        var items = ByteStringIndex()
        /// The chunk's item ids in order of first appearance; nil for one that is not UTF-8 (never interned, as
        /// an empty one).
        var itemIDs: [String?] = []
        /// Per chunk item: valid and non-empty.
        var itemUsable: [Bool] = []
        var errors = ErrorCollector()
        var blanks = 0

        init(
            path: String, options: ResponseFileOptions, columns: (session: Int, item: Int, response: Int, time: Int), fieldCount: Int,
            range: CSVChunkRange
        ) {
            self.path = path
            self.options = options
            self.fieldCount = fieldCount
            (sc, ic, rc, tc) = columns
            firstLine = range.firstLine
            let expected = (range.end - range.start) / 12
            rowLines.reserveCapacity(expected)
            cellItem.reserveCapacity(expected)
            cellValue.reserveCapacity(expected)
            cellRow.reserveCapacity(expected)
        }

        mutating func record(_ buf: UnsafePointer<UInt8>, _ fields: borrowing CSVRecordScanner, line: Int, plain: Bool) {
            let row = Int32(rowLines.count)
            rowLines.append(UInt32(line - firstLine))
            if fields.fieldCount != fieldCount {
                errors.add(ResponseMatrix.fieldCountError(path: path, line: line, found: fields.fieldCount, expected: fieldCount))
                return
            }
            // Only quoted fields are copied into it: no allocation for the others.
            var scratch: [UInt8] = []
            // The session id: the open run's when the bytes are equal, else a new run (if valid UTF-8).
            let interned = fields.withField(sc, in: buf, scratch: &scratch) { raw -> Bool in
                let b = raw.trimmingSpaces()
                if !runs.isEmpty && b.count == runKey.count
                    && runKey.withUnsafeBufferPointer({ b.count == 0 || bytesEqual($0.baseAddress!, b.baseAddress!, b.count) })
                {
                    return true
                }
                guard let id = TextFidelity.validString(b) else {
                    errors.add(InputError(file: path, line: line, column: sc + 1, message: TextFidelity.invalidUTF8(options.sessionColumn, b)))
                    return false
                }
                runKey.removeAll(keepingCapacity: true)
                runKey.append(contentsOf: b)
                runEmpty = id.isEmpty
                runs.append((id, row, cellItem.count, ByteStringIndex.hash(b)))
                return true
            }
            if !interned { return }
            if runEmpty {
                errors.add(InputError(file: path, line: line, column: sc + 1, message: "empty \(options.sessionColumn)"))
                return
            }
            // 0/1 answers, or category indices (`categoryResponses`): the value kept, −1 for not administered.
            let value: Int
            if options.categoryResponses {
                value = fields.withField(rc, in: buf, scratch: &scratch) { ResponseCell.parseCategory($0, letters: options.optionLetters) }
            } else {
                let cell = fields.withField(rc, in: buf, scratch: &scratch) { ResponseCell.parse($0) }
                value = cell == .correct ? 1 : cell == .incorrect ? 0 : cell == .missing ? ResponseCell.missingCategory : ResponseCell.invalidCategory
            }
            if value == ResponseCell.invalidCategory {
                let text = fields.withField(rc, in: buf, scratch: &scratch) { TextFidelity.quoted($0) }
                errors.add(
                    InputError(
                        file: path, line: line, column: rc + 1,
                        message: "\(options.responseColumn) \(text) is not a response; allowed: \(ResponseCell.allowedDescription(options))"))
                return
            }
            let j = fields.withField(ic, in: buf, scratch: &scratch) { raw -> Int in
                let b = raw.trimmingSpaces()
                let (j, inserted) = items.index(of: b)
                if inserted {
                    let id = TextFidelity.validString(b)
                    itemIDs.append(id)
                    itemUsable.append(id.map { !$0.isEmpty } ?? false)
                }
                if !itemUsable[j] {
                    errors.add(
                        InputError(
                            file: path, line: line, column: ic + 1,
                            message: itemIDs[j] == nil
                                ? TextFidelity.invalidUTF8(options.itemColumn, b) : "empty \(options.itemColumn)"))
                    return -1
                }
                return j
            }
            if j < 0 { return }
            if value == ResponseCell.missingCategory { blanks += 1; return }
            if tc >= 0 {
                switch fields.withField(tc, in: buf, scratch: &scratch, { ResponseTimeCell.parse($0) }) {
                case .seconds(let t): cellTime.append(t)
                case .missing: cellTime.append(.nan)
                case .dropped:
                    cellTime.append(.nan)
                    droppedTimes += 1
                    if firstDroppedTime == nil { firstDroppedTime = line }
                case .invalid:
                    let text = fields.withField(tc, in: buf, scratch: &scratch) { TextFidelity.quoted($0) }
                    errors.add(
                        InputError(
                            file: path, line: line, column: tc + 1,
                            message: "\(options.timeColumn ?? "time") \(text) is not a response time; allowed: \(ResponseTimeCell.allowedDescription)"
                        ))
                    return
                }
            }
            cellItem.append(Int32(j))
            cellValue.append(UInt8(value))
            cellRow.append(row)
        }

        func cellEnd(ofRun r: Int) -> Int { r + 1 < runs.count ? runs[r + 1].cellStart : cellItem.count }
    }

    /// The file-order join of long chunks: interns item ids (per chunk's distinct ids) and session ids (per run)
    /// in first-appearance order, collects errors in order, and checks the memory budget every 65,536th data row
    /// as the serial reader did (responses and sessions before that row).
    ///
    /// A round's session ids are interned without a serial pass over its runs (`join(round:)`): the ids go to
    /// `sessionPartitionCount` hash tables by the top bits of their hash, each table owned by one worker, which
    /// visits its runs in file order, so a table's first sight of an id is the file's; the sessions' numbers (the
    /// order of first appearance, as one reader would give them) come from per-chunk counts of first sights.
    /// Serial: per chunk its item ids, its errors and the budget checks; O(partitions + chunks) bookkeeping.
    struct LongJoin {
        let budget: MemoryCheck
        let workers: Int
        var chunks: [LongChunkParser] = []
        /// Per chunk: its item index → the file's (−1: never interned).
        var itemMaps: [[Int32]] = []
        /// Per chunk: each run's session.
        var runSessions: [[Int32]] = []
        /// Session ids by their UTF-8 bytes, split by hash into partitions, and per partition its local index
        /// (the partition's order of first appearance) → session.
        var sessionPartitions = [ByteStringIndex](repeating: ByteStringIndex(), count: Self.sessionPartitionCount)
        var partitionSessions = [[Int32]](repeating: [], count: Self.sessionPartitionCount)
        /// The sessions' ids and first lines, in arrays of the sessions new in a round, filled by the workers
        /// (arrays of every session grown on one thread cost as much as the numbering).
        var sessionRounds: [(first: Int, ids: [String], lines: [Int])] = []
        /// Responses per session.
        var sessionCells: [Int] = []
        var sessionCount: Int { sessionCells.count }
        var itemIndex: [String: Int32] = [:], itemIDs: [String] = []
        var errors = ErrorCollector()
        var rows = 0, blanks = 0, cells = 0
        var droppedTimes = 0, firstDroppedTime: Int?

        /// Session-id partitions: enough for 16 workers to balance, and each table small enough to stay in cache.
        static var sessionPartitionCount: Int { 64 }
        /// A hash's partition: its top 6 bits (its low bits pick the slot within the partition's table).
        @inline(__always) static func partition(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> 58) }

        init(budget: MemoryCheck, workers: Int) {
            self.budget = budget
            self.workers = max(1, workers)
        }

        /// Joins one round's chunks, in file order.
        mutating func join(round: [LongChunkParser]) throws {
            var start = [0]
            for chunk in round { start.append(start[start.count - 1] + chunk.runs.count) }
            let runCount = start[start.count - 1]
            /// Runs of the round by chunk, in file order.
            func forEachRun(_ body: (_ k: Int, _ r: Int, _ run: Int) -> Void) {
                for k in round.indices { for r in round[k].runs.indices { body(k, r, start[k] + r) } }
            }
            let partitionLanes = min(workers, Self.sessionPartitionCount), chunkLanes = max(1, min(workers, round.count))
            // 1. Partitions in parallel: each run's partition-local session, −1 − local at the id's first sight.
            var local = [Int32](repeating: 0, count: runCount)
            local.withUnsafeMutableBufferPointer { local in
                sessionPartitions.withUnsafeMutableBufferPointer { partitions in
                    let box = UncheckedSendableBox((local, partitions))
                    parallelFor(partitionLanes) { lane in
                        let (local, partitions) = box.value
                        forEachRun { k, r, run in
                            let h = round[k].runs[r].hash, p = Self.partition(h)
                            guard p % partitionLanes == lane else { return }
                            var id = round[k].runs[r].id
                            let (index, inserted) = id.withUTF8 { partitions[p].index(of: $0, hash: h) }
                            local[run] = inserted ? -1 - Int32(index) : Int32(index)
                        }
                    }
                }
            }
            // 2. Chunks in parallel: first sights per chunk.
            var firsts = [Int](repeating: 0, count: round.count)
            firsts.withUnsafeMutableBufferPointer { firsts in
                let box = UncheckedSendableBox(firsts)
                parallelFor(chunkLanes) { lane in
                    for k in stride(from: lane, to: round.count, by: chunkLanes) {
                        box.value[k] = local[start[k]..<start[k + 1]].reduce(0) { $0 + ($1 < 0 ? 1 : 0) }
                    }
                }
            }
            // 3. Serial, in file order: item ids, errors, budget checks; the chunk's first new session.
            var firstSession = [Int](repeating: 0, count: round.count)
            var sessions = sessionCount
            for (k, chunk) in round.enumerated() {
                var map: [Int32] = []
                for id in chunk.itemIDs {
                    guard let id, !id.isEmpty else { map.append(-1); continue }
                    if let known = itemIndex[id] { map.append(known); continue }
                    map.append(Int32(itemIDs.count))
                    itemIndex[id] = Int32(itemIDs.count)
                    itemIDs.append(id)
                }
                itemMaps.append(map)
                for e in chunk.errors.errors { errors.add(e) }
                errors.omitted += chunk.errors.omitted
                firstSession[k] = sessions
                // Data row i of the chunk is row rows + i + 1 of the file: checked when that is a multiple of 65,536.
                let period = 1 << 16
                var r = 0, before = sessions
                for i in stride(from: (period - 1) - (rows & (period - 1)), to: chunk.rowLines.count, by: period) {
                    while r < chunk.runs.count && Int(chunk.runs[r].firstRow) < i {
                        if local[start[k] + r] < 0 { before += 1 }
                        r += 1
                    }
                    let responses = cells + Self.lowerBound(chunk.cellRow, Int32(i))
                    try budget.check(line: chunk.firstLine + Int(chunk.rowLines[i]), responses: responses, persons: before, bytesPerResponse: 33)
                }
                sessions += firsts[k]
                rows += chunk.rowLines.count
                blanks += chunk.blanks
                droppedTimes += chunk.droppedTimes
                if firstDroppedTime == nil { firstDroppedTime = chunk.firstDroppedTime }
                cells += chunk.cellItem.count
            }
            // 4. Chunks in parallel: the new sessions' numbers, ids and first lines.
            let known = sessionCount
            var newIDs = [String](repeating: "", count: sessions - known)
            var newLines = [Int](repeating: 0, count: sessions - known)
            sessionCells.append(contentsOf: repeatElement(0, count: sessions - known))
            var session = [Int32](repeating: 0, count: runCount)
            parallelFor(chunkLanes, mutating: &session, &newIDs, &newLines) { lane, session, ids, lines in
                for k in stride(from: lane, to: round.count, by: chunkLanes) {
                    let chunk = round[k]
                    var next = firstSession[k]
                    for r in chunk.runs.indices where local[start[k] + r] < 0 {
                        session[start[k] + r] = Int32(next)
                        ids[next - known] = chunk.runs[r].id
                        lines[next - known] = chunk.firstLine + Int(chunk.rowLines[Int(chunk.runs[r].firstRow)])
                        next += 1
                    }
                }
            }
            // 5. Partitions in parallel: each partition's local → session map grows in its order of first sight; every
            // run gets its session, whose responses are counted by the lane that owns it.
            parallelFor(partitionLanes, mutating: &session, &partitionSessions, &sessionCells) { lane, session, maps, sessionCells in
                forEachRun { k, r, run in
                    let p = Self.partition(round[k].runs[r].hash)
                    guard p % partitionLanes == lane else { return }
                    let l = local[run]
                    if l < 0 {
                        assert(Int(-1 - l) == maps[p].count)
                        maps[p].append(session[run])
                    } else {
                        session[run] = maps[p][Int(l)]
                    }
                    sessionCells[Int(session[run])] += round[k].cellEnd(ofRun: r) - round[k].runs[r].cellStart
                }
            }
            if !newIDs.isEmpty { sessionRounds.append((known, newIDs, newLines)) }
            for k in round.indices { runSessions.append(Array(session[start[k]..<start[k + 1]])) }
            chunks += round
        }

        /// Session `s`'s id and the line where it first appears.
        func session(_ s: Int) -> (id: String, line: Int) {
            var lo = 0, hi = sessionRounds.count // the last round whose first session is at most s
            while hi - lo > 1 {
                let mid = (lo + hi) / 2
                if sessionRounds[mid].first <= s { lo = mid } else { hi = mid }
            }
            let round = sessionRounds[lo]
            return (round.ids[s - round.first], round.lines[s - round.first])
        }

        /// The first index of sorted `a` whose element is at least `x`.
        static func lowerBound(_ a: [Int32], _ x: Int32) -> Int {
            var lo = 0, hi = a.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if a[mid] < x { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
    }

    static func loadLong(
        reader: CSVReader, header: [String], headerLine: Int, options: ResponseFileOptions, budget: MemoryCheck,
        chunks: ParallelCSVChunks
    ) throws -> (matrix: ResponseMatrix, report: ResponseFileReport) {
        let path = reader.path
        let columns = try options.longColumnsWithTime(in: header, file: path, line: headerLine)
        var join = LongJoin(budget: budget, workers: chunks.workers)
        try withUnsafeMutablePointer(to: &join) { state in
            try chunks.read(
                reader,
                parse: { range, _, buf in
                    ParsedRecords(
                        range, buf, delimiter: options.delimiter, path: path,
                        into: LongChunkParser(path: path, options: options, columns: columns, fieldCount: header.count, range: range))
                },
                join: { parsed, _ in
                    try state.pointee.join(round: parsed.map(\.records))
                })
        }
        if join.rows == 0 { throw InputError(file: path, line: headerLine, message: "no data rows after the header") }
        return try groupLong(
            join, path: path, itemColumn: columns.item, workers: chunks.workers, categories: options.categoryResponses,
            timed: columns.time >= 0)
    }

    /// Gathers the joined responses by session (each session's runs in file order) and sorts each session's
    /// responses by item, rejecting an item repeated in a session — in parallel over chunks, then over sessions.
    /// Serial: O(runs) to place each run, O(sessions) to concatenate.
    private static func groupLong(_ join: LongJoin, path: String, itemColumn ic: Int, workers: Int, categories: Bool, timed: Bool) throws
        -> (matrix: ResponseMatrix, report: ResponseFileReport)
    {
        var join = join
        let sessions = join.sessionCount, n = join.cells
        var start = [Int](repeating: 0, count: sessions + 1)
        for s in 0..<sessions { start[s + 1] = start[s] + join.sessionCells[s] }
        // Where each run's responses go.
        var next = start
        var runDestination: [[Int]] = []
        runDestination.reserveCapacity(join.chunks.count)
        for (k, chunk) in join.chunks.enumerated() {
            var d: [Int] = []
            d.reserveCapacity(chunk.runs.count)
            for r in chunk.runs.indices {
                let s = Int(join.runSessions[k][r])
                d.append(next[s])
                next[s] += chunk.cellEnd(ofRun: r) - chunk.runs[r].cellStart
            }
            runDestination.append(d)
        }
        // Every cell has exactly one destination, so the buffers need no zeroing: their pages are first touched by
        // the workers that fill them.
        let item = UnsafeMutableBufferPointer<Int32>.allocate(capacity: n), value = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: n)
        let line = UnsafeMutableBufferPointer<Int>.allocate(capacity: n)
        let time = UnsafeMutableBufferPointer<Float>.allocate(capacity: timed ? n : 0)
        defer { item.deallocate(); value.deallocate(); line.deallocate(); time.deallocate() }
        let lanes = max(1, min(workers, join.chunks.count))
        let buffers = UncheckedSendableBox((item, value, line, time))
        parallelFor(lanes) { lane in
            let (item, value, line, time) = buffers.value
            for k in stride(from: lane, to: join.chunks.count, by: lanes) {
                let chunk = join.chunks[k], map = join.itemMaps[k]
                for r in chunk.runs.indices {
                    var d = runDestination[k][r]
                    for c in chunk.runs[r].cellStart..<chunk.cellEnd(ofRun: r) {
                        item[d] = map[Int(chunk.cellItem[c])]
                        value[d] = chunk.cellValue[c]
                        line[d] = chunk.firstLine + Int(chunk.rowLines[Int(chunk.cellRow[c])])
                        if timed { time[d] = chunk.cellTime[c] }
                        d += 1
                    }
                }
            }
        }
        join.chunks = []

        // Each part of the sessions: its persons' sorted responses, empty sessions and repeats.
        struct Part {
            var items: [Int32] = [], values: [UInt8] = [], lengths: [Int] = []
            var times: [Float] = []
            var personIDs: [String] = []
            var empty: [(id: String, line: Int)] = []
            var errors = ErrorCollector()
        }
        let ranges = balancedRanges(count: sessions, parts: 4 * workers) { start[$0] + $0 }
        var parts = [Part](repeating: Part(), count: ranges.count)
        parts.withUnsafeMutableBufferPointer { parts in
            parallelFor(max(1, min(workers, ranges.count))) { lane in
                var keys: [UInt64] = []
                for p in stride(from: lane, to: ranges.count, by: max(1, min(workers, ranges.count))) {
                    var part = Part()
                    for s in ranges[p] {
                        let lo = start[s], hi = start[s + 1]
                        if lo == hi { part.empty.append(join.session(s)); continue }
                        // By item, then file order (within a session, file order is line order).
                        keys.removeAll(keepingCapacity: true)
                        for k in lo..<hi { keys.append(UInt64(UInt32(item[k])) << 32 | UInt64(k - lo)) }
                        keys.sort()
                        var firstLine = 0, previous: Int32 = -1, count = 0
                        for key in keys {
                            let k = lo + Int(key & 0xFFFF_FFFF)
                            if item[k] == previous {
                                part.errors.add(
                                    InputError(
                                        file: path, line: line[k], column: ic + 1,
                                        message:
                                            "item '\(join.itemIDs[Int(item[k])])' is repeated in session '\(join.session(s).id)' (first on line \(firstLine))"
                                    ))
                                continue
                            }
                            previous = item[k]
                            firstLine = line[k]
                            part.items.append(item[k])
                            part.values.append(value[k])
                            if timed { part.times.append(time[k]) }
                            count += 1
                        }
                        part.personIDs.append(join.session(s).id)
                        part.lengths.append(count)
                    }
                    parts[p] = part
                }
            }
        }
        var errors = join.errors
        for part in parts {
            for e in part.errors.errors { errors.add(e) }
            errors.omitted += part.errors.omitted
        }
        try errors.throwIfAny()
        var personIDs: [String] = [], offsets = [0], partStart = [0]
        var empty: [(id: String, line: Int)] = []
        personIDs.reserveCapacity(sessions)
        offsets.reserveCapacity(sessions + 1)
        for part in parts {
            personIDs += part.personIDs
            for length in part.lengths { offsets.append(offsets[offsets.count - 1] + length) }
            empty += part.empty
            partStart.append(partStart[partStart.count - 1] + part.items.count)
        }
        // The parts' responses copied into place by the workers (the serial concatenation was a copy of every
        // response on one thread).
        let kept = partStart[partStart.count - 1]
        func gathered<T>(_ field: KeyPath<Part, [T]>) -> [T] {
            [T](unsafeUninitializedCapacity: kept) { buffer, initialized in
                guard let base = buffer.baseAddress, kept > 0 else { initialized = 0; return }
                let box = UncheckedSendableBox(base)
                parallelFor(max(1, min(workers, parts.count))) { lane in
                    for p in stride(from: lane, to: parts.count, by: max(1, min(workers, parts.count))) {
                        parts[p][keyPath: field].withUnsafeBufferPointer { source in
                            guard let from = source.baseAddress else { return }
                            (box.value + partStart[p]).initialize(from: from, count: source.count)
                        }
                    }
                }
                initialized = kept
            }
        }
        let items = gathered(\.items), values = gathered(\.values)
        let times = timed ? ResponseTimes(validatedSeconds: gathered(\.times)) : nil
        let matrix = ResponseMatrix(
            validatedPersonIDs: personIDs, itemIDs: join.itemIDs, rowOffsets: offsets, itemIndices: items, responses: values,
            categoryCounts: categories ? ResponseCell.categoryCounts(itemCount: join.itemIDs.count, items: items, values: values) : nil)
        var report = ResponseFileReport(
            path: path, layout: .long, dataRows: join.rows, personsRead: sessions,
            emptyPersons: empty, blankResponses: join.blanks, idColumn: nil)
        report.times = times
        report.droppedTimes = join.droppedTimes
        report.firstDroppedTimeLine = join.firstDroppedTime
        return (matrix, report)
    }
}

// MARK: - Wide layout

extension ResponseMatrix {
    /// The shape of a wide file, from its header.
    struct WideColumns {
        let fieldCount: Int
        /// Whether the first column holds person ids, and its header.
        let hasID: Bool
        let idName: String
        var itemStart: Int { hasID ? 1 : 0 }
        /// Per field: its item's index, or −1 (the id column, an ignored column).
        let itemIndex: [Int32]
        /// Cells are category indices (`ResponseFileOptions.categoryResponses`).
        let categories: Bool
        /// Option letters read as categories (`ResponseFileOptions.optionLetters`).
        var letters = false
        /// Per field: the field of its item's time (`ResponseFileOptions.timeSuffix`), −1 for none; empty when
        /// times are not read.
        var timeField: [Int32] = []
        var timed: Bool { !timeField.isEmpty }
    }

    /// One chunk of a wide file as its worker parses it: every data row with the end of its responses, and the
    /// invalid cells of rows that got as far as their cells.
    struct WideChunkParser: CSVChunkRecords {
        let path: String
        let columns: WideColumns
        /// Each data row: its line, the end of its responses in `items`/`values`, its id (nil without an id
        /// column) and its error (an index into `errors`, `-1` for none, `unlisted` for one past the first 20 of
        /// the chunk, which no message can show).
        var rows: [(line: Int, cellEnd: Int, id: String?, error: Int32)] = []
        var errors: [InputError] = []
        var items: [Int32] = [], values: [UInt8] = []
        /// Per kept response, its time (NaN: none), when times are read; dropped times and the first one's line.
        var times: [Float] = []
        var droppedTimes = 0, firstDroppedTime: Int?
        /// Invalid cells in row order (row in the chunk, column), and the first one's text per column.
        var badCells: [(row: Int32, column: Int32)] = []
        var firstBad: [Int32: (row: Int32, text: String)] = [:]

        static let unlisted = Int32.max

        init(path: String, columns: WideColumns, range: CSVChunkRange) {
            self.path = path
            self.columns = columns
            items.reserveCapacity((range.end - range.start) / 2)
            values.reserveCapacity((range.end - range.start) / 2)
        }

        mutating func reject(line: Int, _ error: InputError) {
            let index = errors.count < ErrorCollector().limit ? Int32(errors.count) : WideChunkParser.unlisted
            if index != WideChunkParser.unlisted { errors.append(error) }
            rows.append((line, items.count, nil, index))
        }

        mutating func record(_ buf: UnsafePointer<UInt8>, _ fields: borrowing CSVRecordScanner, line: Int, plain: Bool) {
            let row = Int32(rows.count)
            if fields.fieldCount != columns.fieldCount {
                reject(line: line, ResponseMatrix.fieldCountError(path: path, line: line, found: fields.fieldCount, expected: columns.fieldCount))
                return
            }
            // Only quoted fields are copied into it: no allocation for the others.
            var scratch: [UInt8] = []
            var id: String?
            if columns.hasID {
                var problem: InputError?
                id = fields.withField(0, in: buf, scratch: &scratch) { raw -> String? in
                    let b = raw.trimmingSpaces()
                    guard let text = TextFidelity.validString(b) else {
                        problem = InputError(file: path, line: line, column: 1, message: TextFidelity.invalidUTF8("\(columns.idName)", b))
                        return nil
                    }
                    if text.isEmpty {
                        problem = InputError(file: path, line: line, column: 1, message: "empty \(columns.idName) (every row needs an id)")
                    }
                    return text
                }
                if let problem { reject(line: line, problem); return }
            }
            for c in columns.itemStart..<columns.fieldCount {
                let j = columns.itemIndex[c]
                if j < 0 { continue }
                let before = items.count
                defer { if columns.timed && items.count > before { time(of: c, row: row, line: line, buf, fields, &scratch) } }
                if columns.categories {
                    let v = fields.withField(c, in: buf, scratch: &scratch, { ResponseCell.parseCategory($0, letters: columns.letters) })
                    if v >= 0 { items.append(j); values.append(UInt8(v)); continue }
                    if v == ResponseCell.missingCategory { continue }
                    badCells.append((row, Int32(c)))
                    if firstBad[Int32(c)] == nil {
                        firstBad[Int32(c)] = (row, fields.withField(c, in: buf, scratch: &scratch) { TextFidelity.quoted($0) })
                    }
                    continue
                }
                switch fields.withField(c, in: buf, scratch: &scratch, { ResponseCell.parse($0) }) {
                case .correct: items.append(j); values.append(1)
                case .incorrect: items.append(j); values.append(0)
                case .missing: break
                case .invalid:
                    badCells.append((row, Int32(c)))
                    if firstBad[Int32(c)] == nil {
                        firstBad[Int32(c)] = (row, fields.withField(c, in: buf, scratch: &scratch) { TextFidelity.quoted($0) })
                    }
                }
            }
            rows.append((line, items.count, id, -1))
        }

        /// Appends the time of the response just kept from field `c` (NaN without a time field or time); an invalid
        /// time is a bad cell of its own field.
        @inline(__always)
        mutating func time(
            of c: Int, row: Int32, line: Int, _ buf: UnsafePointer<UInt8>, _ fields: borrowing CSVRecordScanner, _ scratch: inout [UInt8]
        ) {
            let tc = Int(columns.timeField[c])
            guard tc >= 0 else { times.append(.nan); return }
            switch fields.withField(tc, in: buf, scratch: &scratch, { ResponseTimeCell.parse($0) }) {
            case .seconds(let t): times.append(t)
            case .missing: times.append(.nan)
            case .dropped:
                times.append(.nan)
                droppedTimes += 1
                if firstDroppedTime == nil { firstDroppedTime = line }
            case .invalid:
                times.append(.nan)
                badCells.append((row, Int32(tc)))
                if firstBad[Int32(tc)] == nil {
                    firstBad[Int32(tc)] = (row, fields.withField(tc, in: buf, scratch: &scratch) { TextFidelity.quoted($0) })
                }
            }
        }
    }

    /// The file-order join of wide chunks: numbers rows, rejects repeated person ids, groups invalid cells per
    /// column, collects errors in order, checks the memory budget every 4,096th data row as the serial reader did,
    /// and plans where each chunk's kept responses go.
    struct WideJoin {
        let path: String
        let columns: WideColumns
        let budget: MemoryCheck
        var chunks: [WideChunkParser] = []
        /// Per chunk: runs of kept responses (range in the chunk) and where they go.
        var copies: [[(from: Range<Int>, to: Int)]] = []
        var personIDs: [String] = [], offsets = [0]
        var empty: [(id: String, line: Int)] = []
        var seenPerson: [String: Int] = [:]
        var errors = ErrorCollector()
        var rows = 0
        var droppedTimes = 0, firstDroppedTime: Int?
        /// Invalid cells per column: count, first line, and its text (nil when the chunk did not keep it: the
        /// chunk's first was in a row rejected here).
        var badCells: [(count: Int, line: Int, text: String?)?]

        init(path: String, columns: WideColumns, budget: MemoryCheck) {
            self.path = path
            self.columns = columns
            self.budget = budget
            badCells = .init(repeating: nil, count: columns.fieldCount)
        }

        mutating func join(_ chunk: WideChunkParser) throws {
            var plan: [(from: Range<Int>, to: Int)] = []
            var cellStart = 0, b = 0
            for (i, row) in chunk.rows.enumerated() {
                rows += 1
                let lo = cellStart
                cellStart = row.cellEnd
                if rows & 0xFFF == 0 {
                    try budget.check(line: row.line, responses: offsets[offsets.count - 1], persons: personIDs.count, bytesPerResponse: 5)
                }
                if row.error >= 0 {
                    if row.error == WideChunkParser.unlisted { errors.omitted += 1 } else { errors.add(chunk.errors[Int(row.error)]) }
                    continue
                }
                let id: String
                if columns.hasID {
                    id = row.id!
                    if let previous = seenPerson[id] {
                        errors.add(
                            InputError(
                                file: path, line: row.line, column: 1, message: "\(columns.idName) '\(id)' already appeared on line \(previous)"))
                        while b < chunk.badCells.count && chunk.badCells[b].row == Int32(i) { b += 1 }
                        continue
                    }
                    seenPerson[id] = row.line
                } else {
                    id = String(rows)
                }
                while b < chunk.badCells.count && chunk.badCells[b].row == Int32(i) {
                    let c = Int(chunk.badCells[b].column)
                    if let bad = badCells[c] {
                        badCells[c] = (bad.count + 1, bad.line, bad.text)
                    } else {
                        let first = chunk.firstBad[Int32(c)]!
                        badCells[c] = (1, row.line, first.row == Int32(i) ? first.text : nil)
                    }
                    b += 1
                }
                if row.cellEnd == lo {
                    empty.append((id, row.line))
                    continue
                }
                let to = offsets[offsets.count - 1]
                if let last = plan.last, last.from.upperBound == lo {
                    plan[plan.count - 1].from = last.from.lowerBound..<row.cellEnd
                } else {
                    plan.append((lo..<row.cellEnd, to))
                }
                personIDs.append(id)
                offsets.append(to + row.cellEnd - lo)
            }
            droppedTimes += chunk.droppedTimes
            if firstDroppedTime == nil { firstDroppedTime = chunk.firstDroppedTime }
            chunks.append(chunk)
            copies.append(plan)
        }
    }

    static func loadWide(
        reader: CSVReader, header: [String], headerLine: Int, options: ResponseFileOptions, budget: MemoryCheck,
        chunks: ParallelCSVChunks
    ) throws -> (matrix: ResponseMatrix, report: ResponseFileReport) {
        let path = reader.path
        var errors = ErrorCollector()
        let first = header.first ?? ""
        let hasID = ResponseFileOptions.isWideIDColumn(first, sessionColumn: options.sessionColumn)
        let (itemColumns, timeColumns) = try options.wideColumns(header: header, hasID: hasID, file: path, line: headerLine)
        var itemIndex = [Int32](repeating: -1, count: header.count)
        for (k, c) in itemColumns.enumerated() { itemIndex[c] = Int32(k) }
        var columns = WideColumns(fieldCount: header.count, hasID: hasID, idName: first, itemIndex: itemIndex, categories: options.categoryResponses)
        columns.letters = options.optionLetters
        if !timeColumns.isEmpty {
            columns.timeField = [Int32](repeating: -1, count: header.count)
            for (k, c) in itemColumns.enumerated() { columns.timeField[c] = Int32(timeColumns[k]) }
        }
        let isTimeField = Set(timeColumns)
        let itemIDs = itemColumns.map { header[$0] }
        var seenItem: [String: Int] = [:]
        for (k, id) in itemIDs.enumerated() {
            let column = itemColumns[k] + 1
            if id.isEmpty {
                errors.add(InputError(file: path, line: headerLine, column: column, message: "item column \(column) has an empty name"))
            } else if let previous = seenItem[id] {
                errors.add(
                    InputError(
                        file: path, line: headerLine, column: column,
                        message: "item '\(id)' appears twice in the header (columns \(previous) and \(column))"))
            } else {
                seenItem[id] = column
            }
        }
        try errors.throwIfAny()

        var join = WideJoin(path: path, columns: columns, budget: budget)
        try withUnsafeMutablePointer(to: &join) { state in
            try chunks.read(
                reader,
                parse: { range, _, buf in
                    ParsedRecords(
                        range, buf, delimiter: options.delimiter, path: path, into: WideChunkParser(path: path, columns: columns, range: range))
                },
                join: { parsed, _ in
                    for chunk in parsed { try state.pointee.join(chunk.records) }
                })
        }
        errors = join.errors
        let missing = join.badCells.indices.compactMap { c in join.badCells[c].flatMap { $0.text == nil ? (line: $0.line, column: c) : nil } }
        let texts = try missing.isEmpty ? [:] : fieldTexts(path: path, delimiter: options.delimiter, missing)
        for c in 0..<columns.fieldCount {
            guard let bad = join.badCells[c] else { continue }
            let more = bad.count > 1 ? " (\(bad.count) invalid cells in this column)" : ""
            let what =
                isTimeField.contains(c)
                ? "a response time; allowed: \(ResponseTimeCell.allowedDescription)"
                : "a response; allowed: \(ResponseCell.allowedDescription(options))"
            errors.add(
                InputError(
                    file: path, line: bad.line, column: c + 1,
                    message: "column \(TextFidelity.quoted(header[c])): \(bad.text ?? texts[c] ?? "") is not \(what)\(more)"))
        }
        try errors.throwIfAny()
        if join.rows == 0 { throw InputError(file: path, line: headerLine, message: "no data rows after the header") }

        let n = join.offsets[join.offsets.count - 1]
        var items = [Int32](repeating: 0, count: n), values = [UInt8](repeating: 0, count: n)
        var times = [Float](repeating: .nan, count: columns.timed ? n : 0)
        let lanes = max(1, min(chunks.workers, join.chunks.count))
        parallelFor(lanes, mutating: &items, &values, &times) { lane, items, values, times in
            for k in stride(from: lane, to: join.chunks.count, by: lanes) {
                let chunk = join.chunks[k]
                for copy in join.copies[k] {
                    chunk.items.withUnsafeBufferPointer {
                        items.baseAddress!.advanced(by: copy.to).update(from: $0.baseAddress! + copy.from.lowerBound, count: copy.from.count)
                    }
                    chunk.values.withUnsafeBufferPointer {
                        values.baseAddress!.advanced(by: copy.to).update(from: $0.baseAddress! + copy.from.lowerBound, count: copy.from.count)
                    }
                    if columns.timed {
                        chunk.times.withUnsafeBufferPointer {
                            times.baseAddress!.advanced(by: copy.to).update(from: $0.baseAddress! + copy.from.lowerBound, count: copy.from.count)
                        }
                    }
                }
            }
        }
        let matrix = ResponseMatrix(
            validatedPersonIDs: join.personIDs, itemIDs: itemIDs, rowOffsets: join.offsets, itemIndices: items, responses: values,
            categoryCounts: options.categoryResponses ? ResponseCell.categoryCounts(itemCount: itemIDs.count, items: items, values: values) : nil)
        var report = ResponseFileReport(
            path: path, layout: .wide, dataRows: join.rows, personsRead: join.personIDs.count + join.empty.count,
            emptyPersons: join.empty, blankResponses: 0, idColumn: hasID ? first : nil)
        if columns.timed {
            report.times = ResponseTimes(validatedSeconds: times)
            report.droppedTimes = join.droppedTimes
            report.firstDroppedTimeLine = join.firstDroppedTime
        }
        return (matrix, report)
    }

    /// The quoted text of field `column` of the record on `line`, for each pair, keyed by column: read again
    /// from the file, one record at a time (only for a column whose first invalid cell the parallel read did not
    /// keep — its chunk's first was in a row rejected for a repeated id).
    private static func fieldTexts(path: String, delimiter: UInt8, _ wanted: [(line: Int, column: Int)]) throws -> [Int: String] {
        let reader = try CSVReader(path: path, delimiter: delimiter)
        let last = wanted.map(\.line).max() ?? 0
        var texts: [Int: String] = [:]
        while try reader.nextRow(), reader.line <= last {
            for w in wanted where w.line == reader.line && w.column < reader.fieldCount {
                texts[w.column] = reader.withField(w.column) { TextFidelity.quoted($0) }
            }
        }
        return texts
    }
}
