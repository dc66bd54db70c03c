import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

// Tests of batch scoring through the public API: `BatchScorer.run(inputs:scores:rejects:)` writing through
// `AtomicFileWriter`s into a temporary folder, `SessionScorer.score(itemIDs:responses:)` and the located errors
// of `ItemBank.load(csv:)`. Fixtures are written with `CSVFixtures` (ResponseMatrixCSVTests.swift).

/// Batch-scoring fixtures: a six-item bank in three domains and helpers to run `BatchScorer` on files.
enum BatchFixtures {
    static let itemIDs = SixItemBank.itemIDs
    static let domains = SixItemBank.domains
    static let bankCSV = SixItemBank.csv

    static let scoreColumns = [
        "session_id", "n_items", "n_correct", "theta", "se", "iq", "iq_low", "iq_high",
        "percentile", "method", "flags", "norms"
    ]

    static func bank(_ files: CSVFixtures) throws -> ItemBank {
        try ItemBank.load(csv: try files.write("BANK.csv", bankCSV))
    }

    static func scorer(_ files: CSVFixtures, method: AbilityMethod = .eap) throws -> SessionScorer {
        try SessionScorer(bank: bank(files), ability: AbilityOptions(method: method), scale: IQScale())
    }

    /// Deterministic sessions: session k answers item j unless (k + j) % 5 == 0 (not administered); the
    /// response is 1 when (k · 7 + j · 3) % 4 < 2. Cells in bank order.
    static func sessions(_ count: Int) -> [(id: String, cells: [(item: String, response: String)])] {
        (1...count).map { k in
            let cells = itemIDs.enumerated().compactMap { j, item -> (item: String, response: String)? in
                (k + j) % 5 == 0 ? nil : (item, (k * 7 + j * 3) % 4 < 2 ? "1" : "0")
            }
            return (String(format: "s%03d", k), cells)
        }
    }

    typealias Sessions = [(id: String, cells: [(item: String, response: String)])]

    /// Long layout, each session's rows together.
    static func longContiguous(_ sessions: Sessions) -> String {
        "session_id,item_id,response\n" + sessions.flatMap { s in s.cells.map { "\(s.id),\($0.item),\($0.response)\n" } }.joined()
    }

    /// Long layout, rows dealt round-robin: first the first row of every session (in `order`), then every second
    /// row, and so on. Each session's first appearance follows `order`; its rows keep their relative order.
    static func longInterleaved(_ sessions: Sessions, order: [Int]? = nil) -> String {
        let order = order ?? Array(sessions.indices)
        var rows: [String] = []
        let depth = sessions.map(\.cells.count).max() ?? 0
        for r in 0..<depth {
            for s in order where r < sessions[s].cells.count {
                rows.append("\(sessions[s].id),\(sessions[s].cells[r].item),\(sessions[s].cells[r].response)\n")
            }
        }
        return "session_id,item_id,response\n" + rows.joined()
    }

    /// Wide layout: one row per session, empty cells for items not administered.
    static func wide(_ sessions: Sessions) -> String {
        "session_id," + itemIDs.joined(separator: ",") + "\n"
            + sessions.map { s in
                let answers = Dictionary(uniqueKeysWithValues: s.cells.map { ($0.item, $0.response) })
                return s.id + "," + itemIDs.map { answers[$0] ?? "" }.joined(separator: ",") + "\n"
            }.joined()
    }

    struct Output {
        var report: BatchScoringReport
        var scores: String
        var rejectsPath: String
        var rejects: String
        /// The reject file's data rows: session_id, file, line, column, reason.
        var rejectRows: [[String]]

        /// The score file's lines (CSV: header first).
        var scoreLines: [String] { scores.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
        /// CSV score rows split on commas (the fixtures hold no quoted fields), header dropped.
        var scoreRows: [[String]] { scoreLines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } }
    }

