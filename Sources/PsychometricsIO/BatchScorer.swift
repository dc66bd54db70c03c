import Foundation
import Integrity
import Norming
import Psychometrics

/// Output formats of `BatchScorer`.
package enum ScoreOutputFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case csv, jsonl
}

/// A session that was read but not scored, with where and why.
package struct RejectedSession: Sendable, Hashable {
    package var sessionID: String
    package var file: String
    package var line: Int?
    package var column: Int?
    package var reason: String
}

/// Counts of one batch-scoring run. `sessionsRead == sessionsScored + sessionsRejected` always holds.
package struct BatchScoringReport: Sendable, Hashable {
    /// Of `sessionsRejected`: sessions with no responses at all (an empty row, mirt's all-NA pattern), listed in
    /// the rejects with `BatchScorer.notAdministeredReason`. Not an error unless `score --strict`.
    package var sessionsNotAdministered = 0
    /// Sessions refused for a reason other than having no responses.
    package var sessionsRefused: Int { sessionsRejected - sessionsNotAdministered }
    package var files = 0
    package var rowsRead = 0
    package var blankResponses = 0
    package var bytesRead = 0
    package var sessionsRead = 0
    package var sessionsScored = 0
    package var sessionsRejected = 0
    /// Rows of some session were not contiguous: the files were read again and regrouped.
    package var regrouped = false
    /// Partitions of the regrouping pass (1: grouped in memory; 0: no regrouping).
    package var regroupPartitions = 0
    /// Sorted runs of finished-session hashes written to disk to keep within the memory budget.
    package var sessionHashRuns = 0
    /// How many scored sessions carry each flag.
    package var flagCounts: [ScoreFlag: Int] = [:]
    /// With response times (`BatchScorer.timedScorer`): how many scored sessions carry each time flag.
    package var timeFlagCounts: [TimeFlag: Int] = [:]
    /// Time cells read with a response (0 or more than a day: kept without the time and counted in `droppedTimes`).
    package var droppedTimes = 0

    /// Adds per-slot flag counts (`BatchScorer.flagSlots` order: score flags, then time flags).
    mutating func addFlags(_ counts: [Int]) {
        for (k, flag) in ScoreFlag.allCases.enumerated() where counts[k] > 0 { flagCounts[flag, default: 0] += counts[k] }
        for (k, flag) in TimeFlag.allCases.enumerated() where counts[ScoreFlag.allCases.count + k] > 0 {
            timeFlagCounts[flag, default: 0] += counts[ScoreFlag.allCases.count + k]
        }
    }
    package var seconds = 0.0
    /// Wide files whose first column had no name and was read as the session ids (R's `write.csv()` row names).
    package var unnamedIDColumnFiles: [String] = []
}

/// Progress of a running batch, for display.
package struct BatchProgress: Sendable {
    package var bytesRead: Int
    package var totalBytes: Int?
    package var rows: Int
    package var sessions: Int
    package var seconds: Double
}

