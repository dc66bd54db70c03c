import Foundation

/// Output formats of `BatchScorer`.
public enum ScoreOutputFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case csv, jsonl
}

/// A session that was read but not scored, with where and why.
public struct RejectedSession: Sendable, Hashable {
    public var sessionID: String
    public var file: String
    public var line: Int?
    public var column: Int?
    public var reason: String
}

/// Counts of one batch-scoring run. `sessionsRead == sessionsScored + sessionsRejected` always holds.
public struct BatchScoringReport: Sendable, Hashable {
    public var files = 0
    public var rowsRead = 0
    public var blankResponses = 0
    public var bytesRead = 0
    public var sessionsRead = 0
    public var sessionsScored = 0
    public var sessionsRejected = 0
    /// Rows of some session were not contiguous: the files were read again and regrouped in memory.
    public var regrouped = false
    /// How many scored sessions carry each flag.
    public var flagCounts: [ScoreFlag: Int] = [:]
    public var seconds = 0.0
}

/// Progress of a running batch, for display.
public struct BatchProgress: Sendable {
    public var bytesRead: Int
    public var totalBytes: Int?
    public var rows: Int
    public var sessions: Int
    public var seconds: Double
}

/// Scores files of sessions (long or wide CSV, as `ResponseMatrix.load` reads them) into a score file and a
/// reject file.
///
/// Streaming: while each session's rows are contiguous, memory stays bounded (one batch of sessions). A
/// session whose rows reappear later is detected (64-bit hashes of finished session ids); the run then starts
/// over, reading the files again and grouping rows by session in memory, so interleaved input is still scored
/// correctly. Scores come out one row per session in order of first appearance. Long files are parsed and
/// scored in parallel chunks (`BatchScorer+Parallel.swift`, same output as one thread); wide files are parsed on
/// one thread and scored in parallel batches. Every session read ends up in the scores or in the rejects, with
/// file, line, column and reason.
public final class BatchScorer {
    public let scorer: SessionScorer
    public let fileOptions: ResponseFileOptions
    public let format: ScoreOutputFormat
    public var batchSize = 16384
    public var workers = ProcessInfo.processInfo.activeProcessorCount
    /// Long files are parsed and scored in parallel chunks of about this many bytes (two per worker per round);
    /// `parallelParsing = false` reads them on one thread as wide files are (same output either way).
    public var parallelChunkBytes = 4 << 20
    public var parallelParsing = true

    public init(scorer: SessionScorer, fileOptions: ResponseFileOptions = ResponseFileOptions(), format: ScoreOutputFormat = .csv) {
        self.scorer = scorer
        self.fileOptions = fileOptions
        self.format = format
    }

    /// The score file's header line (CSV) or nothing (JSON Lines).
    public var header: String {
        guard format == .csv else { return "" }
        var columns = ["session_id", "n_items", "n_correct", "theta", "se", "iq", "iq_low", "iq_high", "percentile", "method", "flags", "norms"]
        for d in scorer.domains { columns += ["\(d)_correct", "\(d)_answered"] }
        return columns.map(csvField).joined(separator: ",") + "\n"
    }

    public static let rejectHeader = "session_id,file,line,column,reason\n"

    struct Regroup: Error {}

    /// Runs the batch. `scores` and `rejects` receive the header and rows (and are `reset()` if the run has to
    /// regroup); the caller commits them. `progress` is called at most every 0.25 s, one call at a time, but not
    /// necessarily on the calling thread (long files are joined and written on a background thread).
    public func run(inputs: [String], scores: AtomicFileWriter, rejects: AtomicFileWriter,
                    progress: ((BatchProgress) -> Void)? = nil) throws -> BatchScoringReport {
        let started = Date()
        do {
            var state = try RunState(owner: self, inputs: inputs, scores: scores, rejects: rejects, gather: false, progress: progress, started: started)
            try state.readAll()
            return state.finish()
        } catch is Regroup {
            try scores.reset()
            try rejects.reset()
            var state = try RunState(owner: self, inputs: inputs, scores: scores, rejects: rejects, gather: true, progress: progress, started: started)
            try state.readAll()
            try state.replayGathered()
            var report = state.finish()
            report.regrouped = true
            return report
        }
    }

