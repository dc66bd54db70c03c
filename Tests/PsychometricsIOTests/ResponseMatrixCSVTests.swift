import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

// Tests of the CSV layer through its public API: `CSVReader` (RFC 4180 details, line numbers, chunk
// boundaries) and `ResponseMatrix.load(csv:options:)` (wide and long layouts, empty persons, located errors).
// Every fixture is written byte for byte to a fresh temporary directory.

/// One record as the reader saw it.
struct CSVRecord: Equatable, CustomStringConvertible {
    var line: Int
    var fields: [String]
    var description: String { "line \(line): \(fields)" }
}

/// Every record of a file, with the line on which it starts.
func readRecords(_ path: String, chunkSize: Int = 1 << 20) throws -> [CSVRecord] {
    let reader = try CSVReader(path: path, chunkSize: chunkSize)
    var records: [CSVRecord] = []
    while try reader.nextRow() {
        records.append(CSVRecord(line: reader.line, fields: reader.strings()))
    }
    return records
}

// MARK: - CSVReader

@Suite("CSVReader: RFC 4180 parsing and line numbers")
struct CSVReaderTests {
    @Test("quoted fields with \"\" escapes, commas and embedded newlines; later records keep their line numbers")
    func quotedFields() throws {
        let files = try CSVFixtures()
        let path = try files.write(
            "quoted.csv",
            "id,text,n\n"
                + "1,\"he said \"\"hi\"\"\",2\n"
                + "2,\"multi\nline\",3\n"
                + "3,\"two\n\nbreaks\",4\n"
                + "4,plain,5\n"
                + "5,\"\",\"a,b\"\n"
                + "6,\"\"\"\",\"\"\"x\"\"\"\n")
        #expect(
            try readRecords(path) == [
                CSVRecord(line: 1, fields: ["id", "text", "n"]),
                CSVRecord(line: 2, fields: ["1", "he said \"hi\"", "2"]),
                CSVRecord(line: 3, fields: ["2", "multi\nline", "3"]),
                CSVRecord(line: 5, fields: ["3", "two\n\nbreaks", "4"]),
                CSVRecord(line: 8, fields: ["4", "plain", "5"]),
                CSVRecord(line: 9, fields: ["5", "", "a,b"]),
                CSVRecord(line: 10, fields: ["6", "\"", "\"x\""])
            ])
    }

    @Test("CRLF line ends (also inside a quoted field) and lone CR line ends")
    func crlfAndCR() throws {
        let files = try CSVFixtures()
        let crlf = try files.write("crlf.csv", "a,b\r\n1,\"x\r\ny\"\r\n\r\n2,3\r\n")
        #expect(
            try readRecords(crlf) == [
                CSVRecord(line: 1, fields: ["a", "b"]),
                CSVRecord(line: 2, fields: ["1", "x\r\ny"]),
                CSVRecord(line: 5, fields: ["2", "3"])
            ])
        let cr = try files.write("cr.csv", "a,b\r1,2\r\r3,4\r")
        #expect(
            try readRecords(cr) == [
                CSVRecord(line: 1, fields: ["a", "b"]),
                CSVRecord(line: 2, fields: ["1", "2"]),
                CSVRecord(line: 4, fields: ["3", "4"])
            ])
    }

    @Test("a lone CR inside a quoted field is a line break for the line numbers of later records")
    func loneCRInsideQuotedField() throws {
        let files = try CSVFixtures()
        let path = try files.write("cr-quoted.csv", "a,b\r\"x\ry\",1\rlast,2\r")
        let records = try readRecords(path)
        #expect(records.map(\.fields) == [["a", "b"], ["x\ry", "1"], ["last", "2"]])
        #expect(records.map(\.line).prefix(2) == [1, 2])
        #expect(records.last?.line == 4)
    }

    @Test("a UTF-8 byte-order mark is skipped, also before a quoted first field")
    func byteOrderMark() throws {
        let files = try CSVFixtures()
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let plain = try files.write("bom.csv", bytes: bom + Array("session_id,q1\ns1,1\n".utf8))
        #expect(
            try readRecords(plain) == [
                CSVRecord(line: 1, fields: ["session_id", "q1"]),
                CSVRecord(line: 2, fields: ["s1", "1"])
            ])
        let quoted = try files.write("bom-quoted.csv", bytes: bom + Array("\"person_id\",\"q 1\"\r\np1,0\r\n".utf8))
        #expect(
            try readRecords(quoted) == [
                CSVRecord(line: 1, fields: ["person_id", "q 1"]),
                CSVRecord(line: 2, fields: ["p1", "0"])
            ])
        // The id column is still recognised through the mark.
        let (matrix, report) = try ResponseMatrix.load(csv: plain)
        #expect(report.idColumn == "session_id")
        #expect(matrix.personIDs == ["s1"])
        #expect(matrix.itemIDs == ["q1"])
    }

    @Test("a missing final newline: plain, quoted and empty last fields")
    func missingFinalNewline() throws {
        let files = try CSVFixtures()
        #expect(
            try readRecords(try files.write("plain.csv", "a,b\n1,2")) == [
                CSVRecord(line: 1, fields: ["a", "b"]),
                CSVRecord(line: 2, fields: ["1", "2"])
            ])
        #expect(
            try readRecords(try files.write("comma.csv", "a,b\n1,")) == [
                CSVRecord(line: 1, fields: ["a", "b"]),
                CSVRecord(line: 2, fields: ["1", ""])
            ])
        #expect(
            try readRecords(try files.write("quoted.csv", "a,b\n1,\"x\"\"\"")) == [
                CSVRecord(line: 1, fields: ["a", "b"]),
                CSVRecord(line: 2, fields: ["1", "x\""])
            ])
        #expect(try readRecords(try files.write("one.csv", "only")) == [CSVRecord(line: 1, fields: ["only"])])
        let (matrix, report) = try ResponseMatrix.load(csv: try files.write("wide.csv", "id,q1,q2\nA,1,0\nB,0,1"))
        #expect(matrix.personIDs == ["A", "B"])
        #expect(report.dataRows == 2)
    }

    @Test("blank lines are skipped but counted")
    func blankLines() throws {
        let files = try CSVFixtures()
        let path = try files.write("blank.csv", "\n\na,b\n\n1,2\n\n\n3,4\n\n")
        #expect(
            try readRecords(path) == [
                CSVRecord(line: 3, fields: ["a", "b"]),
                CSVRecord(line: 5, fields: ["1", "2"]),
                CSVRecord(line: 8, fields: ["3", "4"])
            ])
        // Only blank lines: no records at all.
        #expect(try readRecords(try files.write("blanks.csv", "\n\r\n\r\n")) == [])
    }

    @Test("a record longer than the chunk size (> 8 KiB with a 4 KiB chunk) is read whole")
    func recordLongerThanChunk() throws {
        let files = try CSVFixtures()
        let long = String(repeating: "x", count: 10_000)
        let quotedBody = (0..<700).map { "part \($0) \"\"q\"\"" + ($0 % 50 == 49 ? "\n" : ",") }.joined()
        let unescaped = (0..<700).map { "part \($0) \"q\"" + ($0 % 50 == 49 ? "\n" : ",") }.joined()
        #expect(unescaped.utf8.count > 8192)
        let text = "head,body,tail\n" + "\(long),\"\(quotedBody)\",end\n" + "after,the,long\n"
        let path = try files.write("long.csv", text)
        let expected = [
            CSVRecord(line: 1, fields: ["head", "body", "tail"]),
            CSVRecord(line: 2, fields: [long, unescaped, "end"]),
            CSVRecord(line: 17, fields: ["after", "the", "long"]) // 14 embedded newlines: the record spans lines 2…16
        ]
        #expect(try readRecords(path, chunkSize: 4096) == expected)
        // A chunk size below the minimum is raised to it.
        #expect(try readRecords(path, chunkSize: 1) == expected)

        let reader = try CSVReader(path: path, chunkSize: 4096)
        while try reader.nextRow() {}
        #expect(reader.fileSize == text.utf8.count)
        #expect(reader.bytesConsumed == text.utf8.count)
    }

    @Test("thousands of records with quotes, CRLF and blank lines straddling chunk boundaries")
    func chunkBoundaries() throws {
        let files = try CSVFixtures()
        var text = ""
        var expected: [CSVRecord] = []
        var line = 1
        for k in 0..<3000 {
            let lineEnd = k % 2 == 0 ? "\n" : "\r\n"
            var value = "v\(k)" + String(repeating: "y", count: k % 17)
            var raw = value
            if k % 3 == 0 { value += "\"q\""; raw += "\"\"q\"\"" }
            var extraLines = 0
            if k % 5 == 0 { value += "\nnext"; raw += "\nnext"; extraLines = 1 }
            if k % 7 == 0 { value += ",comma"; raw += ",comma" }
            text += "\(k),\"\(raw)\",\(k % 2 == 0 ? "" : "z")\(lineEnd)"
            expected.append(CSVRecord(line: line, fields: [String(k), value, k % 2 == 0 ? "" : "z"]))
            line += 1 + extraLines
            if k % 11 == 0 { text += lineEnd; line += 1 }
        }
        #expect(text.utf8.count > 10 * 4096)
        let path = try files.write("many.csv", text)
        let small = try readRecords(path, chunkSize: 4096)
        #expect(small.count == expected.count)
        #expect(small == expected)
        #expect(try readRecords(path) == expected)
    }

    @Test("malformed records name file and line (and the column after a closing quote)")
    func malformed() throws {
        let files = try CSVFixtures()
        let unterminated = try files.write("unterminated.csv", "a,b\n1,2\n3,\"open\nstill open\n")
        let error1 = #expect(throws: InputError.self) { _ = try readRecords(unterminated) }
        #expect(error1?.description == "\(unterminated):3: error: unterminated quoted field at end of file")

        let stray = try files.write("stray.csv", "a,b,c\n1,\"two\nlines\"x,3\n")
        let error2 = #expect(throws: InputError.self) { _ = try readRecords(stray) }
        #expect(
            error2?.description
                == "\(stray):3:2: error: unexpected character 'x' after a closing quote; a quoted field must end at a comma or line end")
    }

    @Test("a missing file or a directory is an error naming the path")
    func unreadable() throws {
        let files = try CSVFixtures()
        let missing = files.directory.appendingPathComponent("missing.csv").path
        let error1 = #expect(throws: InputError.self) { _ = try CSVReader(path: missing) }
        #expect(error1?.description == "\(missing): error: cannot open file: No such file or directory")
        let error2 = #expect(throws: InputError.self) { _ = try CSVReader(path: files.directory.path) }
        #expect(error2?.description == "\(files.directory.path): error: is a directory, expected a CSV file")
    }
}