    /// Runs a `BatchScorer` over `inputs` into SCORES/REJECTS files in `files.directory`, commits and reads them
    /// back.
    static func run(
        _ scorer: SessionScorer, _ inputs: [String], in files: CSVFixtures, name: String = "scores",
        format: ScoreOutputFormat = .csv, batchSize: Int? = nil, workers: Int? = nil,
        options: ResponseFileOptions = ResponseFileOptions(), parallel: Bool = true, chunkBytes: Int? = nil,
        maxMemoryBytes: Int? = nil
    ) throws -> Output {
        let batch = BatchScorer(scorer: scorer, fileOptions: options, format: format)
        if let maxMemoryBytes { batch.maxMemoryBytes = maxMemoryBytes }
        if let batchSize { batch.batchSize = batchSize }
        if let workers { batch.workers = workers }
        batch.parallelParsing = parallel
        if let chunkBytes { batch.parallelChunkBytes = chunkBytes }
        let scoresPath = files.directory.appendingPathComponent("\(name).\(format.rawValue)").path
        let rejectsPath = files.directory.appendingPathComponent("\(name).rejects.csv").path
        let scores = try AtomicFileWriter(path: scoresPath), rejects = try AtomicFileWriter(path: rejectsPath)
        let report = try batch.run(inputs: inputs, scores: scores, rejects: rejects)
        try scores.commit()
        try rejects.commit()
        let records = try readRecords(rejectsPath)
        #expect(records.first?.fields == ["session_id", "file", "line", "column", "reason"])
        return Output(
            report: report, scores: try String(contentsOfFile: scoresPath, encoding: .utf8), rejectsPath: rejectsPath,
            rejects: try String(contentsOfFile: rejectsPath, encoding: .utf8), rejectRows: records.dropFirst().map(\.fields))
    }
}

@Suite("BatchScorer: streaming, regrouping, layouts, formats, rejections")
struct BatchScorerTests {
    @Test("interleaved rows give byte-identical scores to contiguous rows; only the interleaved run regroups")
    func interleavedEqualsContiguous() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let sessions = BatchFixtures.sessions(12)
        let contiguous = try BatchFixtures.run(
            scorer, [try files.write("long.csv", BatchFixtures.longContiguous(sessions))],
            in: files, name: "contiguous")
        let interleaved = try BatchFixtures.run(
            scorer, [try files.write("mixed.csv", BatchFixtures.longInterleaved(sessions))],
            in: files, name: "interleaved")
        #expect(contiguous.report.regrouped == false)
        #expect(interleaved.report.regrouped == true)
        #expect(contiguous.scores == interleaved.scores)
        #expect(contiguous.rejects == BatchScorer.rejectHeader)
        #expect(interleaved.rejects == BatchScorer.rejectHeader)
        #expect(contiguous.scoreRows.map { $0[0] } == sessions.map(\.id))
        for r in [contiguous.report, interleaved.report] {
            #expect(r.files == 1)
            #expect(r.sessionsRead == 12 && r.sessionsScored == 12 && r.sessionsRejected == 0)
            #expect(r.rowsRead == sessions.reduce(0) { $0 + $1.cells.count })
            #expect(r.blankResponses == 0)
        }

        // A different first-appearance order: rows come out in that order, each row unchanged.
        let order = [7, 2, 11, 0, 5, 9, 1, 3, 10, 4, 8, 6]
        let shuffled = try BatchFixtures.run(
            scorer, [try files.write("shuffled.csv", BatchFixtures.longInterleaved(sessions, order: order))],
            in: files, name: "shuffled")
        #expect(shuffled.report.regrouped)
        #expect(shuffled.scoreRows.map { $0[0] } == order.map { sessions[$0].id })
        #expect(shuffled.scoreLines.first == contiguous.scoreLines.first)
        #expect(shuffled.scoreLines.dropFirst().sorted() == contiguous.scoreLines.dropFirst().sorted())
        let byID = Dictionary(uniqueKeysWithValues: contiguous.scoreRows.map { ($0[0], $0) })
        for row in shuffled.scoreRows { #expect(row == byID[row[0]]) }
    }

