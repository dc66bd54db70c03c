import Foundation
import Psychometrics

extension BatchScorer {
    /// What every consumer of session events shares: one session at a time is assembled from its responses, its
    /// first failure and its age (`begin`, `respond`, `fail`, `applyAge`), closed into a batch (`closeCurrent`),
    /// scored on a background thread while the next batch is read (`flush`) and written in order (`drainPending`) —
    /// to the score and reject files, or as keyed records to a partition's run file (`keyedOutput`).
    struct SessionAssembler {
        let owner: BatchScorer
        /// Input names, for messages and the rejects' file column.
        let inputs: [String]
        let scores: AtomicFileWriter
        let rejects: AtomicFileWriter
        /// The sessions' counts (read, scored, rejected, not administered, flags).
        var report = BatchScoringReport()
        /// Per input file: the age column's index in its header (−1: no ages read).
        var ageColumns: [Int]
        /// The open session, and its ordinal: what the duplicate stamps of its items hold.
        var current = OpenSession()
        var hasCurrent = false
        var ordinal = 0
        /// Per bank item: ordinal of the last session that answered it, and on which line and file.
        let stamps: Stamps
        var batch = Batch()
        var pending: (job: BackgroundJob, slot: PendingBatch)?
        /// Where a partition's score rows and reject lines go as keyed records (`PartitionedSessions`); nil: to
        /// `scores` and `rejects`.
        var keyedOutput: SpillFile?

        /// Writes the outputs' headers.
        init(owner: BatchScorer, inputs: [String], scores: AtomicFileWriter, rejects: AtomicFileWriter) throws {
            self.owner = owner
            self.inputs = inputs
            self.scores = scores
            self.rejects = rejects
            stamps = Stamps(count: owner.scorer.bank.items.count)
            ageColumns = [Int](repeating: -1, count: inputs.count)
            try scores.write(owner.header)
            try rejects.write(BatchScorer.rejectHeader)
        }

        /// A session being assembled.
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

        /// Opens `session` with this duplicate-stamp ordinal (one no earlier session of the run had).
        mutating func begin(_ session: OpenSession, ordinal: Int) {
            current = session
            self.ordinal = ordinal
            hasCurrent = true
        }

        /// A response of the open session: kept, or its error when the item was answered before in it.
        @inline(__always)
        mutating func respond(item: Int, value: UInt8, seconds: Float, file: Int, line: Int, column: Int?) {
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
        }

        /// A failure of the open session: the first one is its reject reason.
        mutating func fail(_ reason: String, file: Int, line: Int, column: Int?) {
            if current.error == nil { current.error = (reason, file, line, column) }
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

        /// The message of a session whose ages differ (naming the first one's file when it is another).
        func ageDiffers(first: Double, file: Int, line: Int, second: Double, secondFile: Int, secondLine: Int) -> String {
            SessionAge.differs(
                first: first, firstLine: line, firstFile: file == secondFile ? nil : (inputs[file] as NSString).lastPathComponent,
                second: second, secondLine: secondLine)
        }

        /// Closes the open session into the batch (with ages read, one without any is rejected here), and hands a
        /// full batch on.
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

        /// Hands the full batch to a background thread (`BackgroundJob`: scoring runs while the next batch is
        /// parsed); the previous batch's output is written first, so output order is input order.
        mutating func flush() throws {
            guard batch.count > 0 else { return }
            try drainPending()
            let box = UncheckedSendableBox((owner, batch, PendingBatch(), keyedOutput != nil))
            let job = BackgroundJob {
                let (owner, work, slot, keyed) = box.value
                slot.result = owner.process(work, keyed: keyed)
            }
            pending = (job, box.value.2)
            batch = Batch()
        }

        /// Waits for the batch in flight, then writes its scores and rejects.
        mutating func drainPending() throws {
            guard let (job, slot) = pending else { return }
            job.wait()
            pending = nil
            guard let result = slot.result else { return }
            if let keyedOutput {
                try BatchScorer.writeKeyed(result, rejectLine: { self.rejectLine($0) }, to: keyedOutput)
            } else {
                for chunk in result.rows { try chunk.withUnsafeBufferPointer { try scores.write(bytes: $0) } }
                try writeRejects(result.rejects)
            }
            countScored(result.rejects, of: result.scored + result.rejects.count, flags: result.flags)
        }

        /// Closes the open session and writes every session closed so far.
        mutating func finishOutput() throws {
            try closeCurrent()
            try flush()
            try drainPending()
        }

        /// Counts `sessions` scored or rejected (`rejects` of them) with these flag counts (`flagSlots`).
        mutating func countScored(_ rejects: [RejectRecord], of sessions: Int, flags: [Int]) {
            report.sessionsScored += sessions - rejects.count
            report.sessionsRejected += rejects.count
            report.sessionsNotAdministered += BatchScorer.notAdministeredCount(rejects)
            report.addFlags(flags)
        }

        func writeRejects(_ list: [RejectRecord]) throws {
            for reject in list { try rejects.write(rejectLine(reject)) }
        }

        func rejectLine(_ reject: RejectRecord) -> String {
            BatchScorer.rejectLine(
                RejectedSession(sessionID: reject.id, file: inputs[reject.file], line: reject.line, column: reject.column, reason: reject.reason))
        }
    }
}
