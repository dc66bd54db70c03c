import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

// `ResponseMatrix.load` reads the records after the header in parallel chunks. These tests read messy files
// with one thread and with several, in chunks from 64 bytes (so records, quoted line breaks and CRLF pairs
// straddle chunk borders) to whole files, and expect the same matrix, report and errors every time.

@Suite("ResponseMatrix.load: any thread count and chunk size reads as one thread does")
struct ResponseMatrixParallelReadTests {
    /// (threads, chunk bytes) to compare with one thread reading the file in one round.
    static let settings = [(1, 64), (2, 64), (3, 97), (4, 200), (2, 1000), (3, 1 << 20)]

    /// Everything a load gives: the whole matrix and report, or the error's full text.
    static func outcome(_ path: String, _ options: ResponseFileOptions, maxMemoryBytes: Int?, threads: Int, chunkBytes: Int) -> String {
        do {
            let (m, r) = try ResponseMatrix.load(
                csv: path, options: options, maxMemoryBytes: maxMemoryBytes, threads: threads, chunkBytes: chunkBytes)
            return "\(m.personIDs)\n\(m.itemIDs)\n\(m.rowOffsets)\n\(m.itemIndices)\n\(m.responses)\n"
                + "\(r.layout) rows \(r.dataRows) persons \(r.personsRead) blanks \(r.blankResponses) id \(r.idColumn ?? "-") "
                + "empty \(r.emptyPersons.map { "\($0.id)@\($0.line)" })"
        } catch {
            return "error: \(error)"
        }
    }

    /// Expects every setting to read `text` as one thread in one round does; returns that reading.
    @discardableResult
    static func expectSame(
        _ text: [UInt8], options: ResponseFileOptions = ResponseFileOptions(), maxMemoryBytes: Int? = nil,
        chunkSizes: [Int]? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let files = try CSVFixtures()
        let path = try files.write("data.csv", bytes: text)
        let reference = outcome(path, options, maxMemoryBytes: maxMemoryBytes, threads: 1, chunkBytes: 1 << 24)
        for (threads, chunk) in settings where chunkSizes.map({ $0.contains(chunk) }) ?? true {
            let got = outcome(path, options, maxMemoryBytes: maxMemoryBytes, threads: threads, chunkBytes: chunk)
            #expect(got == reference, "\(threads) threads, \(chunk)-byte chunks", sourceLocation: sourceLocation)
        }
        return reference
    }

    /// A long file of `sessions` sessions: quoted ids (some with a comma, a quote or a line break inside),
    /// blank lines, NA and empty responses, spaces; rows of a session contiguous or, with `interleaved`, mixed.
    static func longFile(sessions: Int, interleaved: Bool, lineEnd: String = "\n", bom: Bool = false, finalNewline: Bool = true) -> [UInt8] {
        var rows: [String] = []
        for s in 0..<sessions {
            let id = s % 7 == 3 ? "\"s\(s),\"\"x\"\"\(lineEnd)y\"" : s % 5 == 0 ? " s\(s) " : "s\(s)"
            for k in 0..<(1 + (s * 7 + 3) % 6) {
                let response = ["1", "0", "true", "FALSE", "NA", "", " 1 "][(s * 5 + k * 3 + s / 4) % 7]
                rows.append("\(id),i\((s * 3 + k * 7) % 23),\(response),extra")
            }
        }
        if interleaved { rows = stride(from: 0, to: rows.count, by: 2).map { rows[$0] } + stride(from: 1, to: rows.count, by: 2).map { rows[$0] } }
        var text = (bom ? "\u{FEFF}" : "") + "session_id,item_id,response,note" + lineEnd
        for (k, row) in rows.enumerated() { text += row + lineEnd + (k % 11 == 5 ? lineEnd : "") }
        if !finalNewline { text.removeLast(lineEnd.count) }
        return Array(text.utf8)
    }

