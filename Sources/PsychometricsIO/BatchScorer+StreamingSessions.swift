import Foundation
import Psychometrics

extension BatchScorer {
    /// The first pass's consumer: sessions whose rows are contiguous, each scored as it closes (`SessionAssembler`).
    /// A session id seen before (the hashes of finished ids, `SeenSessions`) throws `Regroup`: the run starts over
    /// with `GatheredSessions` or `PartitionedSessions`. Long files are parsed and scored in parallel chunks when
    /// `parallelParsing` is on (`readLongRows`, below; the chunk parser in `BatchScorer+Parallel.swift`).
    struct StreamingSessions: SessionEventSink {
        var assembler: SessionAssembler
        var seen: SeenSessions
        /// The open session's id bytes.
        var currentID: [UInt8] = []
        /// The parallel path's per-chunk duplicate stamps, reused across rounds and files.
        var chunkStamps: [Stamps] = []

        var sessionsBegun: Int { assembler.report.sessionsRead + (assembler.hasCurrent ? 1 : 0) }

        @inline(__always)
        mutating func take(_ event: SessionEvent) throws {
            switch event {
            case .file(let file, let ageColumn): assembler.ageColumns[file] = ageColumn
            case .enter(let id, let file, let line, let column): try enter(id, file: file, line: line, column: column)
            case .orphan(let file, let line, let column, let reason):
                try assembler.closeCurrent()
                assembler.begin(
                    SessionAssembler.OpenSession(id: "", file: file, line: line, error: (reason, file, line, column)), ordinal: assembler.ordinal + 1)
                currentID = []
                try assembler.closeCurrent()
            case .response(let item, let value, let seconds, let file, let line, let column):
                assembler.respond(item: item, value: value, seconds: seconds, file: file, line: line, column: column)
            case .failure(let file, let line, let column, let reason): assembler.fail(reason, file: file, line: line, column: column)
            case .age(let age, let file, let line, let column): assembler.applyAge(age, file: file, line: line, column: column)
            case .endOfRow: try assembler.closeCurrent()
            }
        }