// MARK: - ResponseMatrix.load

@Suite("ResponseMatrix.load(csv:): layouts")
struct ResponseMatrixLoadTests {
    /// Person `i`'s answered items (ids) and responses.
    func row(_ m: ResponseMatrix, _ i: Int) -> [String: UInt8] {
        var out: [String: UInt8] = [:]
        for k in m.cells(ofPerson: i) { out[m.itemIDs[Int(m.itemIndices[k])]] = m.responses[k] }
        return out
    }

    @Test("wide with a session_id column: 1/0/true/false/NA/empty cells, spaces, empty persons reported")
    func wideWithSessionID() throws {
        let files = try CSVFixtures()
        let path = try files.write(
            "wide.csv",
            "session_id,q1,q2,q3\n"
                + "s1,1,0,\n"
                + "s2,,,\n"
                + "\n"
                + "s3,true,FALSE,NA\n"
                + "s4, 1 ,0,1\n"
                + "s5,na,,\n")
        let (m, report) = try ResponseMatrix.load(csv: path)
        #expect(m.itemIDs == ["q1", "q2", "q3"])
        #expect(m.personIDs == ["s1", "s3", "s4"])
        #expect(m.rowOffsets == [0, 2, 4, 7])
        #expect(m.itemIndices == [0, 1, 0, 1, 0, 1, 2])
        #expect(m.responses == [1, 0, 1, 0, 1, 0, 1])
        #expect(report.layout == .wide)
        #expect(report.idColumn == "session_id")
        #expect(report.dataRows == 5)
        #expect(report.personsRead == 5)
        #expect(report.emptyPersons.map(\.id) == ["s2", "s5"])
        #expect(report.emptyPersons.map(\.line) == [3, 7])
        #expect(report.blankResponses == 0)
        #expect(report.path == path)
    }