    // MARK: - One pass over the inputs

    struct RunState {
        let owner: BatchScorer
        let inputs: [String]
        let scores: AtomicFileWriter
        let rejects: AtomicFileWriter
        let gather: Bool
        let progress: ((BatchProgress) -> Void)?
        let started: Date
        var report = BatchScoringReport()
        let totalBytes: Int?
        var bytesBefore = 0
        var lastProgress = Date()

        // The open session (streaming) or the one being replayed (gather).
        var currentID: [UInt8] = []
        var hasCurrent = false
        var current = OpenSession()
        var seenHashes = HashSet64()
        var ordinal = 0
        /// Per bank item: ordinal of the last session that answered it, and on which line (duplicate detection).
        let stamps: Stamps

        // Gather mode: every event by session.
        var gatherIndex: [[UInt8]: Int] = [:]
        var gatherSessions: [(id: String, file: Int, line: Int)] = []
        var events: [(session: Int32, item: Int32, value: UInt8, kind: UInt8, file: Int16, line: Int, column: Int32)] = []
        var eventReasons: [Int: String] = [:]

        var batch = Batch()
        /// The parallel path's per-chunk duplicate stamps, reused across rounds, and its bytes joined so far.
        var chunkStamps: [Stamps] = []
        var parallelBytes = 0

        init(owner: BatchScorer, inputs: [String], scores: AtomicFileWriter, rejects: AtomicFileWriter, gather: Bool,
             progress: ((BatchProgress) -> Void)?, started: Date) throws {
            self.owner = owner
            self.inputs = inputs
            self.scores = scores
            self.rejects = rejects
            self.gather = gather
            self.progress = progress
            self.started = started
            var total = 0
            var known = true
            for path in inputs {
                if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int { total += size } else { known = false }
            }
            totalBytes = known ? total : nil
            stamps = Stamps(count: owner.scorer.bank.items.count)
            report.files = inputs.count
            try scores.write(owner.header)
            try rejects.write(BatchScorer.rejectHeader)
        }

        struct OpenSession {
            var id = ""
            var file = 0
            var line = 0
            var error: RowError?
            var items: [Int] = []
            var responses: [UInt8] = []
        }

        // Event kinds.
        static let touch: UInt8 = 0, response: UInt8 = 1, blank: UInt8 = 2, failure: UInt8 = 3

        mutating func readAll() throws {
            for (fileIndex, path) in inputs.enumerated() {
                let reader = try CSVReader(path: path)
                try readFile(reader, fileIndex: fileIndex)
                bytesBefore += reader.bytesConsumed
            }
            report.bytesRead = bytesBefore
            if !gather {
                try closeCurrent()
                try flush()
                try drainPending()
            }
        }

