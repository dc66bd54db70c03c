import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
    import Glibc
#endif

// Seeded mutation fuzzing of every input of `iqscore` (issue 10, "hostile input: no crash, no hang"). Small valid
// seed files — session CSVs in long and wide layout, a bank CSV, calibration responses in both layouts, norms,
// blueprint and CAT configuration JSON — and option values are mutated by a SplitMix64 generator; each case runs
// the real binary once (located by `IQScoreCLI`, CLITests.swift) in its own directory and checks what must hold
// for any input:
//   - the process exits (no signal, no hang: a run longer than IQSCORE_FUZZ_TIMEOUT seconds is killed and counted
//     as a hang) with a status its command documents, and writes nothing to stdout;
//   - exit 1 or 64: a message on stderr and nothing written (no output, no temporary dot-file);
//   - score, exit 0 or 2: exactly the three outputs; the manifest's sessions_read = scored + rejected and its rows
//     match the files; both files are RFC 4180 CSV (or JSON Lines) with the documented header, one field per header
//     column, plain finite numbers in numeric columns within their documented ranges; scores rows = sessions_scored,
//     rejects rows = sessions_rejected; no session id twice across the two files, no id altered to U+FFFD; when the
//     mutations kept the file's meaning known, every input session in exactly one of them, and the sessions the
//     documented rules settle (`CSVDocument.oracle`) in the right one;
//   - calibrate, exit 0 or 3: the bank and its manifest only; the bank is RFC 4180 CSV with finite numbers, rows as
//     the manifest says; `converged` matches the exit status;
//   - score and calibrate: every output the manifest lists has its size and CRC-32, and `iqscore verify` exits 0
//     (run on every third case: a run of the debug binary costs as much CPU as half a case);
//   - assemble (0, 2) and cat simulate (0): the outputs parse and hold finite numbers.
//
// Every case is reproducible from (seed, case number). A failure names both, the directory where the case was kept
// (its inputs, and what the run wrote in written-by-the-run/, under $TMPDIR/iqscore-fuzz-failures/, with every
// failure of the case in <case>.txt beside it) and the command line; at most two issues per kind of failure are
// recorded, then one summary per target with every kind and its case numbers. A crash is run once more with the
// Swift backtracer to name the function and line where it happened (the kind of failure).
//
// Default (a plain `swift test`): 212 cases, a tenth of each target's long run and the first cases of its sequence;
// the targets run one after another (`.serialized`), so the suite's other tests keep a thread while a case's
// process runs. The long run, IQSCORE_FUZZ_LONG=1, is 2,120 cases over eleven targets (a run of the binary each,
// and `iqscore verify` on every third; each hang adds IQSCORE_FUZZ_TIMEOUT); CI runs it after the suite.
// Environment:
//   IQSCORE_FUZZ_LONG=1 swift test --skip-build --filter FuzzCLITests          the long run (2,120 cases)
//   IQSCORE_FUZZ_CASES=100000 swift test --skip-build --filter FuzzCLITests    more cases, shared by the targets as
//                                                                              the long run's are
//   IQSCORE_FUZZ_SECONDS=600 swift test --skip-build --filter FuzzCLITests     each target runs for 600 s (alone or
//                                                                              with IQSCORE_FUZZ_CASES as a cap)
//   IQSCORE_FUZZ_SEED=42            another base seed (decimal or 0x hex; default 20261123)
//   IQSCORE_FUZZ_CASE=17            only that case (with the seed and the test of a failure message: reproduce it)
//   IQSCORE_FUZZ_TIMEOUT=10         seconds a run may take before it is killed and counted as a hang (default 10;
//                                   a case takes well under a second, and a hang burns a core until killed)

// MARK: - Generator

// MARK: - Settings

/// The environment's settings (see the top of the file).
enum FuzzSettings {
    static let environment = ProcessInfo.processInfo.environment
    static let seed: UInt64 = environment["IQSCORE_FUZZ_SEED"].flatMap(SplitMix64.parseSeed) ?? 20_261_123
    static let onlyCase: Int? = environment["IQSCORE_FUZZ_CASE"].flatMap { Int($0) }
    static let totalCases: Int? = environment["IQSCORE_FUZZ_CASES"].flatMap { Int($0) }
    static let long = environment["IQSCORE_FUZZ_LONG"].map { $0 != "0" && !$0.isEmpty } ?? false
    static let seconds: Double? = environment["IQSCORE_FUZZ_SECONDS"].flatMap { Double($0) }
    static let timeout: Double = environment["IQSCORE_FUZZ_TIMEOUT"].flatMap { Double($0) } ?? 10
    /// Cases run in /dev/shm when there is one (the outputs are fsynced: on a disk that is most of a run's wall
    /// time), else in the temporary directory.
    static let workRoot: URL = {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
            FileManager.default.isWritableFile(atPath: "/dev/shm")
        {
            return URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        }
        return FileManager.default.temporaryDirectory
    }()
    /// Failed cases are kept here (at most `keptPerTarget` per target and run).
    static let failureRoot = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-fuzz-failures", isDirectory: true)
    static let keptPerTarget = 40
    /// `iqscore verify` runs on the manifest of every n-th case (the test checks every manifest itself).
    static let verifyEvery = 3
    /// Issues recorded per kind of failure and target (the summary lists every case).
    static let issuesPerKind = 2

}

/// What a target mutates; each is one `@Test`.
enum FuzzTarget: String, CaseIterable, Sendable {
    case scoreLong, scoreWide, scoreBank, scoreNorms, scoreOptions
    case calibrateWide, calibrateLong, calibrateOptions
    case assembleBlueprint, catConfig
    case normsSample

    /// Cases in the long run (`IQSCORE_FUZZ_LONG=1`, which CI runs after the suite: 2,120 cases, about a minute
    /// of two cores with the debug build).
    var longCases: Int {
        switch self {
        case .scoreLong: 380
        case .scoreWide: 230
        case .scoreBank: 230
        case .scoreNorms: 170
        case .scoreOptions: 230
        case .calibrateWide: 120
        case .calibrateLong: 120
        case .calibrateOptions: 120
        case .assembleBlueprint: 220
        case .catConfig: 150
        case .normsSample: 150
        }
    }

    /// The `@Test` function, for the reproduction command.
    var testName: String {
        switch self {
        case .scoreLong: "scoreLongSessions"
        case .scoreWide: "scoreWideSessions"
        case .scoreBank: "scoreBank"
        case .scoreNorms: "scoreNorms"
        case .scoreOptions: "scoreOptions"
        case .calibrateWide: "calibrateWideResponses"
        case .calibrateLong: "calibrateLongResponses"
        case .calibrateOptions: "calibrateOptions"
        case .assembleBlueprint: "assembleBlueprint"
        case .catConfig: "catConfiguration"
        case .normsSample: "normsSample"
        }
    }

    /// Cases in the suite's default run: a tenth of the long run's (at least 10), the first cases of the same
    /// sequence, so that a plain `swift test` stays short and the long run extends what it checked.
    var defaultCases: Int { max(10, longCases / 10) }

    /// Cases to run: the default; the long run's with IQSCORE_FUZZ_LONG=1; IQSCORE_FUZZ_CASES shared out as the
    /// long run's are; unbounded when only IQSCORE_FUZZ_SECONDS is set.
    var caseCount: Int {
        if let total = FuzzSettings.totalCases {
            let all = FuzzTarget.allCases.reduce(0) { $0 + $1.longCases }
            return max(1, Int((Double(total) * Double(longCases) / Double(all)).rounded()))
        }
        if FuzzSettings.seconds != nil { return Int.max }
        return FuzzSettings.long ? longCases : defaultCases
    }
}

// MARK: - Running the binary

/// How one run ended, with its output.
struct FuzzRun {
    /// Ended by exit (not by a signal, not killed for the timeout).
    var exited: Bool
    /// The exit status, or the signal number.
    var status: Int32
    var timedOut: Bool
    var stdout: [UInt8]
    var stderr: [UInt8]
    var seconds: Double

    var stderrText: String { String(decoding: stderr, as: UTF8.self) }

    var outcome: String {
        if timedOut { return "no exit within \(FuzzSettings.timeout) s (killed)" }
        return exited ? "exit \(status)" : "killed by signal \(status)"
    }
}

/// Runs `iqscore` with a timeout; stdout and stderr go to files outside the case directory (no pipe can fill up).
final class FuzzRunner {
    let binary: URL
    let logs: URL
    /// Runs so far and their wall time (for the summary).
    private(set) var runs = 0
    private(set) var runSeconds = 0.0
    /// Crashes rerun with the backtracer so far (see `FuzzCheck.crashSite`).
    var backtraces = 0
    /// The test's environment without the Swift runtime's backtracer (a crash would spend a second on a
    /// backtrace; the crash message is still printed) and with one OpenBLAS thread (starting the BLAS thread pool
    /// is a third of a small debug run's CPU time; BLAS threading is not what is tested here).
    static let environment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment["OPENBLAS_NUM_THREADS"] = "1"
        return environment
    }()

    init(binary: URL) throws {
        self.binary = binary
        logs = FuzzSettings.workRoot.appendingPathComponent("iqscore-fuzz-logs-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: logs) }

    func run(
        _ arguments: [String], in directory: URL, timeout: Double = FuzzSettings.timeout,
        environment: [String: String] = FuzzRunner.environment
    ) throws -> FuzzRun {
        let launched = try IQScoreCLI.launch(binary, arguments, in: directory, logs: logs, environment: environment, timeout: timeout)
        runs += 1
        runSeconds += launched.seconds
        return FuzzRun(
            exited: launched.exited, status: launched.status, timedOut: launched.timedOut,
            stdout: Array(launched.stdout), stderr: Array(launched.stderr), seconds: launched.seconds)
    }
}

// MARK: - Cases

/// One generated case: the files to write into a fresh directory and the arguments to run there.
struct FuzzCase {
    enum Command { case score, calibrate, assemble, catSimulate, normsBuild }

    var command: Command
    var files: [(name: String, bytes: [UInt8])]
    var arguments: [String]
    /// The file the mutations changed (nil when only options were).
    var mutatedFile: String?
    /// What was done, in order, for the failure message.
    var mutations: [String]
    /// Score: the session ids of the input (trimmed of spaces and tabs, as the reader does), when the mutations
    /// kept them known; `idlessRecords` rows have no session id (no id column, or an empty one).
    var expectedIDs: [[UInt8]]? = nil
    var idlessRecords = 0
    /// Score: sessions that must be rejected (with why) or scored, when the input's meaning is known.
    var oracle: SessionOracle? = nil
    /// Whether a successful run's manifest is also checked by running `iqscore verify` (the same checks are
    /// always done in the test).
    var runVerify = true

    var inputNames: Set<String> { Set(files.map(\.name)) }

    /// The value of `--name` (either `--name value` or `--name=value`; the last one counts).
    func option(_ name: String) -> String? {
        var value: String?
        var k = 0
        while k < arguments.count {
            let argument = arguments[k]
            if argument == name, k + 1 < arguments.count {
                value = arguments[k + 1]
                k += 1
            } else if argument.hasPrefix(name + "=") {
                value = String(argument.dropFirst(name.count + 1))
            }
            k += 1
        }
        return value
    }
}

// MARK: - Bytes and text

/// Byte helpers for building and describing inputs.
enum FuzzBytes {
    static func of(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A readable, bounded rendering: printable ASCII as is, `\r \n \t \0 \\ \"` escaped, other bytes `\xNN`;
    /// long values shortened to their start and length.
    static func escaped(_ bytes: [UInt8], limit: Int = 80) -> String {
        var out = ""
        for byte in bytes.prefix(limit) {
            switch byte {
            case 0x0D: out += "\\r"
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x00: out += "\\0"
            case 0x5C: out += "\\\\"
            case 0x22: out += "\\\""
            case 0x20...0x7E: out.append(Character(Unicode.Scalar(byte)))
            default: out += String(format: "\\x%02X", byte)
            }
        }
        if bytes.count > limit { out += "…(\(bytes.count) bytes)" }
        return "\"" + out + "\""
    }

    static func escaped(_ text: String, limit: Int = 80) -> String { escaped(Array(text.utf8), limit: limit) }

    /// Leading and trailing spaces and tabs removed (as the readers trim ids).
    static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        var lo = 0, hi = bytes.count
        while lo < hi, bytes[lo] == 0x20 || bytes[lo] == 0x09 { lo += 1 }
        while hi > lo, bytes[hi - 1] == 0x20 || bytes[hi - 1] == 0x09 { hi -= 1 }
        return Array(bytes[lo..<hi])
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }

    /// A shell word for the reproduction command.
    static func shellQuoted(_ word: String) -> String {
        let plain = word.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "._/=:,+-@%".unicodeScalars.contains($0) }
        return plain && !word.isEmpty ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static let hundredKB = 100_000
}

// MARK: - CRC-32

/// CRC-32 as zlib computes it (reflected polynomial 0xEDB88320, initial value and final xor 0xFFFFFFFF), the
/// checksum the manifests name.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        bytes.withUnsafeBufferPointer { buffer in
            table.withUnsafeBufferPointer { t in
                for byte in buffer { crc = t[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            }
        }
        return crc ^ 0xFFFF_FFFF
    }
}

// MARK: - RFC 4180

/// A strict RFC 4180 reader for the outputs: fields separated by `,`, records ended by `\n` or `\r\n` (the last
/// one may lack it); a field that starts with `"` is quoted, may hold `,`, `\r`, `\n` and `""`, and must be
/// followed by `,` or the record's end. A quote inside an unquoted field, a bare `\r` outside quotes, an
/// unterminated quote or bytes that are not UTF-8 are errors.
enum RFC4180 {
    struct ParseError: Error, CustomStringConvertible {
        var record: Int
        var offset: Int
        var message: String
        var description: String { "record \(record + 1) (byte \(offset)): \(message)" }
    }

    static func parse(_ bytes: [UInt8]) throws(ParseError) -> [[String]] {
        var records: [[String]] = [], record: [String] = [], field: [UInt8] = []
        var p = 0
        let n = bytes.count
        func finishField() throws(ParseError) {
            guard let text = String(validating: field, as: UTF8.self) else {
                throw ParseError(record: records.count, offset: p, message: "field \(record.count + 1) is not UTF-8: \(FuzzBytes.escaped(field))")
            }
            record.append(text)
            field.removeAll(keepingCapacity: true)
        }
        while p < n {
            // At the start of a field.
            if bytes[p] == 0x22 {
                p += 1
                var closed = false
                while p < n {
                    if bytes[p] == 0x22 {
                        if p + 1 < n && bytes[p + 1] == 0x22 { field.append(0x22); p += 2; continue }
                        p += 1
                        closed = true
                        break
                    }
                    field.append(bytes[p])
                    p += 1
                }
                guard closed else { throw ParseError(record: records.count, offset: p, message: "unterminated quoted field") }
                guard p == n || bytes[p] == 0x2C || bytes[p] == 0x0A || (bytes[p] == 0x0D && p + 1 < n && bytes[p + 1] == 0x0A) else {
                    throw ParseError(record: records.count, offset: p, message: "\(FuzzBytes.escaped([bytes[p]])) after a closing quote")
                }
            } else {
                while p < n, bytes[p] != 0x2C, bytes[p] != 0x0A, bytes[p] != 0x0D {
                    if bytes[p] == 0x22 { throw ParseError(record: records.count, offset: p, message: "a quote inside an unquoted field") }
                    field.append(bytes[p])
                    p += 1
                }
                if p < n && bytes[p] == 0x0D && !(p + 1 < n && bytes[p + 1] == 0x0A) {
                    throw ParseError(record: records.count, offset: p, message: "a bare CR outside quotes")
                }
            }
            try finishField()
            if p == n { break }
            if bytes[p] == 0x2C {
                p += 1
                if p == n { record.append("") }
                continue
            }
            p += bytes[p] == 0x0D ? 2 : 1
            records.append(record)
            record = []
        }
        if !record.isEmpty { records.append(record) }
        return records
    }
}

