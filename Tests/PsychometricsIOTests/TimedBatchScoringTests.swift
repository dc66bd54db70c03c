import Foundation
import Integrity
import Psychometrics
import PsychometricsIO
import Testing

/// Batch scoring with response times (`BatchScorer.timedScorer`): every path that carries a response carries its
/// time — serial, parallel chunks, regrouped in memory and through partition files, wide — and each score row is
/// `TimedSessionScorer`'s score of that session; bad time cells reject their session at file, line and column.
@Suite("Batch scoring with response times")
struct TimedBatchScoringTests {
    struct Session {
        var id: String
        var rows: [(item: String, response: String, seconds: String)]
    }

    /// A 20-item bank with a time model, and 300 simulated sessions of 12 items each with their times (three
    /// decimals, as `simulate --times` writes them); some cells planted: an NA time, a 0 (dropped), a blank
    /// response with a time, a negative time (the session rejected), a session of rapid guesses.
    static func fixture() throws -> (bank: ItemBank, sessions: [Session]) {
        var rng = SeededGenerator(seed: 31)
        var bank = BankSpecification(model: .twoPL, itemCount: 20).draw(using: &rng)
        let timeItems = ResponseTimeSimulator.drawItems(count: 20, using: &rng)
        let population = try SpeedAccuracyPopulation(speedSD: 0.35, correlation: 0.5)
        for k in bank.items.indices { bank.items[k].timeModel = timeItems[k] }
        bank.speedPopulation = population
        let out = ResponseSimulator(bank: bank).timedMatrix(
            count: 300, itemIDs: bank.items.map(\.itemID),
            times: ResponseTimeSimulator(items: timeItems, population: population), using: &rng)
        var sessions: [Session] = []
        for i in 0..<out.matrix.personCount {
            let cells = out.matrix.cells(ofPerson: i).prefix(12)
            sessions.append(
                Session(
                    id: "p\(i)",
                    rows: cells.map { c in
                        (
                            out.matrix.itemIDs[Int(out.matrix.itemIndices[c])], "\(out.matrix.responses[c])",
                            String(format: "%.3f", Double(out.times.seconds[c]))
                        )
                    }))
        }
        sessions[3].rows[2].seconds = "NA"
        sessions[4].rows[5].seconds = "0"
        sessions[5].rows[1].response = ""
        sessions[6].rows[7].seconds = "-3"
        for k in 0..<8 { sessions[7].rows[k].seconds = "0.800" }
        return (bank, sessions)
    }

    static func longText(_ sessions: [Session], interleaved: Bool) -> String {
        var rows: [(String, (item: String, response: String, seconds: String))] = []
        if interleaved {
            let longest = sessions.map(\.rows.count).max() ?? 0
            for k in 0..<longest { for s in sessions where k < s.rows.count { rows.append((s.id, s.rows[k])) } }
        } else {
            for s in sessions { for r in s.rows { rows.append((s.id, r)) } }
        }
        return "session_id,item_id,response,seconds\n" + rows.map { "\($0.0),\($0.1.item),\($0.1.response),\($0.1.seconds)\n" }.joined()
    }

    struct Output: Equatable {
        var scores: String
        var rejects: String
        var partitions: Int
        var dropped: Int
    }

    static func run(
        _ path: String, bank: ItemBank, in dir: URL, options: ResponseFileOptions, parallel: Bool = true, workers: Int = 2,
        maxMemoryBytes: Int? = nil, format: ScoreOutputFormat = .csv
    ) throws -> Output {
        let scorer = try SessionScorer(bank: bank, scale: IQScale())
        let batch = BatchScorer(scorer: scorer, fileOptions: options, format: format)
        batch.timedScorer = try TimedSessionScorer(scorer: scorer)
        batch.parallelParsing = parallel
        batch.workers = workers
        batch.parallelChunkBytes = 4096
        if let maxMemoryBytes { batch.maxMemoryBytes = maxMemoryBytes }
        let scores = try AtomicFileWriter(path: dir.appendingPathComponent("scores.csv").path)
        let rejects = try AtomicFileWriter(path: dir.appendingPathComponent("rejects.csv").path)
        let report = try batch.run(inputs: [path], scores: scores, rejects: rejects)
        try scores.commit()
        try rejects.commit()
        return Output(
            scores: try String(contentsOfFile: scores.path, encoding: .utf8), rejects: try String(contentsOfFile: rejects.path, encoding: .utf8),
            partitions: report.regroupPartitions, dropped: report.droppedTimes)
    }

