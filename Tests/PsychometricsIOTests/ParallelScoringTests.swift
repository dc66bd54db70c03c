import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

// The parallel long-file path of `BatchScorer` (chunks parsed and scored on several threads, joined in order)
// must give exactly what the one-thread path gives: same score file, reject file and counts, same errors. These
// tests compare the two on randomised files full of what cuts between chunks can break — sessions spanning
// chunks, quoted fields with line breaks, CRLF and lone CR, blank lines, rows without ids, duplicates across a
// border — with chunks down to 64 bytes, so every file has many borders.

/// Random long files over `BatchFixtures`' six-item bank.
struct MessyLongFile {
    var rng: SeededGenerator

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 1_000_000) / 1_000_000 < p }

    /// A session id, sometimes padded, quoted, or holding a comma, a quote or a line break (quoted).
    mutating func id(_ k: Int) -> String {
        switch int(20) {
        case 0: return "\"s\(k),x\""
        case 1: return "\"s\(k)\"\"q\""
        case 2: return "\"s\(k)\nline\""
        case 3: return " s\(k) "
        case 4: return "\"s\(k)\""
        default: return "s\(k)"
        }
    }

    mutating func lineEnd() -> String {
        switch int(30) {
        case 0: return "\r\n"
        case 1: return "\r"
        default: return "\n"
        }
    }

    /// Rows of `sessions` sessions, mostly well-formed, with every kind of rejection mixed in.
    mutating func text(sessions: Int) -> String {
        let extra = chance(0.5)
        var out = "session_id,item_id,response" + (extra ? ",extra" : "") + "\n"
        let items = BatchFixtures.itemIDs
        for k in 1...sessions {
            let sid = id(k)
            let rows = chance(0.3) ? 7 + int(7) : int(7) // 0 … 13 rows; from the seventh on, items repeat
            for r in 0..<rows {
                if chance(0.04) { out += lineEnd() } // blank line
                if chance(0.02) { out += ",q1,1" + lineEnd() } // empty session id
                if chance(0.01) { out += "lonely" + lineEnd() } // one field: no session id column value
                var item = items[r % items.count]
                if chance(0.03) { item = "zz\(int(5))" } // unknown item
                if chance(0.02) { item = "\"q\(1 + int(6))\"" } // quoted item id
                var response = int(2) == 0 ? "0" : "1"
                switch int(60) {
                case 0: response = "2"
                case 1: response = ""
                case 2: response = "NA"
                case 3: response = "\"1\""
                case 4: response = " true "
                default: break
                }
                if chance(0.02) {
                    out += "\(sid),\(item)" + lineEnd() // too few fields
                } else {
                    out += "\(sid),\(item),\(response)" + (extra ? ",e" : "") + (chance(0.03) ? ",x" : "") + lineEnd() // ragged
                }
            }
        }
        if chance(0.5) { out.removeLast() } // no final line break
        return out
    }
}

@Suite("BatchScorer: the parallel long-file path equals the one-thread path")
struct ParallelScoringTests {
    func compare(_ scorer: SessionScorer, _ inputs: [String], _ files: CSVFixtures, label: String) throws {
        let serial = try BatchFixtures.run(scorer, inputs, in: files, name: "serial", parallel: false)
        for (chunkBytes, workers) in [(64, 2), (97, 3), (256, 1), (1000, 2), (1 << 20, 2)] {
            let parallel = try BatchFixtures.run(scorer, inputs, in: files, name: "parallel", workers: workers, chunkBytes: chunkBytes)
            let where_ = "\(label), chunks of \(chunkBytes) bytes, \(workers) workers"
            #expect(parallel.scores == serial.scores, "\(where_)")
            #expect(parallel.rejects == serial.rejects, "\(where_)")
            var a = parallel.report, b = serial.report
            a.seconds = 0; b.seconds = 0
            #expect(a == b, "\(where_)")
        }
    }