    @Test("long files: quoted ids with line breaks, CRLF, BOM, blank lines, no final newline, interleaved sessions")
    func longValid() throws {
        let plain = try Self.expectSame(Self.longFile(sessions: 120, interleaved: false))
        #expect(!plain.hasPrefix("error"))
        try Self.expectSame(Self.longFile(sessions: 120, interleaved: true, lineEnd: "\r\n", bom: true, finalNewline: false))
        try Self.expectSame(Self.longFile(sessions: 60, interleaved: true, lineEnd: "\r"))
    }

    @Test("files of several MiB, whose rounds the threads read in parallel slices (pread), the last round short")
    func parallelFills() throws {
        let files = try CSVFixtures()
        for (name, text) in [
            ("long.csv", Self.longFile(sessions: 60_000, interleaved: false)),
            ("crlf.csv", Self.longFile(sessions: 40_000, interleaved: true, lineEnd: "\r\n", finalNewline: false))
        ] {
            #expect(text.count > 3 << 20)
            let path = try files.write(name, bytes: text)
            let reference = Self.outcome(path, ResponseFileOptions(), maxMemoryBytes: nil, threads: 1, chunkBytes: 1 << 24)
            #expect(!reference.hasPrefix("error"))
            // Rounds of 1.2 MB (several, cut anywhere), 6 MiB (the whole file, in three slices) and 5.6 MB.
            for (threads, chunk) in [(2, 300_000), (3, 1 << 20), (4, 700_000)] {
                let got = Self.outcome(path, ResponseFileOptions(), maxMemoryBytes: nil, threads: threads, chunkBytes: chunk)
                #expect(got == reference, "\(name): \(threads) threads, \(chunk)-byte chunks")
            }
        }
    }

    @Test("long files with every kind of error (repeats across chunks, bad cells, bad ids, field counts), past the 20 listed")
    func longErrors() throws {
        var text = "session_id,item_id,response\n"
        for s in 0..<40 {
            text += "p\(s),a,1\np\(s),b,0\n"
            switch s % 8 {
            case 0: text += "p\(s),a,0\n" // repeated item
            case 1: text += "p\(s),c,2\n" // not a response
            case 2: text += ",c,1\n" // empty session
            case 3: text += "p\(s),,1\n" // empty item
            case 4: text += "p\(s),c\n" // too few fields
            case 5: text += "p\(s),c,1,1\n" // too many
            case 6: text += "p\(s),\"c\nd\",1\n" // quoted item with a line break
            default: text += "p\(s % 3),z,1\n" // a session seen before, again later
            }
        }
        var bytes = Array(text.utf8)
        bytes += [0x71, 0xFF, 0x2C, 0x61, 0x2C, 0x31, 0x0A, 0x71, 0x2C, 0x62, 0xFE, 0x2C, 0x31, 0x0A] // invalid UTF-8 session, item
        let reading = try Self.expectSame(bytes)
        #expect(reading.contains("more problems not listed"))
        // Fewer errors: all listed.
        let few = try Self.expectSame(Array("session_id,item_id,response\nA,x,1\nB,x,1\nA,y,0\nA,x,0\nB,y,NA\nC,x,yes\n".utf8))
        #expect(few.contains(":5:2: error: item 'x' is repeated in session 'A' (first on line 2)"))
    }

    @Test("long files: the memory budget stops at the same line with the same counts")
    func longBudget() throws {
        var text = "session_id,item_id,response\n"
        for k in 0..<140_000 { text += "s\(k / 10),i\(k % 10),\(k % 3 == 0 ? 1 : 0)\n" }
        let reading = try Self.expectSame(Array(text.utf8), maxMemoryBytes: 4_000_000, chunkSizes: [1000, 1 << 20])
        #expect(reading.contains(":131073: error: by this line"))
    }

    @Test("malformed records: text after a closing quote, an unterminated quote at the end, after other errors")
    func syntaxErrors() throws {
        let rows = (0..<50).map { "s\($0),i\($0 % 4),\($0 % 2)\n" }.joined()
        try Self.expectSame(Array("session_id,item_id,response\ns0,i0,7\n\(rows)s9,\"i1\"x,1\n\(rows)".utf8))
        try Self.expectSame(Array("session_id,item_id,response\n\(rows)s9,\"i1,1\n\(rows)".utf8))
        try Self.expectSame(Array("id,q1,q2\n\(rows)p,\"1".utf8))
    }