    @Test("wide input gives the same score file as the equivalent long input")
    func wideEqualsLong() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let sessions = BatchFixtures.sessions(10)
        let long = try BatchFixtures.run(scorer, [try files.write("long.csv", BatchFixtures.longContiguous(sessions))], in: files, name: "long")
        let wide = try BatchFixtures.run(scorer, [try files.write("wide.csv", BatchFixtures.wide(sessions))], in: files, name: "wide")
        #expect(wide.report.regrouped == false)
        #expect(wide.report.sessionsRead == 10 && wide.report.sessionsScored == 10)
        #expect(wide.report.rowsRead == 10)
        #expect(wide.scores == long.scores)
        #expect(wide.rejects == BatchScorer.rejectHeader)
        #expect(wide.scoreRows.count == 10)
    }

    /// One file with every kind of rejection. The session column is second, so a one-field row has no session
    /// id while a two-field row has one.
    static let rejectionRows = [
        "item_id,session_id,response", // 1
        "q1,ok1,1", // 2
        "q2,ok1,0", // 3
        "q3,ok1,1", // 4
        "q1,unk,1", // 5
        "qX,unk,1", // 6  unknown item
        "q1,two,2", // 7  response 2
        "q1,yes,yes", // 8  response yes
        "q2,dup,1", // 9
        "q4,dup,0", // 10
        "q2,dup,0", // 11 q2 again
        "q1,short", // 12 too few fields, with a session id
        "q1", // 13 too few fields, no session id
        "q1,blank,", // 14 only blank responses
        "q2,blank,NA", // 15
        "q5,ok2,1", // 16
        "q6,ok2,0" // 17
    ]

    static let allowed = "1, 0, true, false, t, f, or empty/NA for not administered"

    /// session_id, line, column, reason (file added by the caller).
    static let expectedRejections: [(String, String, String, String)] = [
        ("unk", "6", "1", "unknown item id 'qX' (not in the bank)"),
        ("two", "7", "3", "response '2' is not a response; allowed: \(allowed)"),
        ("yes", "8", "3", "response 'yes' is not a response; allowed: \(allowed)"),
        ("dup", "11", "1", "item 'q2' answered twice in the session (first on line 9)"),
        ("short", "12", "2", "malformed row: expected 3 fields as in the header, found 2"),
        ("", "13", "1", "malformed row: expected 3 fields as in the header, found 1; no session id"),
        ("blank", "14", "", "not administered: the session has no responses")
    ]

    @Test("each rejection has its exact reason, line and column; every session lands exactly once in scores or rejects")
    func rejections() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let path = try files.write("sessions.csv", Self.rejectionRows.joined(separator: "\n") + "\n")
        let out = try BatchFixtures.run(scorer, [path], in: files)
        let r = out.report
        #expect(r.regrouped == false)
        #expect(r.rowsRead == 16)
        #expect(r.blankResponses == 2)
        #expect(r.sessionsRead == 9)
        #expect(r.sessionsScored == 2)
        #expect(r.sessionsRejected == 7)
        #expect(r.sessionsNotAdministered == 1 && r.sessionsRefused == 6)
        #expect(r.sessionsRead == r.sessionsScored + r.sessionsRejected)
        #expect(out.scoreRows.map { $0[0] } == ["ok1", "ok2"])
        #expect(out.scoreRows.map { $0[1] } == ["3", "2"])
        #expect(out.rejectRows.count == Self.expectedRejections.count)
        for (row, expected) in zip(out.rejectRows, Self.expectedRejections) {
            #expect(row == [expected.0, path, expected.1, expected.2, expected.3])
        }

        // Every session id of the input, once.
        var inputIDs: [String] = []
        for line in Self.rejectionRows.dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let id = fields.count > 1 ? fields[1] : ""
            if inputIDs.last != id { inputIDs.append(id) }
        }
        #expect(Set(inputIDs).count == inputIDs.count, "the fixture's sessions are contiguous")
        let outputIDs = out.scoreRows.map { $0[0] } + out.rejectRows.map { $0[0] }
        #expect(outputIDs.sorted() == inputIDs.sorted())
        #expect(outputIDs.count == r.sessionsRead)

        // The same file with ok1 reappearing at the end: regrouped, the same rejects (ok1 now has 4 items).
        let again = try files.write("again.csv", Self.rejectionRows.joined(separator: "\n") + "\nq4,ok1,1\n")
        let regrouped = try BatchFixtures.run(scorer, [again], in: files, name: "again")
        #expect(regrouped.report.regrouped)
        #expect(regrouped.report.sessionsRead == 9 && regrouped.report.sessionsScored == 2 && regrouped.report.sessionsRejected == 7)
        #expect(regrouped.report.sessionsNotAdministered == 1)
        #expect(regrouped.rejectRows == out.rejectRows.map { [$0[0], again] + $0[2...] })
        #expect(regrouped.scoreRows.map { $0[0] } == ["ok1", "ok2"])
        #expect(regrouped.scoreRows.map { $0[1] } == ["4", "2"])
        #expect(regrouped.scoreRows[1] == out.scoreRows[1])
    }

    @Test("a wide row with the wrong width, an invalid cell or an unknown item column is rejected with its location")
    func wideRejections() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let path = try files.write(
            "wide.csv",
            """
            session_id,q1,q2,zz,q3
            a,1,0,,1
            b,1,0,1,1
            c,1,maybe,,1
            d,1,0
            e,,,,

            """)
        let out = try BatchFixtures.run(scorer, [path], in: files)
        #expect(out.scoreRows.map { $0[0] } == ["a"])
        #expect(
            out.rejectRows == [
                ["b", path, "3", "4", "unknown item id 'zz' (column 4 is not in the bank)"],
                ["c", path, "4", "3", "column 'q2': 'maybe' is not a response; allowed: \(Self.allowed)"],
                ["d", path, "5", "4", "malformed row: expected 5 fields as in the header, found 3"],
                ["e", path, "6", "", "not administered: the session has no responses"]
            ])
        #expect(out.report.sessionsRead == 5 && out.report.sessionsScored == 1 && out.report.sessionsRejected == 4)
    }

    @Test("JSON Lines: every line parses, has the documented keys and the CSV output's values")
    func jsonLines() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let sessions = BatchFixtures.sessions(9)
        let input = try files.write("long.csv", BatchFixtures.longContiguous(sessions))
        let csv = try BatchFixtures.run(scorer, [input], in: files, name: "csv")
        let jsonl = try BatchFixtures.run(scorer, [input], in: files, name: "jsonl", format: .jsonl)
        #expect(jsonl.rejects == BatchScorer.rejectHeader)
        #expect(jsonl.scores.hasSuffix("}\n"))
        let lines = jsonl.scores.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 9)
        let header = csv.scoreLines[0].split(separator: ",").map(String.init)
        let keys = Set(BatchFixtures.scoreColumns + ["domains"])
        for (line, row) in zip(lines, csv.scoreRows) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(Set(object.keys) == keys)
            #expect(object["session_id"] as? String == row[0])
            #expect(object["n_items"] as? Int == Int(row[1]))
            #expect(object["n_correct"] as? Int == Int(row[2]))
            #expect(object["theta"] as? Double == Double(row[3]))
            #expect(object["se"] as? Double == Double(row[4]))
            #expect(object["iq"] as? Int == Int(row[5]))
            #expect(object["iq_low"] as? Int == Int(row[6]))
            #expect(object["iq_high"] as? Int == Int(row[7]))
            #expect(object["percentile"] as? Double == Double(row[8]))
            #expect(object["method"] as? String == row[9])
            #expect((object["flags"] as? [String])?.joined(separator: ";") == row[10])
            #expect(object["norms"] as? String == row[11])
            let domains = try #require(object["domains"] as? [String: [String: Int]])
            #expect(Set(domains.keys) == Set(BatchFixtures.domains))
            for (d, name) in BatchFixtures.domains.enumerated() {
                #expect(header[12 + 2 * d] == "\(name)_correct" && header[13 + 2 * d] == "\(name)_answered")
                #expect(domains[name] == ["correct": Int(row[12 + 2 * d])!, "answered": Int(row[13 + 2 * d])!])
            }
        }
    }

    @Test("JSON Lines without domains in the bank: no domains key")
    func jsonLinesWithoutDomains() throws {
        let files = try CSVFixtures()
        let bank = try ItemBank.load(csv: try files.write("plain.csv", "item_id,a,b\nq1,1,0\nq2,1.5,0.5\n"))
        let scorer = try SessionScorer(bank: bank, scale: IQScale())
        let input = try files.write("s.csv", "session_id,item_id,response\na,q1,1\na,q2,0\nb,q2,1\n")
        let out = try BatchFixtures.run(scorer, [input], in: files, format: .jsonl)
        let lines = out.scores.split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys) == Set(BatchFixtures.scoreColumns))
        }
        let csv = try BatchFixtures.run(scorer, [input], in: files, name: "plain")
        #expect(csv.scoreLines.first == BatchFixtures.scoreColumns.joined(separator: ","))
    }

    @Test("the header names the domain columns; per-domain counts sum to n_correct and n_items")
    func domainColumns() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        #expect(scorer.domains == BatchFixtures.domains)
        let out = try BatchFixtures.run(scorer, [try files.write("long.csv", BatchFixtures.longContiguous(BatchFixtures.sessions(15)))], in: files)
        let domainColumns = BatchFixtures.domains.flatMap { ["\($0)_correct", "\($0)_answered"] }
        #expect(out.scoreLines.first == (BatchFixtures.scoreColumns + domainColumns).joined(separator: ","))
        #expect(out.scoreRows.count == 15)
        for row in out.scoreRows {
            #expect(row.count == 18)
            let counts = row[12...].map { Int($0)! }
            let correct = stride(from: 0, to: 6, by: 2).map { counts[$0] }.reduce(0, +)
            let answered = stride(from: 1, to: 6, by: 2).map { counts[$0] }.reduce(0, +)
            #expect(correct == Int(row[2]), "\(row)")
            #expect(answered == Int(row[1]), "\(row)")
            for d in 0..<3 { #expect(counts[2 * d] <= counts[2 * d + 1]) }
        }
    }

    @Test("batches smaller than the input (batchSize 3, pipelined) give the same output as one batch")
    func smallBatches() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        // 40 sessions with a rejected one every seventh session, so rejects cross batch boundaries too.
        var text = BatchFixtures.longContiguous(BatchFixtures.sessions(40))
        var lines = text.split(separator: "\n").map(String.init)
        for k in stride(from: 7, through: 40, by: 7) {
            let id = String(format: "s%03d", k)
            let index = lines.lastIndex { $0.hasPrefix(id + ",") }!
            lines.insert("\(id),nope,1", at: index + 1)
        }
        text = lines.joined(separator: "\n") + "\n"
        let contiguous = try files.write("long.csv", text)
        let mixed = try files.write("mixed.csv", BatchFixtures.longInterleaved(BatchFixtures.sessions(40)))
        let large = try BatchFixtures.run(scorer, [contiguous], in: files, name: "large")
        #expect(large.report.sessionsRead == 40 && large.report.sessionsRejected == 5)
        #expect(large.rejectRows.map { $0[0] } == ["s007", "s014", "s021", "s028", "s035"])
        for (batchSize, workers) in [(3, 4), (3, 1), (1, 2), (7, 3)] {
            let small = try BatchFixtures.run(
                scorer, [contiguous], in: files, name: "small\(batchSize)-\(workers)",
                batchSize: batchSize, workers: workers)
            #expect(small.scores == large.scores, "batchSize \(batchSize), workers \(workers)")
            #expect(small.rejects == large.rejects, "batchSize \(batchSize), workers \(workers)")
            #expect(small.report.sessionsScored == 35 && small.report.sessionsRejected == 5)
            #expect(small.report.regrouped == false)
        }
        let mixedLarge = try BatchFixtures.run(scorer, [mixed], in: files, name: "mixed-large")
        let mixedSmall = try BatchFixtures.run(scorer, [mixed], in: files, name: "mixed-small", batchSize: 3)
        #expect(mixedSmall.report.regrouped && mixedLarge.report.regrouped)
        #expect(mixedSmall.scores == mixedLarge.scores)
        #expect(
            mixedSmall.scores
                == (try BatchFixtures.run(
                    scorer, [try files.write("plain.csv", BatchFixtures.longContiguous(BatchFixtures.sessions(40)))],
                    in: files, name: "plain", batchSize: 3)).scores)
    }

    @Test("several input files: rows in file order, rejects name their file")
    func severalFiles() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let sessions = BatchFixtures.sessions(6)
        let first = try files.write("a.csv", BatchFixtures.longContiguous(Array(sessions[0..<3])))
        let second = try files.write("b.csv", BatchFixtures.wide(Array(sessions[3...])) + "s999,1,0,9,,,\n")
        let out = try BatchFixtures.run(scorer, [first, second], in: files)
        let all = try BatchFixtures.run(scorer, [try files.write("all.csv", BatchFixtures.longContiguous(sessions))], in: files, name: "all")
        #expect(out.report.files == 2)
        #expect(out.scoreRows.map { $0[0] } == sessions.map(\.id))
        #expect(out.scores == all.scores)
        #expect(out.rejectRows == [["s999", second, "5", "4", "column 'q3': '9' is not a response; allowed: \(Self.allowed)"]])
    }

    @Test("no temporary files are left in the output folder after commit")
    func noTemporaryFiles() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        _ = try BatchFixtures.run(scorer, [try files.write("mixed.csv", BatchFixtures.longInterleaved(BatchFixtures.sessions(5)))], in: files)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: files.directory.path))
        #expect(names == ["BANK.csv", "mixed.csv", "scores.csv", "scores.rejects.csv"])
    }

    @Test(
        "\\r\\r\\n line ends (a CRLF file converted once more) are one line each: rejects name the line wc -l counts, serial and in parallel chunks (issue 26, item 10)"
    )
    func doubledCarriageReturns() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        // 300 sessions with a bad response on every 50th; line k of the file is row k − 1.
        var text = "session_id,item_id,response\n"
        var badLines: [Int] = []
        for k in 1...300 {
            let bad = k % 50 == 0
            if bad { badLines.append(k + 1) }
            text += "s\(k),q\(1 + k % 6),\(bad ? "7" : "1")\n"
        }
        let crcrlf = try files.write("crcrlf.csv", text.replacingOccurrences(of: "\n", with: "\r\r\n"))
        let lone = try files.write("cr.csv", text.replacingOccurrences(of: "\n", with: "\r"))
        for path in [crcrlf, lone] {
            for (parallel, chunk) in [(false, nil), (true, 512)] as [(Bool, Int?)] {
                let out = try BatchFixtures.run(scorer, [path], in: files, workers: 2, parallel: parallel, chunkBytes: chunk)
                #expect(out.report.sessionsScored == 294 && out.report.sessionsRejected == 6)
                #expect(out.rejectRows.map { Int($0[2])! } == badLines, "\(path) parallel \(parallel): \(out.rejectRows.map { $0[2] })")
            }
        }
    }

    @Test("a row with an empty session id is rejected, not scored as a session named \"\"")
    func emptySessionID() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let path = try files.write("s.csv", "session_id,item_id,response\ns1,q1,1\n,q2,1\n  ,q3,0\ns2,q1,0\n")
        let out = try BatchFixtures.run(scorer, [path], in: files)
        #expect(out.report.sessionsRead == out.report.sessionsScored + out.report.sessionsRejected)
        #expect(out.scoreRows.map { $0[0] }.filter { !$0.isEmpty } == ["s1", "s2"])
        #expect(out.scoreRows.map { $0[0] } == ["s1", "s2"])
        // Each row with an empty id is rejected on its own.
        #expect(out.report.sessionsRejected == 2)
        #expect(out.rejectRows.map { Array($0[0...3]) } == [["", path, "3", "1"], ["", path, "4", "1"]])
        #expect(out.rejectRows.first?[4] == "empty session_id: the row belongs to no session")
    }
}