        /// A row of the session with these id bytes: the open one continues, or it closes and this one opens. An
        /// id that is not valid UTF-8 rejects its session (`TextFidelity`); the rejects file shows it with `\xFF`
        /// escapes.
        @inline(__always)
        mutating func enter(_ bytes: UnsafeBufferPointer<UInt8>, file: Int, line: Int, column: Int) throws {
            if assembler.hasCurrent && bytes.count == currentID.count
                && (bytes.count == 0 || currentID.withUnsafeBufferPointer { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
            {
                return
            }
            try assembler.closeCurrent()
            if try !seen.insert(ByteKeyTable.hash(bytes)) { throw Regroup() }
            currentID.removeAll(keepingCapacity: true)
            currentID.append(contentsOf: bytes)
            let session: SessionAssembler.OpenSession
            if let valid = TextFidelity.validString(bytes) {
                session = SessionAssembler.OpenSession(id: valid, file: file, line: line)
            } else {
                session = SessionAssembler.OpenSession(
                    id: TextFidelity.display(bytes), file: file, line: line,
                    error: (TextFidelity.invalidUTF8("session id", bytes), file, line, column))
            }
            assembler.begin(session, ordinal: assembler.ordinal + 1)
        }

        /// After the last file: writes every session; throws `Regroup` if some id appeared in two places.
        mutating func finish() throws {
            try assembler.finishOutput()
            guard try seen.allDistinct() else { throw Regroup() }
        }

        // MARK: - Long files in parallel chunks

        /// Reads the rest of a long file (after its header) in parallel rounds (see `BatchScorer+Parallel.swift`).
        ///
        /// Each round's chunks are joined (and their rows written) on a background thread while the next round is
        /// read and parsed; joins run one at a time, in order, and only they touch this state and `reader` (the
        /// reading loop keeps to its locals), so the output is that of joining on the calling thread.
        mutating func readLongRows(_ csv: CSVReader, fileIndex: Int, columns: LongColumns, reader: inout SessionReader) throws {
            let owner = assembler.owner
            guard owner.parallelParsing else { return try reader.readLongRows(csv, fileIndex: fileIndex, columns: columns, into: &self) }
            let chunks = max(1, owner.workers * 2)
            let labels = OutputLabels(owner)
            while chunkStamps.count < chunks { chunkStamps.append(Stamps(count: owner.scorer.bank.items.count)) }
            let (stamps, path) = (chunkStamps, csv.path)
            try withUnsafeMutablePointer(to: &self) { sink in
                try withUnsafeMutablePointer(to: &reader) { reader in
                    try ParallelCSVChunks(workers: owner.workers, chunkBytes: owner.budgetedChunkBytes).read(
                        csv,
                        parse: { range, slot, buf in
                            owner.parseLongChunk(range, buf, columns: columns, fileIndex: fileIndex, path: path, stamps: stamps[slot], labels: labels)
                        },
                        join: { chunks, bytes in
                            for chunk in chunks {
                                reader.pointee.report.rowsRead += chunk.rows
                                reader.pointee.report.blankResponses += chunk.blanks
                                reader.pointee.report.droppedTimes += chunk.droppedTimes
                                if let error = chunk.syntaxError { throw error }
                                try sink.pointee.join(chunk, columns: columns)
                            }
                            reader.pointee.parallelProgress(bytes, sessions: sink.pointee.sessionsBegun)
                        })
                }
            }
        }

        /// Replays one session run of a chunk as the serial reader's events (so joining across chunk borders,
        /// duplicate detection and regrouping behave exactly as there): responses and the run's first error in
        /// line order, each age before the rest of its row.
        mutating func replay(_ run: LongRun, columns: LongColumns) throws {
            if run.orphan, let error = run.error {
                try take(.orphan(file: run.file, line: run.line, column: error.column ?? 0, reason: error.reason))
                return
            }
            try run.id.withUnsafeBufferPointer { try take(.enter(id: $0, file: run.file, line: run.line, column: columns.session + 1)) }
            var pending = run.error
            var ages: [(age: Double, line: Int)] = []
            if !run.age.isNaN { ages.append((run.age, run.ageLine)) }
            if !run.differingAge.isNaN { ages.append((run.differingAge, run.differingLine)) }
            var nextAge = 0
            for k in 0...run.items.count {
                let limit = k < run.items.count ? run.itemLines[k] : Int.max
                while true {
                    if nextAge < ages.count, ages[nextAge].line <= limit, ages[nextAge].line <= pending?.line ?? Int.max {
                        try take(.age(ages[nextAge].age, file: run.file, line: ages[nextAge].line, column: columns.age + 1))
                        nextAge += 1
                    } else if let e = pending, e.line < limit {
                        try take(.failure(file: e.file, line: e.line, column: e.column, reason: e.reason))
                        pending = nil
                    } else {
                        break
                    }
                }
                if k < run.items.count {
                    try take(
                        .response(
                            item: run.items[k], value: run.responses[k], seconds: run.times.isEmpty ? .nan : run.times[k],
                            file: run.file, line: run.itemLines[k], column: columns.item + 1))
                }
            }
        }

        /// Adds one parsed chunk: its head continues or closes the open session; the sessions inside it are already
        /// scored, so the open session is scored and written first, then theirs; its tail becomes the open session.
        mutating func join(_ chunk: LongChunk, columns: LongColumns) throws {
            if let head = chunk.head { try replay(head, columns: columns) }
            if chunk.headOpen || (chunk.inner == 0 && chunk.tail == nil) { return }
            try assembler.finishOutput()
            for h in chunk.hashes where try !seen.insert(h) { throw Regroup() }
            try chunk.out.withUnsafeBufferPointer { try assembler.scores.write(bytes: $0) }
            try assembler.writeRejects(chunk.rejects)
            assembler.report.sessionsRead += chunk.inner
            assembler.countScored(chunk.rejects, of: chunk.inner, flags: chunk.flags)
            if let tail = chunk.tail { try replay(tail, columns: columns) }
        }
    }
}