// MARK: - CSV documents and their mutations

/// A CSV file as records of byte fields, rendered with per-record line endings and optional quoting: the
/// structured mutations change records and fields and still know what the file means.
struct CSVDocument {
    struct Field {
        var bytes: [UInt8]
        var quoted = false
    }

    /// Header first; a record with no fields is a blank line.
    var records: [[Field]]
    var endings: [[UInt8]]
    var finalNewline = true
    /// The session id column (session files), or nil.
    var idColumn: Int?

    init(_ rows: [[String]], idColumn: Int? = nil) {
        records = rows.map { $0.map { Field(bytes: Array($0.utf8)) } }
        endings = Array(repeating: [0x0A], count: rows.count)
        self.idColumn = idColumn
    }

    var dataIndices: Range<Int> { 1..<max(records.count, 1) }

    static func needsQuotes(_ bytes: [UInt8]) -> Bool { bytes.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D } }

    func render() -> [UInt8] {
        var out: [UInt8] = []
        for (k, record) in records.enumerated() {
            for (c, field) in record.enumerated() {
                if c > 0 { out.append(0x2C) }
                if field.quoted || Self.needsQuotes(field.bytes) {
                    out.append(0x22)
                    for byte in field.bytes {
                        out.append(byte)
                        if byte == 0x22 { out.append(0x22) }
                    }
                    out.append(0x22)
                } else {
                    out += field.bytes
                }
            }
            if k < records.count - 1 || finalNewline { out += endings[k] }
        }
        return out
    }

    /// A record the reader sees as a blank line.
    static func isBlank(_ record: [Field]) -> Bool {
        record.isEmpty || (record.count == 1 && record[0].bytes.isEmpty && !record[0].quoted)
    }

    /// The session ids of the data records (trimmed), and how many records have no id (no id column, or empty).
    func sessionIDs() -> (ids: [[UInt8]], idless: Int) {
        guard let idColumn else { return ([], 0) }
        var ids: [[UInt8]] = [], idless = 0
        for k in dataIndices where !Self.isBlank(records[k]) {
            let id = idColumn < records[k].count ? FuzzBytes.trimmed(records[k][idColumn].bytes) : []
            if id.isEmpty { idless += 1 } else { ids.append(id) }
        }
        return (ids, idless)
    }
}

/// Values and mutations for CSV inputs.
enum CSVMutator {
    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// Odd cell values: empty, missing markers, numbers that are not 0/1 (1e300, -0, nan, inf, hex floats), words,
    /// separators, line breaks, NUL, bytes that are not UTF-8, a BOM, digits of other scripts, 100 KB.
    static let cells: [[UInt8]] =
        [
            "", " ", "NA", "na", "N/A", "null", "2", "-1", "1.0", "0.0", "0.5", "+1", "01", " 1", "1 ", "1e300", "-0", "nan", "NaN",
            "inf", "-inf", "Infinity", "0x1p3", "1e-320", "9223372036854775808", "true", "TRUE", "False", "yes", "\"", "a,b", "x\ny",
            "x\r\ny", "x\ry", "\0", "1\01", "é", "\u{FEFF}1", "१", "１", "0,1"
        ].map(bytes) + [[0xFF], [0x80], [0xC3], [0xED, 0xA0, 0x80], [0x31, 0xFF], Array(repeating: 0x31, count: FuzzBytes.hundredKB)]

    /// Odd session ids: separators, quotes, line breaks, non-ASCII, bytes that are not UTF-8, NUL, numbers,
    /// 100 KB. None is empty or starts or ends with a space or tab (the reader trims those).
    static let ids: [[UInt8]] =
        [
            "a,b", "a\"b", "\"", "\"\"", "x\r\ny", "x\ny", "x\ry", "é", "😀", "a\u{2028}b", "a\0b", "NA", "0", "-0", "1e300", "nan",
            "=1+1", "a\tb", "\u{FEFF}p", "s s", "p1", "P01"
        ].map(bytes) + [
            [0xFF], [0x61, 0x80, 0x62], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            Array(repeating: 0x70, count: FuzzBytes.hundredKB)
        ]

    /// Header names that change a column's meaning.
    static let headerNames: [[UInt8]] =
        [
            "", " ", "SESSION_ID", "Session_Id", " session_id ", "\u{FEFF}session_id", "id", "person_id", "item_id", "response",
            "session_id", "a", "b", "c", "domain", "model", "x,y", "q1", "i01", "session_id\0"
        ].map(bytes) + [[0xFF], Array(repeating: 0x68, count: FuzzBytes.hundredKB)]

    /// A record-level mutation; the session ids of the result are known (`CSVDocument.sessionIDs`).
    /// `columns(width)` lists the columns whose cells may change (never the id column); `cellValues` their values.
    static func structured(
        _ doc: inout CSVDocument, _ rng: inout SplitMix64, cellValues: [[UInt8]], columns: (Int) -> [Int],
        long: Bool
    ) -> String {
        let data = Array(doc.dataIndices).filter { !CSVDocument.isBlank(doc.records[$0]) }
        func someRecord() -> Int? { data.isEmpty ? nil : rng.pick(data) }
        switch rng.below(16) {
        case 0, 1, 2:
            guard let r = someRecord() else { return "no data row to change" }
            let candidates = columns(doc.records[r].count).filter { $0 != doc.idColumn }
            guard !candidates.isEmpty else { return "no cell to change" }
            let c = rng.pick(candidates)
            let value = rng.pick(cellValues)
            doc.records[r][c] = .init(bytes: value, quoted: rng.chance(0.2))
            return "row \(r + 1) field \(c + 1) := \(FuzzBytes.escaped(value))"
        case 3:
            let r = rng.below(doc.records.count)
            guard !doc.records[r].isEmpty else { return "quote nothing" }
            let c = rng.below(doc.records[r].count)
            doc.records[r][c].quoted.toggle()
            return "row \(r + 1) field \(c + 1) quoted: \(doc.records[r][c].quoted)"
        case 4:
            guard let r = someRecord() else { return "no row to delete" }
            doc.records.remove(at: r)
            doc.endings.remove(at: r)
            return "delete row \(r + 1)"
        case 5:
            guard let r = someRecord() else { return "no row to duplicate" }
            let to = rng.inRange(1, doc.records.count)
            doc.records.insert(doc.records[r], at: to)
            doc.endings.insert(doc.endings[r], at: to)
            return "copy row \(r + 1) to \(to + 1)"
        case 6:
            guard doc.records.count > 2 else { return "nothing to shuffle" }
            if rng.chance(0.5) {
                var body = Array(doc.records.dropFirst())
                rng.shuffle(&body)
                doc.records = [doc.records[0]] + body
                return "shuffle the data rows"
            }
            let a = rng.inRange(1, doc.records.count - 1), b = rng.inRange(1, doc.records.count - 1)
            doc.records.swapAt(a, b)
            return "swap rows \(a + 1) and \(b + 1)"
        case 7:
            let keep = rng.inRange(1, max(1, doc.records.count - 1))
            doc.records.removeSubrange(keep...)
            doc.endings.removeSubrange(keep...)
            return "keep the first \(keep) rows"
        case 8:
            guard let r = someRecord() else { return "no row to widen" }
            let extra = rng.inRange(1, 3)
            for _ in 0..<extra { doc.records[r].append(.init(bytes: rng.chance(0.5) ? bytes("1") : rng.pick(cellValues))) }
            return "row \(r + 1): \(extra) more field(s) than the header"
        case 9:
            guard let r = someRecord(), doc.records[r].count > 1 else { return "no row to shorten" }
            let keep = rng.inRange(1, doc.records[r].count - 1)
            doc.records[r].removeSubrange(keep...)
            return "row \(r + 1): only \(keep) field(s)"
        case 10:
            let style = rng.below(4)
            for k in doc.endings.indices {
                switch style {
                case 0: doc.endings[k] = [0x0D, 0x0A]
                case 1: doc.endings[k] = [0x0D]
                case 2: doc.endings[k] = rng.pick([[0x0A], [0x0D, 0x0A], [0x0D]])
                default: doc.endings[k] = [0x0A, 0x0A]
                }
            }
            return ["CRLF line ends", "CR line ends", "mixed LF/CRLF/CR line ends", "a blank line after every row"][style]
        case 11:
            doc.finalNewline.toggle()
            return doc.finalNewline ? "final newline" : "no final newline"
        case 12:
            let count = rng.inRange(1, 3)
            for _ in 0..<count {
                let at = rng.inRange(1, doc.records.count)
                doc.records.insert([], at: at)
                doc.endings.insert(rng.pick([[0x0A], [0x0D, 0x0A]]), at: at)
            }
            return "\(count) blank line(s)"
        case 13, 14:
            guard let idColumn = doc.idColumn, let r = someRecord(), idColumn < doc.records[r].count else { return "no session to rename" }
            let old = doc.records[r][idColumn].bytes
            let others = data.compactMap { idColumn < doc.records[$0].count ? doc.records[$0][idColumn].bytes : nil }.filter { $0 != old }
            let new = rng.chance(0.15) && !others.isEmpty ? rng.pick(others) : rng.pick(ids)
            let all = long && rng.chance(0.7)
            for k in (all ? data : [r]) where idColumn < doc.records[k].count && doc.records[k][idColumn].bytes == old {
                doc.records[k][idColumn] = .init(bytes: new, quoted: rng.chance(0.2))
            }
            // Sometimes the renamed session is also made a reject (odd ids in the rejects file).
            let reject = rng.chance(0.35)
            if reject, let c = columns(doc.records[r].count).last(where: { $0 != idColumn }) { doc.records[r][c] = .init(bytes: bytes("7")) }
            return "session \(FuzzBytes.escaped(old)) \(all ? "" : "(row \(r + 1)) ")renamed \(FuzzBytes.escaped(new))"
                + (reject ? ", row \(r + 1)'s last field := \"7\"" : "")
        default:
            // A column more (long: ignored by the readers; wide: an item no bank knows).
            let at = rng.inRange(doc.idColumn == 0 ? 1 : 0, doc.records.first?.count ?? 0)
            let name = rng.pick([bytes("note"), bytes("extra"), bytes("q7"), bytes("i07")])
            let shift = doc.idColumn.map { at <= $0 } ?? false
            for k in doc.records.indices where !CSVDocument.isBlank(doc.records[k]) {
                let value = k == 0 ? name : (rng.chance(0.5) ? bytes("1") : rng.pick(cellValues))
                doc.records[k].insert(.init(bytes: value), at: min(at, doc.records[k].count))
            }
            if shift, let id = doc.idColumn { doc.idColumn = id + 1 }
            return "column \(FuzzBytes.escaped(name)) inserted at \(at + 1)"
        }
    }

    /// Changes a header name (the ids are then unknown: the reader may see another layout or columns).
    static func renameHeader(_ doc: inout CSVDocument, _ rng: inout SplitMix64) -> String {
        guard !doc.records.isEmpty, !doc.records[0].isEmpty else { return "no header" }
        let c = rng.below(doc.records[0].count)
        let old = doc.records[0][c].bytes
        let new = rng.pick(headerNames)
        doc.records[0][c] = .init(bytes: new, quoted: rng.chance(0.2))
        return "header \(FuzzBytes.escaped(old)) := \(FuzzBytes.escaped(new))"
    }

    static let tokens: [[UInt8]] =
        [
            "\"", ",", "\r", "\n", "\r\n", "\0", "\"\"", ",,", "\n\n", "1e300", "nan", "-0", " ", "\t", "\u{FEFF}", "\"a,b\"", "é"
        ].map(bytes) + [[0xFF], [0x80], [0xC3], [0xFE, 0xFF]]

    /// Byte-level mutations of rendered text.
    static func havoc(_ text: inout [UInt8], _ rng: inout SplitMix64) -> String {
        func position() -> Int { text.isEmpty ? 0 : rng.below(text.count + 1) }
        func lineStarts() -> [Int] { [0] + text.indices.filter { text[$0] == 0x0A && $0 + 1 < text.count }.map { $0 + 1 } }
        switch rng.below(13) {
        case 0:
            guard !text.isEmpty else { return "flip nothing" }
            let at = rng.below(text.count), bit = rng.below(8)
            text[at] ^= UInt8(1 << bit)
            return "flip bit \(bit) of byte \(at)"
        case 1:
            guard !text.isEmpty else { return "set nothing" }
            let at = rng.below(text.count), value = UInt8(truncatingIfNeeded: rng.next())
            text[at] = value
            return String(format: "byte %d := 0x%02X", at, value)
        case 2, 3:
            let at = position(), token = rng.pick(tokens)
            text.insert(contentsOf: token, at: at)
            return "insert \(FuzzBytes.escaped(token)) at byte \(at)"
        case 4:
            guard !text.isEmpty else { return "delete nothing" }
            let at = rng.below(text.count), count = min(text.count - at, rng.inRange(1, 24))
            text.removeSubrange(at..<(at + count))
            return "delete \(count) byte(s) at \(at)"
        case 5:
            guard !text.isEmpty else { return "copy nothing" }
            let at = rng.below(text.count), count = min(text.count - at, rng.inRange(1, 40)), to = position()
            text.insert(contentsOf: Array(text[at..<(at + count)]), at: to)
            return "copy \(count) byte(s) from \(at) to \(to)"
        case 6:
            let at = position()
            text.removeSubrange(at...)
            return "truncate at byte \(at)"
        case 7:
            let starts = lineStarts(), start = rng.pick(starts)
            let end = (text[start...].firstIndex(of: 0x0A).map { $0 + 1 }) ?? text.count
            let line = Array(text[start..<end])
            if rng.chance(0.5) {
                text.removeSubrange(start..<end)
                return "delete line at byte \(start)"
            }
            text.insert(contentsOf: line, at: rng.pick(lineStarts()))
            return "copy the line at byte \(start)"
        case 8:
            let at = position()
            let byte = rng.pick([0x31, 0x78, 0x2C, 0x22, 0x0A, 0x20, 0xFF] as [UInt8])
            text.insert(contentsOf: Array(repeating: byte, count: FuzzBytes.hundredKB), at: at)
            return "insert 100 KB of \(FuzzBytes.escaped([byte])) at byte \(at)"
        case 9:
            text.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: 0)
            return "prepend a UTF-8 BOM"
        case 10:
            let at = position(), count = rng.inRange(1, 16)
            let junk = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            text.insert(contentsOf: junk, at: at)
            return "insert \(FuzzBytes.escaped(junk)) at byte \(at)"
        case 11:
            // Line breaks: every LF becomes CRLF, or CR.
            let style = rng.below(2)
            var out: [UInt8] = []
            for byte in text {
                if byte == 0x0A { out += style == 0 ? [0x0D, 0x0A] : [0x0D] } else { out.append(byte) }
            }
            text = out
            return style == 0 ? "LF → CRLF" : "LF → CR"
        default:
            let replacement = rng.pick(wholeFiles)
            text = replacement
            return "the whole file := \(FuzzBytes.escaped(replacement))"
        }
    }

    static let wholeFiles: [[UInt8]] =
        [
            "", "\n", "\r\n", " ", "\u{FEFF}", "\"", "\"\n", ",", ",,,\n,,,\n", "session_id", "session_id\n", "session_id,item_id,response\n",
            "session_id,item_id,response", "item_id,a,b\n", "\0\0\0\0"
        ].map(bytes) + [[0xFF, 0xFE, 0x73, 0x00], Array(repeating: 0x0A, count: FuzzBytes.hundredKB)]

    /// A mutated document: 0–3 structured mutations, sometimes a header change, then sometimes byte-level
    /// mutations. The document is returned when it still says what the file means (no header change, no
    /// byte-level mutation).
    static func mutate(
        _ seed: CSVDocument, _ rng: inout SplitMix64, cellValues: [[UInt8]], columns: @escaping (Int) -> [Int],
        long: Bool
    ) -> (bytes: [UInt8], mutations: [String], document: CSVDocument?) {
        var doc = seed, mutations: [String] = [], idsKnown = true
        let structuredCount = rng.below(4)
        for _ in 0..<structuredCount {
            mutations.append(structured(&doc, &rng, cellValues: cellValues, columns: columns, long: long))
        }
        if rng.chance(0.15) {
            mutations.append(renameHeader(&doc, &rng))
            idsKnown = false
        }
        var text = doc.render()
        if structuredCount == 0 || rng.chance(0.35) {
            for _ in 0..<rng.inRange(1, 4) { mutations.append(havoc(&text, &rng)) }
            idsKnown = false
        }
        return (text, mutations, idsKnown ? doc : nil)
    }
}