@Suite("SessionScorer: one session")
struct SessionScorerTests {
    @Test("score(itemIDs:responses:) rejects with exact messages")
    func rejections() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        func message(_ ids: [String], _ responses: [Int]) -> String? {
            do { _ = try scorer.score(itemIDs: ids, responses: responses); return nil } catch let error as PsychometricsError {
                #expect(error.description == error.message && error.isClientError)
                return error.message
            } catch { return "unexpected \(type(of: error)): \(error)" }
        }
        #expect(message(["q1", "zz"], [1, 0]) == "unknown item id 'zz' (not in the bank)")
        #expect(message(["q1", "z\nz"], [1, 0]) == "unknown item id 'z\\nz' (not in the bank)")
        #expect(message(["q1", "q2"], [1, 2]) == "a response to item 'q2' must be 0 or 1; got 2")
        #expect(message(["q1", "q2"], [-1, 0]) == "a response to item 'q1' must be 0 or 1; got -1")
        #expect(message(["q1", "q2", "q1"], [1, 0, 1]) == "item 'q1' answered twice (items 1 and 3 of the session)")
        // Each names the item's position, for a front end to point at.
        #expect(throws: PsychometricsError(.unknownItem, "unknown item id 'zz' (not in the bank)", position: 1)) {
            try scorer.score(itemIDs: ["q1", "zz"], responses: [1, 0])
        }
        #expect(throws: PsychometricsError(.invalidResponse, "a response to item 'q2' must be 0 or 1; got 2", position: 1)) {
            try scorer.score(itemIDs: ["q1", "q2"], responses: [1, 2])
        }
        #expect(throws: PsychometricsError(.repeatedItem, "item 'q1' answered twice (items 1 and 3 of the session)", position: 2)) {
            try scorer.score(itemIDs: ["q1", "q2", "q1"], responses: [1, 0, 1])
        }
        #expect(message([], []) == "the session has no responses")
        #expect(message(["q1", "q2"], [1]) == "2 item ids but 1 responses")
    }

    @Test("a valid session scores like the batch path")
    func matchesBatch() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let one = try scorer.score(itemIDs: ["q1", "q3", "q5", "q6"], responses: [1, 1, 0, 1])
        #expect(one.estimate.itemCount == 4 && one.estimate.correctCount == 3)
        #expect(one.domainAnswered == [1, 1, 2])
        #expect(one.domainCorrect == [1, 1, 1])
        let out = try BatchFixtures.run(
            scorer, [try files.write("s.csv", "session_id,item_id,response\nx,q1,1\nx,q3,1\nx,q5,0\nx,q6,1\n")], in: files)
        let row = try #require(out.scoreRows.first)
        #expect(abs(Double(row[3])! - one.estimate.theta) <= 5e-5)
        #expect(abs(Double(row[4])! - one.estimate.standardError) <= 5e-5)
        #expect(Int(row[5]) == one.score.iq && Int(row[6]) == one.score.low && Int(row[7]) == one.score.high)
        #expect(Double(row[8]) == one.score.percentile)
        #expect(row[10] == one.score.flags.map(\.rawValue).joined(separator: ";"))
    }
}

