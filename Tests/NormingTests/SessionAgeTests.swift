import Foundation
import Norming
import Psychometrics
import PsychometricsIO
import Testing

// `SessionAge` (PsychometricsIO) and the ages `BatchScorer` carries with each session. Here rather than in
// PsychometricsTests because the runs score on age-specific norms (`AgeNormScale`, this module).

@Suite("SessionAge: age cells, and every BatchScorer path carries ages alike")
struct SessionAgeTests {
    @Test("cells: blank, whole and decimal ages, and the exact reasons for the rest")
    func cells() {
        func parse(_ text: String) -> SessionAge.Cell {
            var t = text
            return t.withUTF8 { SessionAge.parse($0) }
        }
        #expect(parse("") == .blank && parse("  ") == .blank && parse("NA") == .blank && parse("na") == .blank)
        #expect(parse("34") == .age(34) && parse(" 7 ") == .age(7) && parse("0") == .age(0) && parse("130") == .age(130))
        #expect(parse("34.567") == .age(34.567) && parse("1e2") == .age(100) && parse("+5.5") == .age(5.5))
        #expect(parse("-0") == .age(0) && parse("-0").hashValue == parse("0").hashValue)
        #expect(parse("abc") == .invalid("age 'abc' is not a number; allowed: 0–130 years"))
        #expect(parse("nan") == .invalid("age 'nan' is not a number; allowed: 0–130 years"))
        #expect(parse("3,5") == .invalid("age '3,5' is not a number; allowed: 0–130 years"))
        #expect(parse("131") == .invalid("age 131 is outside 0–130 years"))
        #expect(parse("130.25") == .invalid("age 130.25 is outside 0–130 years"))
        #expect(parse("-1") == .invalid("age -1 is outside 0–130 years"))
        #expect(parse("999") == .invalid("age 999 is outside 0–130 years"))
        #expect(
            ["34", "34.5", "34.57", "34.57", "0", "130", "10.1"]
                == [34, 34.5, 34.567, 34.574, 0, 130, 10.1].map(SessionAge.text))
    }

    // MARK: - every path

    static let bankCSV = "item_id,a,b\nq1,1.2,-1.0\nq2,0.8,-0.5\nq3,1.5,0.0\nq4,1.0,0.5\nq5,1.3,1.0\nq6,0.9,1.5\n"

    /// Normal norms over ages 20–80 (± 5 years unflagged) whose mean falls with age.
    static let norms = AgeNorms(
        name: "t", version: "1",
        model: .continuous(
            ContinuousNorms(
                ages: AgeStandardization(minimum: 20, maximum: 80), location: AgePolynomial(coefficients: [0.1, -0.3]),
                logScale: AgePolynomial(coefficients: [0]))), extrapolation: 5)

    /// A session's rows (item, response, age cell) and what must become of it: its age, or the reject's row
    /// index (0-based within the session) and reason, where `%` stands for the line of row `first` (diff).
    struct Planned {
        var id: String
        var rows: [(item: String, response: String, age: String)]
        var age: String?
        var rejectRow = 0
        var reason = ""
    }

    /// `count` sessions with ids `<prefix><k>`; one in twelve has each kind of bad age and one in four ages that
    /// differ, at varying rows so that chunk borders cut them anywhere.
    static func plan(_ count: Int, prefix: String = "s") -> [Planned] {
        (1...count).map { k in
            var rows: [(item: String, response: String, age: String)] = []
            for j in 1...6 where (k + j) % 5 != 0 { rows.append(("q\(j)", (7 * k + 3 * j) % 4 < 2 ? "1" : "0", "")) }
            let n = rows.count, age = 10 + Double(k * 37 % 8000) / 100, text = String(format: "%.2f", age)
            var p = Planned(id: prefix + String(k), rows: rows, age: SessionAge.text(Double(text)!))
            // The age on some rows only: which ones varies with k.
            for r in 0..<n where (r + k) % 3 != 1 || r == k % n { p.rows[r].age = text }
            switch k % 12 {
            case 1:
                let r = k % n
                p.rows[r].age = "x\(k)"
                p.age = nil; p.rejectRow = r; p.reason = "age 'x\(k)' is not a number; allowed: 0–130 years"
            case 5:
                let r = (k / 12) % n
                p.rows[r].age = "131"
                p.age = nil; p.rejectRow = r; p.reason = "age 131 is outside 0–130 years"
            case 7:
                for r in 0..<n { p.rows[r].age = r % 2 == 0 ? "" : "NA" }
                p.age = nil; p.rejectRow = 0; p.reason = "no age: the age column is blank on every row of the session"
            case 3, 9, 11:
                // The first age on row a, a different one on row b > a, blanks between.
                let a = k % (n - 1), b = a + 1 + (k / 12) % (n - 1 - a)
                for r in 0..<n { p.rows[r].age = r < a ? "" : (r < b ? (r == a ? text : "") : "99.5") }
                p.age = nil; p.rejectRow = b
                p.reason = "the age differs within the session: \(SessionAge.exactText(Double(text)!)) on line %\(a), 99.5 on line %\(b)"
            default: break
            }
            return p
        }
    }

    /// The rows as a long file, in order or dealt round-robin; and each (session, row)'s line.
    static func longFile(_ plan: [Planned], interleaved: Bool) -> (text: String, lines: [[Int]]) {
        var text = "session_id,item_id,response,age\n", line = 1
        var lines = plan.map { [Int](repeating: 0, count: $0.rows.count) }
        func add(_ s: Int, _ r: Int) {
            let row = plan[s].rows[r]
            line += 1
            lines[s][r] = line
            text += "\(plan[s].id),\(row.item),\(row.response),\(row.age)\n"
        }
        if interleaved {
            for r in 0..<6 { for s in plan.indices where r < plan[s].rows.count { add(s, r) } }
        } else {
            for s in plan.indices { for r in plan[s].rows.indices { add(s, r) } }
        }
        return (text, lines)
    }

    /// The rejects each file must give: id, line, column, reason.
    static func expectedRejects(_ plan: [Planned], lines: [[Int]], file: String) -> [[String]] {
        plan.indices.filter { plan[$0].age == nil }.map { s in
            var reason = plan[s].reason
            for r in plan[s].rows.indices.reversed() { reason = reason.replacing("%\(r)", with: String(lines[s][r])) }
            return [plan[s].id, file, String(lines[s][plan[s].rejectRow]), "4", reason]
        }
    }

    struct Output: Equatable {
        var scores: String
        var rejects: String
        var partitions: Int
    }

    static func run(
        _ path: String, in dir: URL, name: String, parallel: Bool = true, workers: Int = 2, chunkBytes: Int? = nil,
        maxMemoryBytes: Int? = nil
    ) throws -> Output {
        let bank = try ItemBank.load(csv: dir.appendingPathComponent("BANK.csv").path)
        let settings = try IQScale()
        let batch = BatchScorer(scorer: try SessionScorer(bank: bank, scale: settings))
        batch.ageScale = AgeNormScale(norms: norms, settings: settings)
        batch.ageColumn = "age"
        batch.parallelParsing = parallel
        batch.workers = workers
        if let chunkBytes { batch.parallelChunkBytes = chunkBytes }
        if let maxMemoryBytes { batch.maxMemoryBytes = maxMemoryBytes }
        let scores = try AtomicFileWriter(path: dir.appendingPathComponent(name + ".csv").path)
        let rejects = try AtomicFileWriter(path: dir.appendingPathComponent(name + ".rejects.csv").path)
        let report = try batch.run(inputs: [path], scores: scores, rejects: rejects)
        try scores.commit()
        try rejects.commit()
        return Output(
            scores: try String(contentsOfFile: scores.path, encoding: .utf8),
            rejects: try String(contentsOfFile: rejects.path, encoding: .utf8), partitions: report.regroupPartitions)
    }

    static func records(_ csv: String) -> [[String]] {
        csv.split(separator: "\n").dropFirst().map { line in
            // Reasons hold commas but no quotes here: split off the first four fields only.
            var fields = line.split(separator: ",", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            if fields.count == 5, fields[4].hasPrefix("\""), fields[4].hasSuffix("\"") { fields[4] = String(fields[4].dropFirst().dropLast()) }
            return fields
        }
    }

    @Test("serial, parallel chunks (1 and 3 workers), regrouped in memory and through partition files, wide: the same ages, scores and rejects")
    func everyPath() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("session-age-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.bankCSV.utf8).write(to: dir.appendingPathComponent("BANK.csv"))
        let plan = Self.plan(900)
        let long = Self.longFile(plan, interleaved: false), mixed = Self.longFile(plan, interleaved: true)
        let longPath = dir.appendingPathComponent("long.csv").path, mixedPath = dir.appendingPathComponent("mixed.csv").path
        try Data(long.text.utf8).write(to: URL(fileURLWithPath: longPath))
        try Data(mixed.text.utf8).write(to: URL(fileURLWithPath: mixedPath))

        // Chunk borders (4 KiB) fall elsewhere with each id length: a session's first age, a different one and
        // its errors end up on either side of a border in every combination.
        for prefix in ["p", "person-", "participant-00"] {
            let shifted = Self.plan(900, prefix: prefix)
            let file = Self.longFile(shifted, interleaved: false)
            let path = dir.appendingPathComponent("long-\(prefix).csv").path
            try Data(file.text.utf8).write(to: URL(fileURLWithPath: path))
            let one = try Self.run(path, in: dir, name: "one", parallel: false)
            #expect(Self.records(one.rejects) == Self.expectedRejects(shifted, lines: file.lines, file: path))
            for workers in [1, 3] {
                #expect(try Self.run(path, in: dir, name: "chunks", workers: workers, chunkBytes: 4096) == one, "\(prefix), \(workers) workers")
            }
        }

        let serial = try Self.run(longPath, in: dir, name: "serial", parallel: false)
        #expect(serial.partitions == 0)
        let scored = serial.scores.split(separator: "\n").dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        #expect(scored.map { [$0[0], $0[12]] } == plan.compactMap { p in p.age.map { [p.id, $0] } })
        #expect(
            scored.filter { $0[10].contains("age_outside_norms") }.map(\.[0])
                == plan.filter { p in p.age.map { Double($0)! < 15 || Double($0)! > 85 } ?? false }.map(\.id))
        #expect(Self.records(serial.rejects) == Self.expectedRejects(plan, lines: long.lines, file: longPath))

        for workers in [1, 3] {
            let parallel = try Self.run(longPath, in: dir, name: "parallel\(workers)", workers: workers, chunkBytes: 4096)
            #expect(parallel == serial, "\(workers) workers")
        }
        let memory = try Self.run(mixedPath, in: dir, name: "memory")
        #expect(memory.partitions == 1)
        #expect(memory.scores == serial.scores)
        #expect(Self.records(memory.rejects) == Self.expectedRejects(plan, lines: mixed.lines, file: mixedPath))
        for (budget, workers) in [(1 << 12, 1), (1 << 14, 2)] {
            let spilled = try Self.run(mixedPath, in: dir, name: "spilled", workers: workers, maxMemoryBytes: budget)
            #expect(spilled.partitions > 1, "budget \(budget)")
            #expect(spilled.scores == memory.scores && spilled.rejects == memory.rejects, "budget \(budget)")
        }

        // Wide: one row per session, so only the sessions with a whole age on that row; same scores.
        var wide = "session_id,q1,q2,age,q3,q4,q5,q6\n"
        for p in plan where p.age != nil {
            let cells = Dictionary(uniqueKeysWithValues: p.rows.map { ($0.item, $0.response) })
            wide +=
                p.id + "," + ["q1", "q2"].map { cells[$0] ?? "" }.joined(separator: ",") + ",\(p.age!),"
                + ["q3", "q4", "q5", "q6"].map { cells[$0] ?? "" }.joined(separator: ",") + "\n"
        }
        let widePath = dir.appendingPathComponent("wide.csv").path
        try Data(wide.utf8).write(to: URL(fileURLWithPath: widePath))
        let wideOut = try Self.run(widePath, in: dir, name: "wide", workers: 3)
        // Ages shown with 2 decimals read back as the same 2-decimal ages, so the same norms and IQs.
        #expect(wideOut.scores == serial.scores)
        #expect(wideOut.rejects == BatchScorer.rejectHeader)
    }
}
