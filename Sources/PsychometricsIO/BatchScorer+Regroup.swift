import Foundation
import Psychometrics
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Regrouping: scoring input whose sessions are not contiguous, in bounded memory.
//
// The regrouping pass reads the inputs again with the serial parser, whose calls (`enter` a session, an `event`
// of a row, an `orphan` row) are grouped by session. When the input is small for the memory budget
// (`partitionCount` = 1) they are grouped in memory and replayed session by session, in order of first
// appearance. Otherwise:
//   1. the calls are recorded into P partition files, each session's wholly in one (by the hash of its id);
//   2. each partition in turn is loaded, grouped in memory and scored; its score rows and reject lines go to a
//      run file keyed by the session's first appearance (file, line) — in key order, since a partition's
//      records are in input order;
//   3. the P runs are merged by key into the score and reject files.
// Memory: one partition's sessions and events (a session keeps at most bank size + 1 events, see `event`, and its
// first age, see `ageEvent`), P
// write buffers, and P read buffers when merging. The output is byte-identical to grouping everything in memory.

extension BatchScorer {
    /// The inputs of a run: their names, and the paths to read — a spill-file copy for an input that cannot be
    /// read twice (a pipe, a FIFO, a character device), made before anything is parsed.
    struct InputSources {
        let names: [String]
        let paths: [String]
        let totalBytes: Int?
        /// Keeps the copies alive: they are removed when released, so a caller reads `paths` within
        /// `withExtendedLifetime` of this value.
        private let spools: [SpillFile]

        init(_ inputs: [String], spillPrefix: String) throws {
            var paths: [String] = [], spools: [SpillFile] = [], total = 0
            for input in inputs {
                var st = stat()
                if stat(input, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG {
                    paths.append(input)
                    total += Int(st.st_size)
                    continue
                }
                let fd = open(input, O_RDONLY)
                guard fd >= 0 else { throw InputError(file: input, message: "cannot open file: \(String(cString: strerror(errno)))") }
                defer { close(fd) }
                var fst = stat()
                if fstat(fd, &fst) == 0 && (fst.st_mode & S_IFMT) == S_IFDIR {
                    throw InputError(file: input, message: "is a directory, expected a CSV file")
                }
                let spool = try SpillFile(prefix: spillPrefix, bufferBytes: 1 << 20)
                let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
                defer { block.deallocate() }
                while true {
                    let n = read(fd, block.baseAddress!, block.count)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw InputError(file: input, message: "read failed: \(String(cString: strerror(errno)))")
                    }
                    if n == 0 { break }
                    try spool.write(UnsafeRawBufferPointer(rebasing: block[0..<n]))
                }
                try spool.rewind()
                total += spool.bytesWritten
                paths.append(spool.path)
                spools.append(spool)
            }
            names = inputs
            self.paths = paths
            self.spools = spools
            totalBytes = total
        }
    }

    /// One kept event of the regrouping pass (a response or a failure), 32 bytes: its session, item, value, kind,
    /// seconds (NaN: none), input file, column (0: none) and line.
    struct GatherEvent {
        var session: Int32, item: Int32
        var value: UInt8, kind: UInt8
        var seconds: Float
        var file: Int32, column: Int32
        var line: Int
    }

    /// A session of the regrouping pass: id, first appearance, and whether its outcome is settled (see `event`).
    struct GatherSession {
        var id: String
        var file: Int
        var line: Int
        var responses = 0
        /// The session's first non-blank age (NaN: none yet), its line and input file.
        var age = Double.nan
        var ageLine = 0
        var ageFile: Int32 = 0
        var settled = false
    }

    /// The order of first appearance: input file, then line.
    @inline(__always) static func sessionKey(file: Int, line: Int) -> UInt64 { UInt64(file) << 44 | UInt64(line) }

    /// Grouping in memory costs at most about this many bytes per input byte (one-row sessions with short
    /// lines: ~150 bytes of session and event per ~10-byte row).
    static let regroupBytesPerInputByte = 16

    /// Partitions for regrouping `totalBytes` of input: enough to fit half the memory budget, and at least one per
    /// `partitionTargetBytes` of input (smaller partitions group faster: their tables stay in cache); 1 = in
    /// memory.
    func partitionCount(totalBytes: Int) -> Int {
        let budget = max(maxMemoryBytes / 2, 1 << 12)
        let need = totalBytes.multipliedReportingOverflow(by: Self.regroupBytesPerInputByte).partialValue
        let forMemory = (need + budget - 1) / budget, forSpeed = totalBytes / Self.partitionTargetBytes
        return min(max(1, forMemory, forSpeed), Self.maxPartitions)
    }

    /// Input bytes per partition above which more partitions are used (measured: 80 MB of shuffled rows regroup
    /// in 2.9 s through 3 partitions, 1.7 s through 77).
    static let partitionTargetBytes = 4 << 20

    /// At most this many partition files are open at once (file descriptors; 64 KiB of buffer each).
    static let maxPartitions = 512

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

    /// Phase 1: the serial parser's calls, written to the partition of their session.
    final class PartitionRecorder {
        let partitions: [SpillFile]
        /// Whether events carry seconds (a run with response times): 4 more bytes per event.
        let timed: Bool
        private var current = 0

        static let enterTag: UInt8 = 1, eventTag: UInt8 = 2, orphanTag: UInt8 = 3, ageTag: UInt8 = 4

