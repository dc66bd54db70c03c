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

    /// Adds the session counts of `other` (read, scored, rejected, not administered, flags).
    mutating func addSessions(_ other: BatchScoringReport) {
        sessionsRead += other.sessionsRead
        sessionsScored += other.sessionsScored
        sessionsRejected += other.sessionsRejected
        sessionsNotAdministered += other.sessionsNotAdministered
        flagCounts.merge(other.flagCounts, uniquingKeysWith: +)
        timeFlagCounts.merge(other.timeFlagCounts, uniquingKeysWith: +)
    }

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
/// The run is a reader and a consumer. `SessionReader` reads the files row by row into typed events
/// (`SessionEvent`: a row's session id, its responses, failures and age, with file, line and column); a
/// `SessionEventSink` groups them into sessions, which the shared `SessionAssembler` scores in parallel batches
/// and writes in order. Three consumers:
/// - `StreamingSessions` (the first pass): while each session's rows are contiguous, sessions are scored as they
///   close; long files are parsed and scored in parallel chunks (`BatchScorer+Parallel.swift`, same output as one
///   thread). A session whose rows reappear later is detected (hashes of finished session ids, `SeenSessions`);
///   the run then starts over, reading the files again into
/// - `GatheredSessions`, which groups the events by session in memory when the input is small for the budget, or
/// - `PartitionedSessions`, which records them into partition files by session, groups each partition in memory
///   and merges the outputs back in order;
/// so interleaved input is scored exactly as contiguous input. Scores come out one row per session in order of
/// first appearance. Every session read ends up in the scores or in the rejects, with file, line, column and
/// reason.
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
        didSet { timedBox = timedScorer.map(TimedScorerBox.init) }
    }
    /// Whether responses carry times.
    var timed: Bool { timedBox != nil }
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
        // lifetime at its last use (the second pass's `SessionReader`), not at the end of the scope: both passes
        // read inside its extended lifetime (without it, release builds lost a FIFO's copy before regrouping).
        return try withExtendedLifetime(sources) {
            do {
                var reader = SessionReader(owner: self, sources: sources, progress: progress, started: started)
                var sink = StreamingSessions(
                    assembler: try SessionAssembler(owner: self, inputs: sources.names, scores: scores, rejects: rejects),
                    seen: SeenSessions(limitBytes: maxMemoryBytes / 8, spillPrefix: { prefix }))
                try reader.readAll(into: &sink)
                try sink.finish()
                var report = reader.finish(sessions: sink.assembler.report)
                report.sessionHashRuns = sink.seen.runCount
                return report
            } catch is Regroup {
                try scores.reset()
                try rejects.reset()
                var reader = SessionReader(owner: self, sources: sources, progress: progress, started: started)
                let assembler = try SessionAssembler(owner: self, inputs: sources.names, scores: scores, rejects: rejects)
                let partitions = partitionCount(totalBytes: sources.totalBytes ?? 0)
                let sessions: BatchScoringReport
                if partitions > 1 {
                    var sink = try PartitionedSessions(count: partitions, spillPrefix: prefix, assembler: assembler)
                    try reader.readAll(into: &sink)
                    try sink.finish()
                    sessions = sink.assembler.report
                } else {
                    var sink = GatheredSessions(assembler: assembler)
                    try reader.readAll(into: &sink)
                    try sink.replay()
                    sessions = sink.assembler.report
                }
                var report = reader.finish(sessions: sessions)
                report.regrouped = true
                report.regroupPartitions = partitions
                return report
            }
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

        mutating func append(_ s: SessionAssembler.OpenSession) {
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