// MARK: - What a session file means

/// Sessions of a session file whose fate is certain: rejected (with the reason) or scored.
struct SessionOracle {
    var mustReject: [String: String] = [:]
    var mustScore: Set<String> = []
}

extension CSVDocument {
    /// Cells that are answers (after trimming spaces and tabs), and those that mean "not administered"
    /// (documented: 1/0, true/false; empty or NA).
    static let answers: Set<[UInt8]> = Set(["0", "1", "true", "false"].map { Array($0.utf8) })
    static let notAdministered: Set<[UInt8]> = Set(["", "NA"].map { Array($0.utf8) })
    /// Cells the documentation does not settle (other spellings, padding, other digits): a session with one is
    /// left out of the oracle. Every other cell is not a response, and rejects its session.
    static let unsettledCells: Set<[UInt8]> = Set(
        [
            " ", " 1", "1 ", "1.0", "0.0", "+1", "01", "-0", "TRUE", "True", "False", "N/A",
            "na", "null", "\u{FEFF}1", "१", "１", "Q1"
        ].map { Array($0.utf8) })

    /// The sessions whose fate the documented rules settle: a row whose field count differs from the header's
    /// (long layout), a cell that is not a response, an answer to an item the bank lacks, an item answered twice
    /// or no answer at all reject a session; a session with none of these and no unsettled cell is scored.
    /// Sessions with ids that are not UTF-8 are left out. Nil when the header is not the seeds' (wide: a column
    /// that is not a bank item).
    func oracle(bankItems: Set<String>) -> SessionOracle? {
        guard let idColumn, let header = records.first else { return nil }
        let names = header.map { String(decoding: $0.bytes, as: UTF8.self) }
        let width = header.count
        struct Session {
            var reject: String?
            var unsettled = false
            var answers: [String: Int] = [:]
            var blanks: Set<String> = []
            var rows = 0
        }
        var sessions: [String: Session] = [:]
        let long = names.contains("item_id") && names.contains("response")
        let itemColumn = names.firstIndex(of: "item_id"), responseColumn = names.firstIndex(of: "response")
        if !long && names.enumerated().contains(where: { $0.offset != idColumn && !bankItems.contains($0.element) }) { return nil }

        /// A cell: an answer, not administered, unsettled, or not a response.
        enum Cell { case answer, blank, unsettled, invalid }
        func classify(_ field: Field) -> Cell {
            if Self.unsettledCells.contains(field.bytes) { return .unsettled }
            let value = FuzzBytes.trimmed(field.bytes)
            if Self.answers.contains(value) { return .answer }
            if Self.notAdministered.contains(value) { return .blank }
            return .invalid
        }

        for k in dataIndices where !Self.isBlank(records[k]) {
            let record = records[k]
            guard idColumn < record.count, let id = String(validating: FuzzBytes.trimmed(record[idColumn].bytes), as: UTF8.self), !id.isEmpty else {
                continue
            }
            var session = sessions[id] ?? Session()
            session.rows += 1
            defer { sessions[id] = session }
            if long, let itemColumn, let responseColumn {
                guard record.count == width else {
                    session.reject = session.reject ?? "a row with \(record.count > width ? "more" : "fewer") fields than the header"
                    continue
                }
                let item = String(validating: FuzzBytes.trimmed(record[itemColumn].bytes), as: UTF8.self)
                let known = item.map { bankItems.contains($0) } ?? false
                let unsettledItem = item.map { $0.isEmpty || Self.unsettledCells.contains(Array($0.utf8)) } ?? false
                switch classify(record[responseColumn]) {
                case .invalid: session.reject = session.reject ?? "a cell that is not a response"
                case .unsettled: session.unsettled = true
                case .answer:
                    if known {
                        session.answers[item!, default: 0] += 1
                    } else if unsettledItem {
                        session.unsettled = true
                    } else {
                        session.reject = session.reject ?? "an answer to an item the bank lacks"
                    }
                case .blank:
                    if known { session.blanks.insert(item!) } else { session.unsettled = true }
                }
            } else {
                guard record.count == width else { session.unsettled = true; continue }
                for (c, name) in names.enumerated() where c != idColumn {
                    switch classify(record[c]) {
                    case .invalid: session.reject = session.reject ?? "a cell that is not a response"
                    case .unsettled: session.unsettled = true
                    case .answer: session.answers[name, default: 0] += 1
                    case .blank: session.blanks.insert(name)
                    }
                }
            }
        }
        var oracle = SessionOracle()
        for (id, session) in sessions {
            if let reason = session.reject { oracle.mustReject[id] = reason; continue }
            if session.unsettled { continue }
            if session.answers.values.contains(where: { $0 > 1 }) { oracle.mustReject[id] = "an item answered twice"; continue }
            // Wide rows of one id merged, or an item both answered and left blank: not settled.
            if !long && session.rows > 1 { continue }
            if session.answers.keys.contains(where: { session.blanks.contains($0) }) { continue }
            if session.answers.isEmpty { oracle.mustReject[id] = "no answers"; continue }
            oracle.mustScore.insert(id)
        }
        return oracle
    }
}

// MARK: - JSON documents and their mutations

/// JSON as a tree that keeps member order and number text, plus raw bytes for what JSON cannot say.
indirect enum JSONNode: Sendable {
    case object([JSONMember])
    case array([JSONNode])
    case string(String)
    case number(String)
    case literal(String)
    case raw([UInt8])

    struct JSONMember: Sendable {
        var key: String
        var value: JSONNode
    }

    static func obj(_ members: [(String, JSONNode)]) -> JSONNode { .object(members.map { JSONMember(key: $0.0, value: $0.1) }) }

    func write(into out: inout [UInt8]) {
        switch self {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (k, member) in members.enumerated() {
                if k > 0 { out += Array(", ".utf8) }
                Self.writeString(member.key, into: &out)
                out += Array(": ".utf8)
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out += Array(", ".utf8) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .string(let text): Self.writeString(text, into: &out)
        case .number(let text), .literal(let text): out += Array(text.utf8)
        case .raw(let bytes): out += bytes
        }
    }

    static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out += Array("\\\"".utf8)
            case 0x5C: out += Array("\\\\".utf8)
            case 0x00..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    /// Paths (member or element indices from the root) of every node, the root first.
    func paths(_ prefix: [Int] = []) -> [[Int]] {
        var result = [prefix]
        switch self {
        case .object(let members): for (k, member) in members.enumerated() { result += member.value.paths(prefix + [k]) }
        case .array(let items): for (k, item) in items.enumerated() { result += item.paths(prefix + [k]) }
        default: break
        }
        return result
    }

    func node(at path: ArraySlice<Int>) -> JSONNode {
        guard let first = path.first else { return self }
        switch self {
        case .object(let members): return members[first].value.node(at: path.dropFirst())
        case .array(let items): return items[first].node(at: path.dropFirst())
        default: return self
        }
    }

    mutating func update(at path: ArraySlice<Int>, _ body: (inout JSONNode) -> Void) {
        guard let first = path.first else { body(&self); return }
        switch self {
        case .object(var members):
            members[first].value.update(at: path.dropFirst(), body)
            self = .object(members)
        case .array(var items):
            items[first].update(at: path.dropFirst(), body)
            self = .array(items)
        default: break
        }
    }

    var isNumber: Bool { if case .number = self { true } else { false } }

    var summary: String { FuzzBytes.escaped(bytes, limit: 60) }
}

/// Values and mutations for JSON inputs.
enum JSONMutator {
    /// Numbers at and past the edges: ±0, ±1e308, overflow to ±inf (1e309), subnormals, Int64 and UInt64 edges,
    /// 10⁹, fractions where integers are expected, exponent forms.
    static let numbers = [
        "0", "-0", "-1", "1", "2", "3", "7", "1e308", "-1e308", "1.7976931348623157e308", "1e309", "-1e309", "1e-320", "5e-324",
        "-5e-324", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
        "18446744073709551616", "1000000000", "2147483648", "100000000000000000000000000000", "0.5", "2.5", "1e2", "1E+2",
        "-1e-2", "0.9999999999999999", "0.00000001", "123456789012345678901234567890e-10"
    ]

    static let strings = [
        "NaN", "nan", "Infinity", "-Infinity", "inf", "", " ", "1", "0.5", "logic", "pattern", "spatial", "eap", "ml", "wle", "map",
        "mle", "EAP", "a,b", "a\"b", "x\r\ny", "x\ny", "\0", "é", "😀", "i01", "active", "retired", "bogus",
        String(repeating: "x", count: FuzzBytes.hundredKB)
    ]

    static func raw(_ s: String) -> JSONNode { .raw(Array(s.utf8)) }

    static let others: [JSONNode] = [
        .literal("true"), .literal("false"), .literal("null"), .array([]), .object([]),
        .array([.number("1"), .number("2"), .number("3")]), .array([.number("-6"), .number("0")]), .array([.number("0"), .number("-6")]),
        .array([.array([.string("i01"), .string("i02")])]), .array([.array([.string("i01")])]),
        .array([.string("active"), .string("retired"), .string("pretest")]), .array([.string("bogus")]),
        .obj([("logic", .number("1"))]), .obj([("logic", .number("-1"))]), .obj([("nowhere", .number("1"))]),
        .obj([("logic", .number("1e308")), ("pattern", .number("1e308")), ("spatial", .number("1"))]),
        .obj([("logic", .number("1.7976931348623157e308")), ("pattern", .number("1.7976931348623157e308"))]),
        .obj([("logic", .number("9223372036854775807")), ("pattern", .number("1"))]),
        .obj([("logic", .number("0")), ("pattern", .number("0")), ("spatial", .number("0"))]),
        .obj([("easy", .array([.number("-1e308"), .number("1e308")]))]),
        .array([.obj([("theta", .number("0")), ("information", .number("1e308"))])]),
        .array([.obj([("theta", .number("1e308")), ("information", .number("-1"))])]),
        raw("NaN"), raw("Infinity"), raw("-Infinity"), raw("nan"), raw("01"), raw("+1"), raw(".5"), raw("1."), raw("0x10"), raw("1e"),
        raw("\"\\ud800\""), raw("\"\\u0000\""), raw("undefined"), .raw([0x22, 0xFF, 0x22]), .raw([0x22, 0xC3, 0x22]), .raw([0x22, 0x80, 0x22]),
        raw(String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)),
        raw(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)),
        raw(String(repeating: "{\"a\":", count: 20_000) + "1" + String(repeating: "}", count: 20_000))
    ]

    static func someValue(_ rng: inout SplitMix64) -> JSONNode {
        switch rng.below(10) {
        case 0...3: return .number(rng.pick(numbers))
        case 4...5: return .string(rng.pick(strings))
        default: return rng.pick(others)
        }
    }

    static let keyVariants = ["", " ", "LENGTH", "lenght", "max_item", "Max_Items", "extra", "__proto__", "sd ", "é", "a\"b", "x\ny"]

    /// One structured mutation of `root`.
    static func structured(_ root: inout JSONNode, _ rng: inout SplitMix64) -> String {
        let paths = root.paths()
        let inner = paths.filter { !$0.isEmpty }
        let members = inner.filter { if case .object = root.node(at: $0.dropLast()[...]) { true } else { false } }
        let numbers = inner.filter { root.node(at: $0[...]).isNumber }
        switch rng.below(12) {
        case 0, 1, 2:
            guard let path = inner.isEmpty ? nil : rng.pick(inner) else { return "no value to replace" }
            let value = someValue(&rng)
            root.update(at: path[...]) { $0 = value }
            return "value at \(describe(root, path)) := \(value.summary)"
        case 3, 4:
            guard let path = numbers.isEmpty ? nil : rng.pick(numbers) else { return "no number" }
            let value = JSONNode.number(rng.pick(Self.numbers))
            root.update(at: path[...]) { $0 = value }
            return "number at \(describe(root, path)) := \(value.summary)"
        case 5:
            guard let path = members.isEmpty ? nil : rng.pick(members) else { return "no member to drop" }
            let name = describe(root, path)
            root.update(at: path.dropLast()[...]) { node in
                if case .object(var list) = node { list.remove(at: path.last!); node = .object(list) }
            }
            return "drop \(name)"
        case 6:
            guard let path = members.isEmpty ? nil : rng.pick(members) else { return "no key to rename" }
            let name = describe(root, path)
            let key = rng.pick(keyVariants)
            root.update(at: path.dropLast()[...]) { node in
                if case .object(var list) = node { list[path.last!].key = key; node = .object(list) }
            }
            return "rename \(name) to \(FuzzBytes.escaped(key))"
        case 7:
            let objects = paths.filter { if case .object = root.node(at: $0[...]) { true } else { false } }
            guard let path = objects.isEmpty ? nil : rng.pick(objects) else { return "no object" }
            let key = rng.chance(0.5) ? rng.pick(keyVariants) : "unknown_key"
            let value = someValue(&rng)
            root.update(at: path[...]) { node in
                if case .object(var list) = node { list.append(.init(key: key, value: value)); node = .object(list) }
            }
            return "add \(FuzzBytes.escaped(key)): \(value.summary) to \(describe(root, path))"
        case 8:
            guard let path = members.isEmpty ? nil : rng.pick(members) else { return "no member to repeat" }
            let value = someValue(&rng)
            var key = ""
            root.update(at: path.dropLast()[...]) { node in
                if case .object(var list) = node {
                    key = list[path.last!].key
                    list.append(.init(key: key, value: value))
                    node = .object(list)
                }
            }
            return "repeat key \(FuzzBytes.escaped(key)) with \(value.summary)"
        case 9:
            guard let path = inner.isEmpty ? nil : rng.pick(inner) else { return "nothing to wrap" }
            let depth = rng.pick([1, 2, 64, 600])
            root.update(at: path[...]) { node in
                for _ in 0..<depth { node = rng.chance(0.5) ? .array([node]) : .obj([("v", node)]) }
            }
            return "wrap \(describe(root, path)) in \(depth) level(s)"
        case 10:
            let arrays = paths.filter { if case .array(let items) = root.node(at: $0[...]) { !items.isEmpty } else { false } }
            guard let path = arrays.isEmpty ? nil : rng.pick(arrays) else { return "no array" }
            var copies = rng.pick([0, 2, 1_000])
            if case .array(let items) = root.node(at: path[...]), items[0].bytes.count > 1_000 { copies = min(copies, 2) }
            root.update(at: path[...]) { node in
                if case .array(let items) = node {
                    node = .array(copies == 0 ? Array(items.dropLast()) : items + Array(repeating: items[0], count: copies))
                }
            }
            return copies == 0 ? "drop the last element of \(describe(root, path))" : "append \(copies) copies in \(describe(root, path))"
        default:
            let value = someValue(&rng)
            root = rng.chance(0.5) ? value : .array([root])
            return "the root := \(root.summary)"
        }
    }

    /// A readable path: keys and indices.
    static func describe(_ root: JSONNode, _ path: [Int]) -> String {
        var node = root, parts: [String] = []
        for index in path {
            switch node {
            case .object(let members):
                guard index < members.count else { return parts.joined(separator: ".") }
                parts.append(members[index].key)
                node = members[index].value
            case .array(let items):
                guard index < items.count else { return parts.joined(separator: ".") }
                parts.append("[\(index)]")
                node = items[index]
            default: break
            }
        }
        return parts.isEmpty ? "the root" : FuzzBytes.escaped(parts.joined(separator: "."), limit: 60)
    }

    static let wholeFiles: [[UInt8]] = ["", " ", "null", "[]", "{}", "0", "\"x\"", "{", "[", "NaN", "{\"a\":NaN}", "{}{}", "\u{FEFF}{}"].map {
        Array($0.utf8)
    }

    /// Byte-level mutations of JSON text.
    static func havoc(_ text: inout [UInt8], _ rng: inout SplitMix64) -> String {
        func position() -> Int { text.isEmpty ? 0 : rng.below(text.count + 1) }
        switch rng.below(8) {
        case 0:
            let at = position()
            text.removeSubrange(at...)
            return "truncate at byte \(at)"
        case 1:
            guard !text.isEmpty else { return "flip nothing" }
            let at = rng.below(text.count), bit = rng.below(8)
            text[at] ^= UInt8(1 << bit)
            return "flip bit \(bit) of byte \(at)"
        case 2:
            let at = position()
            let token = rng.pick([
                [0xFF], [0x80], [0xC3], [0x00], [0xEF, 0xBB, 0xBF], Array("{".utf8), Array("}".utf8), Array("]".utf8),
                Array("\"".utf8), Array(",".utf8), Array(":".utf8), Array("NaN".utf8), Array("-".utf8), Array("e999".utf8)
            ])
            text.insert(contentsOf: token, at: at)
            return "insert \(FuzzBytes.escaped(token)) at byte \(at)"
        case 3:
            guard !text.isEmpty else { return "delete nothing" }
            let at = rng.below(text.count), count = min(text.count - at, rng.inRange(1, 12))
            text.removeSubrange(at..<(at + count))
            return "delete \(count) byte(s) at \(at)"
        case 4:
            text.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: 0)
            return "prepend a UTF-8 BOM"
        case 5:
            // UTF-16 (a JSON reader may detect it), with or without a BOM.
            let bigEndian = rng.chance(0.5), bom = rng.chance(0.5)
            var out: [UInt8] = bom ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []
            for unit in String(decoding: text, as: UTF8.self).utf16 {
                out += bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            }
            text = out
            return "UTF-16\(bigEndian ? "BE" : "LE")\(bom ? " with a BOM" : "")"
        case 6:
            let junk = rng.pick(["x", "}", "{}", " 1", "\0", "\n\n"])
            text += Array(junk.utf8)
            return "append \(FuzzBytes.escaped(junk))"
        default:
            text = rng.pick(wholeFiles)
            return "the whole file := \(FuzzBytes.escaped(text))"
        }
    }

    /// A mutated seed: 1–3 structured mutations (mostly one), then sometimes byte-level ones.
    static func mutate(_ seed: JSONNode, _ rng: inout SplitMix64) -> (bytes: [UInt8], mutations: [String]) {
        var root = seed, mutations: [String] = []
        // Mostly one change: a file with several is rejected for the first and tells less.
        for _ in 0..<rng.pick([1, 1, 1, 2, 2, 3]) { mutations.append(structured(&root, &rng)) }
        var text = root.bytes
        if rng.chance(0.15) {
            for _ in 0..<rng.inRange(1, 2) { mutations.append(havoc(&text, &rng)) }
        }
        return (text, mutations)
    }
}