/// Scores files of sessions (long or wide CSV, as `ResponseMatrix.load` reads them) into a score file and a
/// reject file.
///
/// Streaming: while each session's rows are contiguous, sessions are scored as they close. A session whose rows
/// reappear later is detected (hashes of finished session ids, `SeenSessions`); the run then starts over, reading
/// the files again and grouping rows by session (`BatchScorer+Regroup.swift`: in memory when the input is small
/// for the budget, else partitioned by session through spill files and merged back in order), so interleaved
/// input is scored exactly as contiguous input. Scores come out one row per session in order of first
/// appearance. Long files are parsed and scored in parallel chunks (`BatchScorer+Parallel.swift`, same output
/// as one thread); wide files are parsed on one thread and scored in parallel batches. Every session read ends up
/// in the scores or in the rejects, with file, line, column and reason.
///
/// Memory: `maxMemoryBytes` bounds what the run holds beyond a fixed overhead (the bank's tables, thread stacks,
/// the binary), whatever the input's size or row order: the parallel read buffers take at most an eighth, the
/// set of finished sessions an eighth (then sorted runs on disk), a batch of parsed sessions a thirty-second,
/// one record at most `CSVReader.defaultMaxRecordBytes` (or an eighth), and regrouping half (in partitions).
/// Inputs that cannot be read twice (pipes, FIFOs) are first copied to a spill file beside the output, so a
/// regrouping pass never reopens them. Spill files are removed at the end, on SIGINT/SIGTERM, and by the next
/// run after a SIGKILL (`TemporaryFiles`).
///
/// Ages (`ageColumn`): each session's age travels with the session through the same machinery as its responses,
/// so every path (serial, parallel, wide, regrouped in memory or through partitions) reads it alike, and memory
/// stays within the same budget: 8 bytes per session of a batch (at most `batchSize` sessions, 128 KiB), 8 bytes
/// per session parsed in a parallel chunk (4 words more for a chunk's first and last session: its first and
/// first different age with their lines), and, when regrouping, 16 bytes per session (its first age, line and
/// file) plus one failure event for a session whose ages differ — within `regroupBytesPerInputByte`, since an age
/// column adds at least 2 bytes to every row; partition files carry one record per non-blank age cell. A bad age
/// is its session's error on that row, in line order with the session's other errors (see `SessionAge`).
package final class BatchScorer {
    package let scorer: SessionScorer
    package let fileOptions: ResponseFileOptions
    package let format: ScoreOutputFormat
    /// Age-specific norms: each session is reported on them at its age (`AgeNormScale.score(_:age:)`); nil: on
    /// `scorer.scale`. Norms that are age-specific need `ageColumn` (checked by `run`).
    package var ageScale: AgeNormScale?
    /// On a battery: per reported index (`Battery.reportedIndexes` order), the norms it is reported on (nil: the
    /// calibration population, `Battery.indexScale`); empty: every index on the calibration population.
    package var indexScales: [AgeNormScale?] = []
    /// The column holding each session's age in years (`SessionAge`); nil: ages are not read. With it, every
    /// input must have the column, each score row gets an `age` column after `norms`, and a session whose age is
    /// bad, missing or not one number is rejected.
    package var ageColumn: String?
    /// Answer keys when the files hold chosen options (`OptionKeys`): cells are scored against them.
    package var optionKeys: OptionKeys?
    /// Scores each session with its response times (the files' `ResponseFileOptions.timeColumn` or `timeSuffix`
    /// columns, which `run` then requires): θ with the times' collateral information, and `ScoreText.timeColumns`
    /// after the other columns. Every path carries a time with each response, as it carries the response.
    package var timedScorer: TimedSessionScorer? {
        didSet {
            timed = timedScorer != nil
            timedBox = timedScorer.map(TimedScorerBox.init)
        }
    }
    /// Whether responses carry times (kept beside `timedScorer`: read per response on the serial path).
    private(set) var timed = false
    /// `timedScorer` behind a reference: each session calls it through the box's `let`, in place (binding the
    /// optional struct itself copied it, one retain and release per array and class it holds, every session).
    private(set) var timedBox: TimedScorerBox?

    final class TimedScorerBox: Sendable {
        let scorer: TimedSessionScorer
        init(_ scorer: TimedSessionScorer) { self.scorer = scorer }
    }
    /// Per-session flag counters: `ScoreFlag`s, then `TimeFlag`s.
    static let flagSlots = ScoreFlag.allCases.count + TimeFlag.allCases.count
    package var batchSize = 16384
    /// Threads that parse and score: 1…`WorkerThreads.maximum` (checked by `run`). Default: every core.
    package var workers = WorkerThreads.all
    /// Long files are parsed and scored in parallel chunks of about this many bytes (two per worker per round);
    /// `parallelParsing = false` reads them on one thread as wide files are (same output either way).
    package var parallelChunkBytes = 4 << 20
    package var parallelParsing = true
    /// The memory budget of a run, in bytes (see the type's documentation), at least 4 KiB (tests use tiny
    /// budgets to force every spill path; below ~32 MiB the fixed overhead dominates). Default 1 GiB.
    package var maxMemoryBytes = 1 << 30
    /// Where spill files go: a path prefix such as `dir/.scores.csv.spill-PID-` (a number is appended). Default:
    /// beside the scores output, or the rejects output when scores go to a device, or the temporary directory
    /// ($TMPDIR) when both do.
    package var spillPrefix: String?

    /// Bytes of one parallel chunk under the budget. A chunk's parse and score output takes up to ~16 times its
    /// bytes (one-row sessions: a ~100-byte score row and ~50 bytes of bookkeeping per ~12-byte row), and two
    /// rounds of two chunks per worker are alive at once: so that all of it stays within an eighth of the
    /// budget, a chunk gets budget / 256 / chunks.
    var budgetedChunkBytes: Int { max(1 << 12, min(parallelChunkBytes, maxMemoryBytes / 256 / max(1, workers * 2))) }
    /// The longest input record accepted.
    var budgetedRecordBytes: Int { max(1 << 16, min(CSVReader.defaultMaxRecordBytes, maxMemoryBytes / 8)) }
    /// Responses in one batch of parsed sessions (two batches are alive at a time).
    var budgetedBatchCells: Int { max(1 << 12, maxMemoryBytes / 32 / 16) }

    /// How cells of the bank's items in more than two categories are read (nil: a 0/1 bank).
    let categoryCells: CategoryCells?

    package init(scorer: SessionScorer, fileOptions: ResponseFileOptions = ResponseFileOptions(), format: ScoreOutputFormat = .csv) {
        self.scorer = scorer
        categoryCells = CategoryCells(bank: scorer.bank)
        self.fileOptions = fileOptions
        self.format = format
    }

    /// The score file's header line (CSV) or nothing (JSON Lines).
    package var header: String {
        guard format == .csv else { return "" }
        var columns = ["session_id", "n_items", "n_correct", "theta", "se", "iq", "iq_low", "iq_high", "percentile", "method", "flags", "norms"]
        if ageColumn != nil { columns.append("age") }
        if scorer.hasUnscoredItems { columns.append("n_unscored") }
        for d in scorer.domains { columns += ["\(d)_correct", "\(d)_answered"] }
        for name in scorer.battery?.reportedNames ?? [] { columns += ScoreText.indexColumns.map { "index_\(name)_\($0)" } }
        if timed { columns += ScoreText.timeColumns }
        if timedScorer?.compromised != nil { columns += ScoreText.preknowledgeColumns }
        return columns.map(csvField).joined(separator: ",") + "\n"
    }

    package static let rejectHeader = "session_id,file,line,column,reason\n"

    struct Regroup: Error {}

    /// Runs the batch. `scores` and `rejects` receive the header and rows (and are `reset()` if the run has to
    /// regroup); the caller commits them. `progress` is called at most every 0.25 s, one call at a time, but not
    /// necessarily on the calling thread (long files are joined and written on a background thread).
    package func run(
        inputs: [String], scores: AtomicFileWriter, rejects: AtomicFileWriter,
        progress: ((BatchProgress) -> Void)? = nil
    ) throws -> BatchScoringReport {
        let started = Date()
        var problems = WorkerThreads.validationProblems(workers) + Self.validationProblems(fileCount: inputs.count)
        if maxMemoryBytes < 1 << 12 { problems.append("the memory budget must be at least 4 KiB, got \(maxMemoryBytes) bytes") }
        for norms in ([ageScale] + indexScales).compactMap({ $0?.norms }) where norms.isAgeSpecific && ageColumn == nil {
            problems.append("the norms \(norms.label) are age-specific: name the age column")
        }
        let timeOptions = fileOptions.timeColumn != nil || fileOptions.timeSuffix != nil
        if timed && !timeOptions {
            problems.append("scoring with response times needs the time column (long files) or the time columns' suffix (wide files)")
        }
        if !timed && timeOptions { problems.append("time columns are named but the sessions are not scored with times (no timed scorer)") }
        if !indexScales.isEmpty && indexScales.count != (scorer.battery?.reportedIndexes.count ?? -1) {
            problems.append(
                "index norms are given for \(indexScales.count) indexes, the battery reports \(scorer.battery?.reportedIndexes.count ?? 0)")
        }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid batch settings: " + problems.joined(separator: "; ")) }
        let prefix =
            spillPrefix
            ?? TemporaryFiles.spillPrefix(
                besideOutput: scores.isRegularFile
                    ? scores.path
                    : rejects.isRegularFile ? rejects.path : FileManager.default.temporaryDirectory.appendingPathComponent("iqscore").path)
        let sources = try InputSources(inputs, spillPrefix: prefix)
        // A pipe's spooled copy is removed when `sources` is released, and an optimised build ends a value's
        // lifetime at its last use (the second pass's `RunState` init), not at the end of the scope: both passes
        // read inside its extended lifetime (without it, release builds lost a FIFO's copy before regrouping).
        return try withExtendedLifetime(sources) {
            do {
                var state = try RunState(
                    owner: self, sources: sources, scores: scores, rejects: rejects, gather: false, progress: progress, started: started,
                    spillPrefix: prefix)
                try state.readAll()
                guard try state.seen.allDistinct() else { throw Regroup() }
                var report = state.finish()
                report.sessionHashRuns = state.seen.runCount
                return report
            } catch is Regroup {
                try scores.reset()
                try rejects.reset()
                var state = try RunState(
                    owner: self, sources: sources, scores: scores, rejects: rejects, gather: true, progress: progress, started: started,
                    spillPrefix: prefix)
                try state.regroup()
                var report = state.finish()
                report.regrouped = true
                return report
            }
        }
    }

    // MARK: - One pass over the inputs

    struct RunState {
        let owner: BatchScorer
        /// Input names (for messages and the rejects' file column) and the paths read (a spooled copy for a pipe).
        let inputs: [String]
        let readPaths: [String]
        let spillPrefix: String
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
        var seen: SeenSessions
        var ordinal = 0
        /// Per bank item: ordinal of the last session that answered it, and on which line (duplicate detection).
        let stamps: Stamps
        /// Per input file: the age column's index in its header (−1: no ages read).
        var ageColumns: [Int]

        // Gather mode: the sessions (of the input, or of one partition) and their events.
        var gatherIndex = ByteStringIndex()
        /// Per id in `gatherIndex`, its session's index in `gatherSessions` (rows without an id have sessions too).
        var gatherOrdinals: [Int] = []
        var gatherSessions: [GatherSession] = []
        var events: [GatherEvent] = []
        var eventReasons: [Int: String] = [:]
        /// Gather mode with partitions: the calls being recorded into partition files (phase 1), the session
        /// ordinals used by earlier partitions, and where the current partition's outputs go (phase 2).
        var recorder: PartitionRecorder?
        var ordinalBase = 0
        var partitionOutput: SpillFile?

        var batch = Batch()
        /// The parallel path's per-chunk duplicate stamps, reused across rounds, and its bytes joined so far.
        var chunkStamps: [Stamps] = []
        var parallelBytes = 0

        init(
            owner: BatchScorer, sources: InputSources, scores: AtomicFileWriter, rejects: AtomicFileWriter, gather: Bool,
            progress: ((BatchProgress) -> Void)?, started: Date, spillPrefix: String
        ) throws {
            self.owner = owner
            self.inputs = sources.names
            self.readPaths = sources.paths
            self.spillPrefix = spillPrefix
            seen = SeenSessions(limitBytes: owner.maxMemoryBytes / 8, spillPrefix: { spillPrefix })
            self.scores = scores
            self.rejects = rejects
            self.gather = gather
            self.progress = progress
            self.started = started
            totalBytes = sources.totalBytes
            stamps = Stamps(count: owner.scorer.bank.items.count)
            ageColumns = [Int](repeating: -1, count: sources.names.count)
            report.files = sources.names.count
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
            /// Per response its seconds (NaN: none), when the run reads times.
            var times: [Float] = []
            /// The first non-blank age (NaN: none yet), its input file and line.
            var age = Double.nan
            var ageFile = 0
            var ageLine = 0
        }

        // Event kinds.
        static let touch: UInt8 = 0, response: UInt8 = 1, blank: UInt8 = 2, failure: UInt8 = 3

        /// The time cell of a response's row (column `column`): its seconds (NaN: none; a dropped time counted), or
        /// nil after a bad cell, which is the session's failure on this row.
        mutating func timeCell(_ cell: ResponseTimeCell, file: Int, line: Int, column: Int, text: () -> String) throws -> Float? {
            switch cell {
            case .seconds(let t): return t
            case .missing: return .nan
            case .dropped: report.droppedTimes += 1; return .nan
            case .invalid:
                try event(
                    Self.failure, file: file, line: line, column: column,
                    reason: "\(text()) is not a response time; allowed: \(ResponseTimeCell.allowedDescription)")
                return nil
            }
        }

        mutating func readAll() throws {
            for (fileIndex, path) in readPaths.enumerated() {
                let reader = try CSVReader(
                    path: path, displayName: inputs[fileIndex], maxRecordBytes: owner.budgetedRecordBytes,
                    delimiter: owner.fileOptions.delimiter)
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
                let (sc, ic, rc, tc) = try options.longColumnsWithTime(in: header, file: path, line: reader.line)
                let ac = try owner.ageColumnIndex(in: header, file: path, line: reader.line)
                ageColumns[fileIndex] = ac
                if !gather && owner.parallelParsing {
                    try readLongParallel(
                        reader, fileIndex: fileIndex,
                        columns: LongColumns(
                            session: sc, item: ic, response: rc, age: ac, time: tc, headerCount: header.count,
                            sessionName: options.sessionColumn, responseName: options.responseColumn, timeName: options.timeColumn ?? ""))
                    return
                }
                while try reader.nextRow() {
                    report.rowsRead += 1
                    let line = reader.line
                    if reader.fieldCount <= sc {
                        try orphan(
                            file: fileIndex, line: line, column: reader.fieldCount,
                            reason: "malformed row: expected \(header.count) fields as in the header, found \(reader.fieldCount); no session id")
                        continue
                    }
                    if reader.withField(sc, { $0.trimmingSpaces().isEmpty }) {
                        try orphan(
                            file: fileIndex, line: line, column: sc + 1, reason: "empty \(options.sessionColumn): the row belongs to no session")
                        continue
                    }
                    try reader.withField(sc) { try enter(session: $0.trimmingSpaces(), file: fileIndex, line: line, column: sc + 1) }
                    if reader.fieldCount != header.count {
                        try event(
                            Self.failure, file: fileIndex, line: line,
                            column: min(reader.fieldCount, header.count) + (reader.fieldCount > header.count ? 1 : 0),
                            reason: "malformed row: expected \(header.count) fields as in the header, found \(reader.fieldCount)")
                        continue
                    }
                    if ac >= 0 { try ageCell(reader.withField(ac) { SessionAge.parse($0) }, file: fileIndex, line: line, column: ac + 1) }
                    // An item in more than two categories: its category (`CategoryCells`). The item is looked up once
                    // (`known`: nil until looked up) for both paths.
                    func lookUp() -> Int? { reader.withField(ic, { table.index(of: $0.trimmingSpaces()) }) }
                    // The row's time (−1: times are not read); nil after a bad time cell.
                    func seconds() throws -> Float? {
                        guard tc >= 0 else { return .nan }
                        return try timeCell(
                            reader.withField(tc) { ResponseTimeCell.parse($0) }, file: fileIndex, line: line, column: tc + 1,
                            text: { "\(options.timeColumn ?? "time") \(reader.withField(tc) { TextFidelity.quoted($0) })" })
                    }
                    var known: Int?? = nil
                    if owner.categoryCells != nil { known = .some(lookUp()) }
                    if let categories = owner.categoryCells, let j = known ?? nil, categories.isCategoryItem(j) {
                        let v = reader.withField(rc) { categories.value($0, item: j) }
                        if v == ResponseCell.missingCategory {
                            report.blankResponses += 1; try event(Self.blank, file: fileIndex, line: line); continue
                        }
                        if v == ResponseCell.invalidCategory {
                            try event(
                                Self.failure, file: fileIndex, line: line, column: rc + 1,
                                reason:
                                    "\(options.responseColumn) \(reader.withField(rc) { TextFidelity.quoted($0) }) is not a response to item \(TextFidelity.quoted(owner.scorer.bank.items[j].itemID)); allowed: \(categories.allowed(item: j))"
                            )
                            continue
                        }
                        guard let t = try seconds() else { continue }
                        try event(Self.response, item: j, value: UInt8(v), seconds: t, file: fileIndex, line: line, column: ic + 1)
                        maybeProgress(reader)
                        continue
                    }
                    var cell = reader.withField(rc) { ResponseCell.parse($0) }
                    if let keys = owner.optionKeys, keys.mayBeOption(cell), let j = known ?? lookUp(),
                        let keyed = reader.withField(rc, { keys.score($0, item: j) })
                    {
                        cell = keyed
                    }
                    if cell == .missing { report.blankResponses += 1; try event(Self.blank, file: fileIndex, line: line); continue }
                    if cell == .invalid {
                        try event(
                            Self.failure, file: fileIndex, line: line, column: rc + 1,
                            reason:
                                "\(options.responseColumn) \(reader.withField(rc) { TextFidelity.quoted($0) }) is not a response; allowed: \(ResponseCell.allowedDescription)"
                        )
                        continue
                    }
                    guard let j = known ?? lookUp() else {
                        try event(
                            Self.failure, file: fileIndex, line: line, column: ic + 1,
                            reason: "unknown item id \(reader.withField(ic) { TextFidelity.quoted($0.trimmingSpaces()) }) (not in the bank)")
                        continue
                    }
                    guard let t = try seconds() else { continue }
                    try event(Self.response, item: j, value: cell == .correct ? 1 : 0, seconds: t, file: fileIndex, line: line, column: ic + 1)
                    maybeProgress(reader)
                }
            } else {
                let first = header.first ?? ""
                let hasID = ResponseFileOptions.isWideIDColumn(first, sessionColumn: options.sessionColumn)
                if hasID && first.isEmpty && !report.unnamedIDColumnFiles.contains(path) { report.unnamedIDColumnFiles.append(path) }
                let ac = try owner.ageColumnIndex(in: header, file: path, line: reader.line)
                ageColumns[fileIndex] = ac
                // The columns read as items: not the id, the age or an ignored column.
                let (itemColumns, timeColumns) = try options.wideColumns(header: header, hasID: hasID, age: ac, file: path, line: reader.line)
                let columnItem: [Int?] = header.indices.map { table.index(of: header[$0]) }
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
                        try event(
                            Self.failure, file: fileIndex, line: line, column: min(reader.fieldCount, header.count) + 1,
                            reason: "malformed row: expected \(header.count) fields as in the header, found \(reader.fieldCount)")
                        if !gather { try closeCurrent() }
                        continue
                    }
                    if ac >= 0 { try ageCell(reader.withField(ac) { SessionAge.parse($0) }, file: fileIndex, line: line, column: ac + 1) }
                    for (k, c) in itemColumns.enumerated() {
                        // The cell's time (NaN: none, or times are not read); nil after a bad time cell.
                        func seconds() throws -> Float? {
                            guard !timeColumns.isEmpty, case let tc = timeColumns[k], tc >= 0 else { return .nan }
                            return try timeCell(
                                reader.withField(tc) { ResponseTimeCell.parse($0) }, file: fileIndex, line: line, column: tc + 1,
                                text: { "column \(TextFidelity.quoted(header[tc])): \(reader.withField(tc) { TextFidelity.quoted($0) })" })
                        }
                        if let categories = owner.categoryCells, let j = columnItem[c], categories.isCategoryItem(j) {
                            let v = reader.withField(c) { categories.value($0, item: j) }
                            if v == ResponseCell.missingCategory { continue }
                            if v == ResponseCell.invalidCategory {
                                try event(
                                    Self.failure, file: fileIndex, line: line, column: c + 1,
                                    reason:
                                        "column \(TextFidelity.quoted(header[c])): \(reader.withField(c) { TextFidelity.quoted($0) }) is not a response; allowed: \(categories.allowed(item: j))"
                                )
                                continue
                            }
                            guard let t = try seconds() else { continue }
                            try event(Self.response, item: j, value: UInt8(v), seconds: t, file: fileIndex, line: line, column: c + 1)
                            continue
                        }
                        var cell = reader.withField(c) { ResponseCell.parse($0) }
                        if let keys = owner.optionKeys, keys.mayBeOption(cell), let j = columnItem[c],
                            let keyed = reader.withField(c, { keys.score($0, item: j) })
                        {
                            cell = keyed
                        }
                        switch cell {
                        case .missing: continue
                        case .invalid:
                            try event(
                                Self.failure, file: fileIndex, line: line, column: c + 1,
                                reason:
                                    "column \(TextFidelity.quoted(header[c])): \(reader.withField(c) { TextFidelity.quoted($0) }) is not a response; allowed: \(ResponseCell.allowedDescription)"
                            )
                        case .correct, .incorrect:
                            guard let j = columnItem[c] else {
                                try event(
                                    Self.failure, file: fileIndex, line: line, column: c + 1,
                                    reason: "unknown item id \(TextFidelity.quoted(header[c])) (column \(c + 1) is not in the bank)")
                                continue
                            }
                            guard let t = try seconds() else { continue }
                            try event(Self.response, item: j, value: cell == .correct ? 1 : 0, seconds: t, file: fileIndex, line: line, column: c + 1)
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
            progress(
                BatchProgress(
                    bytesRead: bytesBefore + reader.bytesConsumed, totalBytes: totalBytes, rows: report.rowsRead,
                    sessions: report.sessionsRead + (hasCurrent ? 1 : 0), seconds: now.timeIntervalSince(started)))
        }

        /// A row that belongs to the session with these id bytes (in column `column`). An id that is not valid
        /// UTF-8 rejects its session (`TextFidelity`); the rejects file shows it with `\xFF` escapes.
        mutating func enter(session bytes: UnsafeBufferPointer<UInt8>, file: Int, line: Int, column: Int) throws {
            if gather {
                if let recorder { try recorder.enter(bytes, file: file, line: line, column: column); return }
                let (s, inserted) = gatherIndex.index(of: bytes)
                if !inserted {
                    ordinal = gatherOrdinals[s]
                } else {
                    ordinal = gatherSessions.count
                    gatherOrdinals.append(ordinal)
                    let valid = TextFidelity.validString(bytes)
                    gatherSessions.append(GatherSession(id: valid ?? TextFidelity.display(bytes), file: file, line: line))
                    if valid == nil {
                        try event(Self.failure, file: file, line: line, column: column, reason: TextFidelity.invalidUTF8("session id", bytes))
                    }
                }
                return
            }
            if hasCurrent && bytes.count == currentID.count
                && (bytes.count == 0 || currentID.withUnsafeBufferPointer { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
            {
                return
            }
            try closeCurrent()
            if try !seen.insert(ByteKeyTable.hash(bytes)) { throw Regroup() }
            currentID.removeAll(keepingCapacity: true)
            currentID.append(contentsOf: bytes)
            ordinal += 1
            hasCurrent = true
            if let valid = TextFidelity.validString(bytes) {
                current = OpenSession(id: valid, file: file, line: line)
            } else {
                current = OpenSession(
                    id: TextFidelity.display(bytes), file: file, line: line,
                    error: (TextFidelity.invalidUTF8("session id", bytes), file, line, column))
            }
        }

        /// A row with no session id at all: rejected on its own.
        mutating func orphan(file: Int, line: Int, column: Int, reason: String) throws {
            if !gather { try closeCurrent() }
            if gather {
                if let recorder { try recorder.orphan(file: file, line: line, column: column, reason: reason); return }
                ordinal = gatherSessions.count
                gatherSessions.append(GatherSession(id: "", file: file, line: line))
                try event(Self.failure, file: file, line: line, column: column, reason: reason)
                return
            }
            ordinal += 1
            current = OpenSession(id: "", file: file, line: line, error: (reason, file, line, column))
            hasCurrent = true
            currentID = []
            try closeCurrent()
        }

        mutating func event(
            _ kind: UInt8, item: Int = -1, value: UInt8 = 0, seconds: Float = .nan, file: Int, line: Int, column: Int? = nil, reason: String? = nil
        ) throws {
            if gather {
                // Only responses and failures change a session's outcome; once it has a failure, or more
                // responses than the bank has items (so some item repeats), its first error is fixed and later
                // events cannot change it: they are not kept, so a session holds at most bank size + 1 events.
                guard kind == Self.response || kind == Self.failure else { return }
                if let recorder {
                    try recorder.event(kind, item: item, value: value, seconds: seconds, file: file, line: line, column: column ?? 0, reason: reason);
                    return
                }
                if gatherSessions[ordinal].settled { return }
                if kind == Self.failure {
                    gatherSessions[ordinal].settled = true
                } else {
                    gatherSessions[ordinal].responses += 1
                    if gatherSessions[ordinal].responses > owner.scorer.bank.items.count { gatherSessions[ordinal].settled = true }
                }
                if let reason { eventReasons[events.count] = reason }
                events.append(
                    GatherEvent(
                        session: Int32(ordinal), item: Int32(item), value: value, kind: kind, seconds: seconds,
                        file: Int32(file), column: Int32(column ?? 0), line: line))
                return
            }
            apply(kind, item: item, value: value, seconds: seconds, file: file, line: line, column: column, reason: reason)
        }

        /// One cell of the age column: a bad one is the session's failure on this row; an age is kept.
        mutating func ageCell(_ cell: SessionAge.Cell, file: Int, line: Int, column: Int) throws {
            switch cell {
            case .blank: return
            case .invalid(let reason): try event(Self.failure, file: file, line: line, column: column, reason: reason)
            case .age(let age): try ageEvent(age, file: file, line: line, column: column)
            }
        }

        /// A session's age on one row. Gather mode keeps only the session's first age (in `GatherSession`) and turns
        /// the first different one into a failure event in its place in line order; later ones cannot change the
        /// outcome and are not kept.
        mutating func ageEvent(_ age: Double, file: Int, line: Int, column: Int) throws {
            guard gather else { return applyAge(age, file: file, line: line, column: column) }
            if let recorder { try recorder.age(age, file: file, line: line, column: column); return }
            let session = gatherSessions[ordinal]
            if session.settled || session.age == age { return }
            if session.age.isNaN {
                gatherSessions[ordinal].age = age
                gatherSessions[ordinal].ageFile = Int32(file)
                gatherSessions[ordinal].ageLine = line
                return
            }
            try event(
                Self.failure, file: file, line: line, column: column,
                reason: ageDiffers(
                    first: session.age, file: Int(session.ageFile), line: session.ageLine,
                    second: age, secondFile: file, secondLine: line))
        }

        /// The age on one row of the open session: the first is kept; the first different one is the session's
        /// error unless it has one.
        mutating func applyAge(_ age: Double, file: Int, line: Int, column: Int) {
            if current.age.isNaN {
                current.age = age
                current.ageFile = file
                current.ageLine = line
            } else if current.age != age && current.error == nil {
                current.error = (
                    ageDiffers(first: current.age, file: current.ageFile, line: current.ageLine, second: age, secondFile: file, secondLine: line),
                    file, line, column
                )
            }
        }

        func ageDiffers(first: Double, file: Int, line: Int, second: Double, secondFile: Int, secondLine: Int) -> String {
            SessionAge.differs(
                first: first, firstLine: line, firstFile: file == secondFile ? nil : (inputs[file] as NSString).lastPathComponent,
                second: second, secondLine: secondLine)
        }

        mutating func apply(_ kind: UInt8, item: Int, value: UInt8, seconds: Float = .nan, file: Int, line: Int, column: Int?, reason: String?) {
            switch kind {
            case Self.response:
                if stamps.session[item] == ordinal {
                    if current.error == nil {
                        let other = stamps.file[item] == file ? "" : " of \((inputs[stamps.file[item]] as NSString).lastPathComponent)"
                        current.error = (
                            "item '\(owner.scorer.bank.items[item].itemID)' answered twice in the session (first on line \(stamps.line[item])\(other))",
                            file, line, column
                        )
                    }
                    return
                }
                stamps.session[item] = ordinal
                stamps.line[item] = line
                stamps.file[item] = file
                current.items.append(item)
                current.responses.append(value)
                if owner.timed { current.times.append(seconds) }
            case Self.failure:
                if current.error == nil { current.error = (reason ?? "invalid row", file, line, column) }
            default:
                break
            }
        }

        mutating func closeCurrent() throws {
            guard hasCurrent else { return }
            hasCurrent = false
            if owner.ageColumn != nil && current.error == nil && current.age.isNaN {
                current.error = (SessionAge.missing, current.file, current.line, ageColumns[current.file] + 1)
            }
            batch.append(current)
            report.sessionsRead += 1
            if batch.count >= owner.batchSize || batch.items.count >= owner.budgetedBatchCells { try flush() }
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
                ordinal = ordinalBase + s
                current = OpenSession(id: info.id, file: info.file, line: info.line)
                if !info.age.isNaN {
                    current.age = info.age
                    current.ageFile = Int(info.ageFile)
                    current.ageLine = info.ageLine
                }
                hasCurrent = true
                for k in counts[s]..<counts[s + 1] {
                    let e = events[order[k]]
                    apply(
                        e.kind, item: Int(e.item), value: e.value, seconds: e.seconds, file: Int(e.file), line: e.line,
                        column: e.column == 0 ? nil : Int(e.column),
                        reason: eventReasons[order[k]])
                }
                try closeCurrent()
            }
            try flush()
            try drainPending()
            ordinalBase += sessions
        }

        /// Hands the full batch to a background thread (`BackgroundJob`: scoring runs while the next batch is
        /// parsed); the previous batch's output is written first, so output order is input order.
        mutating func flush() throws {
            guard batch.count > 0 else { return }
            try drainPending()
            let box = UncheckedSendableBox((owner, batch, PendingBatch(), partitionOutput != nil))
            let job = BackgroundJob {
                let (owner, work, slot, keyed) = box.value
                slot.result = owner.process(work, keyed: keyed)
            }
            pending = (job, box.value.2)
            batch = Batch()
        }

        var pending: (job: BackgroundJob, slot: PendingBatch)?

        /// Waits for the batch in flight, then writes its scores and rejects.
        mutating func drainPending() throws {
            guard let (job, slot) = pending else { return }
            job.wait()
            pending = nil
            guard let result = slot.result else { return }
            if let partitionOutput {
                try BatchScorer.writeKeyed(result, rejectLine: { self.rejectLine($0) }, to: partitionOutput)
            } else {
                for chunk in result.rows { try chunk.withUnsafeBufferPointer { try scores.write(bytes: $0) } }
                try writeRejects(result.rejects)
            }
            report.sessionsScored += result.scored
            report.sessionsRejected += result.rejects.count
            report.sessionsNotAdministered += BatchScorer.notAdministeredCount(result.rejects)
            report.addFlags(result.flags)
        }

        func writeRejects(_ list: [RejectRecord]) throws {
            for reject in list { try rejects.write(rejectLine(reject)) }
        }

        func rejectLine(_ reject: RejectRecord) -> String {
            BatchScorer.rejectLine(
                RejectedSession(sessionID: reject.id, file: inputs[reject.file], line: reject.line, column: reject.column, reason: reject.reason))
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
        var times: UnsafeMutablePointer<Float>?
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
            times?.deallocate()
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
        /// Per response its seconds (NaN: none), when the run reads times; else empty.
        var times: [Float] = []
        /// Per session: its age (NaN: none).
        var ages: [Double] = []
        var count: Int { ids.count }

        mutating func append(_ s: RunState.OpenSession) {
            ids.append(s.id)
            ages.append(s.age)
            files.append(s.file)
            lines.append(s.line)
            errors.append(s.error)
            items.append(contentsOf: s.items)
            responses.append(contentsOf: s.responses)
            times.append(contentsOf: s.times)
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
        /// Per `BatchScorer.flagSlots`: sessions flagged.
        var flags: [Int]
        /// Per chunk, the end of each session's row in `rows[chunk]` (unchanged for a rejected session), and
        /// — when asked for — each session's first-appearance key (`sessionKey`), for regrouping in partitions.
        var ends: [[Int]]
        var keys: [UInt64]
    }

    /// Scores a batch in parallel chunks; output rows keep the batch order.
    /// With `keyed`, the result also carries each session's first-appearance key (for a partition's run file).
    func process(_ batch: Batch, keyed: Bool = false) -> BatchResult {
        let n = batch.count
        let chunks = min(n, max(1, workers * 4))
        var rows = [[UInt8]](repeating: [], count: chunks)
        var rejects = [[RejectRecord]](repeating: [], count: chunks)
        var ends = [[Int]](repeating: [], count: chunks)
        var flagCounts = [[Int]](repeating: [Int](repeating: 0, count: Self.flagSlots), count: chunks)
        let labels = OutputLabels(self)
        rows.withUnsafeMutableBufferPointer { rowsOut in
            ends.withUnsafeMutableBufferPointer { endsOut in
                rejects.withUnsafeMutableBufferPointer { rejectsOut in
                    flagCounts.withUnsafeMutableBufferPointer { flagsOut in
                        batch.items.withUnsafeBufferPointer { items in
                            batch.responses.withUnsafeBufferPointer { responses in
                                batch.times.withUnsafeBufferPointer { times in
                                    parallelFor(chunks) { c in
                                        let lo = n * c / chunks, hi = n * (c + 1) / chunks
                                        var out = ByteBuffer(capacity: (hi - lo) * 100)
                                        var localRejects: [RejectRecord] = []
                                        var localFlags = [Int](repeating: 0, count: Self.flagSlots)
                                        var localEnds: [Int] = []
                                        localEnds.reserveCapacity(hi - lo)
                                        for s in lo..<hi {
                                            let range = batch.offsets[s]..<batch.offsets[s + 1]
                                            emit(
                                                id: batch.ids[s], file: batch.files[s], line: batch.lines[s], error: batch.errors[s],
                                                age: batch.ages[s],
                                                UnsafeBufferPointer(rebasing: items[range]), UnsafeBufferPointer(rebasing: responses[range]),
                                                timed ? UnsafeBufferPointer(rebasing: times[range]) : UnsafeBufferPointer(start: nil, count: 0),
                                                labels, out: &out, rejects: &localRejects, flags: &localFlags)
                                            localEnds.append(out.count)
                                        }
                                        endsOut[c] = localEnds
                                        rowsOut[c] = out.array
                                        out.deallocate()
                                        rejectsOut[c] = localRejects
                                        flagsOut[c] = localFlags
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        let flags = (0..<Self.flagSlots).map { k in flagCounts.reduce(0) { $0 + $1[k] } }
        let allRejects = rejects.flatMap { $0 }
        let keys = keyed ? (0..<n).map { BatchScorer.sessionKey(file: batch.files[$0], line: batch.lines[$0]) } : []
        return BatchResult(rows: rows, rejects: allRejects, scored: n - allRejects.count, flags: flags, ends: ends, keys: keys)
    }

    /// The method and norms columns, the same for every row.
    struct OutputLabels {
        let method: String
        let norms: String
        init(_ owner: BatchScorer) {
            method = owner.scorer.estimator.options.method.rawValue
            norms = owner.ageScale?.norms.label ?? owner.scorer.scale.norms.name + "@" + owner.scorer.scale.norms.version
        }
    }

    /// The rejects' reason for a session with no responses (every cell empty or NA): not administered.
    package static let notAdministeredReason = "not administered: the session has no responses"

    /// How many of `rejects` are sessions without responses (`notAdministeredReason`).
    static func notAdministeredCount(_ rejects: [RejectRecord]) -> Int {
        rejects.reduce(0) { $0 + ($1.4 == notAdministeredReason ? 1 : 0) }
    }

    /// One read session to its score row (appended to `out`, its flags counted) or to `rejects`: a session with
    /// a parse error is rejected with that error's line and column; one the scorer refuses, with its first line.
    @inline(__always)
    ///
    /// With a timed scorer `seconds` holds each response's time (NaN: none) and the session is scored with them.
    func emit(
        id: String, file: Int, line: Int, error: RowError?, age: Double,
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ seconds: UnsafeBufferPointer<Float>, _ labels: OutputLabels,
        out: inout ByteBuffer, rejects: inout [RejectRecord], flags: inout [Int]
    ) {
        if let error {
            rejects.append((id, error.file, error.line, error.column, error.reason))
            return
        }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: max(2 * scorer.domains.count, 1)) { counts in
            do {
                let report: ((AbilityEstimate) throws -> IQScore)? = ageScale.map { scale in
                    { try scale.score($0, age: age.isNaN ? nil : age) }
                }
                let indexReport = ScoreJSONWriter.indexReport(indexScales, scorer: scorer, age: age.isNaN ? nil : age)
                let (estimate, score, unscored, indexes, times): (AbilityEstimate, IQScore, Int, [IndexScore], SessionTimeSummary?)
                if let timedBox {
                    (estimate, score, unscored, indexes, times) = try timedBox.scorer.score(
                        items, responses, seconds, domainCounts: counts.baseAddress!,
                        report: report, indexReport: indexReport)
                } else {
                    (estimate, score, unscored, indexes) = try scorer.score(
                        items, responses, domainCounts: counts.baseAddress!, report: report,
                        indexReport: indexReport)
                    times = nil
                }
                for flag in score.flags { flags[flag.order] += 1 }
                for flag in times?.flags ?? [] { flags[ScoreFlag.allCases.count + flag.order] += 1 }
                appendRow(
                    id: id, estimate, score, unscored: unscored, indexes: indexes, age: age, times: times, counts.baseAddress!, labels, to: &out)
            } catch let error as PsychometricsError where error.code == .noResponses {
                rejects.append((id, file, line, nil, Self.notAdministeredReason))
            } catch {
                rejects.append((id, file, line, nil, "\(error)"))
            }
        }
    }

    /// One score row; `domainCounts` holds answered and correct per domain, interleaved.
    private func appendRow(
        id: String, _ e: AbilityEstimate, _ s: IQScore, unscored: Int, indexes: [IndexScore], age: Double, times: SessionTimeSummary?,
        _ domainCounts: UnsafeMutablePointer<Int>,
        _ labels: OutputLabels, to out: inout ByteBuffer
    ) {
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
            if ageColumn != nil { out.append(44); ScoreText.appendAge(age, to: &out) }
            if scorer.hasUnscoredItems { out.append(44); ScoreText.appendInt(unscored, to: &out) }
            for d in 0..<scorer.domains.count {
                out.append(44); ScoreText.appendInt(domainCounts[2 * d + 1], to: &out)
                out.append(44); ScoreText.appendInt(domainCounts[2 * d], to: &out)
            }
            for index in indexes { ScoreText.appendIndexColumns(index, to: &out) }
            if let times { ScoreText.appendTimeColumns(times, to: &out) }
            out.append(10)
        case .jsonl:
            out.append(UInt8(ascii: "{"))
            ScoreText.appendScoreMembers(
                sessionID: id, e, s, unscored: unscored, indexes: indexes, domainCounts, scorer: scorer,
                method: method, norms: norms, age: ageColumn == nil ? nil : age, to: &out)
            if let times { ScoreText.appendTimeMembers(times, to: &out) }
            out.append("}\n")
        }
    }

    /// The first `limit` rejections written to `rejects` (read back from its temporary file; none when it is not
    /// a regular file), for a run that scored nothing and so commits no output.
    package static func firstRejections(in rejects: AtomicFileWriter, limit: Int) -> [RejectedSession] {
        guard let path = try? rejects.flushedTemporaryPath(), let reader = try? CSVReader(path: path),
            (try? reader.nextRow()) == true
        else { return [] }
        var list: [RejectedSession] = []
        while list.count < limit, (try? reader.nextRow()) == true, reader.fieldCount == 5 {
            let f = reader.strings()
            list.append(RejectedSession(sessionID: f[0], file: f[1], line: Int(f[2]), column: Int(f[3]), reason: f[4]))
        }
        return list
    }

    /// The index of the age column in `header`; −1 when no ages are read.
    /// - Throws: `InputError` naming the file, the header line and the columns found when the column is missing or
    ///   appears twice.
    func ageColumnIndex(in header: [String], file: String, line: Int) throws -> Int {
        guard let name = ageColumn else { return -1 }
        let matches = header.indices.filter { header[$0] == name }
        guard let c = matches.first else { throw SessionAge.missingColumn(name, header: header, file: file, line: line, naming: fileOptions.naming) }
        if matches.count > 1 {
            throw InputError(
                file: file, line: line, column: matches[1] + 1,
                message: "age column '\(name.escapingControlCharacters)' appears twice in the header (columns \(c + 1) and \(matches[1] + 1))")
        }
        return c
    }

    static func rejectLine(_ r: RejectedSession) -> String {
        [csvField(r.sessionID), csvField(r.file), r.line.map(String.init) ?? "", r.column.map(String.init) ?? "", csvField(r.reason)]
            .joined(separator: ",") + "\n"
    }
}
