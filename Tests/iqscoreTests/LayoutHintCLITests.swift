import Foundation
import Testing
import TestSupport

// Issue 15, item 3: a file misread because of its layout, id column, delimiter or cells says which options would
// read it; a score run that scores no session exits 1 and writes nothing; the options named do read the file.

@Suite("Layout hints: misread files name the options that read them")
struct LayoutHintCLITests {
    static let bank = "item_id,a,b,c\nq1,1.2,-1.0,0\nq2,0.8,-0.5,0\nq3,1.5,0.0,0\n"
    static let notAResponse = "is not a response; allowed: 1, 0, true, false, t, f, or empty/NA for not administered"

    /// The app's export: long, with its own column names.
    static let long = "test_session_id,question_id,is_correct\ns1,q1,1\ns1,q2,0\ns1,q3,1\ns2,q1,0\ns2,q2,0\ns2,q3,1\n"
    static let longHint =
        "hint: the file looks long (one row per response: session 'test_session_id', item 'question_id', response 'is_correct') but was read as wide; read it with --session-column test_session_id --item-column question_id --response-column is_correct"
    static let wideUID = "uid,q1,q2,q3\nu1,1,0,1\nu2,0,0,1\n"
    static let uidHint = "hint: the first column 'uid' holds ids, not responses: read it with --session-column uid"
    static let semicolon = "session_id;q1;q2;q3\nu1;1;0;1\nu2;0;0;1\n"
    static let semicolonHint =
        "hint: the header is 1 field but holds 3 ';' separators: the file looks ';'-separated (4 columns); read it with --delimiter ';'"
    static let polytomous = "session_id,q1,q2,q3\nu1,1,2,1\nu2,0,3,1\n"
    static let polytomousHint =
        "hint: response cells hold whole numbers up to 3: scores in more than two categories, which calibrate reads with --model graded, gpcm, pcm, rsm or nominal; for right/wrong items recode them to 1 = correct, 0 = incorrect"
    static let letters = "session_id,q1,q2,q3\nu1,A,C,B\nu2,B,D,A\n"
    static let lettersHint =
        "hint: response cells hold option letters (A, B, C, D): score reads them against the bank's answer keys (a key column of letters is used as it is; --key-column COLUMN names another), or recode them to 1 = the key, 0 = another option; iqscore analyze --options reads raw choices for distractor analysis"