        mutating func readFile(_ reader: CSVReader, fileIndex: Int) throws {
            let path = reader.path
            guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected a header row") }
            let header = try reader.headerFields()
            let options = owner.fileOptions
            let hasLong = header.contains(options.sessionColumn) && header.contains(options.itemColumn)
            let layout = options.layout ?? (hasLong ? .long : .wide)
            let table = owner.scorer.itemTable
            if layout == .long {
                func column(_ name: String, _ role: String) throws -> Int {
                    guard let c = header.firstIndex(of: name) else {
                        throw InputError(file: path, line: reader.line,
                                         message: "no \(role) column '\(name)' in the header (\(header.joined(separator: ","))); name it with --\(role)-column")
                    }
                    return c
                }
                let sc = try column(options.sessionColumn, "session"), ic = try column(options.itemColumn, "item"), rc = try column(options.responseColumn, "response")
                let needed = max(sc, ic, rc) + 1
                if !gather && owner.parallelParsing {
                    try readLongParallel(reader, fileIndex: fileIndex, columns: LongColumns(
                        session: sc, item: ic, response: rc, needed: needed, headerCount: header.count,
                        sessionName: options.sessionColumn, responseName: options.responseColumn))
                    return
                }
                while try reader.nextRow() {
                    report.rowsRead += 1
                    let line = reader.line
                    if reader.fieldCount <= sc {
                        try orphan(file: fileIndex, line: line, column: reader.fieldCount,
                                   reason: "malformed row: expected \(header.count) fields as in the header, found \(reader.fieldCount); no session id")
                        continue
                    }
                    if reader.withField(sc, { $0.trimmingSpaces().isEmpty }) {
                        try orphan(file: fileIndex, line: line, column: sc + 1, reason: "empty \(options.sessionColumn): the row belongs to no session")
                        continue
                    }
                    try reader.withField(sc) { try enter(session: $0.trimmingSpaces(), file: fileIndex, line: line, column: sc + 1) }
                    if reader.fieldCount != header.count {
                        try event(Self.failure, file: fileIndex, line: line, column: min(reader.fieldCount, header.count) + (reader.fieldCount > header.count ? 1 : 0),
                                  reason: "malformed row: expected \(header.count) fields as in the header, found \(reader.fieldCount)")
                        continue
                    }
                    let cell = reader.withField(rc) { ResponseCell.parse($0) }
                    if cell == .missing { report.blankResponses += 1; try event(Self.blank, file: fileIndex, line: line); continue }
                    if cell == .invalid {
                        try event(Self.failure, file: fileIndex, line: line, column: rc + 1,
                                  reason: "\(options.responseColumn) \(reader.withField(rc) { TextFidelity.quoted($0) }) is not a response; allowed: \(ResponseCell.allowedDescription)")
                        continue
                    }
                    guard let j = reader.withField(ic, { table.index(of: $0.trimmingSpaces()) }) else {
                        try event(Self.failure, file: fileIndex, line: line, column: ic + 1,
                                  reason: "unknown item id \(reader.withField(ic) { TextFidelity.quoted($0.trimmingSpaces()) }) (not in the bank)")
                        continue
                    }
                    try event(Self.response, item: j, value: cell == .correct ? 1 : 0, file: fileIndex, line: line, column: ic + 1)
                    maybeProgress(reader)
                }
            } else {
                let first = header.first ?? ""
                let hasID = first == options.sessionColumn || ResponseFileOptions.wideIDNames.contains(first.lowercased())
                let itemStart = hasID ? 1 : 0
                guard header.count > itemStart else { throw InputError(file: path, line: reader.line, message: "the header names no item columns") }
                let columnItem: [Int?] = header.map { table.index(of: $0) }
                var row = 0
                let prefix = inputs.count > 1 ? (path as NSString).lastPathComponent + ":" : ""
                while try reader.nextRow() {
                    report.rowsRead += 1
                    row += 1
                    let line = reader.line
                    if hasID && (reader.fieldCount == 0 || reader.withField(0, { $0.trimmingSpaces().isEmpty })) {
                        try orphan(file: fileIndex, line: line, column: 1, reason: "empty \(first): the row belongs to no session")
                        continue
                    }
                    if hasID {
                        try reader.withField(0) { try enter(session: $0.trimmingSpaces(), file: fileIndex, line: line, column: 1) }
                    } else {
                        let id = Array((prefix + String(row)).utf8)
                        try id.withUnsafeBufferPointer { try enter(session: $0, file: fileIndex, line: line, column: 1) }
                    }
                    try event(Self.touch, file: fileIndex, line: line)
                    if reader.fieldCount != header.count {
                        try event(Self.failure, file: fileIndex, line: line, column: min(reader.fieldCount, header.count) + 1,
                                  reason: "malformed row: expected \(header.count) fields as in the header, found \(reader.fieldCount)")
                        if !gather { try closeCurrent() }
                        continue
                    }
                    for c in itemStart..<header.count {
                        let cell = reader.withField(c) { ResponseCell.parse($0) }
                        switch cell {
                        case .missing: continue
                        case .invalid:
                            try event(Self.failure, file: fileIndex, line: line, column: c + 1,
                                      reason: "column \(TextFidelity.quoted(header[c])): \(reader.withField(c) { TextFidelity.quoted($0) }) is not a response; allowed: \(ResponseCell.allowedDescription)")
                        case .correct, .incorrect:
                            guard let j = columnItem[c] else {
                                try event(Self.failure, file: fileIndex, line: line, column: c + 1, reason: "unknown item id \(TextFidelity.quoted(header[c])) (column \(c + 1) is not in the bank)")
                                continue
                            }
                            try event(Self.response, item: j, value: cell == .correct ? 1 : 0, file: fileIndex, line: line, column: c + 1)
                        }
                    }
                    if !gather { try closeCurrent() }
                    maybeProgress(reader)
                }
            }
        }

