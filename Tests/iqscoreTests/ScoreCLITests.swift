import Foundation
import Testing
import TestSupport

// End-to-end tests of `iqscore score`: the real binary (located by `IQScoreCLI`, CLITests.swift) runs in a fresh
// `CLIWorkspace`; exit status, stderr, the score file and the rejects file are checked exactly.

extension CLIWorkspace {
    /// An RFC 4180 CSV file (quoted fields with commas and `""` escapes) as rows of fields, header first.
    func csvRecords(_ name: String) throws -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false, afterQuote = false
        for ch in try read(name) {
            if quoted {
                if ch == "\"" { quoted = false; afterQuote = true } else { field.append(ch) }
                continue
            }
            switch ch {
            case "\"":
                if afterQuote { field.append("\"") }
                quoted = true
            case ",": row.append(field); field = ""
            case "\n": row.append(field); rows.append(row); row = []; field = ""
            default: field.append(ch)
            }
            afterQuote = false
        }
        if !field.isEmpty || !row.isEmpty { row.append(field); rows.append(row) }
        return rows
    }
}

/// The text `ScoreCommand.summary` writes to stderr, rebuilt from the counts (the first line holds timings and
/// is checked with a regex).
enum ScoreSummary {
    static let flagOrder = [
        "clamped_low", "clamped_high", "low_precision", "perfect_score", "zero_score", "few_items", "theta_at_bound", "age_outside_norms"
    ]

    static func count(_ n: Int) -> String {
        var out = ""
        for (k, ch) in String(n).reversed().enumerated() {
            if k > 0 && k % 3 == 0 && ch != "-" { out.append(",") }
            out.append(ch)
        }
        return String(out.reversed())
    }

    /// `read N sessions (R rows, X MB) from F file(s) in S s (… sessions/s, … MB/s)` with any timings.
    static func firstLine(sessions: Int, rows: Int, files: Int) -> Regex<Substring> {
        let text = "iqscore score: read \(count(sessions)) session\(sessions == 1 ? "" : "s") (\(count(rows)) row\(rows == 1 ? "" : "s"), "
        let tail = " from \(files) file\(files == 1 ? "" : "s") in "
        return try! Regex(
            "^" + NSRegularExpression.escapedPattern(for: text) + #"[0-9]+\.[0-9] MB\)"#
                + NSRegularExpression.escapedPattern(for: tail) + #"[0-9]+\.[0-9]{2} s \([0-9,]+ sessions/s, [0-9]+\.[0-9] MB/s\)$"#,
            as: Substring.self)
    }

    static func methodLine(_ method: String) -> String {
        let norms = "; norms calibration-population@1 (θ mean 0, SD 1); 95% intervals"
        switch method {
        case "eap": return "method EAP (prior N(0, 1²), 61 points on [-6, 6])" + norms
        case "map": return "method MAP (prior N(0, 1²))" + norms
        default: return "method \(method.uppercased())" + norms
        }
    }

    /// Flag counts in `ScoreFlag` order from the flags column (`;`-separated) of score rows.
    static func flagsLine(_ flagCells: [String]) -> String? {
        var counts: [String: Int] = [:]
        for cell in flagCells where !cell.isEmpty {
            for flag in cell.split(separator: ";") { counts[String(flag), default: 0] += 1 }
        }
        let parts = flagOrder.compactMap { f in counts[f].map { "\(f) \(count($0))" } }
        return parts.isEmpty ? nil : "flags: " + parts.joined(separator: ", ")
    }