    @Test("database booleans t/f (any case) read as 1/0, as true/false are; other single letters are not responses")
    func databaseBooleans() throws {
        let files = try CSVFixtures()
        let letters = try files.write("tf.csv", "session_id,q1,q2,q3\ns1,t,f,\ns2,F,T,t\n")
        let digits = try files.write("10.csv", "session_id,q1,q2,q3\ns1,1,0,\ns2,0,1,1\n")
        let (a, _) = try ResponseMatrix.load(csv: letters)
        let (b, _) = try ResponseMatrix.load(csv: digits)
        #expect(a.responses == b.responses && a.itemIndices == b.itemIndices && a.rowOffsets == b.rowOffsets)
        for cell in ["a", "x", "y", "n", "tt", "ff"] {
            var text = cell
            #expect(text.withUTF8 { ResponseCell.parse($0) } == .invalid, "\(cell)")
        }
    }

    @Test("wide with person_id (or another id name, any case) as the first column")
    func wideWithPersonID() throws {
        let files = try CSVFixtures()
        let (m, report) = try ResponseMatrix.load(csv: try files.write("p.csv", "person_id,a,b\np9,1,1\np7,0,\n"))
        #expect(report.idColumn == "person_id")
        #expect(m.personIDs == ["p9", "p7"])
        #expect(row(m, 0) == ["a": 1, "b": 1])
        #expect(row(m, 1) == ["a": 0])

        let (m2, report2) = try ResponseMatrix.load(csv: try files.write("id.csv", "ID,a\nx,1\n"))
        #expect(report2.idColumn == "ID")
        #expect(m2.personIDs == ["x"])

        // A custom session column name marks the id column too.
        let (m3, report3) = try ResponseMatrix.load(
            csv: try files.write("c.csv", "candidate,a\nc1,0\n"),
            options: ResponseFileOptions(sessionColumn: "candidate"))
        #expect(report3.idColumn == "candidate")
        #expect(m3.personIDs == ["c1"])
        #expect(m3.itemIDs == ["a"])
    }

