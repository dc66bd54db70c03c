import Foundation
import Psychometrics

// Parallel reading of a CSV file's records after its header: the machinery that `iqscore score` (long files,
// `BatchScorer.StreamingSessions.readLongRows`) and `ResponseMatrix.load` (`iqscore calibrate`, wide and long files) share.
//
// The file is read in rounds of `chunkBytes × chunks` bytes (a regular file's round by the workers, each `pread`-ing
// a slice: `CSVReader.readFilling`). Each round is cut into chunks at line feeds; the
// chunks' first line numbers come from counting line breaks (a parallel pass); then every worker parses whole
// chunks with `CSVRecordScanner`, the one record grammar of `CSVReader`. A cut that falls inside a quoted field
// (a line feed that is data) is detected, not assumed away: the chunk before it then does not end exactly at
// the cut, so the round's chunks are kept up to that one (its work up to its last whole record) and the rest of
// the round's bytes are parsed again in the next round. The kept chunks are joined in file order, one round at
// a time, on a background thread while the next round is read and parsed (with one worker, on the calling
// thread after the round's parse, so that one worker is one core): so a reader's result is that of reading the
// records one by one, for any number of workers and any chunk size.

/// One chunk of a round: bytes `start ..< end` of the round's buffer, the first of them on line `firstLine`.
struct CSVChunkRange {
    let start: Int
    let end: Int
    /// Whether `end` is the end of the file (its last record may then lack a line break).
    let atEOF: Bool
    let firstLine: Int
}

/// Where a chunk's parse stopped, as every parsed chunk reports it.
protocol ParsedCSVChunk: AnyObject {
    /// End of the last whole record parsed (the chunk's `end` when it parsed them all).
    var stop: Int { get }
    /// The line after that record.
    var nextLine: Int { get }
    /// The malformed record that stopped the parse, if one did.
    var syntaxError: InputError? { get }
}

/// What a chunk parser does with each record of its chunk (`CSVChunkRange.scanRecords`).
protocol CSVChunkRecords {
    /// One record of the chunk, starting on `line`, its fields in `fields` (offsets into `buf`). `plain` when
    /// `CSVRecordScanner.scanPlain` read it: one line, no quoted field, so every field's bytes are raw.
    mutating func record(_ buf: UnsafePointer<UInt8>, _ fields: borrowing CSVRecordScanner, line: Int, plain: Bool)
}

/// The outcome of `CSVChunkRange.scanRecords`: what a `ParsedCSVChunk` reports.
struct CSVChunkEnd {
    var stop: Int
    var nextLine: Int
    var syntaxError: InputError?
}

/// A chunk read by a `CSVChunkRecords` parser: where the scan stopped, and the parser with what it collected.
final class ParsedRecords<Records: CSVChunkRecords>: ParsedCSVChunk {
    let records: Records
    let end: CSVChunkEnd
    var stop: Int { end.stop }
    var nextLine: Int { end.nextLine }
    var syntaxError: InputError? { end.syntaxError }

    /// Scans the records of `range` into `records`.
    init(_ range: CSVChunkRange, _ buf: UnsafePointer<UInt8>, delimiter: UInt8, path: String, into records: Records) {
        var records = records
        end = range.scanRecords(buf, delimiter: delimiter, path: path, into: &records)
        self.records = records
    }
}

extension CSVChunkRange {
    /// Scans the whole records of the chunk in order (the plain fast path first, then the full grammar), hands
    /// each to `records` and skips blank lines. Stops at the chunk's end, at a record that runs past it (when
    /// the chunk is not the file's end: the next round reads it again), or at a malformed record (`path` names
    /// the file in its error).
    @inline(__always)
    func scanRecords<R: CSVChunkRecords>(_ buf: UnsafePointer<UInt8>, delimiter: UInt8, path: String, into records: inout R) -> CSVChunkEnd {
        var scanner = CSVRecordScanner(delimiter: delimiter)
        defer { scanner.deallocate() }
        var p = start, line = firstLine
        var syntaxError: InputError?
        scanning: while p < end {
            let recordLine = line
            if let next = scanner.scanPlain(buf, from: p, to: end) {
                p = next
                line += 1
                records.record(buf, scanner, line: recordLine, plain: true)
                continue
            }
            let outcome: CSVRecordScanner.Outcome
            do {
                outcome = try scanner.scan(buf, from: p, to: end, atEOF: atEOF)
            } catch {
                syntaxError = InputError(file: path, line: line + error.lineOffset, column: error.column, message: error.message)
                break scanning
            }
            switch outcome {
            case .needMore:
                break scanning
            case .blank(let next):
                p = next
                line += 1
            case .record(let next, let lines):
                p = next
                line += lines + 1
                records.record(buf, scanner, line: recordLine, plain: false)
            }
        }
        return CSVChunkEnd(stop: p, nextLine: line, syntaxError: syntaxError)
    }
}

/// Reads the records after a header in parallel rounds (see the file comment).
struct ParallelCSVChunks {
    /// Threads that count and parse: 1 or more.
    let workers: Int
    /// Bytes of one chunk; a round is two chunks per worker.
    let chunkBytes: Int