    /// A wide file with an id column: quoted ids with line breaks, empty persons, spaces, NA.
    static func wideFile(persons: Int, items: Int, lineEnd: String = "\n", id: Bool = true) -> [UInt8] {
        var text = (id ? "person_id," : "") + (0..<items).map { "q\($0)" }.joined(separator: ",") + lineEnd
        for p in 0..<persons {
            var cells = (0..<items).map { c in ["1", "0", "", "NA", " true", "0 "][(p * 7 + c * 3 + p / 5) % 6] }
            if p % 9 == 4 { cells = cells.map { _ in "" } }
            let name = p % 6 == 1 ? "\"p\(p)\(lineEnd)b\"" : "p\(p)"
            text += (id ? name + "," : "") + cells.joined(separator: ",") + lineEnd + (p % 13 == 2 ? lineEnd : "")
        }
        return Array(text.utf8)
    }

    @Test("wide files with and without ids: quoted ids with line breaks, CRLF, empty persons")
    func wideValid() throws {
        let reading = try Self.expectSame(Self.wideFile(persons: 150, items: 7))
        #expect(!reading.hasPrefix("error"))
        try Self.expectSame(Self.wideFile(persons: 150, items: 7, lineEnd: "\r\n"))
        try Self.expectSame(Self.wideFile(persons: 150, items: 5, id: false))
    }

    @Test("wide files with repeated ids, invalid cells (grouped per column), bad ids and field counts")
    func wideErrors() throws {
        var text = "id,q1,q2,q3\n"
        for p in 0..<60 {
            switch p % 6 {
            case 0: text += "p\(p % 20),1,0,1\n" // repeats p0…p19 later
            case 1: text += "p\(p),1,x\(p),0\n" // invalid cell
            case 2: text += "p\(p),1,0\n" // too few fields
            case 3: text += ",1,0,1\n" // empty id
            case 4: text += "p\(p % 20),y\(p),0,1\n" // a repeat (from the second pass on) with an invalid cell
            default: text += "p\(p),1,0,1\n"
            }
        }
        let reading = try Self.expectSame(Array(text.utf8))
        #expect(reading.contains("already appeared on line") && reading.contains("more problems not listed"))
        // Few enough errors that the invalid cells' are listed too.
        let cells = try Self.expectSame(Array(text.split(separator: "\n").prefix(30).filter { !$0.hasPrefix(",") }.joined(separator: "\n").utf8))
        #expect(cells.contains("invalid cells in this column"))
    }

    @Test("wide: a repeated id's invalid cell is not counted, and the column's first invalid cell is read again when its chunk lost it")
    func wideRepeatedRowFirstInvalid() throws {
        // One thread: two chunks, cut mid-file. The second chunk's first invalid cell of q2 is in a repeated row.
        var text = "id,q1,q2\np0,1,0\n"
        for p in 1..<100 { text += "p\(p),1,0\n" }
        text += "p0,1,bad\np100,1,good\np101,0,worse\n"
        let reading = try Self.expectSame(Array(text.utf8))
        #expect(reading.contains("id 'p0' already appeared on line 2"))
        #expect(
            reading.contains(
                ":103:3: error: column 'q2': 'good' is not a response; allowed: 1, 0, true, false, t, f, or empty/NA for not administered (2 invalid cells in this column)"
            ))
    }

    @Test("wide files: the memory budget (checked every 4,096 rows) stops at the same line")
    func wideBudget() throws {
        let reading = try Self.expectSame(Self.wideFile(persons: 9000, items: 30, id: false), maxMemoryBytes: 1_200_000, chunkSizes: [1000, 1 << 20])
        #expect(reading.contains("error: by this line"))
    }
}