        mutating func maybeProgress(_ reader: CSVReader) {
            guard let progress, report.rowsRead & 0xFFFF == 0 else { return }
            let now = Date()
            guard now.timeIntervalSince(lastProgress) >= 0.25 else { return }
            lastProgress = now
            progress(BatchProgress(bytesRead: bytesBefore + reader.bytesConsumed, totalBytes: totalBytes, rows: report.rowsRead,
                                   sessions: report.sessionsRead + (hasCurrent ? 1 : 0), seconds: now.timeIntervalSince(started)))
        }

        /// A row that belongs to the session with these id bytes (in column `column`). An id that is not valid
        /// UTF-8 rejects its session (`TextFidelity`); the rejects file shows it with `\xFF` escapes.
        mutating func enter(session bytes: UnsafeBufferPointer<UInt8>, file: Int, line: Int, column: Int) throws {
            if gather {
                let key = Array(bytes)
                if let s = gatherIndex[key] { ordinal = s } else {
                    ordinal = gatherSessions.count
                    gatherIndex[key] = ordinal
                    let valid = TextFidelity.validString(bytes)
                    gatherSessions.append((valid ?? TextFidelity.display(bytes), file, line))
                    if valid == nil {
                        try event(Self.failure, file: file, line: line, column: column, reason: TextFidelity.invalidUTF8("session id", bytes))
                    }
                }
                return
            }
            if hasCurrent && bytes.count == currentID.count
                && (bytes.count == 0 || currentID.withUnsafeBufferPointer { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
                return
            }
            try closeCurrent()
            let h = ByteKeyTable.hash(bytes)
            if !seenHashes.insert(h) { throw Regroup() }
            currentID.removeAll(keepingCapacity: true)
            currentID.append(contentsOf: bytes)
            ordinal += 1
            hasCurrent = true
            if let valid = TextFidelity.validString(bytes) {
                current = OpenSession(id: valid, file: file, line: line)
            } else {
                current = OpenSession(id: TextFidelity.display(bytes), file: file, line: line,
                                      error: (TextFidelity.invalidUTF8("session id", bytes), file, line, column))
            }
        }

        /// A row with no session id at all: rejected on its own.
        mutating func orphan(file: Int, line: Int, column: Int, reason: String) throws {
            if !gather { try closeCurrent() }
            if gather {
                ordinal = gatherSessions.count
                gatherSessions.append(("", file, line))
                try event(Self.failure, file: file, line: line, column: column, reason: reason)
                return
            }
            ordinal += 1
            current = OpenSession(id: "", file: file, line: line, error: (reason, file, line, column))
            hasCurrent = true
            currentID = []
            try closeCurrent()
        }

        mutating func event(_ kind: UInt8, item: Int = -1, value: UInt8 = 0, file: Int, line: Int, column: Int? = nil, reason: String? = nil) throws {
            if gather {
                if let reason { eventReasons[events.count] = reason }
                events.append((Int32(ordinal), Int32(item), value, kind, Int16(file), line, Int32(column ?? 0)))
                return
            }
            apply(kind, item: item, value: value, file: file, line: line, column: column, reason: reason)
        }

        mutating func apply(_ kind: UInt8, item: Int, value: UInt8, file: Int, line: Int, column: Int?, reason: String?) {
            switch kind {
            case Self.response:
                if stamps.session[item] == ordinal {
                    if current.error == nil {
                        let other = stamps.file[item] == file ? "" : " of \((inputs[stamps.file[item]] as NSString).lastPathComponent)"
                        current.error = ("item '\(owner.scorer.bank.items[item].itemID)' answered twice in the session (first on line \(stamps.line[item])\(other))",
                                         file, line, column)
                    }
                    return
                }
                stamps.session[item] = ordinal
                stamps.line[item] = line
                stamps.file[item] = file
                current.items.append(item)
                current.responses.append(value)
            case Self.failure:
                if current.error == nil { current.error = (reason ?? "invalid row", file, line, column) }
            default:
                break
            }
        }

        mutating func closeCurrent() throws {
            guard hasCurrent else { return }
            hasCurrent = false
            batch.append(current)
            report.sessionsRead += 1
            if batch.count >= owner.batchSize { try flush() }
        }

        /// Gather mode: replay each session's events in first-appearance order.
        mutating func replayGathered() throws {
            let sessions = gatherSessions.count
            var counts = [Int](repeating: 0, count: sessions + 1)
            for e in events { counts[Int(e.session) + 1] += 1 }
            for s in 0..<sessions { counts[s + 1] += counts[s] }
            var order = [Int](repeating: 0, count: events.count)
            var next = counts
            for (k, e) in events.enumerated() { order[next[Int(e.session)]] = k; next[Int(e.session)] += 1 }
            for s in 0..<sessions {
                let info = gatherSessions[s]
                ordinal = s
                current = OpenSession(id: info.id, file: info.file, line: info.line)
                hasCurrent = true
                for k in counts[s]..<counts[s + 1] {
                    let e = events[order[k]]
                    apply(e.kind, item: Int(e.item), value: e.value, file: Int(e.file), line: e.line, column: e.column == 0 ? nil : Int(e.column), reason: eventReasons[order[k]])
                }
                try closeCurrent()
            }
            try flush()
            try drainPending()
        }

        /// Hands the full batch to a background task (scoring runs while the next batch is parsed); the previous
        /// batch's output is written first, so output order is input order.
        mutating func flush() throws {
            guard batch.count > 0 else { return }
            try drainPending()
            let box = UncheckedSendableBox((owner, batch, PendingBatch()))
            let group = DispatchGroup()
            group.enter()
            DispatchQueue.global().async {
                let (owner, work, slot) = box.value
                slot.result = owner.process(work)
                group.leave()
            }
            pending = (group, box.value.2)
            batch = Batch()
        }

        var pending: (group: DispatchGroup, slot: PendingBatch)?

        /// Waits for the batch in flight, then writes its scores and rejects.
        mutating func drainPending() throws {
            guard let (group, slot) = pending else { return }
            group.wait()
            pending = nil
            guard let result = slot.result else { return }
            for chunk in result.rows { try chunk.withUnsafeBufferPointer { try scores.write(bytes: $0) } }
            try writeRejects(result.rejects)
            report.sessionsScored += result.scored
            report.sessionsRejected += result.rejects.count
            for (flag, n) in result.flags { report.flagCounts[flag, default: 0] += n }
        }

        func writeRejects(_ list: [RejectRecord]) throws {
            for reject in list {
                let r = RejectedSession(sessionID: reject.id, file: inputs[reject.file], line: reject.line, column: reject.column, reason: reject.reason)
                try rejects.write(BatchScorer.rejectLine(r))
            }
        }

        mutating func finish() -> BatchScoringReport {
            report.seconds = Date().timeIntervalSince(started)
            return report
        }
    }