@Suite("ItemBank.load: located errors")
struct ItemBankLoadErrorTests {
    /// The error `ItemBank.load` throws for a bank file with `text`, as its description.
    static func loadError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> (path: String, message: String) {
        let files = try CSVFixtures()
        let path = try files.write("BANK.csv", text)
        do {
            _ = try ItemBank.load(csv: path)
            Issue.record("the bank loaded", sourceLocation: sourceLocation)
            return (path, "")
        } catch let error as InputErrors {
            return (path, error.description)
        } catch let error as InputError {
            return (path, error.description)
        }
    }

    @Test("a non-numeric a names file:line:column")
    func nonNumeric() throws {
        let (path, message) = try Self.loadError("item_id,model,a,b,c,domain\nq1,2pl,1,0,0,x\nq2,2pl,abc,0,0,x\n")
        #expect(message == "\(path):3:3: error: item 'q2': a 'abc' is not a number")
    }

    @Test("a slope that is zero or negative")
    func slopeNotPositive() throws {
        let (path, message) = try Self.loadError("item_id,model,a,b,c\nq1,2pl,0,0,0\nq2,2pl,-1.5,0,0\n")
        #expect(
            message == "\(path):2:3: error: item 'q1': a = 0; allowed 0 < a ≤ 50 (scoring needs a positive slope)\n"
                + "\(path):3:3: error: item 'q2': a = -1.5; allowed 0 < a ≤ 50 (scoring needs a positive slope)")
    }

    @Test("c ≥ 1")
    func guessingTooLarge() throws {
        let (path, message) = try Self.loadError("item_id,model,a,b,c\nq1,3pl,1,0,1\n")
        #expect(message == "\(path):2:5: error: item 'q1': c = 1; allowed 0 ≤ c < 1")
    }

    @Test("a duplicated item_id names the first line")
    func duplicate() throws {
        let (path, message) = try Self.loadError("item_id,a,b\nq1,1,0\nq2,1,0\nq1,1,1\n")
        #expect(message == "\(path):4:1: error: item 'q1' already defined on line 2")
    }

    @Test("a missing b column")
    func missingB() throws {
        let (path, message) = try Self.loadError("item_id,model,a,c\nq1,2pl,1,0\n")
        #expect(
            message
                == "\(path):1: error: the bank header has no difficulty column (found: item_id,model,a,c); name it b (or give mirt's intercept as a1,d; thresholds of items in more than two categories as b1, b2, …)"
        )
    }

    @Test("an empty bank: header only, or an empty file")
    func emptyBank() throws {
        let (path, message) = try Self.loadError("item_id,model,a,b,c\n")
        #expect(message == "\(path):1: error: the bank has no items")
        let (emptyPath, emptyMessage) = try Self.loadError("")
        #expect(emptyMessage == "\(emptyPath): error: the bank file is empty; expected a header with item_id,a,b")
    }

    @Test("a good bank: domains in order of first appearance, model and guessing read")
    func goodBank() throws {
        let files = try CSVFixtures()
        let bank = try BatchFixtures.bank(files)
        #expect(bank.items.map(\.itemID) == BatchFixtures.itemIDs)
        #expect(bank.metadataColumns == ["domain"])
        #expect(bank.items[4].model == .threePL && bank.items[4].parameters.guessing == 0.2)
        #expect(bank.items[0].model == .twoPL && bank.items[0].parameters.discrimination == 1.2)
    }
}