    @Test("wide without an id column: every column is an item, persons are numbered by data row")
    func wideWithoutID() throws {
        let files = try CSVFixtures()
        let (m, report) = try ResponseMatrix.load(csv: try files.write("noid.csv", "q1,q2,q3\n1,0,1\n0,0,\n\n1,1,1\n"))
        #expect(report.idColumn == nil)
        #expect(m.itemIDs == ["q1", "q2", "q3"])
        #expect(m.personIDs == ["1", "2", "3"])
        #expect(m.rowOffsets == [0, 3, 5, 8])
        #expect(m.responses == [1, 0, 1, 0, 0, 1, 1, 1])

        // An empty row keeps its number: the next person is still numbered by its data row.
        let (m2, report2) = try ResponseMatrix.load(csv: try files.write("gap.csv", "q1,q2\n1,0\n,\n0,1\n"))
        #expect(m2.personIDs == ["1", "3"])
        #expect(report2.emptyPersons.map(\.id) == ["2"])
        #expect(report2.emptyPersons.map(\.line) == [3])
        #expect(report2.personsRead == 3)
    }

    @Test("ICAR16 (quoted header, no id column, 16 persons without responses) loads")
    func icar16() throws {
        let (m, report) = try ResponseMatrix.load(csv: Repository.file("Data/icar16.csv").path)
        #expect(report.layout == .wide)
        #expect(report.idColumn == nil)
        #expect(report.dataRows == 1525)
        #expect(m.itemCount == 16)
        #expect(m.itemIDs.first == "reason.4")
        #expect(m.itemIDs.last == "rotate.8")
        #expect(m.personCount == 1509)
        #expect(report.emptyPersons.count == 16)
        #expect(m.cellCount == 23_257)
    }

