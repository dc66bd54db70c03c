import Foundation
import Psychometrics

// Regrouping in partitions: scoring input whose sessions are not contiguous when grouping it all in memory would
// not fit the budget (`partitionCount` > 1).
//   1. The reader's events are recorded into P partition files, each session's wholly in one (by the hash of its
//      id), as tagged varint records (`PartitionedSessions.Tag`).
//   2. Each partition in turn is read back into a `GatheredSessions` and scored; its score rows and reject lines go
//      to a run file keyed by the session's first appearance (file, line) — in key order, since a partition's
//      records are in input order.
//   3. The P runs are merged by key into the score and reject files.
// Memory: one partition's sessions and events (see `GatheredSessions`), P write buffers, and P read buffers when
// merging. The output is byte-identical to grouping everything in memory.

extension BatchScorer {
    /// Grouping in memory costs at most about this many bytes per input byte (one-row sessions with short
    /// lines: ~150 bytes of session and event per ~10-byte row).
    static let regroupBytesPerInputByte = 16

    /// Input bytes per partition above which more partitions are used (measured: 80 MB of shuffled rows regroup
    /// in 2.9 s through 3 partitions, 1.7 s through 77).
    static let partitionTargetBytes = 4 << 20

    /// At most this many partition files are open at once (file descriptors; 64 KiB of buffer each).
    static let maxPartitions = 512

    /// Partitions for regrouping `totalBytes` of input: enough to fit half the memory budget, and at least one per
    /// `partitionTargetBytes` of input (smaller partitions group faster: their tables stay in cache); 1 = in
    /// memory.
    func partitionCount(totalBytes: Int) -> Int {
        let budget = max(maxMemoryBytes / 2, 1 << 12)
        let need = totalBytes.multipliedReportingOverflow(by: Self.regroupBytesPerInputByte).partialValue
        let forMemory = (need + budget - 1) / budget, forSpeed = totalBytes / Self.partitionTargetBytes
        return min(max(1, forMemory, forSpeed), Self.maxPartitions)
    }

    /// The order of first appearance: input file, then line.
    @inline(__always) static func sessionKey(file: Int, line: Int) -> UInt64 { UInt64(file) << 44 | UInt64(line) }

    /// Appends each session's score row or reject line of `result` to `run` as a keyed record:
    /// key (8 bytes), tag (0 score, 1 reject), length, bytes.
    static func writeKeyed(_ result: BatchResult, rejectLine: (RejectRecord) -> String, to run: SpillFile) throws {
        var s = 0, r = 0
        for (c, chunk) in result.rows.enumerated() {
            var start = 0
            for end in result.ends[c] {
                try run.write(word: result.keys[s])
                if end > start {
                    try run.write(byte: 0)
                    try chunk.withUnsafeBufferPointer { try run.write(string: UnsafeBufferPointer(rebasing: $0[start..<end])) }
                } else {
                    try run.write(byte: 1)
                    try run.write(string: rejectLine(result.rejects[r]))
                    r += 1
                }
                start = end
                s += 1
            }
        }
    }

    /// The regrouping pass's consumer through partition files (see the file comment).
    struct PartitionedSessions: SessionEventSink {
        var assembler: SessionAssembler
        let partitions: [SpillFile]
        let spillPrefix: String
        /// Whether responses carry seconds (a run with response times): 4 more bytes per response record.
        let timed: Bool
        /// The partition of the current session.
        var current = 0

        /// The record tags of a partition file.
        enum Tag: UInt8 {
            case enter = 1, response, orphan, age, failure
        }

        init(count: Int, spillPrefix: String, assembler: SessionAssembler) throws {
            partitions = try (0..<count).map { _ in try SpillFile(prefix: spillPrefix) }
            self.spillPrefix = spillPrefix
            self.assembler = assembler
            timed = assembler.owner.timed
        }

        var sessionsBegun: Int { assembler.report.sessionsRead }