    @Test(
        "score: every session rejected is exit 1, nothing written, the first reasons and the hint on stderr",
        arguments: [
            (
                "long.csv", long,
                [
                    "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
                    "long.csv:2:2: rejected session 's1': column 'question_id': 'q1' \(notAResponse)",
                    "long.csv:5:2: rejected session 's2': column 'question_id': 'q1' \(notAResponse)",
                    longHint
                ]
            ),
            (
                "uid.csv", wideUID,
                [
                    "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
                    "uid.csv:2:1: rejected session '1': column 'uid': 'u1' \(notAResponse)",
                    "uid.csv:3:1: rejected session '2': column 'uid': 'u2' \(notAResponse)",
                    uidHint
                ]
            ),
            (
                "semi.csv", semicolon,
                [
                    "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
                    "semi.csv:2:1: rejected session '1': column 'session_id;q1;q2;q3': 'u1;1;0;1' \(notAResponse)",
                    "semi.csv:3:1: rejected session '2': column 'session_id;q1;q2;q3': 'u2;0;0;1' \(notAResponse)",
                    semicolonHint
                ]
            ),
            (
                "poly.csv", polytomous,
                [
                    "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
                    "poly.csv:2:3: rejected session 'u1': column 'q2': '2' \(notAResponse)",
                    "poly.csv:3:3: rejected session 'u2': column 'q2': '3' \(notAResponse)",
                    polytomousHint
                ]
            ),
            (
                "letters.csv", letters,
                [
                    "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
                    "letters.csv:2:2: rejected session 'u1': column 'q1': 'A' \(notAResponse)",
                    "letters.csv:3:2: rejected session 'u2': column 'q1': 'B' \(notAResponse)",
                    lettersHint
                ]
            )
        ])
    func scoreHints(_ name: String, _ text: String, _ expected: [String]) throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write(name, text)
        let r = try ws.run("score", name, "--bank", "BANK.csv", "--out", "scores.csv")
        #expect(r.status == 1)
        #expect(r.stderr == expected.joined(separator: "\n") + "\n")
        #expect(try ws.contents() == ["BANK.csv", name])
    }

    @Test("calibrate: the located error and the same hint")
    func calibrateHints() throws {
        let ws = try CLIWorkspace()
        for (name, text, hint) in [
            ("long.csv", Self.long, Self.longHint), ("uid.csv", Self.wideUID, Self.uidHint),
            ("semi.csv", Self.semicolon, Self.semicolonHint), ("poly.csv", Self.polytomous, Self.polytomousHint)
        ] {
            try ws.write(name, text)
            let r = try ws.run("calibrate", name, "--model", "2PL", "--out", "bank.csv")
            #expect(r.status == 1)
            #expect(r.stderrLines.dropLast().last == hint, "\(r.stderr)")
            #expect(r.stderr.hasPrefix("\(name):"), "\(r.stderr)")
            #expect(!ws.exists("bank.csv"))
        }
    }

    @Test("the options a hint names read the file: the same scores as the comma-separated wide file")
    func hintedOptionsRead() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("wide.csv", "session_id,q1,q2,q3\ns1,1,0,1\ns2,0,0,1\n")
        try ws.write("long.csv", Self.long)
        try ws.write("semi.csv", "session_id;q1;q2;q3\ns1;1;0;1\ns2;0;0;1\n")
        try ws.write("tab.tsv", "session_id\tq1\tq2\tq3\ns1\t1\t0\t1\ns2\t0\t0\t1\n")
        try ws.write("uid.csv", "uid,q1,q2,q3\ns1,1,0,1\ns2,0,0,1\n")
        let runs = [
            try ws.run("score", "wide.csv", "--bank", "BANK.csv", "--out", "wide.out"),
            try ws.run(
                "score", "long.csv", "--bank", "BANK.csv", "--out", "long.out", "--session-column", "test_session_id", "--item-column", "question_id",
                "--response-column", "is_correct"),
            try ws.run("score", "semi.csv", "--bank", "BANK.csv", "--out", "semi.out", "--delimiter", ";"),
            try ws.run("score", "tab.tsv", "--bank", "BANK.csv", "--out", "tab.out", "--delimiter", "tab"),
            try ws.run("score", "uid.csv", "--bank", "BANK.csv", "--out", "uid.out", "--session-column", "uid")
        ]
        #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.map(\.stderr))")
        let wide = try ws.read("wide.out")
        #expect(wide.split(separator: "\n").count == 3)
        for name in ["long.out", "semi.out", "tab.out", "uid.out"] { #expect(try ws.read(name) == wide, "\(name)") }
        // A quoted field may hold the delimiter.
        try ws.write("quoted.csv", "session_id;q1;q2;q3\n\"s;1\";1;0;1\n")
        let quoted = try ws.run("score", "quoted.csv", "--bank", "BANK.csv", "--out", "quoted.out", "--delimiter", ";")
        #expect(quoted.status == 0)
        #expect(try ws.csvRows("quoted.out").dropFirst().first?.first == "s;1")
    }

    @Test("a hint on a partly rejected run; an empty input is exit 1; --delimiter outside the four is a usage error")
    func partlyAndEmpty() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("mixed.csv", "session_id,q1,q2,q3\nu1,1,0,1\nu2,0,2,1\n")
        let mixed = try ws.run("score", "mixed.csv", "--bank", "BANK.csv", "--out", "mixed.out")
        #expect(mixed.status == 2)
        #expect(
            mixed.stderrLines.dropLast().last
                == "hint: response cells hold whole numbers up to 2: scores in more than two categories, which calibrate reads with --model graded, gpcm, pcm, rsm or nominal; for right/wrong items recode them to 1 = correct, 0 = incorrect"
        )
        try ws.write("empty.csv", "session_id,q1,q2,q3\n")
        let empty = try ws.run("score", "empty.csv", "--bank", "BANK.csv", "--out", "empty.out")
        #expect(empty.status == 1)
        #expect(empty.stderr == "error: no session was scored: the input holds no sessions (0 data rows); nothing was written\n")
        #expect(!ws.exists("empty.out"))
        let bad = try ws.run("score", "mixed.csv", "--bank", "BANK.csv", "--out", "x.out", "--delimiter", ";;")
        #expect(bad.status == 64)
        #expect(bad.stderrLines.first == "Error: --delimiter must be ',', ';', tab or '|', got ';;'")
    }

    @Test(
        "R's write.csv2 (quoted header, ';'): score hints --delimiter ';' (was a bare syntax error); a ';' bank with decimal commas is read, with a note (issue 26, item 5)"
    )
    func writeCSV2() throws {
        let ws = try CLIWorkspace()
        // write.csv2(data, row.names = FALSE): quoted header, ';' separator.
        try ws.write("r.csv", "\"session_id\";\"q1\";\"q2\";\"q3\"\n\"u1\";1;0;1\n\"u2\";0;0;1\n")
        try ws.write("BANK.csv", Self.bank)
        let r = try ws.run("score", "r.csv", "--bank", "BANK.csv", "--out", "r.out")
        #expect(r.status == 1)
        #expect(
            r.stderrLines.dropLast().last
                == "hint: the header holds 3 ';' separators outside its quotes and no ',': the file looks ';'-separated (4 columns), as R's write.csv2 and Excel in European locales write it; read it with --delimiter ';'",
            "\(r.stderr)")
        let fixed = try ws.run("score", "r.csv", "--bank", "BANK.csv", "--out", "r.out", "--delimiter", ";")
        #expect(fixed.status == 0, "\(fixed.stderr)")
        // The bank as write.csv2 writes it: ';' and decimal commas. Read as the comma bank, with a note.
        try ws.write("bank2.csv", "\"item_id\";\"a\";\"b\";\"c\"\n\"q1\";1,2;-1;0\n\"q2\";0,8;-0,5;0\n\"q3\";1,5;0;0\n")
        let semi = try ws.run("score", "r.csv", "--bank", "bank2.csv", "--out", "semi.out", "--delimiter", ";")
        #expect(semi.status == 0, "\(semi.stderr)")
        #expect(
            semi.stderrLines.first
                == "note: bank2.csv: read as iqscore (item_id, a, b, c): fields separated by ';' with decimal commas (1,25 = 1.25) as R's write.csv2 writes them"
        )
        #expect(try ws.read("semi.out") == (try ws.read("r.out")))
        // A tab-separated bank too (no decimal commas).
        try ws.write("bank3.tsv", "item_id\ta\tb\tc\nq1\t1.2\t-1.0\t0\nq2\t0.8\t-0.5\t0\nq3\t1.5\t0.0\t0\n")
        let tab = try ws.run("score", "r.csv", "--bank", "bank3.tsv", "--out", "tab.out", "--delimiter", ";")
        #expect(tab.status == 0, "\(tab.stderr)")
        #expect(try ws.read("tab.out") == (try ws.read("r.out")))
    }

    @Test("extra columns in a wide file: a hint naming them (age pointed at --age-column), and --ignore-columns reads the file (issue 26, item 8)")
    func extraColumns() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("plain.csv", "session_id,q1,q2,q3\nu1,1,0,1\nu2,0,0,1\nu3,1,1,1\n")
        try ws.write("extra.csv", "session_id,sex,q1,q2,age,q3\nu1,F,1,0,34,1\nu2,M,0,0,51,1\nu3,F,1,1,29,1\n")
        let r = try ws.run("score", "extra.csv", "--bank", "BANK.csv", "--out", "x.out")
        #expect(r.status == 1)
        #expect(
            r.stderrLines.dropLast().last
                == "hint: columns 'sex', 'age' are not items of the bank: leave it out with --ignore-columns sex; read ages from 'age' with --age-column age (score, norms build) or leave it out with --ignore-columns age",
            "\(r.stderr)")
        var ok = try ws.run("score", "plain.csv", "--bank", "BANK.csv", "--out", "plain.out")
        #expect(ok.status == 0)
        ok = try ws.run("score", "extra.csv", "--bank", "BANK.csv", "--out", "ignored.out", "--ignore-columns", "sex,age")
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try ws.read("ignored.out") == (try ws.read("plain.out")))
        ok = try ws.run("score", "extra.csv", "--bank", "BANK.csv", "--out", "aged.out", "--ignore-columns", "sex", "--age-column", "age")
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try ws.csvRows("aged.out").dropFirst().map { $0[12] } == ["34", "51", "29"])
        // calibrate and analyze read the same option (their wide reader).
        try ws.write(
            "many.csv",
            "id,sex,q1,q2,q3\n"
                + (1...60).map { "p\($0),\($0 % 2 == 0 ? "female" : "male"),\($0 % 3 == 0 ? 1 : 0),\($0 % 2),\($0 % 5 < 3 ? 1 : 0)" }.joined(
                    separator: "\n") + "\n")
        let cal = try ws.run("calibrate", "many.csv", "--model", "rasch", "--out", "cal.csv", "--ignore-columns", "sex")
        #expect(cal.status == 0 || cal.status == 3, "\(cal.stderr)")
        #expect(try ws.csvRows("cal.csv").dropFirst().map { $0[0] } == ["q1", "q2", "q3"])
        let calibrateHint = try ws.run("calibrate", "many.csv", "--model", "rasch", "--out", "cal2.csv")
        #expect(calibrateHint.status == 1)
        #expect(
            calibrateHint.stderrLines.dropLast().last == "hint: column 'sex' is not responses: leave it out with --ignore-columns sex",
            "\(calibrateHint.stderr)")
        // A name the header lacks is an error, not a silent no-op.
        let typo = try ws.run("score", "extra.csv", "--bank", "BANK.csv", "--out", "t.out", "--ignore-columns", "gender")
        #expect(typo.status == 1)
        #expect(
            typo.stderr.contains("--ignore-columns names 'gender', which the header lacks (found: session_id,sex,q1,q2,age,q3)"), "\(typo.stderr)")
    }

    @Test(
        "chosen options scored against the bank's keys: letters automatically, numbered options with --key-column; wide, long and parallel long (issue 26, item 7)"
    )
    func optionsAgainstKeys() throws {
        let ws = try CLIWorkspace()
        try ws.write("letters.csv", "item_id,a,b,key\nq1,1.2,-1.0,B\nq2,0.8,-0.5,D\nq3,1.5,0.0,A\n")
        try ws.write("plain.csv", "session_id,q1,q2,q3\nu1,1,0,1\nu2,0,1,0\nu3,1,1,\n")
        try ws.write("chosen.csv", "session_id,q1,q2,q3\nu1,b,C,A\nu2,A,D,c\nu3,B,d,NA\n")
        var r = try ws.run("score", "plain.csv", "--bank", "letters.csv", "--out", "plain.out")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("score", "chosen.csv", "--bank", "letters.csv", "--out", "chosen.out")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("one-letter responses scored against the bank's 'key' column (1/0 cells stay right/wrong)"), "\(r.stderr)")
        #expect(try ws.read("chosen.out") == (try ws.read("plain.out")))
        // Long layout, serial and in parallel chunks: the same scores.
        var long = "session_id,item_id,response\n"
        for (id, row) in [("u1", ["b", "C", "A"]), ("u2", ["A", "D", "c"]), ("u3", ["B", "d", ""])] {
            for (k, cell) in row.enumerated() { long += "\(id),q\(k + 1),\(cell)\n" }
        }
        try ws.write("chosen-long.csv", long)
        for threads in ["1", "2"] {
            r = try ws.run("score", "chosen-long.csv", "--bank", "letters.csv", "--out", "long\(threads).out", "--threads", threads)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try ws.read("long\(threads).out") == (try ws.read("plain.out")))
        }
        // Numbered options (ICAR16's keys are option numbers): --key-column, where "1" is option 1, not "correct".
        try ws.write("numbers.csv", "item_id,a,b,key\nq1,1.2,-1.0,2\nq2,0.8,-0.5,4\nq3,1.5,0.0,1\n")
        try ws.write("numbered.csv", "session_id,q1,q2,q3\nu1,2,3,1\nu2,1,4,3\nu3,2,4,\n")
        r = try ws.run("score", "numbered.csv", "--bank", "numbers.csv", "--out", "numbered.out", "--key-column", "key")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try ws.read("numbered.out") == (try ws.read("plain.out")))
        try ws.write(
            "numbered-long.csv",
            long.replacingOccurrences(of: ",b\n", with: ",2\n").replacingOccurrences(of: ",B\n", with: ",2\n")
                .replacingOccurrences(of: ",A\n", with: ",1\n").replacingOccurrences(of: ",C\n", with: ",3\n").replacingOccurrences(
                    of: ",c\n", with: ",3\n"
                )
                .replacingOccurrences(of: ",D\n", with: ",4\n").replacingOccurrences(of: ",d\n", with: ",4\n"))
        for threads in ["1", "2"] {
            r = try ws.run(
                "score", "numbered-long.csv", "--bank", "numbers.csv", "--out", "nlong\(threads).out", "--key-column", "key", "--threads", threads)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try ws.read("nlong\(threads).out") == (try ws.read("plain.out")))
        }
        // A key column the bank lacks, and a scored item without a key, are errors naming the bank.
        r = try ws.run("score", "numbered.csv", "--bank", "numbers.csv", "--out", "x.out", "--key-column", "answer")
        #expect(
            r.status == 1 && r.stderr.contains("numbers.csv:1: error: the bank has no column 'answer' to take answer keys from (columns: key)"),
            "\(r.stderr)")
        try ws.write("partial.csv", "item_id,a,b,key\nq1,1.2,-1.0,2\nq2,0.8,-0.5,\nq3,1.5,0.0,1\n")
        r = try ws.run("score", "numbered.csv", "--bank", "partial.csv", "--out", "x.out", "--key-column", "key")
        #expect(r.status == 1 && r.stderr.contains("1 scored item has no key in column 'key' (q2)"), "\(r.stderr)")
    }
}