// MARK: - Seeds

/// The valid inputs the mutations start from.
enum FuzzSeeds {
    static let domains = ["logic", "pattern", "spatial"]
    static let bankItems: Set<String> = ["q1", "q2", "q3", "q4", "q5", "q6"]

    /// The 6-item bank of ScoreCLITests with a domain column.
    static let bankRows: [[String]] = [
        ["item_id", "model", "a", "b", "c", "domain"],
        ["q1", "2pl", "1.2", "-1.0", "0", "logic"],
        ["q2", "2pl", "0.8", "-0.5", "0", "logic"],
        ["q3", "2pl", "1.5", "0.0", "0", "pattern"],
        ["q4", "2pl", "1.0", "0.5", "0", "pattern"],
        ["q5", "3pl", "1.3", "1.0", "0.2", "spatial"],
        ["q6", "2pl", "0.9", "1.5", "0", "spatial"]
    ]

    /// The same items as `calibrate` writes them (standard errors, counts, flags, then the domain).
    static let calibratedBankRows: [[String]] = [
        ["item_id", "model", "a", "b", "c", "se_a", "se_b", "se_c", "n_responses", "p_value", "flags", "domain"],
        ["q1", "2pl", "1.200000", "-1.000000", "0.000000", "0.210000", "0.180000", "", "300", "0.700000", "", "logic"],
        ["q2", "2pl", "0.800000", "-0.500000", "0.000000", "0.150000", "0.220000", "", "300", "0.600000", "", "logic"],
        ["q3", "2pl", "1.500000", "0.000000", "0.000000", "0.250000", "0.110000", "", "300", "0.500000", "", "pattern"],
        ["q4", "2pl", "1.000000", "0.500000", "0.000000", "0.170000", "0.160000", "", "300", "0.400000", "", "pattern"],
        ["q5", "3pl", "1.300000", "1.000000", "0.200000", "0.300000", "0.200000", "0.050000", "300", "0.350000", "", "spatial"],
        ["q6", "2pl", "0.900000", "1.500000", "0.000000", "0.160000", "0.300000", "", "300", "0.200000", "negative slope", "spatial"]
    ]

    static func csv(_ rows: [[String]]) -> [UInt8] { CSVDocument(rows).render() }

    /// Long layout, contiguous (as ScoreCLITests.sessions): session k answers item j unless (k + j) % 5 == 0;
    /// response 1 when (7k + 3j) % 4 < 2. Column order: session_id,item_id,response, or item_id,session_id,response.
    static func longSessions(_ count: Int, sessionSecond: Bool = false, prefix: String = "p") -> CSVDocument {
        var rows = [sessionSecond ? ["item_id", "session_id", "response"] : ["session_id", "item_id", "response"]]
        for k in 1...count {
            for j in 1...6 where (k + j) % 5 != 0 {
                let id = prefix + String(format: "%02d", k), item = "q\(j)", value = (7 * k + 3 * j) % 4 < 2 ? "1" : "0"
                rows.append(sessionSecond ? [item, id, value] : [id, item, value])
            }
        }
        return CSVDocument(rows, idColumn: sessionSecond ? 1 : 0)
    }

    /// Wide layout: session_id,q1…q6; not administered cells empty or NA.
    static func wideSessions(_ count: Int, prefix: String = "w") -> CSVDocument {
        var rows = [["session_id"] + (1...6).map { "q\($0)" }]
        for k in 1...count {
            rows.append(
                [prefix + String(format: "%02d", k)]
                    + (1...6).map { j in
                        (k + j) % 5 == 0 ? (k % 2 == 0 ? "" : "NA") : ((7 * k + 3 * j) % 4 < 2 ? "1" : "0")
                    })
        }
        return CSVDocument(rows, idColumn: 0)
    }

    /// 40 persons × 6 items from a 2PL (θ evenly spread on [−2, 2]; a, b fixed), a few cells not administered;
    /// responses drawn from SplitMix64(seed: 7).
    static let calibrationResponses: [[String]] = {
        let a = [0.8, 1.0, 1.2, 1.5, 0.9, 1.1], b = [-1.5, -0.8, 0.0, 0.5, 1.0, 1.5]
        var rng = SplitMix64(seed: 7)
        var rows: [[String]] = []
        for k in 0..<40 {
            let theta = -2 + 4 * Double(k) / 39
            rows.append(
                (0..<6).map { j in
                    let p = 1 / (1 + exp(-a[j] * (theta - b[j])))
                    let u = Double(rng.next() >> 11) * 0x1p-53
                    return (k * (j + 1)) % 11 == 5 ? "" : (u < p ? "1" : "0")
                })
        }
        return rows
    }()

    static func calibrationWide() -> CSVDocument {
        CSVDocument(
            [["session_id"] + (1...6).map { String(format: "i%02d", $0) }]
                + calibrationResponses.enumerated().map { [String(format: "s%02d", $0.offset + 1)] + $0.element }, idColumn: 0)
    }

    static func calibrationLong() -> CSVDocument {
        var rows = [["session_id", "item_id", "response"]]
        for (k, row) in calibrationResponses.enumerated() {
            for (j, cell) in row.enumerated() where !cell.isEmpty {
                rows.append([String(format: "s%02d", k + 1), String(format: "i%02d", j + 1), cell])
            }
        }
        return CSVDocument(rows, idColumn: 0)
    }

    /// 36 items in three domains with status, anchor and enemy_group columns (for assemble and cat simulate).
    static let assemblyBank: [UInt8] = {
        var rows = [["item_id", "model", "a", "b", "c", "domain", "status", "anchor", "enemy_group"]]
        for k in 1...36 {
            let a = 0.7 + Double((k * 37) % 10) / 10, b = -2 + 4 * Double((k * 17) % 36) / 35
            let threePL = k % 4 == 0
            rows.append([
                String(format: "i%02d", k), threePL ? "3pl" : "2pl", String(format: "%.3f", a), String(format: "%.3f", b),
                threePL ? "0.2" : "0", domains[k % 3], k % 11 == 0 ? "pretest" : (k % 13 == 0 ? "retired" : "active"),
                k % 6 == 0 ? "1" : "0", k % 9 == 0 ? "E1" : ""
            ])
        }
        return csv(rows)
    }()

    static let norms: [JSONNode] = [
        .obj([("name", .string("adults")), ("version", .string("2024")), ("mean", .number("0.1")), ("sd", .number("1.1"))]),
        .obj([("name", .string("children, 8–10")), ("version", .string("1")), ("mean", .number("-2.5")), ("sd", .number("0.05"))])
    ]

    /// A norm sample of 90 persons aged 18–77 (θ falling with age, education shifting it) and its margins.
    static func normSample() -> CSVDocument {
        var rows = [["person", "age", "theta", "education"]]
        for k in 0..<90 {
            let age = 18 + (k * 7) % 60
            let education = ["low", "mid", "high"][k % 3]
            let theta = -0.01 * Double(age - 45) + Double(k % 3 - 1) * 0.3 + Double((k * 37) % 100) / 50 - 1
            rows.append(["p\(k)", String(age), String(format: "%.3f", theta), education])
        }
        return CSVDocument(rows)
    }

    static let normMargins = csv([
        ["variable", "category", "share"], ["education", "low", "0.3"], ["education", "mid", "0.4"], ["education", "high", "0.3"]
    ])

    static let normsArguments = [
        "norms", "build", "sample.csv", "--margins", "margins.csv", "--max-degrees", "2,1,1,-", "--name", "f",
        "--norms-version", "1", "--out", "NORMS.json", "--report", "NORMS.html"
    ]

    static let blueprints: [JSONNode] = [
        .obj([("length", .number("6")), ("domain_counts", .obj([("logic", .number("2")), ("pattern", .number("2")), ("spatial", .number("2"))]))]),
        .obj([
            ("length", .number("6")),
            ("domain_weights", .obj([("logic", .number("1")), ("pattern", .number("1")), ("spatial", .number("1"))])),
            ("difficulty_bands", .obj([("easy", .array([.number("-6"), .number("0")])), ("hard", .array([.number("0"), .number("6")]))])),
            ("difficulty_counts", .obj([("easy", .number("3")), ("hard", .number("3"))])),
            ("forms", .number("2")), ("max_overlap", .number("0.5")),
            ("enemies", .array([.array([.string("i01"), .string("i02")])])),
            ("target_information", .array([.obj([("theta", .number("0")), ("information", .number("2"))])])),
            ("anchors_per_domain", .number("0")), ("exclude", .array([.string("i03")])),
            ("statuses", .array([.string("active"), .string("pretest")])), ("max_exposure", .number("0.5"))
        ]),
        // Large weights (length × weight still finite): a change to one of them can overflow.
        .obj([
            ("length", .number("9")),
            ("domain_weights", .obj([("logic", .number("1e307")), ("pattern", .number("5e306")), ("spatial", .number("1e306"))])),
            ("forms", .number("1"))
        ])
    ]

    static let catConfigurations: [JSONNode] = [
        .obj([
            ("min_items", .number("3")), ("max_items", .number("8")), ("se_target", .number("0.5")), ("min_per_domain", .number("1")),
            ("randomesque", .number("2")), ("exposure_target", .number("0.5")), ("exposure_calibration_simulees", .number("100")),
            ("exposure_calibration_iterations", .number("2")), ("exposure_margin", .number("0.05")), ("estimator", .string("eap")),
            ("prior_mean", .number("0")), ("prior_sd", .number("1")), ("quadrature_points", .number("21"))
        ]),
        .obj([
            ("max_items", .number("6")), ("min_per_domain", .obj([("logic", .number("1")), ("pattern", .number("2"))])),
            ("domain_weights", .obj([("logic", .number("1e308")), ("pattern", .number("5e307")), ("spatial", .number("1e307"))])),
            ("a_stratification", .number("2")), ("exposure_target", .literal("null")), ("exposure_calibration_simulees", .number("100")),
            ("exposure_calibration_iterations", .number("1")), ("estimator", .string("wle"))
        ]),
        .obj([
            ("max_items", .number("5")), ("se_target", .number("0.3")), ("estimator", .string("ml")), ("randomesque", .number("100")),
            ("exposure_target", .number("1")), ("exposure_calibration_simulees", .number("100")),
            ("exposure_calibration_iterations", .number("1")), ("exposure_margin", .number("0"))
        ])
    ]
}