    /// Every line after the first (and the empty string after the final newline).
    static func tail(
        scored: Int, rejected: Int, notAdministered: Int = 0, out: String, rejects: String, manifest: String? = nil, blank: Int = 0,
        regrouped: Bool = false, method: String = "eap", flagCells: [String]
    ) -> [String] {
        var lines = [
            "scored \(count(scored)), " + (notAdministered > 0 ? "not administered \(count(notAdministered)) (no responses), " : "")
                + "rejected \(count(rejected))" + (rejected + notAdministered > 0 ? " (see \(rejects))" : "")
        ]
        if blank > 0 { lines.append("\(count(blank)) rows with an empty response were treated as not administered") }
        if regrouped { lines.append("note: rows of some sessions were not contiguous; the input was regrouped in memory") }
        lines.append(methodLine(method))
        if let flags = flagsLine(flagCells) { lines.append(flags) }
        let manifest =
            manifest ?? (out.hasSuffix(".csv") || out.hasSuffix(".jsonl") ? String(out[..<out.lastIndex(of: ".")!]) : out) + ".summary.json"
        lines.append("wrote \(out) and \(rejects), manifest \(manifest)")
        return lines + [""]
    }
}

@Suite("iqscore score end to end", .timeLimit(.minutes(10)))
struct ScoreCLITests {
    static let scoreHeader = "session_id,n_items,n_correct,theta,se,iq,iq_low,iq_high,percentile,method,flags,norms"
    static let domainHeader = "logic_correct,logic_answered,pattern_correct,pattern_answered,spatial_correct,spatial_answered"
    static let rejectHeader = "session_id,file,line,column,reason"
    static let allowed = "1, 0, true, false, t, f, or empty/NA for not administered"

    static let bank = SixItemBank.csv

    static let bankWithoutDomain = "item_id,a,b,c\nq1,1.2,-1.0,0\nq2,0.8,-0.5,0\nq3,1.5,0.0,0\nq4,1.0,0.5,0\nq5,1.3,1.0,0.2\nq6,0.9,1.5,0\n"

    /// Long layout, contiguous: session k answers item j unless (k + j) % 5 == 0; response 1 when
    /// (7k + 3j) % 4 < 2.
    static func sessions(_ count: Int) -> (text: String, ids: [String], rows: Int) {
        var text = "session_id,item_id,response\n", ids: [String] = [], rows = 0
        for k in 1...count {
            let id = String(format: "p%02d", k)
            ids.append(id)
            for j in 1...6 where (k + j) % 5 != 0 {
                text += "\(id),q\(j),\((7 * k + 3 * j) % 4 < 2 ? 1 : 0)\n"
                rows += 1
            }
        }
        return (text, ids, rows)
    }

    @Test("every session scored: exit 0, exact header with domain columns, input order, a header-only rejects file")
    func allScored() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        let (text, ids, rowCount) = Self.sessions(8)
        try ws.write("sessions.csv", text)
        let r = try ws.run("score", "sessions.csv", "--bank", "BANK.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let rows = try ws.csvRows("scores.csv")
        #expect(rows.first?.joined(separator: ",") == Self.scoreHeader + "," + Self.domainHeader)
        #expect(rows.dropFirst().map { $0[0] } == ids)
        #expect(rows.dropFirst().allSatisfy { $0.count == 18 && $0[9] == "eap" && $0[11] == "calibration-population@1" })
        #expect(try ws.read("scores.rejects.csv") == Self.rejectHeader + "\n")
        #expect(try ws.contents() == ["BANK.csv", "sessions.csv", "scores.csv", "scores.rejects.csv", "scores.summary.json"])

        let lines = r.stderrLines
        #expect(lines.first?.wholeMatch(of: ScoreSummary.firstLine(sessions: 8, rows: rowCount, files: 1)) != nil, "\(lines.first ?? "")")
        #expect(
            Array(lines.dropFirst())
                == ScoreSummary.tail(
                    scored: 8, rejected: 0, out: "scores.csv", rejects: "scores.rejects.csv",
                    flagCells: rows.dropFirst().map { $0[10] }))