    /// Raw per-item buffers (array writes inside a mutating method pay a uniqueness check each).
    final class Stamps {
        /// The last session ordinal a chunk parser used with these stamps (the parallel path).
        var lastOrdinal = 0
        /// The parallel path's per-chunk buffers, kept here between rounds.
        var items: UnsafeMutablePointer<Int>?
        var responses: UnsafeMutablePointer<UInt8>?
        var bufferCapacity = 0
        var out: ByteBuffer?
        let session: UnsafeMutablePointer<Int>
        let line: UnsafeMutablePointer<Int>
        let file: UnsafeMutablePointer<Int>
        init(count: Int) {
            session = .allocate(capacity: max(count, 1))
            session.initialize(repeating: -1, count: max(count, 1))
            line = .allocate(capacity: max(count, 1))
            line.initialize(repeating: 0, count: max(count, 1))
            file = .allocate(capacity: max(count, 1))
            file.initialize(repeating: 0, count: max(count, 1))
        }
        deinit {
            session.deallocate()
            line.deallocate()
            file.deallocate()
            items?.deallocate()
            responses?.deallocate()
            out?.deallocate()
        }
    }

    /// Where a background task leaves a processed batch.
    final class PendingBatch {
        var result: BatchResult?
    }

    /// A batch of parsed sessions in compact form.
    struct Batch {
        var ids: [String] = []
        var files: [Int] = []
        var lines: [Int] = []
        var errors: [RowError?] = []
        var offsets: [Int] = [0]
        var items: [Int] = []
        var responses: [UInt8] = []
        var count: Int { ids.count }