// MARK: - Case generation per target

extension FuzzTarget {
    /// Builds case `rng` of this target.
    func makeCase(_ rng: inout SplitMix64) -> FuzzCase {
        let bank = FuzzSeeds.csv(FuzzSeeds.bankRows)
        let scoreArguments = ["--bank", "BANK.csv", "--out", "scores.csv"]
        switch self {
        case .scoreLong, .scoreWide:
            let wide = self == .scoreWide
            let seed =
                wide ? FuzzSeeds.wideSessions(rng.inRange(20, 40)) : FuzzSeeds.longSessions(rng.inRange(20, 40), sessionSecond: rng.chance(0.2))
            let columns: (Int) -> [Int] = { width in (0..<width).filter { $0 != seed.idColumn } }
            let m = CSVMutator.mutate(seed, &rng, cellValues: CSVMutator.cells + (wide ? [] : itemValues), columns: columns, long: !wide)
            var c = FuzzCase(
                command: .score, files: [("BANK.csv", bank), ("sessions.csv", m.bytes)],
                arguments: ["score", "sessions.csv"] + scoreArguments, mutatedFile: "sessions.csv", mutations: m.mutations)
            if let document = m.document {
                let ids = document.sessionIDs()
                c.expectedIDs = ids.ids
                c.idlessRecords = ids.idless
                c.oracle = document.oracle(bankItems: FuzzSeeds.bankItems)
            }
            // Sometimes a second, valid file in the other layout (ids r01…), before or after the mutated one.
            if rng.chance(0.15) {
                let more = wide ? FuzzSeeds.longSessions(5, prefix: "r") : FuzzSeeds.wideSessions(5, prefix: "r")
                c.files.append(("more.csv", more.render()))
                c.arguments.insert("more.csv", at: rng.chance(0.5) ? 1 : 2)
                c.mutations.append("a second file, more.csv (\(wide ? "long" : "wide"), 5 valid sessions)")
                c.expectedIDs? += more.sessionIDs().ids
                c.oracle?.mustScore.formUnion(more.oracle(bankItems: FuzzSeeds.bankItems)?.mustScore ?? [])
            }
            return c
        case .scoreBank:
            let seed = CSVDocument(rng.chance(0.7) ? FuzzSeeds.bankRows : FuzzSeeds.calibratedBankRows)
            let m = CSVMutator.mutate(seed, &rng, cellValues: bankValues, columns: { Array(0..<$0) }, long: false)
            let sessions = rng.chance(0.6) ? FuzzSeeds.longSessions(25) : FuzzSeeds.wideSessions(25)
            return FuzzCase(
                command: .score, files: [("BANK.csv", m.bytes), ("sessions.csv", sessions.render())],
                arguments: ["score", "sessions.csv"] + scoreArguments, mutatedFile: "BANK.csv", mutations: m.mutations,
                expectedIDs: sessions.sessionIDs().ids)
        case .scoreNorms:
            let m = JSONMutator.mutate(rng.pick(FuzzSeeds.norms), &rng)
            let sessions = FuzzSeeds.longSessions(20)
            return FuzzCase(
                command: .score, files: [("BANK.csv", bank), ("sessions.csv", sessions.render()), ("norms.json", m.bytes)],
                arguments: ["score", "sessions.csv"] + scoreArguments + ["--norms", "norms.json"], mutatedFile: "norms.json",
                mutations: m.mutations, expectedIDs: sessions.sessionIDs().ids, oracle: sessions.oracle(bankItems: FuzzSeeds.bankItems))
        case .scoreOptions:
            let sessions = rng.chance(0.6) ? FuzzSeeds.longSessions(20) : FuzzSeeds.wideSessions(20)
            let options = OptionSampler.sample(OptionSampler.score, &rng)
            // Options that change which column holds the session id leave the ids unknown.
            let columnsChanged = options.contains { o in
                ["--session-column", "--item-column", "--response-column", "--layout"].contains { o.hasPrefix($0) }
            }
            return FuzzCase(
                command: .score, files: [("BANK.csv", bank), ("sessions.csv", sessions.render())],
                arguments: ["score", "sessions.csv"] + scoreArguments + options, mutatedFile: nil,
                mutations: ["options: " + options.joined(separator: " ")], expectedIDs: columnsChanged ? nil : sessions.sessionIDs().ids,
                oracle: columnsChanged ? nil : sessions.oracle(bankItems: FuzzSeeds.bankItems))
        case .calibrateWide, .calibrateLong:
            let wide = self == .calibrateWide
            let seed = wide ? FuzzSeeds.calibrationWide() : FuzzSeeds.calibrationLong()
            let columns: (Int) -> [Int] = { width in Array(1..<max(width, 1)) }
            let m = CSVMutator.mutate(seed, &rng, cellValues: CSVMutator.cells + (wide ? [] : itemValues), columns: columns, long: !wide)
            return FuzzCase(
                command: .calibrate, files: [("responses.csv", m.bytes)],
                arguments: ["calibrate", "responses.csv", "--out", "bank.csv", "--model", rng.pick(["rasch", "rasch", "2pl", "2pl", "3pl"])]
                    + OptionSampler.calibrationBase,
                mutatedFile: "responses.csv", mutations: m.mutations)
        case .calibrateOptions:
            let responses = rng.chance(0.6) ? FuzzSeeds.calibrationWide() : FuzzSeeds.calibrationLong()
            let options = OptionSampler.calibrationOptions(&rng)
            return FuzzCase(
                command: .calibrate, files: [("responses.csv", responses.render())],
                arguments: ["calibrate", "responses.csv", "--out", "bank.csv"] + options, mutatedFile: nil,
                mutations: ["options: " + options.joined(separator: " ")])
        case .assembleBlueprint:
            let m = JSONMutator.mutate(rng.pick(FuzzSeeds.blueprints), &rng)
            return FuzzCase(
                command: .assemble, files: [("bank.csv", FuzzSeeds.assemblyBank), ("blueprint.json", m.bytes)],
                arguments: [
                    "assemble", "--bank", "bank.csv", "--blueprint", "blueprint.json", "--out", "form.csv",
                    "--seed", String(rng.inRange(1, 5))
                ],
                mutatedFile: "blueprint.json", mutations: m.mutations)
        case .normsSample:
            let m = CSVMutator.mutate(
                FuzzSeeds.normSample(), &rng, cellValues: CSVMutator.cells, columns: { width in Array(0..<max(width, 1)) }, long: false)
            let method = rng.chance(0.3) ? ["--method", "bands", "--min-band-n", "20"] : []
            return FuzzCase(
                command: .normsBuild, files: [("sample.csv", m.bytes), ("margins.csv", FuzzSeeds.normMargins)],
                arguments: FuzzSeeds.normsArguments + method, mutatedFile: "sample.csv", mutations: m.mutations)
        case .catConfig:
            let m = JSONMutator.mutate(rng.pick(FuzzSeeds.catConfigurations), &rng)
            return FuzzCase(
                command: .catSimulate, files: [("bank.csv", FuzzSeeds.assemblyBank), ("cat.json", m.bytes)],
                arguments: [
                    "cat", "simulate", "--bank", "bank.csv", "--config", "cat.json", "--simulees", "20",
                    "--seed", String(rng.inRange(1, 5)), "--out", "report.json", "--exposure-out", "exposure.csv"
                ],
                mutatedFile: "cat.json", mutations: m.mutations)
        }
    }

    /// Item ids for long-layout item cells: known, unknown, odd.
    var itemValues: [[UInt8]] {
        ["q1", "q6", "q7", "Q1", " q1", "q1 ", "i01", "i06", "i99", "", "item_id"].map { Array($0.utf8) }
    }

    /// Bank cells: numbers at and past the edges, models, ids and domains that need quoting or are not UTF-8.
    var bankValues: [[UInt8]] {
        [
            "0", "-0", "-1", "1", "2", "100", "-100", "1e300", "-1e300", "1e308", "1.7976931348623157e308", "1e309", "1e-320", "5e-324",
            "nan", "NaN", "inf", "-inf", "", " ", "0x1p3", "1,5", "1.5.2", "0.9999999", "1.0000001", "9223372036854775808", "1e19",
            "4pl", "RASCH", "1PL", "2pl ", "3pl", "rasch", "q1", "q2", "Q1", "a,b", "a\"b", "x\r\ny", "x\ny", "é", "😀", "n", "session_id",
            "logic ", "LOGIC", "\0", "a;b", "\u{FEFF}q1"
        ].map { Array($0.utf8) }
            + [[0xFF], [0x80], [0x71, 0xFF], Array(repeating: 0x64, count: FuzzBytes.hundredKB)]
    }
}

// MARK: - Option values

/// Extreme option values: precision limits (0.9999999999999999), subnormals, ±0, nan, inf, negative counts,
/// 10⁹ points, 100,000 threads, Int64 edges, values that are not numbers.
enum OptionSampler {
    typealias Table = [(name: String, values: [String])]

    static let doubles = ["nan", "inf", "-inf", "-0", "5e-324", "1e-320", "1e308", "-1e308", "1e309", "0x1p-2", "1e", ""]
    static let counts = [
        "0", "-1", "1", "100000", "1000000000", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "2147483648", "1e3", "1.5", "nan", ""
    ]

    static let score: Table = [
        ("--confidence", ["0.9999999999999999", "0.99999999999999999", "1e-17", "0.5", "0", "1", "-0.5", "1.5"] + doubles),
        ("--threads", counts + ["2", "3", "64"]),
        ("--quadrature-points", counts + ["5", "4", "401", "402", "6.5"]),
        ("--theta-bound", ["20", "20.000000000000004", "1e-10", "0.001", "0", "-1"] + doubles),
        ("--prior-sd", ["1e-10", "1e10", "0", "-1"] + doubles),
        ("--prior-mean", ["1e10", "-20", "20"] + doubles),
        ("--min-items", counts),
        ("--low-precision-se", ["0", "-1", "1e-10"] + doubles),
        ("--method", ["eap", "map", "ml", "wle", "EAP", "mle", ""]),
        ("--format", ["csv", "jsonl", "json", ""]),
        ("--layout", ["wide", "long", "LONG", ""]),
        ("--session-column", ["item_id", "response", "nonexistent", "", "session_id ", "a,b", "q1"]),
        ("--item-column", ["session_id", "response", "nonexistent", "", "q1"]),
        ("--response-column", ["session_id", "item_id", "nonexistent", "", "q2"])
    ]

    /// `count` distinct options of `table` (1–3, mostly one), each as `--name value` or `--name=value`.
    static func sample(_ table: Table, _ rng: inout SplitMix64, count: Int? = nil) -> [String] {
        var names = Array(table.indices)
        rng.shuffle(&names)
        var out: [String] = []
        for index in names.prefix(count ?? rng.pick([1, 1, 2, 3])) {
            let (name, values) = table[index]
            let value = rng.pick(values)
            out += rng.chance(0.5) || value.hasPrefix("-") ? ["\(name)=\(value)"] : [name, value]
        }
        return out
    }

    /// The calibration targets' cycle limit and tolerance (a small file converges in a few dozen cycles or stops at 50).
    static let calibrationBase = ["--max-cycles", "50", "--tolerance", "0.001"]

    static let calibrate: Table = [
        ("--model", ["rasch", "1pl", "2pl", "3pl", "4pl", "RASCH"]),
        ("--quadrature-points", counts + ["5", "4", "401", "402"]),
        ("--theta-bound", ["20", "1e-10", "0.001", "0", "-1"] + doubles),
        ("--tolerance", ["0", "-1", "1e-10", "0.1", "1e308"] + doubles),
        ("--max-cycles", ["0", "1", "2", "-1", "2000", "1e3", "nan", ""]),
        (
            "--guessing-prior",
            [
                "beta:0,0", "beta:-1,5", "beta:nan,1", "beta:1e308,1e308", "beta:5e-324,1", "beta:5", "beta:", "beta:1,1",
                "options:0", "options:1", "options:-1", "options:1000000000", "options:nan", "none", "garbage", ""
            ]
        ),
        (
            "--slope-prior",
            [
                "lognormal:0,0", "lognormal:nan,1", "lognormal:1e308,1", "lognormal:0,-1", "lognormal:0,1e-320",
                "lognormal:0,1e308", "lognormal:inf,1", "none", "lognormal:", "normal:0,1", ""
            ]
        ),
        ("--min-item-responses", counts),
        ("--e-step", ["automatic", "dense", "sparse", "bogus"]),
        ("--acceleration", ["squarem", "none", "bogus", ""]),
        ("--threads", counts + ["2", "64"]),
        ("--layout", ["wide", "long", ""]),
        ("--no-se", [])
    ]

    /// 1–3 calibration options (mostly one) over `calibrationBase`. A tolerance at or below the default is only drawn with the
    /// base cycle limit (50): a long cycle limit with a tolerance that is never met is a legitimately long run.
    static func calibrationOptions(_ rng: inout SplitMix64) -> [String] {
        var names = Array(calibrate.indices)
        rng.shuffle(&names)
        var out: [String] = [], cycles = "50", tolerance = "0.001"
        for index in names.prefix(rng.pick([1, 1, 2, 3])) {
            let (name, values) = calibrate[index]
            guard !values.isEmpty else { out.append(name); continue }
            let value = rng.pick(values)
            if name == "--max-cycles" { cycles = value; continue }
            if name == "--tolerance" { tolerance = value; continue }
            out += rng.chance(0.5) || value.hasPrefix("-") ? ["\(name)=\(value)"] : [name, value]
        }
        if Int(cycles).map({ $0 > 50 }) == true, Double(tolerance).map({ !($0 >= 0.001) }) ?? true { tolerance = "0.001" }
        return out + ["--max-cycles=\(cycles)", "--tolerance=\(tolerance)"]
    }
}

// MARK: - Checks

/// A failed expectation: `kind` groups failures of one class (no case-specific numbers in it).
struct FuzzFailure {
    var kind: String
    var detail: String
}

enum FuzzCheck {
    static let scoreCore = ["session_id", "n_items", "n_correct", "theta", "se", "iq", "iq_low", "iq_high", "percentile", "method", "flags", "norms"]
    static let rejectHeader = ["session_id", "file", "line", "column", "reason"]
    static let bankCore = ["item_id", "model", "a", "b", "c", "se_a", "se_b", "se_c", "n_responses", "p_value", "flags"]
    static let formHeader = ["form", "position", "item_id", "domain", "a", "b", "c", "difficulty_class", "anchor"]

    /// Exit statuses each command documents (`iqscore --help` and the command's help).
    static func allowed(_ command: FuzzCase.Command) -> Set<Int32> {
        switch command {
        case .score: [0, 1, 2, 64]
        case .calibrate: [0, 1, 3, 64]
        case .assemble: [0, 1, 2, 64]
        case .catSimulate: [0, 1, 64]
        case .normsBuild: [0, 1, 3, 64]
        }
    }