        // Without a domain column: exactly the core columns; an explicit --rejects path.
        try ws.write("PLAIN.csv", Self.bankWithoutDomain)
        let plain = try ws.run("score", "sessions.csv", "--bank", "PLAIN.csv", "--out", "plain", "--rejects", "r.csv")
        #expect(plain.status == 0, "\(plain.stderr)")
        let plainRows = try ws.csvRows("plain")
        #expect(plainRows.first?.joined(separator: ",") == Self.scoreHeader)
        #expect(plainRows.dropFirst().map { $0[0] } == ids)
        #expect(plainRows.dropFirst().allSatisfy { $0.count == 12 })
        // The same items and parameters: the same scores, less the domain columns.
        #expect(plainRows.dropFirst().map { $0 } == rows.dropFirst().map { Array($0.prefix(12)) })
        #expect(try ws.read("r.csv") == Self.rejectHeader + "\n")
        #expect(plain.stderrLines.last(where: { !$0.isEmpty }) == "wrote plain and r.csv, manifest plain.summary.json")
    }

    @Test("a bank from mirt (row names, slope–intercept a1,d,g,u) scores as the native bank, with a note saying how it was read")
    func mirtBank() throws {
        let ws = try CLIWorkspace()
        try ws.write("PLAIN.csv", Self.bankWithoutDomain)
        // write.csv(coef(mod, simplify = TRUE)$items) of the same items: d = −ab.
        try ws.write(
            "MIRT.csv",
            "\"\",\"a1\",\"d\",\"g\",\"u\"\n\"q1\",1.2,1.2,0,1\n\"q2\",0.8,0.4,0,1\n\"q3\",1.5,0,0,1\n\"q4\",1,-0.5,0,1\n\"q5\",1.3,-1.3,0.2,1\n\"q6\",0.9,-1.35,0,1\n"
        )
        try ws.write("sessions.csv", Self.sessions(8).text)
        let plain = try ws.run("score", "sessions.csv", "--bank", "PLAIN.csv", "--out", "plain.csv")
        let mirt = try ws.run("score", "sessions.csv", "--bank", "MIRT.csv", "--out", "mirt.csv")
        #expect(plain.status == 0 && mirt.status == 0, "\(mirt.stderr)")
        #expect(try ws.read("mirt.csv") == ws.read("plain.csv"))
        #expect(
            mirt.stderrLines.first
                == "note: MIRT.csv: read as mirt slope–intercept (a1, d, g, u): b = −d/a1; c = g; u (upper asymptote) must be 1; item ids from the unnamed first column"
        )
        #expect(!plain.stderr.contains("note:"))
    }

    /// Rows with every kind of rejection (the session column second, so a one-field row has no session id).
    static let rejectionInput = """
        item_id,session_id,response
        q1,ok1,1
        q2,ok1,0
        q3,ok1,1
        q1,unk,1
        qX,unk,1
        q1,two,2
        q1,yes,yes
        q2,dup,1
        q4,dup,0
        q2,dup,0
        q1,short
        q1
        q1,blank,
        q2,blank,NA
        q5,ok2,1
        q6,ok2,0

        """

    @Test("some sessions rejected: exit 2, the summary on stderr, exact rejects rows")
    func someRejected() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("sessions.csv", Self.rejectionInput)
        let r = try ws.run("score", "sessions.csv", "--bank", "BANK.csv", "--out", "scores.csv")
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let scores = try ws.csvRows("scores.csv")
        #expect(scores.dropFirst().map { $0[0] } == ["ok1", "ok2"])
        let lines = r.stderrLines
        #expect(lines.first?.wholeMatch(of: ScoreSummary.firstLine(sessions: 9, rows: 16, files: 1)) != nil, "\(lines.first ?? "")")
        #expect(
            Array(lines.dropFirst())
                == ScoreSummary.tail(
                    scored: 2, rejected: 6, notAdministered: 1, out: "scores.csv", rejects: "scores.rejects.csv",
                    blank: 2, flagCells: scores.dropFirst().map { $0[10] }))
        #expect(try ws.csvRows("scores.rejects.csv").count == 8)
        #expect(
            try ws.csvRecords("scores.rejects.csv") == [
                ["session_id", "file", "line", "column", "reason"],
                ["unk", "sessions.csv", "6", "1", "unknown item id 'qX' (not in the bank)"],
                ["two", "sessions.csv", "7", "3", "response '2' is not a response; allowed: \(Self.allowed)"],
                ["yes", "sessions.csv", "8", "3", "response 'yes' is not a response; allowed: \(Self.allowed)"],
                ["dup", "sessions.csv", "11", "1", "item 'q2' answered twice in the session (first on line 9)"],
                ["short", "sessions.csv", "12", "2", "malformed row: expected 3 fields as in the header, found 2"],
                ["", "sessions.csv", "13", "1", "malformed row: expected 3 fields as in the header, found 1; no session id"],
                ["blank", "sessions.csv", "14", "", "not administered: the session has no responses"]
            ])
        #expect(try ws.contents() == ["BANK.csv", "sessions.csv", "scores.csv", "scores.rejects.csv", "scores.summary.json"])

        // Interleaved (ok1 comes back at the end): regrouped, the note on stderr, the same rejects.
        try ws.write("mixed.csv", Self.rejectionInput + "q4,ok1,1\n")
        let mixed = try ws.run("score", "mixed.csv", "--bank", "BANK.csv", "--out", "mixed.csv.out", "--rejects", "mixed-rejects.csv")
        #expect(mixed.status == 2, "\(mixed.stderr)")
        let mixedScores = try ws.csvRows("mixed.csv.out")
        #expect(mixedScores.dropFirst().map { $0[0] } == ["ok1", "ok2"])
        #expect(
            Array(mixed.stderrLines.dropFirst())
                == ScoreSummary.tail(
                    scored: 2, rejected: 6, notAdministered: 1, out: "mixed.csv.out", rejects: "mixed-rejects.csv", blank: 2, regrouped: true,
                    flagCells: mixedScores.dropFirst().map { $0[10] }))
        #expect(
            try ws.csvRecords("mixed-rejects.csv").map { $0[0] + "|" + $0[2...].joined(separator: "|") }
                == (try ws.csvRecords("scores.rejects.csv")).map { $0[0] + "|" + $0[2...].joined(separator: "|") })
    }

    /// A fatal input: the files to write, the arguments after `score`, and the exact stderr.
    struct FatalCase: Sendable, CustomTestStringConvertible {
        var name: String
        var files: [String: String]
        var arguments: [String]
        var stderr: String
        var testDescription: String { name }
    }

    static let goodSessions = "session_id,item_id,response\ns1,q1,1\ns1,q2,0\ns2,q3,1\n"

    static let fatalCases: [FatalCase] = [
        FatalCase(
            name: "a bank with a bad number",
            files: ["BANK.csv": "item_id,a,b\nq1,1.0,0\nq2,abc,0\nq3,1,0.5\n", "s.csv": goodSessions],
            arguments: ["s.csv", "--bank", "BANK.csv", "--out", "scores.csv"],
            stderr: "BANK.csv:3:2: error: item 'q2': a 'abc' is not a number\n"),
        FatalCase(
            name: "a bank without a b column",
            files: ["BANK.csv": "item_id,a\nq1,1.0\n", "s.csv": goodSessions],
            arguments: ["s.csv", "--bank", "BANK.csv", "--out", "scores.csv"],
            stderr:
                "BANK.csv:1: error: the bank header has no difficulty column (found: item_id,a); name it b (or give mirt's intercept as a1,d; thresholds of items in more than two categories as b1, b2, …)\n"
        ),
        FatalCase(
            name: "a missing session file",
            files: ["BANK.csv": bankWithoutDomain],
            arguments: ["missing.csv", "--bank", "BANK.csv", "--out", "scores.csv"],
            stderr: "missing.csv: error: cannot open file: No such file or directory\n"),
        FatalCase(
            name: "a missing second session file (the first one already scored)",
            files: ["BANK.csv": bankWithoutDomain, "s.csv": goodSessions],
            arguments: ["s.csv", "missing.csv", "--bank", "BANK.csv", "--out", "scores.csv"],
            stderr: "missing.csv: error: cannot open file: No such file or directory\n"),
        FatalCase(
            name: "norms with sd 0",
            files: [
                "BANK.csv": bankWithoutDomain, "s.csv": goodSessions,
                "norms.json": #"{"name": "adults", "version": "2024", "mean": 0.1, "sd": 0}"#
            ],
            arguments: ["s.csv", "--bank", "BANK.csv", "--norms", "norms.json", "--out", "scores.csv"],
            stderr: "norms.json: error: norms sd must be in [0.01, 10], got 0.0\n"),
        FatalCase(
            name: "norms missing a key",
            files: [
                "BANK.csv": bankWithoutDomain, "s.csv": goodSessions,
                "norms.json": #"{"name": "adults", "version": "2024", "mean": 0.1}"#
            ],
            arguments: ["s.csv", "--bank", "BANK.csv", "--norms", "norms.json", "--out", "scores.csv"],
            stderr: #"norms.json: error: norms JSON lacks "sd"; expected {"name", "version", "mean", "sd"}"# + "\n")
    ]

    @Test("a fatal bad input: exit 1, the exact error, no scores, rejects or temporary files", arguments: fatalCases)
    func fatalInput(_ c: FatalCase) throws {
        let ws = try CLIWorkspace()
        for (name, text) in c.files { try ws.write(name, text) }
        let r = try IQScoreCLI.run(["score"] + c.arguments, in: ws.directory)
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == c.stderr)
        #expect(try ws.contents() == Set(c.files.keys), "nothing may be left behind")
    }

    @Test("an invalid option (--confidence 1.5) is a usage error: exit 64 with the validation message")
    func invalidOption() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("s.csv", Self.goodSessions)
        let r = try ws.run("score", "s.csv", "--bank", "BANK.csv", "--confidence", "1.5", "--out", "scores.csv")
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("--confidence must be in (0, 0.9999999999], got 1.5"))
        #expect(try ws.contents() == ["BANK.csv", "s.csv"])
    }

    @Test("--format jsonl: every line is a JSON object with the CSV file's values; default rejects beside it")
    func jsonLines() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        let (text, ids, _) = Self.sessions(6)
        try ws.write("sessions.csv", text)
        let csv = try ws.run("score", "sessions.csv", "--bank", "BANK.csv", "--out", "scores.csv", "--rejects", "csv-rejects.csv")
        #expect(csv.status == 0, "\(csv.stderr)")
        let json = try ws.run("score", "sessions.csv", "--bank", "BANK.csv", "--out", "scores.jsonl", "--format", "jsonl")
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stderrLines.last(where: { !$0.isEmpty }) == "wrote scores.jsonl and scores.rejects.csv, manifest scores.summary.json")
        #expect(try ws.read("scores.rejects.csv") == Self.rejectHeader + "\n")
        let rows = try ws.csvRows("scores.csv")
        let header = try #require(rows.first)
        let lines = try ws.read("scores.jsonl").split(separator: "\n")
        #expect(lines.count == ids.count)
        for (line, row) in zip(lines, rows.dropFirst()) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(Set(object.keys) == Set(header.prefix(12) + ["domains"]))
            #expect(object["session_id"] as? String == row[0])
            for (k, key) in [(1, "n_items"), (2, "n_correct"), (5, "iq"), (6, "iq_low"), (7, "iq_high")] {
                #expect(object[key] as? Int == Int(row[k]), "\(key)")
            }
            for (k, key) in [(3, "theta"), (4, "se"), (8, "percentile")] {
                #expect(object[key] as? Double == Double(row[k]), "\(key)")
            }
            #expect(object["method"] as? String == "eap")
            #expect((object["flags"] as? [String])?.joined(separator: ";") == row[10])
            #expect(object["norms"] as? String == row[11])
            let domains = try #require(object["domains"] as? [String: [String: Int]])
            for (d, name) in ["logic", "pattern", "spatial"].enumerated() {
                #expect(domains[name] == ["correct": Int(row[12 + 2 * d])!, "answered": Int(row[13 + 2 * d])!])
            }
        }
    }

    @Test("--method ml, map and wle run and the method column says so")
    func methods() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        let (text, ids, rowCount) = Self.sessions(5)
        try ws.write("sessions.csv", text)
        var thetas: [String: [String]] = [:]
        for method in ["ml", "map", "wle"] {
            let r = try ws.run("score", "sessions.csv", "--bank", "BANK.csv", "--method", method, "--out", "\(method).csv")
            #expect(r.status == 0, "\(r.stderr)")
            let rows = try ws.csvRows("\(method).csv")
            #expect(rows.dropFirst().map { $0[0] } == ids)
            #expect(rows.dropFirst().allSatisfy { $0[9] == method }, "\(method)")
            thetas[method] = rows.dropFirst().map { $0[3] }
            #expect(r.stderrLines.first?.wholeMatch(of: ScoreSummary.firstLine(sessions: 5, rows: rowCount, files: 1)) != nil)
            #expect(
                Array(r.stderrLines.dropFirst())
                    == ScoreSummary.tail(
                        scored: 5, rejected: 0, out: "\(method).csv",
                        rejects: "\(method).rejects.csv", method: method,
                        flagCells: rows.dropFirst().map { $0[10] }))
        }
        #expect(thetas["ml"] != thetas["map"] && thetas["map"] != thetas["wle"])
    }

    @Test("ICAR16: calibrate (2PL, --items) then score: 1,509 scored + 16 rejected = 1,525 read, exit 2")
    func icar16() throws {
        let ws = try CLIWorkspace()
        let data = Repository.file("Data/icar16.csv").path
        let items = Repository.file("Data/icar16_items.csv").path
        let cal = try ws.run("calibrate", data, "--model", "2pl", "--items", items, "--out", "BANK.csv")
        #expect(cal.status == 0, "\(cal.stderr)")
        // The 16 empty rows are not administered: exit 0 (issue 26, item 9: was 2, which stopped `set -e` scripts).
        let r = try ws.run("score", data, "--bank", "BANK.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let scores = try ws.csvRows("scores.csv")
        #expect(scores.first?.joined(separator: ",") == Self.scoreHeader + "," + Self.domainHeader)
        #expect(scores.count == 1 + 1509)
        let rejects = try ws.csvRecords("scores.rejects.csv")
        #expect(rejects.count == 1 + 16)
        #expect(rejects.dropFirst().allSatisfy { $0[1] == data && $0[3] == "" && $0[4] == "not administered: the session has no responses" })
        // Persons are numbered by data row: the id is the line number − 1.
        #expect(rejects.dropFirst().allSatisfy { Int($0[2]) == Int($0[0]).map { $0 + 1 } })
        let all = scores.dropFirst().map { $0[0] } + rejects.dropFirst().map { $0[0] }
        #expect(all.sorted() == (1...1525).map(String.init).sorted())
        #expect(scores.dropFirst().map { Int($0[0])! } == scores.dropFirst().map { Int($0[0])! }.sorted())
        #expect(
            r.stderrLines.first?.wholeMatch(of: ScoreSummary.firstLine(sessions: 1525, rows: 1525, files: 1)) != nil, "\(r.stderrLines.first ?? "")")
        #expect(
            Array(r.stderrLines.dropFirst())
                == ScoreSummary.tail(
                    scored: 1509, rejected: 0, notAdministered: 16, out: "scores.csv", rejects: "scores.rejects.csv",
                    flagCells: scores.dropFirst().map { $0[10] }))
        // The rejected rows of the data file have no answers at all.
        let dataLines = try String(contentsOfFile: data, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        for reject in rejects.dropFirst() {
            let line = dataLines[Int(reject[2])! - 1]
            #expect(line.split(separator: ",", omittingEmptySubsequences: false).allSatisfy { $0.isEmpty || $0 == "NA" }, "\(line)")
        }
        // --strict counts them as rejected; the manifest counts them apart either way.
        let strict = try ws.run("score", data, "--bank", "BANK.csv", "--out", "strict.csv", "--strict")
        #expect(strict.status == 2, "\(strict.stderr)")
        let manifest = try JSONSerialization.jsonObject(with: Data(try ws.read("strict.summary.json").utf8)) as! [String: Any]
        #expect(manifest["sessions_not_administered"] as? Int == 16 && manifest["sessions_rejected"] as? Int == 0)
    }
}
