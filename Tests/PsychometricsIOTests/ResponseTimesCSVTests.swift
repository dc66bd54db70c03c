import Foundation
@testable import Psychometrics
@testable import PsychometricsIO
import Testing
import TestSupport

/// Response times read with the responses (`ResponseFileOptions.timeColumn`, `timeSuffix`): each time lands on its
/// own cell whatever the row order and the parallel chunking, missing and dropped times are NaN.
@Suite("Response times in response files")
struct ResponseTimesCSVTests {
    /// 60 sessions × 5 items, rows shuffled (a session's rows scattered), every 11th time empty, one `NA`, one 0.
    static func longFile() -> (text: String, expected: [String: Float]) {
        var rng = SeededGenerator(seed: 3)
        var rows: [(String, String)] = [], expected: [String: Float] = [:]
        for s in 0..<60 {
            for i in 0..<5 {
                let k = s * 5 + i
                let t: String
                if k % 11 == 0 {
                    t = ""
                } else if k == 7 {
                    t = "NA"
                } else if k == 8 {
                    t = "0"
                } else {
                    t = String(format: "%.3f", 1 + Double(k) * 0.731)
                }
                if let v = Float(t), v > 0 { expected["s\(s)|q\(i)"] = v }
                rows.append(("s\(s),q\(i),\((s * i) % 2),\(t)", "s\(s)|q\(i)"))
            }
        }
        rows.shuffle(using: &rng)
        return ("session_id,item_id,response,seconds\n" + rows.map(\.0).joined(separator: "\n") + "\n", expected)
    }

    static func check(_ matrix: ResponseMatrix, _ times: ResponseTimes, _ expected: [String: Float]) {
        #expect(times.seconds.count == matrix.cellCount)
        for i in 0..<matrix.personCount {
            for k in matrix.cells(ofPerson: i) {
                let key = "\(matrix.personIDs[i])|\(matrix.itemIDs[Int(matrix.itemIndices[k])])"
                if let t = expected[key] { #expect(times.seconds[k] == t, "\(key)") } else { #expect(times.seconds[k].isNaN, "\(key)") }
            }
        }
    }

    @Test(arguments: [(1, 4 << 20), (2, 97), (3, 200)])
    func longLayout(threads: Int, chunk: Int) throws {
        let fixtures = try CSVFixtures()
        let (text, expected) = Self.longFile()
        let path = try fixtures.write("long.csv", text)
        var options = ResponseFileOptions()
        options.timeColumn = "seconds"
        let (matrix, report) = try ResponseMatrix.load(csv: path, options: options, maxMemoryBytes: nil, threads: threads, chunkBytes: chunk)
        Self.check(matrix, try #require(report.times), expected)
        #expect(report.droppedTimes == 1)
        #expect(report.firstDroppedTimeLine != nil)
        // Without the option the same file reads as before, with no times.
        let plain = try ResponseMatrix.load(csv: path, options: ResponseFileOptions(), maxMemoryBytes: nil, threads: threads, chunkBytes: chunk)
        #expect(plain.matrix == matrix && plain.report.times == nil)
    }

    @Test(arguments: [(1, 4 << 20), (2, 61)])
    func wideLayout(threads: Int, chunk: Int) throws {
        let fixtures = try CSVFixtures()
        // q2 has no time column; q1_time sits before its item; an unanswered item's time is ignored.
        var lines = ["id,q1_time,q1,q2,q3,q3_time"], expected: [String: Float] = [:]
        for s in 0..<40 {
            let t1 = Float(s) + 0.5, t3 = Float(2 * s) + 1.25
            let q3 = s % 4 == 0 ? "" : "\(s % 2)"
            lines.append("p\(s),\(t1),\(s % 2),1,\(q3),\(t3)")
            expected["p\(s)|q1"] = t1
            if !q3.isEmpty { expected["p\(s)|q3"] = t3 }
        }
        let path = try fixtures.write("wide.csv", lines.joined(separator: "\n") + "\n")
        var options = ResponseFileOptions()
        options.timeSuffix = "_time"
        let (matrix, report) = try ResponseMatrix.load(csv: path, options: options, maxMemoryBytes: nil, threads: threads, chunkBytes: chunk)
        #expect(matrix.itemIDs == ["q1", "q2", "q3"])
        Self.check(matrix, try #require(report.times), expected)
    }

    @Test func badCellsNamed() throws {
        let fixtures = try CSVFixtures()
        let path = try fixtures.write("wide.csv", "id,q1,q1_time\na,1,12\nb,0,-1\nc,1,abc\nd,1,1e400\n")
        var options = ResponseFileOptions()
        options.timeSuffix = "_time"
        #expect {
            try ResponseMatrix.load(csv: path, options: options)
        } throws: { error in
            "\(error)".contains("wide.csv:3:3: error: column 'q1_time': '-1' is not a response time")
                && "\(error)".contains("(3 invalid cells in this column)")
        }
    }

    @Test func cellParser() {
        func parse(_ s: String) -> ResponseTimeCell { Array(s.utf8).withUnsafeBufferPointer { ResponseTimeCell.parse($0) } }
        #expect(parse(" 12.5 ") == .seconds(12.5))
        #expect(parse("7") == .seconds(7))
        #expect(parse(".25") == .seconds(0.25))
        #expect(parse("1e2") == .seconds(100))
        #expect(parse("") == .missing && parse("NA") == .missing && parse("na") == .missing)
        #expect(parse("0") == .dropped && parse("0.0001") == .dropped && parse("90000") == .dropped)
        #expect(
            parse("-1") == .invalid && parse(".") == .invalid && parse("1,5") == .invalid && parse("inf") == .invalid && parse("1.2.3") == .invalid)
    }
}
