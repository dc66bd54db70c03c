import Foundation
import Testing

// Issue 15, item 3: a file misread because of its layout, id column, delimiter or cells says which options would
// read it; a score run that scores no session exits 1 and writes nothing; the options named do read the file.

@Suite("Layout hints: misread files name the options that read them")
struct LayoutHintCLITests {
    static let bank = "item_id,a,b,c\nq1,1.2,-1.0,0\nq2,0.8,-0.5,0\nq3,1.5,0.0,0\n"
    static let notAResponse = "is not a response; allowed: 1, 0, true, false, t, f, or empty/NA for not administered"

    /// The app's export: long, with its own column names.
    static let long = "test_session_id,question_id,is_correct\ns1,q1,1\ns1,q2,0\ns1,q3,1\ns2,q1,0\ns2,q2,0\ns2,q3,1\n"
    static let longHint = "hint: the file looks long (one row per response: session 'test_session_id', item 'question_id', response 'is_correct') but was read as wide; read it with --session-column test_session_id --item-column question_id --response-column is_correct"
    static let wideUID = "uid,q1,q2,q3\nu1,1,0,1\nu2,0,0,1\n"
    static let uidHint = "hint: the first column 'uid' holds ids, not responses: read it with --session-column uid"
    static let semicolon = "session_id;q1;q2;q3\nu1;1;0;1\nu2;0;0;1\n"
    static let semicolonHint = "hint: the header is 1 field but holds 3 ';' separators: the file looks ';'-separated (4 columns); read it with --delimiter ';'"
    static let polytomous = "session_id,q1,q2,q3\nu1,1,2,1\nu2,0,3,1\n"
    static let polytomousHint = "hint: response cells hold whole numbers up to 3: iqscore scores right/wrong (dichotomous) responses; recode them to 1 = correct, 0 = incorrect (polytomous items are not modelled)"
    static let letters = "session_id,q1,q2,q3\nu1,A,C,B\nu2,B,D,A\n"
    static let lettersHint = "hint: response cells hold option letters (A, B, C, D): score them against the answer keys first (1 = the key, 0 = another option); iqscore analyze --options reads raw choices for distractor analysis"

    @Test("score: every session rejected is exit 1, nothing written, the first reasons and the hint on stderr", arguments: [
        ("long.csv", long, [
            "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
            "long.csv:2:2: rejected session 's1': column 'question_id': 'q1' \(notAResponse)",
            "long.csv:5:2: rejected session 's2': column 'question_id': 'q1' \(notAResponse)",
            longHint]),
        ("uid.csv", wideUID, [
            "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
            "uid.csv:2:1: rejected session '1': column 'uid': 'u1' \(notAResponse)",
            "uid.csv:3:1: rejected session '2': column 'uid': 'u2' \(notAResponse)",
            uidHint]),
        ("semi.csv", semicolon, [
            "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
            "semi.csv:2:1: rejected session '1': column 'session_id;q1;q2;q3': 'u1;1;0;1' \(notAResponse)",
            "semi.csv:3:1: rejected session '2': column 'session_id;q1;q2;q3': 'u2;0;0;1' \(notAResponse)",
            semicolonHint]),
        ("poly.csv", polytomous, [
            "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
            "poly.csv:2:3: rejected session 'u1': column 'q2': '2' \(notAResponse)",
            "poly.csv:3:3: rejected session 'u2': column 'q2': '3' \(notAResponse)",
            polytomousHint]),
        ("letters.csv", letters, [
            "error: no session was scored: all 2 sessions read were rejected; nothing was written. The first:",
            "letters.csv:2:2: rejected session 'u1': column 'q1': 'A' \(notAResponse)",
            "letters.csv:3:2: rejected session 'u2': column 'q1': 'B' \(notAResponse)",
            lettersHint]),
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
        for (name, text, hint) in [("long.csv", Self.long, Self.longHint), ("uid.csv", Self.wideUID, Self.uidHint),
                                   ("semi.csv", Self.semicolon, Self.semicolonHint), ("poly.csv", Self.polytomous, Self.polytomousHint)] {
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
            try ws.run("score", "long.csv", "--bank", "BANK.csv", "--out", "long.out", "--session-column", "test_session_id", "--item-column", "question_id", "--response-column", "is_correct"),
            try ws.run("score", "semi.csv", "--bank", "BANK.csv", "--out", "semi.out", "--delimiter", ";"),
            try ws.run("score", "tab.tsv", "--bank", "BANK.csv", "--out", "tab.out", "--delimiter", "tab"),
            try ws.run("score", "uid.csv", "--bank", "BANK.csv", "--out", "uid.out", "--session-column", "uid"),
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
        #expect(mixed.stderrLines.dropLast().last == "hint: response cells hold whole numbers up to 2: iqscore scores right/wrong (dichotomous) responses; recode them to 1 = correct, 0 = incorrect (polytomous items are not modelled)")
        try ws.write("empty.csv", "session_id,q1,q2,q3\n")
        let empty = try ws.run("score", "empty.csv", "--bank", "BANK.csv", "--out", "empty.out")
        #expect(empty.status == 1)
        #expect(empty.stderr == "error: no session was scored: the input holds no sessions (0 data rows); nothing was written\n")
        #expect(!ws.exists("empty.out"))
        let bad = try ws.run("score", "mixed.csv", "--bank", "BANK.csv", "--out", "x.out", "--delimiter", ";;")
        #expect(bad.status == 64)
        #expect(bad.stderrLines.first == "Error: --delimiter must be ',', ';', tab or '|', got ';;'")
    }
}
