import Foundation
import Psychometrics
@testable import PsychometricsIO
import Testing
import TestSupport

// The seam of batch scoring: `BatchScorer.SessionReader` turns rows into typed `SessionEvent`s with their file,
// line and column, and a `SessionEventSink` groups them. These tests read files into a sink that only records
// what it is given, so the reader's contract is checked apart from any consumer (the consumers' outputs are
// checked against each other in BatchScorerTests and BoundedMemoryScoringTests).

/// Records every event as a line of text.
private struct RecordingSink: SessionEventSink {
    var events: [String] = []
    var reasons: [String] = []
    var sessionsBegun: Int { 0 }

    mutating func take(_ event: SessionEvent) throws {
        switch event {
        case .file(let file, let ageColumn): events.append("file \(file) age \(ageColumn)")
        case .enter(let id, let file, let line, let column): events.append("enter \(String(decoding: id, as: UTF8.self)) \(file):\(line):\(column)")
        case .orphan(let file, let line, let column, let reason):
            events.append("orphan \(file):\(line):\(column)")
            reasons.append(reason)
        case .response(let item, let value, let seconds, let file, let line, let column):
            events.append("response \(item)=\(value)\(seconds.isNaN ? "" : " \(seconds)s") \(file):\(line):\(column)")
        case .failure(let file, let line, let column, let reason):
            events.append("failure \(file):\(line):\(column.map(String.init) ?? "-")")
            reasons.append(reason)
        case .age(let age, let file, let line, let column): events.append("age \(age) \(file):\(line):\(column)")
        case .endOfRow: events.append("end of row")
        }
    }
}

@Suite("BatchScorer: the reader's typed events")
struct SessionEventTests {
    /// Reads `paths` with a scorer of the six-item bank into a recording sink.
    private func read(
        _ paths: [String], in files: CSVFixtures, options: ResponseFileOptions = ResponseFileOptions(), ageColumn: String? = nil
    ) throws -> (RecordingSink, BatchScoringReport) {
        let scorer = try SessionScorer(bank: ItemBank.load(csv: try files.write("BANK.csv", SixItemBank.csv)), scale: IQScale())
        let owner = BatchScorer(scorer: scorer, fileOptions: options)
        owner.ageColumn = ageColumn
        let sources = try BatchScorer.InputSources(paths, spillPrefix: files.directory.appendingPathComponent("spill-").path)
        var reader = BatchScorer.SessionReader(owner: owner, sources: sources, progress: nil, started: Date())
        var sink = RecordingSink()
        try withExtendedLifetime(sources) { try reader.readAll(into: &sink) }
        return (sink, reader.finish(sessions: BatchScoringReport()))
    }

    @Test("a long file: each row enters its session; blank cells are no events; bad cells are failures at their column")
    func longFile() throws {
        let files = try CSVFixtures()
        let path = try files.write(
            "long.csv",
            """
            session_id,item_id,response,age
            s1,q1,1,30
            s1,q2,,30
            s1,q3,x,30
            ,q1,1,30
            s2,q9,1,
            s2,q4,0,abc
            s2,q5

            """)
        let (sink, report) = try read([path], in: files, ageColumn: "age")
        #expect(
            sink.events == [
                "file 0 age 3",
                "enter s1 0:2:1", "age 30.0 0:2:4", "response 0=1 0:2:2",
                "enter s1 0:3:1", "age 30.0 0:3:4",
                "enter s1 0:4:1", "age 30.0 0:4:4", "failure 0:4:3",
                "orphan 0:5:1",
                "enter s2 0:6:1", "failure 0:6:2",
                "enter s2 0:7:1", "failure 0:7:4", "response 3=0 0:7:2",
                "enter s2 0:8:1", "failure 0:8:2"
            ])
        #expect(sink.reasons.count == 5)
        #expect(sink.reasons[0].contains("'x' is not a response"))
        #expect(sink.reasons[1].contains("belongs to no session"))
        #expect(sink.reasons[2].contains("unknown item id 'q9'"))
        #expect(sink.reasons[4].contains("expected 4 fields as in the header, found 2"))
        #expect(report.rowsRead == 7 && report.blankResponses == 1 && report.files == 1)
    }

    @Test("a wide file: one session per row, closed by end of row; times travel with their responses; a bad time is the failure, not the response")
    func wideFile() throws {
        let files = try CSVFixtures()
        let path = try files.write(
            "wide.csv",
            """
            session_id,q1,q2,q3,q1_rt,q3_rt
            w1,1,,0,2.5,
            ,1,1,1,1,1
            w2,1,7,0,bad,0

            """)
        var options = ResponseFileOptions()
        options.timeSuffix = "_rt"
        let (sink, report) = try read([path], in: files, options: options)
        #expect(
            sink.events == [
                "file 0 age -1",
                "enter w1 0:2:1", "response 0=1 2.5s 0:2:2", "response 2=0 0:2:4", "end of row",
                "orphan 0:3:1",
                "enter w2 0:4:1", "failure 0:4:5", "failure 0:4:3", "response 2=0 0:4:4", "end of row"
            ])
        #expect(sink.reasons[1].contains("is not a response time"))
        #expect(report.rowsRead == 3 && report.droppedTimes == 1)
    }
}