    /// Reads the rest of `reader` (after its header).
    ///
    /// `parse(range, slot, buf)` runs on a worker thread, concurrently with other chunks' parses: it must parse
    /// the records of `range` (with `scanRecords`) into a chunk that holds no pointer into `buf` (the buffer is
    /// reused), touching only state of its own or of its `slot` (0 ..< 2 × workers, the chunk's place in its
    /// round: state kept per slot is never used by two parses at once).
    ///
    /// `join(chunks, bytes)` gets each round's chunks in file order, one round at a time and in order, on a
    /// background thread while the next round is parsed (so it must touch only state that the caller leaves alone
    /// until `read` returns; with one worker it runs on the calling thread, between rounds); `bytes`
    /// is how far the round got. A chunk with a `syntaxError` is the last one joined; `read` throws that error
    /// after the join (unless the join threw first). A record longer than the reader's `maxRecordBytes`, or a
    /// quote left open at the end of the file, is an error naming the line it starts on.
    func read<Chunk: ParsedCSVChunk>(
        _ reader: CSVReader, parse: (CSVChunkRange, _ slot: Int, UnsafePointer<UInt8>) -> Chunk,
        join: @escaping ([Chunk], _ bytes: Int) throws -> Void
    ) throws {
        let chunks = max(1, workers * 2)
        var capacity = max(chunkBytes, 64) * chunks
        let maxCapacity = max(capacity, reader.maxRecordBytes)
        var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var filled = 0, line = reader.nextLine, eof = false, oneChunk = false
        // Joins run on the background thread only until `read` returns, thrown errors included.
        let joiner = BackgroundJoiner(background: workers > 1)
        defer { joiner.finish() }
        while true {
            if filled < capacity && !eof {
                let n = try reader.readFilling(buffer + filled, capacity: capacity - filled, workers: workers)
                filled += n
                if filled < capacity { eof = true }
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
            let count = cuts.count
            let base = UnsafePointer(buffer)
            // At most `workers` threads; each takes every lanes-th chunk.
            let lanes = max(1, min(workers, count))
            var breaks = [Int](repeating: 0, count: count)
            breaks.withUnsafeMutableBufferPointer { breaks in
                parallelFor(lanes) { lane in
                    for k in stride(from: lane, to: count - 1, by: lanes) {
                        breaks[k] = Self.countLineBreaks(base + cuts[k], cuts[k + 1] - cuts[k])
                    }
                }
            }
            var ranges: [CSVChunkRange] = []
            var next = line
            for k in 0..<count {
                let end = k + 1 < count ? cuts[k + 1] : filled
                ranges.append(CSVChunkRange(start: cuts[k], end: end, atEOF: eof && k + 1 == count, firstLine: next))
                next += breaks[k]
            }
            let slots = UnsafeMutableBufferPointer<Chunk?>.allocate(capacity: count)
            slots.initialize(repeating: nil)
            defer { slots.deinitialize().deallocate() }
            parallelFor(lanes) { lane in
                for k in stride(from: lane, to: count, by: lanes) { slots[k] = parse(ranges[k], k, base) }
            }

            // The chunks up to the first one whose start is not a record start (or that hit a syntax error).
            var valid: [Chunk] = []
            var consumed = 0, failed = false
            for k in 0..<count {
                let chunk = slots[k]!
                if k > 0 && slots[k - 1]!.stop != ranges[k].start { break }
                valid.append(chunk)
                if chunk.syntaxError != nil { failed = true; break }
                consumed = chunk.stop
                line = chunk.nextLine
            }
            try joiner.wait()
            if !valid.isEmpty && (consumed > 0 || failed) {
                // The join, then the syntax error that ended the round (if the join did not throw first).
                let job = UncheckedSendableBox({
                    try join(valid, consumed); if let error = valid[valid.count - 1].syntaxError { throw error }
                })
                try joiner.start { try job.value() }
            }
            if failed { break }
            if consumed == 0 {
                if eof && count == 1 { throw InputError(file: reader.path, line: line, message: "unterminated quoted field at end of file") }
                if count > 1 { oneChunk = true; continue }
                // One record is longer than the buffer: grow it, up to the record limit.
                guard growBuffer(&buffer, capacity: &capacity, filled: filled, limit: maxCapacity) else { throw reader.recordTooLong(line: line) }
                continue
            }
            oneChunk = false
            if consumed < filled { buffer.update(from: buffer + consumed, count: filled - consumed) }
            filled -= consumed
        }
        try joiner.wait()
    }

    /// Counts line breaks as `CSVReader` numbers lines: each `\n`, and each `\r` but the last
    /// `CSVRecordScanner.crRunLimit` of a run followed by `\n` (`\r\r\n` is one line break, `\r\r` two). (Line
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
            count +=
                (zeroBytes(w0 ^ lf).nonzeroBitCount + zeroBytes(w1 ^ lf).nonzeroBitCount)
                + (zeroBytes(w2 ^ lf).nonzeroBitCount + zeroBytes(w3 ^ lf).nonzeroBitCount)
            crSeen |= zeroBytes(w0 ^ cr) | zeroBytes(w1 ^ cr) | zeroBytes(w2 ^ cr) | zeroBytes(w3 ^ cr)
            i += 32
        }
        while i < n {
            if p[i] == 10 { count += 1 } else if p[i] == 13 { crSeen = 1 }
            i += 1
        }
        if crSeen != 0 {
            var k = 0
            while k < n {
                guard p[k] == 13 else { k += 1; continue }
                var run = k
                while run < n && p[run] == 13 { run += 1 }
                count += run < n && p[run] == 10 ? max(0, run - k - CSVRecordScanner.crRunLimit) : run - k
                k = run
            }
        }
        return count
    }
}