    @Test("long layout with the default column names; interleaved rows of a session are gathered")
    func longDefault() throws {
        let files = try CSVFixtures()
        let path = try files.write(
            "long.csv",
            "session_id,item_id,response,comment\n"
                + "s1,i1,1,first\n"
                + "s1,i2,0,\n"
                + "s2,i1,0,\n"
                + "s1,i3,1,back to s1\n"
                + "s2,i3,,blank\n"
                + "s3,i2,NA,only NA\n"
                + "s2,i2,true,\n"
                + "s1, i4 ,False,\n")
        let (m, report) = try ResponseMatrix.load(csv: path)
        #expect(report.layout == .long)
        #expect(m.personIDs == ["s1", "s2"])
        #expect(m.itemIDs == ["i1", "i2", "i3", "i4"])
        #expect(m.rowOffsets == [0, 4, 6])
        #expect(m.itemIndices == [0, 1, 2, 3, 0, 1])
        #expect(m.responses == [1, 0, 1, 0, 0, 1])
        #expect(report.dataRows == 8)
        #expect(report.personsRead == 3)
        #expect(report.blankResponses == 2)
        #expect(report.emptyPersons.map(\.id) == ["s3"])
        #expect(report.emptyPersons.map(\.line) == [7])
        #expect(report.idColumn == nil)
    }

    @Test("long layout with overridden names: the app's export with true/false answers")
    func longOverridden() throws {
        let files = try CSVFixtures()
        let path = try files.write(
            "export.csv",
            "user_id,question_id,is_correct,test_session_id,extra\n"
                + "u1,q10,true,t1,x\n"
                + "u2,q10,FALSE,t2,\n"
                + "u1,q11,false,t1,\"a, b\"\n"
                + "u1,q12,True,t1,z\n"
                + "u3,q12,,t3,no answer\n")
        let options = ResponseFileOptions(sessionColumn: "test_session_id", itemColumn: "question_id", responseColumn: "is_correct")
        let (m, report) = try ResponseMatrix.load(csv: path, options: options)
        #expect(report.layout == .long)
        #expect(m.personIDs == ["t1", "t2"])
        #expect(m.itemIDs == ["q10", "q11", "q12"])
        #expect(row(m, 0) == ["q10": 1, "q11": 0, "q12": 1])
        #expect(row(m, 1) == ["q10": 0])
        #expect(report.emptyPersons.map(\.id) == ["t3"])
        #expect(report.emptyPersons.map(\.line) == [6])
        #expect(report.blankResponses == 1)
    }
}