        mutating func append(_ s: RunState.OpenSession) {
            ids.append(s.id)
            files.append(s.file)
            lines.append(s.line)
            errors.append(s.error)
            items.append(contentsOf: s.items)
            responses.append(contentsOf: s.responses)
            offsets.append(items.count)
        }
    }

    /// Why a session is rejected, and where: input file index, line, column.
    typealias RowError = (reason: String, file: Int, line: Int, column: Int?)

    /// A session for the reject file: id, input file index, line, column and reason.
    typealias RejectRecord = (id: String, file: Int, line: Int, column: Int?, reason: String)

    struct BatchResult {
        var rows: [[UInt8]]
        var rejects: [RejectRecord]
        var scored: Int
        var flags: [ScoreFlag: Int]
    }

    /// Scores a batch in parallel chunks; output rows keep the batch order.
    func process(_ batch: Batch) -> BatchResult {
        let n = batch.count
        let chunks = min(n, max(1, workers * 4))
        var rows = [[UInt8]](repeating: [], count: chunks)
        var rejects = [[RejectRecord]](repeating: [], count: chunks)
        var flagCounts = [[Int]](repeating: [Int](repeating: 0, count: ScoreFlag.allCases.count), count: chunks)
        let labels = OutputLabels(self)
        rows.withUnsafeMutableBufferPointer { rowsOut in
        rejects.withUnsafeMutableBufferPointer { rejectsOut in
        flagCounts.withUnsafeMutableBufferPointer { flagsOut in
        batch.items.withUnsafeBufferPointer { items in
        batch.responses.withUnsafeBufferPointer { responses in
            parallelFor(chunks) { c in
                let lo = n * c / chunks, hi = n * (c + 1) / chunks
                var out = ByteBuffer(capacity: (hi - lo) * 100)
                var localRejects: [RejectRecord] = []
                var localFlags = [Int](repeating: 0, count: ScoreFlag.allCases.count)
                for s in lo..<hi {
                    let range = batch.offsets[s]..<batch.offsets[s + 1]
                    emit(id: batch.ids[s], file: batch.files[s], line: batch.lines[s], error: batch.errors[s],
                         UnsafeBufferPointer(rebasing: items[range]), UnsafeBufferPointer(rebasing: responses[range]),
                         labels, out: &out, rejects: &localRejects, flags: &localFlags)
                }
                rowsOut[c] = out.array
                out.deallocate()
                rejectsOut[c] = localRejects
                flagsOut[c] = localFlags
            }
        }}}}}
        var flags: [ScoreFlag: Int] = [:]
        for (k, flag) in ScoreFlag.allCases.enumerated() {
            let total = flagCounts.reduce(0) { $0 + $1[k] }
            if total > 0 { flags[flag] = total }
        }
        let allRejects = rejects.flatMap { $0 }
        return BatchResult(rows: rows, rejects: allRejects, scored: n - allRejects.count, flags: flags)
    }

    /// The method and norms columns, the same for every row.
    struct OutputLabels {
        let method: String
        let norms: String
        init(_ owner: BatchScorer) {
            method = owner.scorer.estimator.options.method.rawValue
            norms = owner.scorer.scale.norms.name + "@" + owner.scorer.scale.norms.version
        }
    }

    /// One read session to its score row (appended to `out`, its flags counted) or to `rejects`: a session with
    /// a parse error is rejected with that error's line and column; one the scorer refuses, with its first line.
    @inline(__always)
    func emit(id: String, file: Int, line: Int, error: RowError?,
              _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ labels: OutputLabels,
              out: inout ByteBuffer, rejects: inout [RejectRecord], flags: inout [Int]) {
        if let error {
            rejects.append((id, error.file, error.line, error.column, error.reason))
            return
        }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: max(2 * scorer.domains.count, 1)) { counts in
            do {
                let (estimate, score) = try scorer.score(items, responses, domainCounts: counts.baseAddress!)
                for flag in score.flags { flags[flag.order] += 1 }
                appendRow(id: id, estimate, score, counts.baseAddress!, labels, to: &out)
            } catch {
                rejects.append((id, file, line, nil, "\(error)"))
            }
        }
    }