    @Test("serial, parallel chunks, regrouped in memory and through partitions, wide: the same rows, each TimedSessionScorer's score")
    func everyPath() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("timed-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (bank, sessions) = try Self.fixture()
        let longPath = dir.appendingPathComponent("long.csv").path, mixedPath = dir.appendingPathComponent("mixed.csv").path
        try Self.longText(sessions, interleaved: false).write(toFile: longPath, atomically: true, encoding: .utf8)
        try Self.longText(sessions, interleaved: true).write(toFile: mixedPath, atomically: true, encoding: .utf8)
        var options = ResponseFileOptions()
        options.timeColumn = "seconds"

        let serial = try Self.run(longPath, bank: bank, in: dir, options: options, parallel: false)
        #expect(serial.partitions == 0 && serial.dropped == 1)
        let rows = serial.scores.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let header = rows[0]
        #expect(Array(header.suffix(9)) == ["n_timed", "rapid_guesses", "rapid_excluded", "rte", "speed", "speed_sd", "lt", "lt_p", "time_flags"])
        func column(_ name: String) -> Int { header.firstIndex(of: name)! }
        // Each row is the library's score of its session with its times (as parsed from the same text).
        let timed = try TimedSessionScorer(scorer: SessionScorer(bank: bank, scale: IQScale()))
        let byID = Dictionary(uniqueKeysWithValues: sessions.map { ($0.id, $0) })
        #expect(rows.count - 1 == sessions.count - 1)
        for row in rows.dropFirst() {
            let s = byID[row[0]]!
            let kept = s.rows.filter { !$0.response.isEmpty }
            let seconds: [Double?] = kept.map { r in Double(r.seconds).flatMap { $0 > 0 ? $0 : nil } }
            let expected = try timed.score(itemIDs: kept.map(\.item), responses: kept.map { Int($0.response)! }, seconds: seconds)
            #expect(abs(Double(row[column("theta")])! - expected.score.estimate.theta) < 6e-5, "θ of \(s.id)")
            #expect(abs(Double(row[column("se")])! - expected.score.estimate.standardError) < 6e-5, "SE of \(s.id)")
            #expect(Int(row[column("n_timed")]) == expected.times.timedResponses && Int(row[column("rapid_guesses")]) == expected.times.rapidGuesses)
            #expect(abs(Double(row[column("speed")])! - expected.times.speed!) < 6e-5, "τ of \(s.id)")
            #expect(abs(Double(row[column("lt_p")])! - expected.times.timeFitPValue!) < 6e-5, "l_t p of \(s.id)")
            #expect(row[column("time_flags")] == expected.times.flags.map(\.rawValue).joined(separator: ";"))
        }
        let p3 = rows.first { $0[0] == "p3" }!, p4 = rows.first { $0[0] == "p4" }!, p7 = rows.first { $0[0] == "p7" }!
        #expect(p3[column("n_timed")] == "11" && p4[column("n_timed")] == "11")
        #expect(p7[column("rapid_guesses")] == "8" && p7[column("time_flags")].contains("rapid_guessing"))
        #expect(serial.rejects.contains("p6,\(longPath),\(6 * 12 + 8 + 1),4,\"seconds '-3' is not a response time; allowed: a number of seconds"))

        for workers in [1, 3] {
            #expect(try Self.run(longPath, bank: bank, in: dir, options: options, workers: workers) == serial, "\(workers) workers")
        }
        let memory = try Self.run(mixedPath, bank: bank, in: dir, options: options)
        #expect(memory.partitions == 1 && memory.scores == serial.scores && memory.dropped == 1)
        let spilled = try Self.run(mixedPath, bank: bank, in: dir, options: options, maxMemoryBytes: 1 << 12)
        #expect(spilled.partitions > 1 && spilled.scores == serial.scores && spilled.rejects == memory.rejects)

        // Wide: item q's time in q_time, the same scores.
        let items = bank.items.map(\.itemID)
        var wide = "session_id," + items.map { "\($0),\($0)_time" }.joined(separator: ",") + "\n"
        for s in sessions {
            let cells = Dictionary(uniqueKeysWithValues: s.rows.map { ($0.item, $0) })
            wide += s.id + "," + items.map { cells[$0].map { "\($0.response),\($0.seconds)" } ?? "," }.joined(separator: ",") + "\n"
        }
        let widePath = dir.appendingPathComponent("wide.csv").path
        try wide.write(toFile: widePath, atomically: true, encoding: .utf8)
        var wideOptions = ResponseFileOptions()
        wideOptions.timeSuffix = "_time"
        let wideOut = try Self.run(widePath, bank: bank, in: dir, options: wideOptions)
        #expect(wideOut.scores == serial.scores && wideOut.dropped == 1)
        #expect(wideOut.rejects.contains("p6,\(widePath),8,"))

        // JSON Lines carry the same values in a "times" object.
        let jsonl = try Self.run(longPath, bank: bank, in: dir, options: options, format: .jsonl)
        let first = try JSONSerialization.jsonObject(with: Data(jsonl.scores.split(separator: "\n")[0].utf8)) as! [String: Any]
        let times = try #require(first["times"] as? [String: Any])
        #expect(times["n_timed"] as? Int == 12)
        #expect((times["flags"] as? [String]) == rows[1][column("time_flags")].split(separator: ";").map(String.init))
        #expect(abs((times["speed"] as! Double) - Double(rows[1][column("speed")])!) < 1e-9)
    }