    /// `-?digits[.digits][e±digits]`: what a finite number looks like in an output.
    static func isPlainNumber(_ text: String) -> Bool {
        var s = Substring(text)
        if s.first == "-" { s = s.dropFirst() }
        func digits() -> Int {
            let n = s.prefix { $0.isASCII && $0.isNumber }.count
            s = s.dropFirst(n)
            return n
        }
        guard digits() > 0 else { return false }
        if s.first == "." {
            s = s.dropFirst()
            guard digits() > 0 else { return false }
        }
        if s.first == "e" || s.first == "E" {
            s = s.dropFirst()
            if s.first == "+" || s.first == "-" { s = s.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return s.isEmpty
    }

    static func isInteger(_ text: String) -> Bool {
        let body = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        return !body.isEmpty && body.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// A numeric cell's failure, or nil: `-?digits…` (or empty when `emptyAllowed`).
    static func numberProblem(
        _ value: String, file: String, row: Int, column: String, emptyAllowed: Bool = false,
        integer: Bool = false
    ) -> FuzzFailure? {
        if value.isEmpty && emptyAllowed { return nil }
        if integer ? isInteger(value) : isPlainNumber(value) { return nil }
        let lower = value.lowercased()
        let kind =
            lower.contains("nan") || lower.contains("inf")
            ? "nan/inf in a numeric column of \(file)"
            : "\(integer ? "non-integer" : "non-numeric") value in a numeric column of \(file)"
        return FuzzFailure(kind: kind, detail: "row \(row), \(column): \(FuzzBytes.escaped(value))")
    }

    static func contents(_ directory: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
    }

    static func readBytes(_ url: URL) -> [UInt8]? { (try? Data(contentsOf: url)).map(Array.init) }

    static func json(_ url: URL) -> [String: Any]? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// Where a crash happened: the case run again with the Swift backtracer, and its first frame in iqscore's
    /// sources with a line number ("Blueprint.validationProblems() at Assembly/Blueprint.swift:87"). At most
    /// `maximumBacktraces` per target (a symbolicated backtrace of the debug binary takes a good part of a second).
    static func crashSite(_ c: FuzzCase, in directory: URL, runner: FuzzRunner) throws -> String? {
        guard runner.backtraces < maximumBacktraces else { return nil }
        runner.backtraces += 1
        var environment = FuzzRunner.environment
        environment["SWIFT_BACKTRACE"] = "enable=yes,interactive=no,color=no"
        let again = try runner.run(c.arguments, in: directory, environment: environment)
        for line in again.stderrText.split(separator: "\n") {
            guard let at = line.range(of: " in iqscore at "), let sources = line.range(of: "/Sources/", range: at.upperBound..<line.endIndex) else {
                continue
            }
            let location = line[sources.upperBound...].split(separator: ":")
            guard location.count >= 2, Int(location[1]) != nil else { continue }
            var function = line[..<at.lowerBound]
            if let plus = function.range(of: " + ", options: .backwards) { function = function[..<plus.lowerBound] }
            if let address = function.range(of: "0x") { function = function[address.lowerBound...].drop { $0 != " " }.dropFirst() }
            return "\(function) at \(location[0]):\(location[1])"
        }
        return nil
    }

    static let maximumBacktraces = 25

    /// The first line of stderr that says what went wrong, with numbers as `#` (a stable name for a crash class).
    static func crashLine(_ stderr: String) -> String {
        let lines = stderr.split(separator: "\n").map(String.init)
        let line =
            lines.first { $0.contains("Fatal error") || $0.contains("failed") || $0.contains("error") || $0.contains("Crash") }
            ?? lines.first ?? "(no stderr)"
        var out = "", inNumber = false
        for ch in line.prefix(160) {
            if ch.isASCII && ch.isNumber { if !inNumber { out.append("#") }; inNumber = true } else { out.append(ch); inNumber = false }
        }
        return out
    }

    /// Everything that must hold for `c` after `run` in `directory`: one failure per kind (the first one's detail,
    /// with how many more there were).
    static func check(_ c: FuzzCase, _ run: FuzzRun, in directory: URL, runner: FuzzRunner) throws -> [FuzzFailure] {
        var kinds: [String] = [], first: [String: FuzzFailure] = [:], count: [String: Int] = [:]
        for failure in try allFailures(c, run, in: directory, runner: runner) {
            if first[failure.kind] == nil { kinds.append(failure.kind); first[failure.kind] = failure }
            count[failure.kind, default: 0] += 1
        }
        return kinds.map { kind in
            var failure = first[kind]!
            if count[kind]! > 1 { failure.detail += " (and \(count[kind]! - 1) more)" }
            return failure
        }
    }

    static func allFailures(_ c: FuzzCase, _ run: FuzzRun, in directory: URL, runner: FuzzRunner) throws -> [FuzzFailure] {
        var failures: [FuzzFailure] = []
        if run.timedOut {
            return [FuzzFailure(kind: "hang: no exit within the time limit", detail: "killed after \(FuzzSettings.timeout) s")]
        }
        guard run.exited else {
            // SIGABRT (a failed allocation) unwinds no further than abort(): its message says enough.
            let site = run.status == SIGABRT ? nil : try crashSite(c, in: directory, runner: runner)
            return [FuzzFailure(kind: "crash (signal \(run.status))\(site.map { " in " + $0 } ?? ""): \(crashLine(run.stderrText))", detail: "")]
        }
        guard allowed(c.command).contains(run.status) else {
            return [FuzzFailure(kind: "undocumented exit status \(run.status)", detail: "")]
        }
        if !run.stdout.isEmpty {
            failures.append(FuzzFailure(kind: "output on stdout", detail: FuzzBytes.escaped(run.stdout)))
        }
        let found = contents(directory)
        if run.status == 1 || run.status == 64 {
            if run.stderr.allSatisfy({ $0 == 0x0A || $0 == 0x20 }) {
                failures.append(FuzzFailure(kind: "exit \(run.status) with nothing on stderr", detail: ""))
            }
            let extra = found.subtracting(c.inputNames)
            if !extra.isEmpty {
                failures.append(
                    FuzzFailure(
                        kind: "exit \(run.status) but files were written or left",
                        detail: extra.sorted().map { FuzzBytes.escaped($0) }.joined(separator: ", ")))
            }
            return failures
        }
        switch c.command {
        case .score: try checkScore(c, run, found, directory, runner, &failures)
        case .calibrate: try checkCalibrate(c, run, found, directory, runner, &failures)
        case .assemble: checkAssemble(c, found, directory, &failures)
        case .catSimulate: checkCAT(c, found, directory, &failures)
        case .normsBuild: checkNorms(c, found, directory, &failures)
        }
        return failures
    }

    static func checkOutputsOnly(
        _ c: FuzzCase, _ found: Set<String>, _ outputs: Set<String>, optional: Set<String> = [],
        _ failures: inout [FuzzFailure]
    ) {
        let expected = c.inputNames.union(outputs)
        let missing = expected.subtracting(found), extra = found.subtracting(expected).subtracting(optional)
        if !missing.isEmpty {
            failures.append(FuzzFailure(kind: "an output is missing after success", detail: missing.sorted().joined(separator: ", ")))
        }
        if !extra.isEmpty {
            failures.append(
                FuzzFailure(
                    kind: "files other than the outputs left after success",
                    detail: extra.sorted().map { FuzzBytes.escaped($0) }.joined(separator: ", ")))
        }
    }

    /// What `iqscore verify` checks, done here for every case: each output the manifest lists exists with its
    /// size and CRC-32; then, for every `verifyEvery`-th case, `iqscore verify` itself must exit 0.
    static func verify(
        _ c: FuzzCase, _ manifestName: String, _ manifest: [String: Any], _ directory: URL, _ runner: FuzzRunner,
        _ failures: inout [FuzzFailure]
    ) throws {
        let entries = manifest["outputs"] as? [[String: Any]] ?? []
        if entries.isEmpty { failures.append(FuzzFailure(kind: "the manifest lists no outputs", detail: "")) }
        for entry in entries {
            guard let path = entry["path"] as? String, let size = entry["bytes"] as? Int, let crc = entry["crc32"] as? String else {
                failures.append(FuzzFailure(kind: "a manifest output lacks path, bytes or crc32", detail: "\(entry)"))
                continue
            }
            guard let bytes = readBytes(directory.appendingPathComponent(path)) else {
                failures.append(FuzzFailure(kind: "a manifest output is missing", detail: FuzzBytes.escaped(path)))
                continue
            }
            let actual = String(format: "%08x", CRC32.checksum(bytes))
            if bytes.count != size || crc.lowercased() != actual {
                failures.append(
                    FuzzFailure(
                        kind: "a manifest output's size or CRC-32 differs from the file",
                        detail: "\(FuzzBytes.escaped(path)): manifest \(size) bytes, \(crc); file \(bytes.count) bytes, \(actual)"))
            }
        }
        guard c.runVerify else { return }
        let r = try runner.run(["verify", manifestName], in: directory)
        if !(r.exited && r.status == 0) {
            failures.append(
                FuzzFailure(kind: "iqscore verify fails on the manifest", detail: "\(r.outcome): \(FuzzBytes.escaped(r.stderr, limit: 300))"))
        }
    }

    /// The manifest's `outputs` as role → (path, rows).
    static func manifestOutputs(_ manifest: [String: Any]) -> [String: (path: String, rows: Int)] {
        var out: [String: (String, Int)] = [:]
        for entry in manifest["outputs"] as? [[String: Any]] ?? [] {
            if let role = entry["role"] as? String, let path = entry["path"] as? String, let rows = entry["rows"] as? Int { out[role] = (path, rows) }
        }
        return out
    }

    // MARK: score

    static func checkScore(
        _ c: FuzzCase, _ run: FuzzRun, _ found: Set<String>, _ directory: URL, _ runner: FuzzRunner,
        _ failures: inout [FuzzFailure]
    ) throws {
        let scoresName = c.option("--out") ?? "scores.csv"
        checkOutputsOnly(c, found, [scoresName, "scores.rejects.csv", "scores.summary.json"], &failures)
        guard let manifest = json(directory.appendingPathComponent("scores.summary.json")) else {
            failures.append(FuzzFailure(kind: "score manifest missing or not a JSON object", detail: ""))
            return
        }
        guard let read = manifest["sessions_read"] as? Int, let scored = manifest["sessions_scored"] as? Int,
            let rejected = manifest["sessions_rejected"] as? Int
        else {
            failures.append(FuzzFailure(kind: "score manifest lacks sessions_read/scored/rejected", detail: ""))
            return
        }
        if read != scored + rejected {
            failures.append(FuzzFailure(kind: "sessions_read ≠ sessions_scored + sessions_rejected", detail: "\(read) ≠ \(scored) + \(rejected)"))
        }
        if (run.status == 0) != (rejected == 0) {
            failures.append(FuzzFailure(kind: "exit status does not match sessions_rejected", detail: "exit \(run.status), \(rejected) rejected"))
        }
        let outputs = manifestOutputs(manifest)

        // Scores: CSV or JSON Lines.
        let jsonLines = c.option("--format") == "jsonl"
        var scoreIDs: [String] = []
        var scoreRows = 0
        if let bytes = readBytes(directory.appendingPathComponent(scoresName)) {
            if jsonLines {
                let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
                if bytes.last != 0x0A && !bytes.isEmpty {
                    failures.append(FuzzFailure(kind: "scores JSON Lines without a final newline", detail: ""))
                }
                for (k, line) in lines.enumerated() where !(k == lines.count - 1 && line.isEmpty) {
                    scoreRows += 1
                    guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
                        failures.append(
                            FuzzFailure(kind: "a scores JSON line is not a JSON object", detail: "line \(k + 1): \(FuzzBytes.escaped(Array(line)))"))
                        continue
                    }
                    scoreIDs.append(object["session_id"] as? String ?? "")
                    checkScoreValues(
                        row: k + 1,
                        value: { key in
                            guard let v = object[key] else { return nil }
                            if let n = v as? NSNumber, !(v is Bool) { return n.stringValue }
                            return "\(v)"
                        }, domains: [], c, &failures)
                }
            } else {
                do {
                    let records = try RFC4180.parse(bytes)
                    let header = records.first ?? []
                    if Array(header.prefix(scoreCore.count)) != scoreCore {
                        failures.append(
                            FuzzFailure(kind: "scores header differs from the documented one", detail: header.prefix(14).joined(separator: ",")))
                    }
                    if Set(header).count != header.count {
                        let duplicates = Dictionary(grouping: header, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
                        failures.append(
                            FuzzFailure(
                                kind: "duplicate column names in the scores header",
                                detail: duplicates.map { FuzzBytes.escaped($0) }.joined(separator: ", ")))
                    }
                    let extraColumns = header.count - scoreCore.count
                    if extraColumns < 0 || extraColumns % 2 != 0 {
                        failures.append(FuzzFailure(kind: "scores header has no whole domain column pairs", detail: "\(header.count) columns"))
                    }
                    for (k, record) in records.enumerated().dropFirst() {
                        scoreRows += 1
                        guard record.count == header.count else {
                            failures.append(
                                FuzzFailure(
                                    kind: "a scores row's field count differs from the header's",
                                    detail:
                                        "row \(k + 1): \(record.count) fields, header \(header.count): \(FuzzBytes.escaped(record.joined(separator: ",")))"
                                ))
                            continue
                        }
                        scoreIDs.append(record[0])
                        let columns = Dictionary(zip(header, record), uniquingKeysWith: { first, _ in first })
                        let domains = header.count > scoreCore.count ? Array(scoreCore.count..<header.count).map { (header[$0], record[$0]) } : []
                        checkScoreValues(row: k + 1, value: { columns[$0] }, domains: domains, c, &failures)
                    }
                } catch {
                    failures.append(FuzzFailure(kind: "scores file is not RFC 4180 CSV", detail: "\(error)"))
                }
            }
        }
        if scoreRows != scored {
            failures.append(FuzzFailure(kind: "scores rows ≠ sessions_scored", detail: "\(scoreRows) rows, \(scored) scored"))
        }
        if let entry = outputs["scores"] {
            if entry.rows != scoreRows || entry.path != scoresName {
                failures.append(
                    FuzzFailure(kind: "manifest scores entry differs from the file", detail: "\(entry.path): \(entry.rows) rows; file \(scoreRows)"))
            }
        } else {
            failures.append(FuzzFailure(kind: "score manifest lacks the scores or rejects output", detail: "scores"))
        }

        // Rejects.
        var rejectIDs: [String] = [], rejectReasons: [String: String] = [:]
        var rejectRows = 0
        if let bytes = readBytes(directory.appendingPathComponent("scores.rejects.csv")) {
            do {
                let records = try RFC4180.parse(bytes)
                if records.first != rejectHeader {
                    failures.append(
                        FuzzFailure(kind: "rejects header differs from the documented one", detail: (records.first ?? []).joined(separator: ",")))
                }
                for (k, record) in records.enumerated().dropFirst() {
                    rejectRows += 1
                    guard record.count == rejectHeader.count else {
                        failures.append(
                            FuzzFailure(
                                kind: "a rejects row does not have 5 fields",
                                detail: "row \(k + 1): \(record.count) fields: \(FuzzBytes.escaped(record.joined(separator: ",")))"))
                        continue
                    }
                    rejectIDs.append(record[0])
                    rejectReasons[record[0]] = record[4]
                    for (index, name) in [(2, "line"), (3, "column")]
                    where !record[index].isEmpty && !(isInteger(record[index]) && Int(record[index]).map { $0 >= 1 } == true) {
                        failures.append(
                            FuzzFailure(
                                kind: "rejects \(name) is not a positive integer", detail: "row \(k + 1): \(FuzzBytes.escaped(record[index]))"))
                    }
                    if record[4].isEmpty { failures.append(FuzzFailure(kind: "a rejects row without a reason", detail: "row \(k + 1)")) }
                }
            } catch {
                failures.append(FuzzFailure(kind: "rejects file is not RFC 4180 CSV", detail: "\(error)"))
            }
        }
        if rejectRows != rejected {
            failures.append(FuzzFailure(kind: "rejects rows ≠ sessions_rejected", detail: "\(rejectRows) rows, \(rejected) rejected"))
        }
        if let entry = outputs["rejects"] {
            if entry.rows != rejectRows || entry.path != "scores.rejects.csv" {
                failures.append(
                    FuzzFailure(kind: "manifest rejects entry differs from the file", detail: "\(entry.path): \(entry.rows) rows; file \(rejectRows)")
                )
            }
        } else {
            failures.append(FuzzFailure(kind: "score manifest lacks the scores or rejects output", detail: "rejects"))
        }

        checkSessionIDs(c, scores: scoreIDs, rejects: rejectIDs, rejectReasons: rejectReasons, &failures)
        try verify(c, "scores.summary.json", manifest, directory, runner, &failures)
    }

    /// One score row's values (by column name) against their documented forms and ranges.
    static func checkScoreValues(
        row: Int, value: (String) -> String?, domains: [(String, String)], _ c: FuzzCase,
        _ failures: inout [FuzzFailure]
    ) {
        var numbers: [String: Double] = [:]
        for name in ["n_items", "n_correct", "iq", "iq_low", "iq_high", "theta", "se", "percentile"] {
            let text = value(name) ?? ""
            let integer = ["n_items", "n_correct", "iq", "iq_low", "iq_high"].contains(name)
            if let problem = numberProblem(text, file: "scores", row: row, column: name, integer: integer) {
                failures.append(problem)
            } else {
                numbers[name] = Double(text)
            }
        }
        for (name, text) in domains {
            if let problem = numberProblem(text, file: "scores", row: row, column: name, integer: true) { failures.append(problem) }
        }
        func range(_ ok: Bool, _ what: String) {
            if !ok { failures.append(FuzzFailure(kind: "score value outside its documented range (\(what))", detail: "row \(row): \(numbers)")) }
        }
        if let n = numbers["n_items"], let k = numbers["n_correct"] { range(n >= 1 && k >= 0 && k <= n, "0 ≤ n_correct ≤ n_items, n_items ≥ 1") }
        if let iq = numbers["iq"], let low = numbers["iq_low"], let high = numbers["iq_high"] {
            range(40 <= low && low <= iq && iq <= high && high <= 160, "40 ≤ iq_low ≤ iq ≤ iq_high ≤ 160")
        }
        if let p = numbers["percentile"] { range(p >= 0 && p <= 100, "0 ≤ percentile ≤ 100") }
        if let se = numbers["se"] { range(se >= 0, "se ≥ 0") }
        if let theta = numbers["theta"] {
            let bound = c.option("--theta-bound").flatMap(Double.init) ?? 6
            range(abs(theta) <= bound + 5e-5 + 1e-9 * bound, "|theta| ≤ --theta-bound")
        }
        if let method = value("method"), !["eap", "map", "ml", "wle"].contains(method) {
            failures.append(FuzzFailure(kind: "score method column is not eap/map/ml/wle", detail: "row \(row): \(FuzzBytes.escaped(method))"))
        }
    }

    /// No session id twice across scores and rejects; with known input ids, every one exactly once; sessions the
    /// oracle settles where it says; no id repaired to U+FFFD.
    static func checkSessionIDs(
        _ c: FuzzCase, scores: [String], rejects: [String], rejectReasons: [String: String],
        _ failures: inout [FuzzFailure]
    ) {
        let all = scores + rejects
        var seen: [String: Int] = [:]
        for id in all where !id.isEmpty { seen[id, default: 0] += 1 }
        let twice = seen.filter { $0.value > 1 }.keys.sorted()
        if !twice.isEmpty {
            failures.append(
                FuzzFailure(
                    kind: "a session id appears more than once across scores and rejects",
                    detail: twice.prefix(5).map { FuzzBytes.escaped($0) }.joined(separator: ", ")))
        }
        let inputs = c.files.map(\.bytes)
        if all.contains(where: { $0.contains("\u{FFFD}") }), !inputs.contains(where: { FuzzBytes.contains($0, [0xEF, 0xBF, 0xBD]) }) {
            let altered = all.filter { $0.contains("\u{FFFD}") }
            failures.append(
                FuzzFailure(
                    kind: "a session id was altered to U+FFFD in the outputs",
                    detail: altered.prefix(3).map { FuzzBytes.escaped($0) }.joined(separator: ", ")))
        }
        if let oracle = c.oracle {
            let scored = Set(scores), rejected = Set(rejects)
            for (id, reason) in oracle.mustReject.sorted(by: { $0.key < $1.key }) where scored.contains(id) {
                failures.append(FuzzFailure(kind: "a session that must be rejected was scored (\(reason))", detail: FuzzBytes.escaped(id)))
            }
            for id in oracle.mustScore.sorted() where rejected.contains(id) {
                failures.append(
                    FuzzFailure(
                        kind: "a valid session was rejected",
                        detail: FuzzBytes.escaped(id) + ": " + (rejectReasons[id].map { FuzzBytes.escaped($0, limit: 200) } ?? "")))
            }
        }
        guard let expected = c.expectedIDs else { return }
        var valid = Set<String>(), invalid = Set<[UInt8]>()
        for id in expected {
            if let text = String(validating: id, as: UTF8.self) { valid.insert(text) } else { invalid.insert(id) }
        }
        let output = Set(all.filter { !$0.isEmpty })
        let missing = valid.subtracting(output)
        if !missing.isEmpty {
            failures.append(
                FuzzFailure(
                    kind: "an input session is in neither scores nor rejects",
                    detail: "\(missing.count) missing: " + missing.sorted().prefix(5).map { FuzzBytes.escaped($0) }.joined(separator: ", ")))
        }
        let unknown = output.subtracting(valid)
        if unknown.count > invalid.count {
            failures.append(
                FuzzFailure(
                    kind: "an output session id is not an input session id",
                    detail: "\(unknown.count) unknown (\(invalid.count) input ids are not UTF-8): "
                        + unknown.sorted().prefix(5).map { FuzzBytes.escaped($0) }.joined(separator: ", ")))
        }
        let empty = all.filter(\.isEmpty).count
        if empty > c.idlessRecords {
            failures.append(
                FuzzFailure(
                    kind: "an output row has an empty session id though every input row has one",
                    detail: "\(empty) empty ids, \(c.idlessRecords) rows without an id column"))
        }
        let rows = all.count - empty
        if rows != valid.count + invalid.count {
            failures.append(
                FuzzFailure(
                    kind: "output rows ≠ distinct input sessions",
                    detail: "\(rows) rows with an id, \(valid.count + invalid.count) sessions in the input"))
        }
    }

    // MARK: calibrate

    static func checkCalibrate(
        _ c: FuzzCase, _ run: FuzzRun, _ found: Set<String>, _ directory: URL, _ runner: FuzzRunner,
        _ failures: inout [FuzzFailure]
    ) throws {
        checkOutputsOnly(c, found, ["bank.csv", "bank.summary.json"], &failures)
        guard let summary = json(directory.appendingPathComponent("bank.summary.json")) else {
            failures.append(FuzzFailure(kind: "calibrate summary missing or not a JSON object", detail: ""))
            return
        }
        if let converged = summary["converged"] as? Bool {
            if converged != (run.status == 0) {
                failures.append(FuzzFailure(kind: "exit status does not match converged", detail: "exit \(run.status), converged \(converged)"))
            }
        } else {
            failures.append(FuzzFailure(kind: "calibrate summary lacks converged", detail: ""))
        }
        var rows = 0
        if let bytes = readBytes(directory.appendingPathComponent("bank.csv")) {
            do {
                let records = try RFC4180.parse(bytes)
                let header = records.first ?? []
                if Array(header.prefix(bankCore.count)) != bankCore {
                    failures.append(FuzzFailure(kind: "bank header differs from the documented one", detail: header.joined(separator: ",")))
                }
                var ids = Set<String>()
                for (k, record) in records.enumerated().dropFirst() {
                    rows += 1
                    guard record.count == header.count else {
                        failures.append(
                            FuzzFailure(
                                kind: "a bank row's field count differs from the header's",
                                detail: "row \(k + 1): \(record.count) fields, header \(header.count)"))
                        continue
                    }
                    if record[0].isEmpty || !ids.insert(record[0]).inserted {
                        failures.append(FuzzFailure(kind: "bank item id empty or repeated", detail: "row \(k + 1): \(FuzzBytes.escaped(record[0]))"))
                    }
                    if !["rasch", "1pl", "2pl", "3pl"].contains(record[1]) {
                        failures.append(
                            FuzzFailure(kind: "bank model is not rasch/1pl/2pl/3pl", detail: "row \(k + 1): \(FuzzBytes.escaped(record[1]))"))
                    }
                    for index in 2...9 {
                        let emptyAllowed = (5...7).contains(index) || index == 8
                        if let problem = numberProblem(
                            record[index], file: "the bank", row: k + 1, column: bankCore[index],
                            emptyAllowed: emptyAllowed, integer: index == 8)
                        {
                            failures.append(problem)
                        }
                    }
                    if let p = Double(record[9]), !(p >= 0 && p <= 1) {
                        failures.append(FuzzFailure(kind: "bank p_value outside [0, 1]", detail: "row \(k + 1): \(record[9])"))
                    }
                }
            } catch {
                failures.append(FuzzFailure(kind: "bank file is not RFC 4180 CSV", detail: "\(error)"))
            }
        }
        if let entry = manifestOutputs(summary)["bank"] {
            if entry.rows != rows || entry.path != "bank.csv" {
                failures.append(
                    FuzzFailure(kind: "manifest bank entry differs from the file", detail: "\(entry.path): \(entry.rows) rows; file \(rows)"))
            }
        } else {
            failures.append(FuzzFailure(kind: "calibrate manifest lacks the bank output", detail: ""))
        }
        try verify(c, "bank.summary.json", summary, directory, runner, &failures)
    }

    // MARK: assemble, cat simulate

    static func checkAssemble(_ c: FuzzCase, _ found: Set<String>, _ directory: URL, _ failures: inout [FuzzFailure]) {
        checkOutputsOnly(c, found, ["form.csv"], &failures)
        guard let bytes = readBytes(directory.appendingPathComponent("form.csv")) else { return }
        do {
            let records = try RFC4180.parse(bytes)
            if records.first != formHeader {
                failures.append(
                    FuzzFailure(kind: "form header differs from the documented one", detail: (records.first ?? []).joined(separator: ",")))
            }
            if records.count < 2 { failures.append(FuzzFailure(kind: "form file without items after success", detail: "")) }
            for (k, record) in records.enumerated().dropFirst() {
                guard record.count == formHeader.count else {
                    failures.append(FuzzFailure(kind: "a form row does not have 9 fields", detail: "row \(k + 1): \(record.count) fields"))
                    continue
                }
                for index in [0, 1] {
                    if let problem = numberProblem(record[index], file: "the form", row: k + 1, column: formHeader[index], integer: true) {
                        failures.append(problem)
                    }
                }
                for index in [4, 5, 6] {
                    if let problem = numberProblem(record[index], file: "the form", row: k + 1, column: formHeader[index]) {
                        failures.append(problem)
                    }
                }
                if !["0", "1"].contains(record[8]) {
                    failures.append(FuzzFailure(kind: "form anchor is not 0/1", detail: "row \(k + 1): \(FuzzBytes.escaped(record[8]))"))
                }
            }
        } catch {
            failures.append(FuzzFailure(kind: "form file is not RFC 4180 CSV", detail: "\(error)"))
        }
    }

    /// A built norm: NORMS.json and the report, nothing else; NORMS.json a JSON object of the format written, with
    /// a finite effective n not above n.
    static func checkNorms(_ c: FuzzCase, _ found: Set<String>, _ directory: URL, _ failures: inout [FuzzFailure]) {
        checkOutputsOnly(c, found, ["NORMS.json", "NORMS.html"], &failures)
        guard let norms = json(directory.appendingPathComponent("NORMS.json")) else {
            failures.append(FuzzFailure(kind: "NORMS.json missing or not a JSON object", detail: ""))
            return
        }
        if norms["format"] as? String != "iqscore-norms/1" {
            failures.append(FuzzFailure(kind: "NORMS.json format differs from iqscore-norms/1", detail: String(describing: norms["format"])))
        }
        let sample = norms["sample"] as? [String: Any]
        guard let n = (sample?["n"] as? NSNumber)?.doubleValue, let effective = (sample?["effective_n"] as? NSNumber)?.doubleValue,
            effective.isFinite, effective > 0, effective <= n * (1 + 1e-12)
        else {
            failures.append(FuzzFailure(kind: "NORMS.json sample n / effective_n missing or inconsistent", detail: String(describing: sample)))
            return
        }
    }

    static func checkCAT(_ c: FuzzCase, _ found: Set<String>, _ directory: URL, _ failures: inout [FuzzFailure]) {
        // The exposure file is written only with exposure control.
        checkOutputsOnly(c, found, ["report.json"], optional: ["exposure.csv"], &failures)
        if let report = json(directory.appendingPathComponent("report.json")) {
            // share_se_reached is null without an se_target.
            for key in ["mean_length", "rmse", "bias", "share_se_reached", "max_exposure", "mean_exposure", "overlap_rate", "content_violations"] {
                if key == "share_se_reached" && report[key] is NSNull { continue }
                guard let number = report[key] as? NSNumber, number.doubleValue.isFinite else {
                    failures.append(
                        FuzzFailure(kind: "CAT report value missing or not a finite number", detail: "\(key): \(String(describing: report[key]))"))
                    continue
                }
            }
        } else {
            failures.append(FuzzFailure(kind: "CAT report missing or not a JSON object", detail: ""))
        }
        guard found.contains("exposure.csv"), let bytes = readBytes(directory.appendingPathComponent("exposure.csv")) else { return }
        do {
            let records = try RFC4180.parse(bytes)
            if records.first != ["item_id", "k"] {
                failures.append(FuzzFailure(kind: "exposure header differs from item_id,k", detail: (records.first ?? []).joined(separator: ",")))
            }
            for (k, record) in records.enumerated().dropFirst() {
                guard record.count == 2 else {
                    failures.append(FuzzFailure(kind: "an exposure row does not have 2 fields", detail: "row \(k + 1)"))
                    continue
                }
                if let problem = numberProblem(record[1], file: "the exposure file", row: k + 1, column: "k") { failures.append(problem) }
                if let value = Double(record[1]), !(value >= 0 && value <= 1) {
                    failures.append(FuzzFailure(kind: "exposure k outside [0, 1]", detail: "row \(k + 1): \(record[1])"))
                }
            }
        } catch {
            failures.append(FuzzFailure(kind: "exposure file is not RFC 4180 CSV", detail: "\(error)"))
        }
    }
}

// MARK: - Driver

/// Collects failures of one target: the first `issuesPerKind` of each kind become issues with everything needed to
/// reproduce them; a summary lists every kind with its cases.
struct FuzzFailureLog {
    let target: FuzzTarget
    let binary: URL
    var kinds: [String] = []
    var cases: [String: [Int]] = [:]
    var failedCases = 0
    var kept = 0
    /// How the runs ended ("exit 0", "signal 4", "hang") and how often.
    var outcomes: [String: Int] = [:]

    mutating func count(_ run: FuzzRun) {
        outcomes[run.timedOut ? "hang" : run.exited ? "exit \(run.status)" : "signal \(run.status)", default: 0] += 1
    }

    mutating func add(index: Int, _ c: FuzzCase, _ run: FuzzRun, directory: URL, _ failures: [FuzzFailure], sourceLocation: SourceLocation) {
        failedCases += 1
        // Keep the case directory (inputs and whatever the run wrote) for reproduction.
        var place = directory
        if kept < FuzzSettings.keptPerTarget {
            let keep = FuzzSettings.failureRoot.appendingPathComponent("\(target.rawValue)-seed\(FuzzSettings.seed)-case\(index)", isDirectory: true)
            try? FileManager.default.createDirectory(at: FuzzSettings.failureRoot, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: keep)
            // Copied, not moved: the case ran in /dev/shm. What the run wrote goes to written-by-the-run/, so that the
            // rerun command starts from the inputs alone.
            if (try? FileManager.default.copyItem(at: directory, to: keep)) != nil {
                place = keep
                kept += 1
                let written = FuzzCheck.contents(keep).subtracting(c.inputNames)
                if !written.isEmpty {
                    let folder = keep.appendingPathComponent("written-by-the-run", isDirectory: true)
                    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    for name in written {
                        try? FileManager.default.moveItem(at: keep.appendingPathComponent(name), to: folder.appendingPathComponent(name))
                    }
                }
            }
        }
        let isKept = place != directory
        let input = c.mutatedFile.map { place.appendingPathComponent($0).path + (isKept ? "" : " (not kept: limit reached)") } ?? "(options only)"
        let command =
            "cd \(FuzzBytes.shellQuoted(place.path)) && \(FuzzBytes.shellQuoted(binary.path)) "
            + c.arguments.map(FuzzBytes.shellQuoted).joined(separator: " ")
        func message(_ failure: FuzzFailure) -> String {
            """
            fuzz \(target.rawValue), seed \(FuzzSettings.seed), case \(index): \(failure.kind)
              \(failure.detail.isEmpty ? "" : failure.detail + "\n  ")mutations: \(c.mutations.joined(separator: "; "))
              mutated input: \(input)
              rerun: \(command)
              or: IQSCORE_FUZZ_SEED=\(FuzzSettings.seed) IQSCORE_FUZZ_CASE=\(index) swift test --skip-build --filter 'FuzzCLITests/\(target.testName)'
              run: \(run.outcome) after \(String(format: "%.2f", run.seconds)) s; stderr: \(FuzzBytes.escaped(run.stderr, limit: 400))
            """
        }
        // Every failure of a kept case is also written beside it (<case>.txt).
        if isKept {
            let text = failures.map(message).joined(separator: "\n\n") + "\n"
            try? Data(text.utf8).write(to: place.appendingPathExtension("txt"))
        }
        for failure in failures {
            if cases[failure.kind] == nil { kinds.append(failure.kind) }
            cases[failure.kind, default: []].append(index)
            guard cases[failure.kind]!.count <= FuzzSettings.issuesPerKind else { continue }
            Issue.record(Comment(rawValue: message(failure)), sourceLocation: sourceLocation)
        }
    }

    func summary(cases total: Int, seconds: Double, runner: FuzzRunner) -> String {
        var text =
            "fuzz \(target.rawValue): \(total) case\(total == 1 ? "" : "s") (seed \(FuzzSettings.seed)) in \(String(format: "%.1f", seconds)) s"
            + " (\(runner.runs) runs of iqscore, \(String(format: "%.1f", runner.runSeconds)) s); "
            + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") + "; \(failedCases) failed"
        for kind in kinds {
            let list = cases[kind]!
            text += "\n  \(list.count) × \(kind): cases \(list.prefix(12).map(String.init).joined(separator: ", "))\(list.count > 12 ? ", …" : "")"
        }
        return text
    }
}

enum FuzzDriver {
    /// Runs the target's cases one after another (the targets, too, run one after another: the suite is serialized).
    static func run(_ target: FuzzTarget, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let binary = try #require(
            IQScoreCLI.executable, "iqscore executable not found; build it with `swift build --build-tests`", sourceLocation: sourceLocation)
        let runner = try FuzzRunner(binary: binary)
        let root = FuzzSettings.workRoot.appendingPathComponent("iqscore-fuzz-\(target.rawValue)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        // Failures kept by an earlier run of this target are replaced.
        if let old = try? FileManager.default.contentsOfDirectory(atPath: FuzzSettings.failureRoot.path) {
            for name in old where name.hasPrefix(target.rawValue + "-seed") {
                try? FileManager.default.removeItem(at: FuzzSettings.failureRoot.appendingPathComponent(name))
            }
        }
        var log = FuzzFailureLog(target: target, binary: binary)
        let started = Date()
        let indices = FuzzSettings.onlyCase.map { $0..<($0 + 1) } ?? 0..<target.caseCount
        var ran = 0
        for index in indices {
            if let seconds = FuzzSettings.seconds, Date().timeIntervalSince(started) >= seconds { break }
            var rng = SplitMix64.forCase(seed: FuzzSettings.seed, target: target.rawValue, index: index)
            var c = target.makeCase(&rng)
            c.runVerify = index % FuzzSettings.verifyEvery == 0
            let directory = root.appendingPathComponent("case-\(index)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for file in c.files { try Data(file.bytes).write(to: directory.appendingPathComponent(file.name)) }
            let result = try runner.run(c.arguments, in: directory)
            let failures = try FuzzCheck.check(c, result, in: directory, runner: runner)
            log.count(result)
            if !failures.isEmpty { log.add(index: index, c, result, directory: directory, failures, sourceLocation: sourceLocation) }
            try? FileManager.default.removeItem(at: directory)
            ran += 1
        }
        let summary = log.summary(cases: ran, seconds: Date().timeIntervalSince(started), runner: runner)
        print(summary)
        if log.failedCases > 0 { Issue.record(Comment(rawValue: summary), sourceLocation: sourceLocation) }
    }
}

// MARK: - Tests

@Suite("iqscore fuzzing: mutated inputs and options never crash, hang or break the output contract", .serialized)
struct FuzzCLITests {
    @Test("score: mutated long-layout session files") func scoreLongSessions() throws { try FuzzDriver.run(.scoreLong) }
    @Test("score: mutated wide-layout session files") func scoreWideSessions() throws { try FuzzDriver.run(.scoreWide) }
    @Test("score: mutated bank files") func scoreBank() throws { try FuzzDriver.run(.scoreBank) }
    @Test("score: mutated norms JSON") func scoreNorms() throws { try FuzzDriver.run(.scoreNorms) }
    @Test("score: extreme option values") func scoreOptions() throws { try FuzzDriver.run(.scoreOptions) }
    @Test("calibrate: mutated wide-layout responses") func calibrateWideResponses() throws { try FuzzDriver.run(.calibrateWide) }
    @Test("calibrate: mutated long-layout responses") func calibrateLongResponses() throws { try FuzzDriver.run(.calibrateLong) }
    @Test("calibrate: extreme option values") func calibrateOptions() throws { try FuzzDriver.run(.calibrateOptions) }
    @Test("assemble: mutated blueprint JSON") func assembleBlueprint() throws { try FuzzDriver.run(.assembleBlueprint) }
    @Test("cat simulate: mutated configuration JSON") func catConfiguration() throws { try FuzzDriver.run(.catConfig) }
    @Test("norms build: mutated norm samples") func normsSample() throws { try FuzzDriver.run(.normsSample) }

    @Test("every seed, unmutated, runs cleanly (exit 0, or 3 for a calibration that stops at 50 cycles)")
    func seedsAreValid() throws {
        let binary = try #require(IQScoreCLI.executable)
        let runner = try FuzzRunner(binary: binary)
        let bank = FuzzSeeds.csv(FuzzSeeds.bankRows)
        var cases: [FuzzCase] = [
            FuzzCase(
                command: .score, files: [("BANK.csv", bank), ("sessions.csv", FuzzSeeds.longSessions(30).render())],
                arguments: ["score", "sessions.csv", "--bank", "BANK.csv", "--out", "scores.csv"], mutations: ["long"],
                expectedIDs: FuzzSeeds.longSessions(30).sessionIDs().ids),
            FuzzCase(
                command: .score, files: [("BANK.csv", bank), ("sessions.csv", FuzzSeeds.longSessions(30, sessionSecond: true).render())],
                arguments: ["score", "sessions.csv", "--bank", "BANK.csv", "--out", "scores.csv"], mutations: ["long, session second"],
                expectedIDs: FuzzSeeds.longSessions(30, sessionSecond: true).sessionIDs().ids),
            FuzzCase(
                command: .score,
                files: [("BANK.csv", FuzzSeeds.csv(FuzzSeeds.calibratedBankRows)), ("sessions.csv", FuzzSeeds.wideSessions(30).render())],
                arguments: ["score", "sessions.csv", "--bank", "BANK.csv", "--out", "scores.csv"], mutations: ["wide, calibrated bank"],
                expectedIDs: FuzzSeeds.wideSessions(30).sessionIDs().ids),
            FuzzCase(
                command: .calibrate, files: [("responses.csv", FuzzSeeds.calibrationWide().render())],
                arguments: ["calibrate", "responses.csv", "--out", "bank.csv"] + OptionSampler.calibrationBase, mutations: ["wide"]),
            FuzzCase(
                command: .calibrate, files: [("responses.csv", FuzzSeeds.calibrationLong().render())],
                arguments: ["calibrate", "responses.csv", "--out", "bank.csv"] + OptionSampler.calibrationBase, mutations: ["long"])
        ]
        for norms in FuzzSeeds.norms {
            cases.append(
                FuzzCase(
                    command: .score, files: [("BANK.csv", bank), ("sessions.csv", FuzzSeeds.longSessions(20).render()), ("norms.json", norms.bytes)],
                    arguments: ["score", "sessions.csv", "--bank", "BANK.csv", "--out", "scores.csv", "--norms", "norms.json"],
                    mutations: ["norms"], expectedIDs: FuzzSeeds.longSessions(20).sessionIDs().ids))
        }
        for blueprint in FuzzSeeds.blueprints {
            cases.append(
                FuzzCase(
                    command: .assemble, files: [("bank.csv", FuzzSeeds.assemblyBank), ("blueprint.json", blueprint.bytes)],
                    arguments: ["assemble", "--bank", "bank.csv", "--blueprint", "blueprint.json", "--out", "form.csv"], mutations: ["blueprint"]))
        }
        cases.append(
            FuzzCase(
                command: .normsBuild, files: [("sample.csv", FuzzSeeds.normSample().render()), ("margins.csv", FuzzSeeds.normMargins)],
                arguments: FuzzSeeds.normsArguments, mutations: ["norm sample"]))
        for configuration in FuzzSeeds.catConfigurations {
            cases.append(
                FuzzCase(
                    command: .catSimulate, files: [("bank.csv", FuzzSeeds.assemblyBank), ("cat.json", configuration.bytes)],
                    arguments: [
                        "cat", "simulate", "--bank", "bank.csv", "--config", "cat.json", "--simulees", "20", "--out", "report.json",
                        "--exposure-out", "exposure.csv"
                    ], mutations: ["cat"]))
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("iqscore-fuzz-seeds-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: root) }
        for (k, c) in cases.enumerated() {
            let directory = root.appendingPathComponent("seed-\(k)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for file in c.files { try Data(file.bytes).write(to: directory.appendingPathComponent(file.name)) }
            let run = try runner.run(c.arguments, in: directory)
            #expect(
                run.exited && (run.status == 0 || (c.command == .calibrate && run.status == 3)), "\(c.mutations): \(run.outcome)\n\(run.stderrText)")
            let failures = try FuzzCheck.check(c, run, in: directory, runner: runner)
            #expect(failures.isEmpty, "\(c.mutations): \(failures.map { $0.kind + ": " + $0.detail })")
        }
    }

    @Test("the fuzzer's own parts: SplitMix64 reference values, RFC 4180 reader, CSV rendering, case reproducibility")
    func fuzzerParts() throws {
        // SplitMix64 from seed 0 (the reference implementation's first outputs).
        var g = SplitMix64(seed: 0)
        #expect([g.next(), g.next(), g.next()] == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
        #expect(try RFC4180.parse(Array("a,\"b,\"\"c\"\"\"\r\n,\"x\ny\"\n".utf8)) == [["a", "b,\"c\""], ["", "x\ny"]])
        #expect(try RFC4180.parse(Array("a,b".utf8)) == [["a", "b"]])
        #expect(try RFC4180.parse(Array("a,\n".utf8)) == [["a", ""]])
        #expect(try RFC4180.parse([]) == [])
        for bad in ["a\"b\n", "\"a\"b\n", "\"ab\n", "a\rb\n"] {
            #expect(throws: RFC4180.ParseError.self, "\(bad.debugDescription)") { try RFC4180.parse(Array(bad.utf8)) }
        }
        #expect(throws: RFC4180.ParseError.self) { try RFC4180.parse([0x61, 0xFF, 0x0A]) }
        var doc = CSVDocument([["session_id", "x"], ["a,b", "x\r\ny"], ["p", "\""]], idColumn: 0)
        doc.records[2][0].quoted = true
        #expect(String(decoding: doc.render(), as: UTF8.self) == "session_id,x\n\"a,b\",\"x\r\ny\"\n\"p\",\"\"\"\"\n")
        #expect(doc.sessionIDs().ids == [Array("a,b".utf8), Array("p".utf8)])
        #expect(try RFC4180.parse(doc.render()) == [["session_id", "x"], ["a,b", "x\r\ny"], ["p", "\""]])
        // The same (seed, target, case) gives the same case.
        for target in FuzzTarget.allCases {
            var a = SplitMix64.forCase(seed: 1, target: target.rawValue, index: 5), b = SplitMix64.forCase(seed: 1, target: target.rawValue, index: 5)
            let x = target.makeCase(&a), y = target.makeCase(&b)
            #expect(x.arguments == y.arguments && x.files.map(\.bytes) == y.files.map(\.bytes) && x.mutations == y.mutations, "\(target)")
        }
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(
            FuzzCheck.isPlainNumber("-1.5e-3") && FuzzCheck.isPlainNumber("160") && !FuzzCheck.isPlainNumber("nan")
                && !FuzzCheck.isPlainNumber("inf") && !FuzzCheck.isPlainNumber("1.") && !FuzzCheck.isPlainNumber(""))
    }
}