    @Test("40 random messy files: identical scores, rejects and counts for chunk sizes 64 B … 1 MiB and 1–3 workers")
    func randomFiles() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        var sawRegroup = false, sawReject = false
        for seed in 1...40 {
            var gen = MessyLongFile(rng: SeededGenerator(seed: UInt64(seed)))
            let path = try files.write("messy\(seed).csv", gen.text(sessions: 30 + seed))
            try compare(scorer, [path], files, label: "seed \(seed)")
            let r = try BatchFixtures.run(scorer, [path], in: files, name: "check")
            sawRegroup = sawRegroup || r.report.regrouped
            sawReject = sawReject || r.report.sessionsRejected > 0
            #expect(r.report.sessionsRead == r.report.sessionsScored + r.report.sessionsRejected)
        }
        // The generator does reach both paths: some files regroup (a session id reappears after a row without
        // an id split it), all have rejects.
        #expect(sawRegroup && sawReject)
    }

    @Test("a session cut by a chunk border keeps its first error: an invalid response before a repeated item")
    func firstErrorAcrossBorder() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        // s2: q1, q2, then an invalid response, then q1 again: the reject names the invalid response's line. The
        // sessions before s2 shift it past the chunk borders (64-byte chunks, 1–3 workers).
        for pad in 0..<12 {
            var text = "session_id,item_id,response\n"
            for k in 0..<pad { text += "p\(k),q1,1\n" }
            text += "s2,q1,1\ns2,q2,0\ns2,q3,7\ns2,q1,1\ns2,q4,1\ns3,q1,0\n"
            let path = try files.write("border\(pad).csv", text)
            let serial = try BatchFixtures.run(scorer, [path], in: files, name: "serial", parallel: false)
            #expect(serial.rejectRows.map { Array($0[0...3]) } == [["s2", path, "\(pad + 4)", "3"]])
            for workers in 1...3 {
                let parallel = try BatchFixtures.run(scorer, [path], in: files, name: "p", workers: workers, chunkBytes: 64)
                #expect(parallel.rejects == serial.rejects, "\(pad) sessions before, \(workers) workers")
                #expect(parallel.scores == serial.scores, "\(pad) sessions before, \(workers) workers")
            }
        }
    }

    @Test("a session split across two files, and long then wide files, join as on one thread")
    func severalFiles() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let a = try files.write("a.csv", "session_id,item_id,response\ns1,q1,1\ns1,q2,0\ns2,q1,1\n")
        let b = try files.write("b.csv", "session_id,item_id,response\ns2,q2,1\ns2,q1,0\ns3,q3,1\n")
        let w = try files.write("w.csv", BatchFixtures.wide(BatchFixtures.sessions(3)))
        try compare(scorer, [a, b], files, label: "a + b")
        try compare(scorer, [a, w, b], files, label: "a + wide + b")
        let out = try BatchFixtures.run(scorer, [a, b], in: files, name: "ab", chunkBytes: 64)
        // s2 continues into b.csv and answers q1 twice: rejected where that happens (b.csv line 3, column 2),
        // naming the first answer's line and file.
        #expect(out.rejectRows == [["s2", b, "3", "2", "item 'q1' answered twice in the session (first on line 4 of a.csv)"]])
        #expect(out.report.sessionsRead == 3 && out.report.sessionsScored == 2)
    }

    @Test("syntax errors are reported as on one thread: text after a closing quote, an unterminated quote")
    func syntaxErrors() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        var body = ""
        for k in 1...50 { body += "s\(k),q1,1\ns\(k),q2,0\n" }
        for (name, text) in [
            ("after.csv", "session_id,item_id,response\n" + body + "\"s9\"x,q1,1\n" + body),
            ("open.csv", "session_id,item_id,response\n" + body + "\"s9,q1,1\n" + body)
        ] {
            let path = try files.write(name, text)
            func message(_ parallel: Bool, _ chunkBytes: Int) -> String {
                do {
                    _ = try BatchFixtures.run(scorer, [path], in: files, name: "e", parallel: parallel, chunkBytes: chunkBytes)
                    return "no error"
                } catch { return "\(error)" }
            }
            let serial = message(false, 64)
            #expect(serial.contains("\(name):102"), "\(serial)")
            for chunkBytes in [64, 200, 4096] { #expect(message(true, chunkBytes) == serial, "\(name), \(chunkBytes)") }
        }
    }
}