@Suite("ResponseMatrix.load(csv:): error messages")
struct ResponseMatrixLoadErrorTests {
    @Test("garbage values in wide columns: one error per column, first line and value, with the count")
    func garbageWide() throws {
        let files = try CSVFixtures()
        let path = try files.write(
            "garbage.csv",
            "session_id,q1,q2,q3\n"
                + "s1,1,x,0\n"
                + "s2,1,0,0\n"
                + "s3,yes,maybe,1\n"
                + "s4,0,2,1\n")
        let error = #expect(throws: InputErrors.self) { _ = try ResponseMatrix.load(csv: path) }
        #expect(error?.errors.count == 2)
        #expect(
            error?.description == """
                \(path):4:2: error: column 'q1': 'yes' is not a response; allowed: 1, 0, true, false, t, f, or empty/NA for not administered
                \(path):2:3: error: column 'q2': 'x' is not a response; allowed: 1, 0, true, false, t, f, or empty/NA for not administered (3 invalid cells in this column)
                """)
    }

    @Test("a row with the wrong number of fields (too few and too many)")
    func wrongFieldCount() throws {
        let files = try CSVFixtures()
        let path = try files.write("fields.csv", "session_id,q1,q2\ns1,1,0\ns2,1\ns3,1,0,1\n")
        let error = #expect(throws: InputErrors.self) { _ = try ResponseMatrix.load(csv: path) }
        #expect(
            error?.description == """
                \(path):3:2: error: expected 3 fields as in the header, found 2
                \(path):4:4: error: expected 3 fields as in the header, found 4
                """)
    }

    @Test("the same item twice in a long session names both lines")
    func duplicateItemLong() throws {
        let files = try CSVFixtures()
        let path = try files.write("dup.csv", "session_id,item_id,response\ns1,i1,1\ns2,i1,0\ns1,i2,1\ns1,i1,0\n")
        let error = #expect(throws: InputErrors.self) { _ = try ResponseMatrix.load(csv: path) }
        #expect(error?.description == "\(path):5:2: error: item 'i1' is repeated in session 's1' (first on line 2)")
    }

    @Test("an item three times in a long session: every repeat names the first line")
    func triplicateItemLong() throws {
        let files = try CSVFixtures()
        let path = try files.write("dup3.csv", "session_id,item_id,response\ns1,i1,1\ns1,i1,0\ns1,i1,1\n")
        let error = #expect(throws: InputErrors.self) { _ = try ResponseMatrix.load(csv: path) }
        #expect(error?.errors.map(\.line) == [3, 4])
        #expect(error?.errors.first?.description == "\(path):3:2: error: item 'i1' is repeated in session 's1' (first on line 2)")
        #expect(error?.errors.last?.description == "\(path):4:2: error: item 'i1' is repeated in session 's1' (first on line 2)")
    }

    @Test("a person id repeated in a wide file")
    func duplicatePersonWide() throws {
        let files = try CSVFixtures()
        let path = try files.write("dupid.csv", "person_id,q1\np1,1\np2,0\np1,1\n")
        let error = #expect(throws: InputErrors.self) { _ = try ResponseMatrix.load(csv: path) }
        #expect(error?.description == "\(path):4:1: error: person_id 'p1' already appeared on line 2")
    }

    @Test("a long-layout column missing from the header")
    func missingLongColumn() throws {
        let files = try CSVFixtures()
        let path = try files.write("nocol.csv", "session_id,item_id,answer\ns1,i1,1\n")
        // Detected as long from the session and item columns, so the missing one is named.
        let error = #expect(throws: InputError.self) { _ = try ResponseMatrix.load(csv: path) }
        #expect(
            error?.description
                == "\(path):1: error: no response column 'response' in the header (session_id,item_id,answer); name it with --response-column")

        let error2 = #expect(throws: InputError.self) {
            _ = try ResponseMatrix.load(csv: path, options: ResponseFileOptions(sessionColumn: "test_session_id", layout: .long))
        }
        #expect(
            error2?.description
                == "\(path):1: error: no session column 'test_session_id' in the header (session_id,item_id,answer); name it with --session-column")
    }

    @Test("an empty file, a file of blank lines, and a header without data rows")
    func emptyFile() throws {
        let files = try CSVFixtures()
        let empty = try files.write("empty.csv", "")
        let error = #expect(throws: InputError.self) { _ = try ResponseMatrix.load(csv: empty) }
        #expect(error?.description == "\(empty): error: the file is empty; expected a header row")

        let blank = try files.write("blank.csv", "\n\r\n\n")
        let error2 = #expect(throws: InputError.self) { _ = try ResponseMatrix.load(csv: blank) }
        #expect(error2?.description == "\(blank): error: the file is empty; expected a header row")

        let headerOnly = try files.write("header.csv", "\nsession_id,q1\n\n")
        let error3 = #expect(throws: InputError.self) { _ = try ResponseMatrix.load(csv: headerOnly) }
        #expect(error3?.description == "\(headerOnly):2: error: no data rows after the header")
    }
}

@Suite("ResponseMatrix.load: memory budget")
struct ResponseMatrixMemoryTests {
    @Test("reading stops past the budget with an error naming the line reached; within it, the same matrix")
    func budget() throws {
        let files = try CSVFixtures()
        var text = "session_id,item_id,response\n"
        for k in 0..<70_000 { text += "s\(k / 10),i\(k % 10),\(k % 3 == 0 ? 1 : 0)\n" }
        let path = try files.write("long.csv", text)
        do {
            _ = try ResponseMatrix.load(csv: path, maxMemoryBytes: 1_000_000)
            Issue.record("no error")
        } catch {
            #expect(
                "\(error)"
                    == "\(path):65537: error: by this line the responses need about 3 MiB in memory (65535 responses, 6554 persons), more than the limit of 0 MiB; calibration keeps every response in memory: raise max memory"
            )
            var named = ResponseFileOptions()
            named.naming = .option
            #expect(
                throws: InputError(
                    file: path, line: 65537,
                    message:
                        "by this line the responses need about 3 MiB in memory (65535 responses, 6554 persons), more than the limit of 0 MiB; calibration keeps every response in memory: raise --max-memory"
                )
            ) {
                try ResponseMatrix.load(csv: path, options: named, maxMemoryBytes: 1_000_000)
            }
        }
        let bounded = try ResponseMatrix.load(csv: path, maxMemoryBytes: 1 << 30)
        let free = try ResponseMatrix.load(csv: path)
        #expect(bounded.matrix.cellCount == 70_000 && bounded.matrix.cellCount == free.matrix.cellCount)
    }
}