        init(count: Int, spillPrefix: String, timed: Bool) throws {
            partitions = try (0..<count).map { _ in try SpillFile(prefix: spillPrefix) }
            self.timed = timed
        }

        func enter(_ id: UnsafeBufferPointer<UInt8>, file: Int, line: Int, column: Int) throws {
            current = Int(UInt64(bitPattern: Int64(ByteKeyTable.hash(id))) % UInt64(partitions.count))
            let f = partitions[current]
            try f.write(byte: Self.enterTag)
            try f.write(varint: UInt64(file))
            try f.write(varint: UInt64(line))
            try f.write(varint: UInt64(column))
            try f.write(string: id)
        }

        func event(_ kind: UInt8, item: Int, value: UInt8, seconds: Float, file: Int, line: Int, column: Int, reason: String?) throws {
            let f = partitions[current]
            try f.write(byte: Self.eventTag)
            try f.write(byte: kind)
            try f.write(varint: UInt64(item + 1))
            try f.write(byte: value)
            if timed { try f.write(varint: UInt64(seconds.bitPattern)) }
            try f.write(varint: UInt64(file))
            try f.write(varint: UInt64(line))
            try f.write(varint: UInt64(column))
            try f.write(byte: reason == nil ? 0 : 1)
            if let reason { try f.write(string: reason) }
        }

        /// An age of the current session's row (the double's bits, so it reads back exactly).
        func age(_ age: Double, file: Int, line: Int, column: Int) throws {
            let f = partitions[current]
            try f.write(byte: Self.ageTag)
            try f.write(varint: UInt64(file))
            try f.write(varint: UInt64(line))
            try f.write(varint: UInt64(column))
            try f.write(word: age.bitPattern)
        }

        func orphan(file: Int, line: Int, column: Int, reason: String) throws {
            let f = partitions[line % partitions.count]
            try f.write(byte: Self.orphanTag)
            try f.write(varint: UInt64(file))
            try f.write(varint: UInt64(line))
            try f.write(varint: UInt64(column))
            try f.write(string: reason)
        }
    }
}

extension BatchScorer.RunState {
    /// The regrouping pass (see the file comment).
    mutating func regroup() throws {
        let count = owner.partitionCount(totalBytes: totalBytes ?? 0)
        report.regroupPartitions = count
        guard count > 1 else {
            try readAll()
            try replayGathered()
            return
        }
        let recorder = try BatchScorer.PartitionRecorder(count: count, spillPrefix: spillPrefix, timed: owner.timed)
        self.recorder = recorder
        try readAll()
        self.recorder = nil
        var runs: [SpillFile] = []
        var id: [UInt8] = [], text: [UInt8] = []
        for partition in recorder.partitions {
            try partition.rewind()
            gatherIndex = ByteStringIndex()
            gatherOrdinals = []
            gatherSessions = []
            events = []
            eventReasons = [:]
            while try !partition.atEnd() {
                let tag = try partition.readByte()
                switch tag {
                case BatchScorer.PartitionRecorder.enterTag:
                    let file = Int(try partition.readVarint()), line = Int(try partition.readVarint()), column = Int(try partition.readVarint())
                    try partition.readString(into: &id)
                    try id.withUnsafeBufferPointer { try enter(session: $0, file: file, line: line, column: column) }
                case BatchScorer.PartitionRecorder.eventTag:
                    let kind = try partition.readByte()
                    let item = Int(try partition.readVarint()) - 1
                    let value = try partition.readByte()
                    let seconds = recorder.timed ? Float(bitPattern: UInt32(truncatingIfNeeded: try partition.readVarint())) : .nan
                    let file = Int(try partition.readVarint()), line = Int(try partition.readVarint()), column = Int(try partition.readVarint())
                    var reason: String?
                    if try partition.readByte() == 1 {
                        try partition.readString(into: &text)
                        reason = String(decoding: text, as: UTF8.self)
                    }
                    try event(
                        kind, item: item, value: value, seconds: seconds, file: file, line: line, column: column == 0 ? nil : column, reason: reason)
                case BatchScorer.PartitionRecorder.ageTag:
                    let file = Int(try partition.readVarint()), line = Int(try partition.readVarint()), column = Int(try partition.readVarint())
                    try ageEvent(Double(bitPattern: try partition.readWord()), file: file, line: line, column: column)
                default:
                    let file = Int(try partition.readVarint()), line = Int(try partition.readVarint()), column = Int(try partition.readVarint())
                    try partition.readString(into: &text)
                    try orphan(file: file, line: line, column: column, reason: String(decoding: text, as: UTF8.self))
                }
            }
            try partition.truncate()
            let run = try SpillFile(prefix: spillPrefix)
            partitionOutput = run
            try replayGathered()
            partitionOutput = nil
            try run.rewind()
            runs.append(run)
        }
        gatherIndex = ByteStringIndex()
        gatherOrdinals = []
        gatherSessions = []
        events = []
        eventReasons = [:]
        try merge(runs)
    }

    /// Phase 3: merges the partitions' keyed runs in key order into the score and reject files.
    mutating func merge(_ runs: [SpillFile]) throws {
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
            try bytes.withUnsafeBufferPointer { try (tag == 0 ? scores : rejects).write(bytes: $0) }
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
