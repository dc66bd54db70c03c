import Foundation
import Testing
import TestSupport

// Ids are bytes: valid UTF-8 ids round-trip exactly (CR LF inside a quoted id included); ids that are not valid
// UTF-8 are rejected with one error in every command. Bad values are quoted up to 100 bytes with their length.
// Rows whose field count differs from the header's are malformed in score and calibrate alike.

@Suite("iqscore text fidelity: id bytes, quoting, ragged rows", .timeLimit(.minutes(10)))
struct TextFidelityCLITests {
    static func workspace(_ sessions: [UInt8]) throws -> CLIWorkspace {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", ScoreCLITests.bank)
        try Data(sessions).write(to: ws.url("s.csv"))
        return ws
    }

    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test("a session id holding CR LF is quoted in the rejects file, which parses back to the same id; scores too")
    func crlfIDs() throws {
        let text = "session_id,item_id,response\n\"a\r\nb\",q1,1\n\"a\r\nb\",q2,0\n\"c\r\nd\",q1,7\n"
        let ws = try Self.workspace(Self.bytes(text))
        for threads in ["1", "2"] {
            let r = try ws.run("score", "s.csv", "--bank", "BANK.csv", "--out", "o\(threads).csv", "--threads", threads)
            #expect(r.status == 2, "\(r.stderr)")
            let scores = try ws.csvRecords("o\(threads).csv"), rejects = try ws.csvRecords("o\(threads).rejects.csv")
            #expect(scores.dropFirst().map { $0[0] } == ["a\r\nb"])
            #expect(rejects.dropFirst().map { $0[0] } == ["c\r\nd"])
            #expect(rejects.count == 2 && rejects[1].count == 5)
        }
    }

    @Test("a session id that is not valid UTF-8 rejects its session with the bytes escaped; two such ids stay apart")
    func invalidSessionIDs() throws {
        var data = Self.bytes("session_id,item_id,response\ns1,q1,1\n")
        data += [0x73, 0xFF, 0x2C] + Self.bytes("q1,1\n") // s\xFF
        data += [0x73, 0xFE, 0x2C] + Self.bytes("q2,0\n") // s\xFE
        let ws = try Self.workspace(data)
        for threads in ["1", "2"] {
            let r = try ws.run("score", "s.csv", "--bank", "BANK.csv", "--out", "o\(threads).csv", "--threads", threads)
            #expect(r.status == 2, "\(r.stderr)")
            #expect(
                try ws.csvRecords("o\(threads).rejects.csv").dropFirst().map { $0 } == [
                    ["s\\xFF", "s.csv", "3", "1", "session id 's\\xFF' is not valid UTF-8; ids must be UTF-8 text"],
                    ["s\\xFE", "s.csv", "4", "1", "session id 's\\xFE' is not valid UTF-8; ids must be UTF-8 text"]
                ])
        }
        // calibrate: an error with file, line and column.
        let c = try ws.run("calibrate", "s.csv", "--out", "b.csv")
        #expect(c.status == 1)
        #expect(c.stderrLines.first == "s.csv:3:1: error: session_id 's\\xFF' is not valid UTF-8; ids must be UTF-8 text")
        // An item id in a header (wide layout).
        var wide = Self.bytes("id,q1,q")
        wide += [0xC3, 0x28] + Self.bytes("\np1,1,0\n")
        try Data(wide).write(to: ws.url("w.csv"))
        for command in [["calibrate", "w.csv", "--out", "b.csv"], ["score", "w.csv", "--bank", "BANK.csv", "--out", "w-scores.csv"]] {
            let w = try IQScoreCLI.run(command, in: ws.directory)
            #expect(w.status == 1)
            #expect(w.stderr == "w.csv:1:3: error: header column name 'q\\xC3(' is not valid UTF-8; ids must be UTF-8 text\n")
        }
    }

    @Test("a 1 MB bad value is quoted to its first 100 bytes, with its length")
    func longValues() throws {
        let long = String(repeating: "x", count: 1_000_000)
        // s3 is scored, so the run delivers scores (exit 2) and the rejects file is there to read.
        let ws = try Self.workspace(Self.bytes("session_id,item_id,response\ns1,q1,\(long)\ns2,\(long),1\ns3,q1,1\n"))
        for threads in ["1", "2"] {
            let r = try ws.run("score", "s.csv", "--bank", "BANK.csv", "--out", "o\(threads).csv", "--threads", threads)
            #expect(r.status == 2)
            let prefix = String(repeating: "x", count: 100)
            #expect(
                try ws.csvRecords("o\(threads).rejects.csv").dropFirst().map { $0[4] } == [
                    "response '\(prefix)…' (1000000 bytes) is not a response; allowed: 1, 0, true, false, t, f, or empty/NA for not administered",
                    "unknown item id '\(prefix)…' (1000000 bytes) (not in the bank)"
                ])
            #expect(try Data(contentsOf: ws.url("o\(threads).rejects.csv")).count < 1_000)
        }
    }

    @Test("long rows with more fields than the header are malformed in score and calibrate")
    func raggedRows() throws {
        let ws = try Self.workspace(Self.bytes("session_id,item_id,response\ns1,q1,1\ns1,q2,0,extra\ns2,q1,1\n"))
        for threads in ["1", "2"] {
            let r = try ws.run("score", "s.csv", "--bank", "BANK.csv", "--out", "o\(threads).csv", "--threads", threads)
            #expect(r.status == 2)
            #expect(
                try ws.csvRecords("o\(threads).rejects.csv").dropFirst().map { $0 } == [
                    ["s1", "s.csv", "3", "4", "malformed row: expected 3 fields as in the header, found 4"]
                ])
        }
        let c = try ws.run("calibrate", "s.csv", "--out", "b.csv")
        #expect(c.status == 1)
        #expect(c.stderrLines.first == "s.csv:3:4: error: expected 3 fields as in the header, found 4")
    }
}