        /// Phase 1: records the event in its session's partition (an orphan row's partition by its line).
        mutating func take(_ event: SessionEvent) throws {
            switch event {
            case .file(let file, let ageColumn): assembler.ageColumns[file] = ageColumn
            case .enter(let id, let file, let line, let column):
                current = Int(UInt64(bitPattern: Int64(ByteKeyTable.hash(id))) % UInt64(partitions.count))
                let f = try record(.enter, file: file, line: line, column: column)
                try f.write(string: id)
            case .orphan(let file, let line, let column, let reason):
                let f = partitions[line % partitions.count]
                try f.write(byte: Tag.orphan.rawValue)
                try f.write(varint: UInt64(file))
                try f.write(varint: UInt64(line))
                try f.write(varint: UInt64(column))
                try f.write(string: reason)
            case .response(let item, let value, let seconds, let file, let line, let column):
                let f = try record(.response, file: file, line: line, column: column)
                try f.write(varint: UInt64(item))
                try f.write(byte: value)
                if timed { try f.write(varint: UInt64(seconds.bitPattern)) }
            case .failure(let file, let line, let column, let reason):
                let f = try record(.failure, file: file, line: line, column: column ?? 0)
                try f.write(string: reason)
            case .age(let age, let file, let line, let column):
                // The double's bits, so it reads back exactly.
                let f = try record(.age, file: file, line: line, column: column)
                try f.write(word: age.bitPattern)
            case .endOfRow: break
            }
        }

        /// Starts a record of the current session's partition: tag, file, line, column.
        private func record(_ tag: Tag, file: Int, line: Int, column: Int) throws -> SpillFile {
            let f = partitions[current]
            try f.write(byte: tag.rawValue)
            try f.write(varint: UInt64(file))
            try f.write(varint: UInt64(line))
            try f.write(varint: UInt64(column))
            return f
        }

        /// Phases 2 and 3: each partition grouped and scored into a keyed run, then the runs merged.
        mutating func finish() throws {
            var runs: [SpillFile] = []
            var id: [UInt8] = [], text: [UInt8] = []
            for partition in partitions {
                try partition.rewind()
                var gathered = GatheredSessions(assembler: assembler)
                while try !partition.atEnd() {
                    let byte = try partition.readByte()
                    guard let tag = Tag(rawValue: byte) else {
                        throw InputError(file: partition.path, message: "unknown record tag \(byte) (the partition file was changed during the run)")
                    }
                    let file = Int(try partition.readVarint()), line = Int(try partition.readVarint())
                    let column = Int(try partition.readVarint())
                    switch tag {
                    case .enter:
                        try partition.readString(into: &id)
                        try id.withUnsafeBufferPointer { try gathered.take(.enter(id: $0, file: file, line: line, column: column)) }
                    case .response:
                        let item = Int(try partition.readVarint())
                        let value = try partition.readByte()
                        let seconds = timed ? Float(bitPattern: UInt32(truncatingIfNeeded: try partition.readVarint())) : .nan
                        try gathered.take(.response(item: item, value: value, seconds: seconds, file: file, line: line, column: column))
                    case .failure:
                        try partition.readString(into: &text)
                        let reason = String(decoding: text, as: UTF8.self)
                        try gathered.take(.failure(file: file, line: line, column: column == 0 ? nil : column, reason: reason))
                    case .age:
                        try gathered.take(.age(Double(bitPattern: try partition.readWord()), file: file, line: line, column: column))
                    case .orphan:
                        try partition.readString(into: &text)
                        try gathered.take(.orphan(file: file, line: line, column: column, reason: String(decoding: text, as: UTF8.self)))
                    }
                }
                try partition.truncate()
                let run = try SpillFile(prefix: spillPrefix)
                gathered.assembler.keyedOutput = run
                try gathered.replay()
                assembler = gathered.assembler
                assembler.keyedOutput = nil
                try run.rewind()
                runs.append(run)
            }
            try merge(runs)
        }

        /// Phase 3: merges the partitions' keyed runs in key order into the score and reject files.
        func merge(_ runs: [SpillFile]) throws {
            // A binary min-heap of (key, run), so each record costs log P comparisons.
            var heap: [(key: UInt64, run: Int)] = []
            func siftDown(_ start: Int) {
                var i = start
                while true {
                    let l = 2 * i + 1, r = l + 1
                    var m = i
                    if l < heap.count && heap[l].key < heap[m].key { m = l }
                    if r < heap.count && heap[r].key < heap[m].key { m = r }
                    if m == i { return }
                    heap.swapAt(i, m)
                    i = m
                }
            }
            for (k, run) in runs.enumerated() where try !run.atEnd() { heap.append((try run.readWord(), k)) }
            for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
            var bytes: [UInt8] = []
            while let top = heap.first {
                let run = runs[top.run]
                let tag = try run.readByte()
                try run.readString(into: &bytes)
                try bytes.withUnsafeBufferPointer { try (tag == 0 ? assembler.scores : assembler.rejects).write(bytes: $0) }
                if try run.atEnd() {
                    heap[0] = heap[heap.count - 1]
                    heap.removeLast()
                } else {
                    heap[0].key = try run.readWord()
                }
                if !heap.isEmpty { siftDown(0) }
            }
        }
    }
}