@Suite("BatchScorer: no spurious regrouping")
struct NoSpuriousRegroupTests {
    @Test("100,000 one-row sessions with plain integer ids stream without regrouping")
    func integerIDs() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        var text = "session_id,item_id,response\n"
        for k in 0..<100_000 { text += "\(k),q\(k % 6 + 1),\(k % 2)\n" }
        for parallel in [true, false] {
            let out = try BatchFixtures.run(scorer, [try files.write("ints.csv", text)], in: files, name: "ints\(parallel)", parallel: parallel)
            #expect(out.report.regrouped == false)
            #expect(out.report.sessionsScored == 100_000)
        }
    }
}

@Suite("Scoring leaves pretest and retired items out")
struct UnscoredItemTests {
    static let statusBank = """
        item_id,model,a,b,c,domain,status
        q1,2pl,1.2,-1.0,0,logic,active
        q2,2pl,0.8,-0.5,0,logic,
        q3,2pl,1.5,0.0,0,pattern,pretest
        q4,2pl,1.0,0.5,0,pattern,Active
        q5,3pl,1.3,1.0,0.2,spatial,retired
        q6,2pl,0.9,1.5,0,spatial,active

        """

    @Test("θ, SE, IQ, flags and domain counts equal those of the same sessions without the pretest and retired items; n_unscored counts them")
    func exactValues() throws {
        let files = try CSVFixtures()
        let withStatus = try SessionScorer(bank: try ItemBank.load(csv: try files.write("S.csv", Self.statusBank)), scale: IQScale())
        #expect(withStatus.hasUnscoredItems && withStatus.itemScored == [true, true, false, true, false, true])
        // The reference: a bank without q3 and q5, and sessions without their rows.
        let reduced = Self.statusBank.split(separator: "\n").filter { !$0.hasPrefix("q3") && !$0.hasPrefix("q5") }.joined(separator: "\n") + "\n"
        let reference = try SessionScorer(bank: try ItemBank.load(csv: try files.write("R.csv", reduced)), scale: IQScale())
        let sessions = BatchFixtures.sessions(20)
        let full = try BatchFixtures.run(withStatus, [try files.write("all.csv", BatchFixtures.longContiguous(sessions))], in: files, name: "status")
        let without = sessions.map { s in (id: s.id, cells: s.cells.filter { $0.item != "q3" && $0.item != "q5" }) }
        let expected = try BatchFixtures.run(
            reference, [try files.write("less.csv", BatchFixtures.longContiguous(without))], in: files, name: "reference")
        #expect(
            full.scoreLines.first
                == (BatchFixtures.scoreColumns + [
                    "n_unscored", "logic_correct", "logic_answered", "pattern_correct", "pattern_answered", "spatial_correct", "spatial_answered"
                ]).joined(separator: ","))
        #expect(full.report.sessionsScored == 20 && expected.report.sessionsScored == 20)
        for (row, ref) in zip(full.scoreRows, expected.scoreRows) {
            #expect(Array(row[0..<12]) == Array(ref[0..<12]), "θ, SE, IQ and flags as without the items")
            #expect(Array(row[13...]) == Array(ref[12...]), "domain counts as without the items")
        }
        let unscored = sessions.map { s in s.cells.filter { $0.item == "q3" || $0.item == "q5" }.count }
        #expect(full.scoreRows.map { Int($0[12])! } == unscored)
        // The server entry point agrees, and a session of only unscored items is rejected with that reason.
        let one = try withStatus.score(itemIDs: ["q1", "q3", "q5", "q6"], responses: [1, 0, 1, 1])
        let oneRef = try reference.score(itemIDs: ["q1", "q6"], responses: [1, 1])
        #expect(one.estimate == oneRef.estimate && one.score == oneRef.score && one.unscoredCount == 2)
        #expect(throws: PsychometricsError(.unscorable, "the session answered only items the bank does not score (2 pretest or retired)")) {
            try withStatus.score(itemIDs: ["q3", "q5"], responses: [1, 0])
        }
    }

    @Test("a status other than active, pretest or retired is a located bank error; a bank without unscored items keeps its columns")
    func statusValues() throws {
        let files = try CSVFixtures()
        let path = try files.write("B.csv", "item_id,a,b,status\nq1,1,0,active\nq2,1,0,pilot\n")
        do {
            _ = try ItemBank.load(csv: path)
            Issue.record("no error")
        } catch {
            #expect("\(error)" == "\(path):3:4: error: item 'q2': status 'pilot' is not one of active, pretest, retired")
        }
        let plain = try SessionScorer(
            bank: try ItemBank.load(csv: try files.write("P.csv", "item_id,a,b,status\nq1,1,0,active\nq2,1,0,\n")), scale: IQScale())
        #expect(!plain.hasUnscoredItems)
        #expect(BatchScorer(scorer: plain).header == BatchFixtures.scoreColumns.joined(separator: ",") + "\n")
    }
}