@Suite("iqscore long-layout headers", .timeLimit(.minutes(10)))
struct LongHeaderCLITests {
    @Test("a header naming the session, item or response column twice is an error naming both columns, in score and calibrate")
    func repeatedColumns() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", ScoreCLITests.bank)
        try ws.write("s.csv", "session_id,item_id,response,item_id\ns1,q1,1,q2\n")
        for command in [["score", "s.csv", "--bank", "BANK.csv", "--out", "o.csv"], ["calibrate", "s.csv", "--out", "b.csv"]] {
            let r = try IQScoreCLI.run(command, in: ws.directory)
            #expect(r.status == 1)
            #expect(r.stderr == "s.csv:1:4: error: item column 'item_id' appears twice in the header (columns 2 and 4)\n")
        }
    }
}

@Suite("iqscore score: pretest items on ICAR16", .timeLimit(.minutes(10)))
struct PretestCLITests {
    @Test("ICAR16 with 4 items marked pretest: θ, SE and IQ of every session equal scoring without those items; n_unscored counts them")
    func icar16Pretest() throws {
        let ws = try CLIWorkspace()
        let data = Repository.file("Data/icar16.csv").path
        #expect(try ws.run("calibrate", data, "--model", "2pl", "--out", "bank.csv").status == 0)
        let pretest: Set<String> = ["rotate.3", "rotate.4", "matrix.45", "matrix.46"]
        let bankLines = try ws.read("bank.csv").split(separator: "\n").map(String.init)
        try ws.write(
            "status.csv",
            ([bankLines[0] + ",status"]
                + bankLines.dropFirst().map {
                    $0 + (pretest.contains(String($0.prefix { $0 != "," })) ? ",pretest" : ",active")
                }).joined(separator: "\n") + "\n")
        try ws.write(
            "reduced.csv",
            ([bankLines[0]] + bankLines.dropFirst().filter { !pretest.contains(String($0.prefix { $0 != "," })) })
                .joined(separator: "\n") + "\n")
        let table = try String(contentsOfFile: data, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let keep = table[0].indices.filter { !pretest.contains(table[0][$0].trimmingCharacters(in: ["\""])) } // quoted header
        try ws.write("icar12.csv", table.map { row in keep.map { row[$0] }.joined(separator: ",") }.joined(separator: "\n") + "\n")
        #expect(try ws.run("score", data, "--bank", "status.csv", "--out", "a.csv").status == 2)
        // Only empty rows left out: not administered, exit 0 (with status.csv, sessions that answered only pretest items are rejected).
        #expect(try ws.run("score", "icar12.csv", "--bank", "reduced.csv", "--out", "b.csv").status == 0)
        let a = try ws.csvRows("a.csv"), b = try ws.csvRows("b.csv")
        #expect(a[0][12] == "n_unscored")
        let reference = Dictionary(uniqueKeysWithValues: b.dropFirst().map { ($0[0], $0) })
        #expect(a.count == b.count && a.count > 1500)
        for row in a.dropFirst() {
            let ref = try #require(reference[row[0]])
            #expect(Array(row[1...11]) == Array(ref[1...11]), "session \(row[0])")
        }
        let counts = a.dropFirst().map { Int($0[12])! }
        #expect(counts.max() == 4 && counts.min() == 0)
    }
}