    /// One score row; `domainCounts` holds answered and correct per domain, interleaved.
    private func appendRow(id: String, _ e: AbilityEstimate, _ s: IQScore, _ domainCounts: UnsafeMutablePointer<Int>,
                           _ labels: OutputLabels, to out: inout ByteBuffer) {
        let method = labels.method, norms = labels.norms
        switch format {
        case .csv:
            ScoreText.appendCSVField(id, to: &out); out.append(44)
            ScoreText.appendInt(e.itemCount, to: &out); out.append(44)
            ScoreText.appendInt(e.correctCount, to: &out); out.append(44)
            ScoreText.appendFixed(e.theta, decimals: 4, to: &out); out.append(44)
            ScoreText.appendFixed(e.standardError, decimals: 4, to: &out); out.append(44)
            ScoreText.appendInt(s.iq, to: &out); out.append(44)
            ScoreText.appendInt(s.low, to: &out); out.append(44)
            ScoreText.appendInt(s.high, to: &out); out.append(44)
            ScoreText.appendFixed(s.percentile, decimals: 1, to: &out); out.append(44)
            out.append(method); out.append(44)
            for (k, flag) in s.flags.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ";")) }
                out.append(flag.rawValue)
            }
            out.append(44)
            ScoreText.appendCSVField(norms, to: &out)
            for d in 0..<scorer.domains.count {
                out.append(44); ScoreText.appendInt(domainCounts[2 * d + 1], to: &out)
                out.append(44); ScoreText.appendInt(domainCounts[2 * d], to: &out)
            }
            out.append(10)
        case .jsonl:
            out.append("{\"session_id\":"); ScoreText.appendJSONString(id, to: &out)
            out.append(",\"n_items\":"); ScoreText.appendInt(e.itemCount, to: &out)
            out.append(",\"n_correct\":"); ScoreText.appendInt(e.correctCount, to: &out)
            out.append(",\"theta\":"); ScoreText.appendFixed(e.theta, decimals: 4, to: &out)
            out.append(",\"se\":"); ScoreText.appendFixed(e.standardError, decimals: 4, to: &out)
            out.append(",\"iq\":"); ScoreText.appendInt(s.iq, to: &out)
            out.append(",\"iq_low\":"); ScoreText.appendInt(s.low, to: &out)
            out.append(",\"iq_high\":"); ScoreText.appendInt(s.high, to: &out)
            out.append(",\"percentile\":"); ScoreText.appendFixed(s.percentile, decimals: 1, to: &out)
            out.append(",\"method\":"); ScoreText.appendJSONString(method, to: &out)
            out.append(",\"flags\":[")
            for (k, flag) in s.flags.enumerated() {
                if k > 0 { out.append(44) }
                ScoreText.appendJSONString(flag.rawValue, to: &out)
            }
            out.append("],\"norms\":"); ScoreText.appendJSONString(norms, to: &out)
            if !scorer.domains.isEmpty {
                out.append(",\"domains\":{")
                for (d, name) in scorer.domains.enumerated() {
                    if d > 0 { out.append(44) }
                    ScoreText.appendJSONString(name, to: &out)
                    out.append(":{\"correct\":"); ScoreText.appendInt(domainCounts[2 * d + 1], to: &out)
                    out.append(",\"answered\":"); ScoreText.appendInt(domainCounts[2 * d], to: &out)
                    out.append(UInt8(ascii: "}"))
                }
                out.append(UInt8(ascii: "}"))
            }
            out.append("}\n")
        }
    }

    static func rejectLine(_ r: RejectedSession) -> String {
        [csvField(r.sessionID), csvField(r.file), r.line.map(String.init) ?? "", r.column.map(String.init) ?? "", csvField(r.reason)]
            .joined(separator: ",") + "\n"
    }
}