    @Test("with suspected items every row carries the preknowledge test: PreknowledgeTest's values, the flag below 0.01")
    func preknowledge() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("timed-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var (bank, sessions) = try Self.fixture()
        let suspected = Set(bank.items.prefix(6).map(\.itemID))
        // Session p10 knew the suspected items: right, in two seconds each.
        for k in sessions[10].rows.indices where suspected.contains(sessions[10].rows[k].item) {
            sessions[10].rows[k].response = "1"
            sessions[10].rows[k].seconds = "2.000"
        }
        let path = dir.appendingPathComponent("long.csv").path
        try Self.longText(sessions, interleaved: false).write(toFile: path, atomically: true, encoding: .utf8)
        var options = ResponseFileOptions()
        options.timeColumn = "seconds"
        let scorer = try SessionScorer(bank: bank, scale: IQScale())
        let timed = try TimedSessionScorer(scorer: scorer, compromised: suspected)
        let batch = BatchScorer(scorer: scorer, fileOptions: options)
        batch.timedScorer = timed
        let scores = try AtomicFileWriter(path: dir.appendingPathComponent("s.csv").path)
        let rejects = try AtomicFileWriter(path: dir.appendingPathComponent("r.csv").path)
        _ = try batch.run(inputs: [path], scores: scores, rejects: rejects)
        try scores.commit()
        try rejects.commit()
        let rows = try String(contentsOfFile: scores.path, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        #expect(Array(rows[0].suffix(4)) == ["pk_answered", "pk_lr", "pk_speed_z", "pk_p"])
        let byID = Dictionary(uniqueKeysWithValues: sessions.map { ($0.id, $0) })
        let column = { (name: String) in rows[0].firstIndex(of: name)! }
        var compared = 0
        for row in rows.dropFirst() {
            let s = byID[row[0]]!.rows.filter { !$0.response.isEmpty }
            let expected = try timed.score(
                itemIDs: s.map(\.item), responses: s.map { Int($0.response)! }, seconds: s.map { Double($0.seconds).flatMap { $0 > 0 ? $0 : nil } })
            let pk = try #require(expected.times.preknowledge)
            #expect(Int(row[column("pk_answered")]) == pk.compromisedAnswered)
            if let p = pk.combinedPValue {
                #expect(abs(Double(row[column("pk_p")])! - p) < 6e-5); compared += 1
            } else {
                #expect(row[column("pk_p")].isEmpty)
            }
        }
        #expect(compared > 100)
        let p10 = rows.first { $0[0] == "p10" }!
        #expect(p10[column("time_flags")].contains("preknowledge"), "\(p10)")
        #expect(throws: PsychometricsError.self) { try TimedSessionScorer(scorer: scorer, compromised: ["nope"]) }
    }

    @Test("a run names its time columns with a timed scorer, and only then")
    func settings() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("timed-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (bank, sessions) = try Self.fixture()
        let path = dir.appendingPathComponent("long.csv").path
        try Self.longText(sessions, interleaved: false).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: PsychometricsError.self) { try Self.run(path, bank: bank, in: dir, options: ResponseFileOptions()) }
        var options = ResponseFileOptions()
        options.timeColumn = "seconds"
        let batch = BatchScorer(scorer: try SessionScorer(bank: bank, scale: IQScale()), fileOptions: options)
        let scores = try AtomicFileWriter(path: dir.appendingPathComponent("s.csv").path)
        let rejects = try AtomicFileWriter(path: dir.appendingPathComponent("r.csv").path)
        #expect(throws: PsychometricsError.self) { try batch.run(inputs: [path], scores: scores, rejects: rejects) }
    }
}
