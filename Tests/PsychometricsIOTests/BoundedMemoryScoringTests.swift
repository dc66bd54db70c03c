import Foundation
import Psychometrics
import PsychometricsIO
import Testing
import TestSupport
#if canImport(Glibc)
    import Glibc
#endif

// `BatchScorer.maxMemoryBytes` bounds a run whatever the input's order: finished-session hashes spill to sorted
// runs, regrouping goes through partition files. Each path must give exactly the output of the in-memory one.

@Suite("BatchScorer: bounded memory gives the same output")
struct BoundedMemoryScoringTests {
    /// Same scores, rejects and counts; the spill statistics and timing may differ.
    func expectSame(_ a: BatchFixtures.Output, _ b: BatchFixtures.Output, _ label: String) {
        #expect(a.scores == b.scores, "\(label)")
        #expect(a.rejects == b.rejects, "\(label)")
        var x = a.report, y = b.report
        for r in [\BatchScoringReport.seconds] { x[keyPath: r] = 0; y[keyPath: r] = 0 }
        x.regroupPartitions = 0; y.regroupPartitions = 0
        x.sessionHashRuns = 0; y.sessionHashRuns = 0
        #expect(x == y, "\(label)")
    }

    /// Long-layout rows of `count` sessions (BatchFixtures' pattern), shuffled by `seed`, with some bad rows.
    static func shuffled(_ count: Int, seed: UInt64) -> String {
        var rng = SeededGenerator(seed: seed)
        var rows: [String] = []
        for s in BatchFixtures.sessions(count) {
            for cell in s.cells { rows.append("\(s.id),\(cell.item),\(cell.response)\n") }
        }
        rows.append("s002,q1,7\n")
        rows.append(",q2,1\n")
        rows.append("s003,zz,1\n")
        rows.append("s004,q1,1,extra\n")
        rows.shuffle(using: &rng)
        return "session_id,item_id,response\n" + rows.joined()
    }

    @Test("shuffled rows: partitioned regrouping (2 … 200 partitions) equals in-memory regrouping, 1 or 2 workers")
    func partitionedRegroup() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        for seed in 1...6 {
            let path = try files.write("shuffled\(seed).csv", Self.shuffled(300 + 50 * seed, seed: UInt64(seed)))
            let memory = try BatchFixtures.run(scorer, [path], in: files, name: "memory")
            #expect(memory.report.regrouped && memory.report.regroupPartitions == 1)
            for (budget, workers) in [(1 << 17, 2), (1 << 15, 1), (1 << 12, 2)] {
                let bounded = try BatchFixtures.run(scorer, [path], in: files, name: "bounded", workers: workers, maxMemoryBytes: budget)
                #expect(bounded.report.regroupPartitions > 1, "seed \(seed), budget \(budget)")
                expectSame(bounded, memory, "seed \(seed), budget \(budget), \(workers) workers")
            }
        }
    }

    @Test("messy files (quoted ids with line breaks, CR, blank lines, rows without ids, several files): partitions equal memory")
    func messyFiles() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        var partitioned = 0
        for seed in 1...20 {
            var gen = MessyLongFile(rng: SeededGenerator(seed: UInt64(100 + seed)))
            var gen2 = MessyLongFile(rng: SeededGenerator(seed: UInt64(200 + seed)))
            let a = try files.write("m\(seed).csv", gen.text(sessions: 60))
            let b = try files.write("n\(seed).csv", gen2.text(sessions: 20))
            let w = try files.write("w\(seed).csv", BatchFixtures.wide(BatchFixtures.sessions(5)))
            let memory = try BatchFixtures.run(scorer, [a, w, b, a], in: files, name: "memory")
            let bounded = try BatchFixtures.run(scorer, [a, w, b, a], in: files, name: "bounded", maxMemoryBytes: 1 << 13)
            if bounded.report.regroupPartitions > 1 { partitioned += 1 }
            expectSame(bounded, memory, "seed \(seed)")
        }
        #expect(partitioned == 20, "the same file twice always regroups")
    }

    @Test(
        "contiguous input past the finished-session budget spills sorted runs and streams on; a session that comes back after a spill regroups at the end"
    )
    func sessionHashRuns() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let sessions = BatchFixtures.sessions(3000)
        let contiguous = try files.write("c.csv", BatchFixtures.longContiguous(sessions))
        let memory = try BatchFixtures.run(scorer, [contiguous], in: files, name: "memory")
        for parallel in [true, false] {
            let bounded = try BatchFixtures.run(scorer, [contiguous], in: files, name: "bounded", parallel: parallel, maxMemoryBytes: 1 << 15)
            #expect(bounded.report.sessionHashRuns >= 2, "parallel \(parallel)")
            #expect(!bounded.report.regrouped)
            expectSame(bounded, memory, "contiguous, parallel \(parallel)")
        }
        // s001 comes back at the very end: only the merge of the runs can see it.
        let text = BatchFixtures.longContiguous(sessions) + "s001,q6,1\n"
        let late = try files.write("late.csv", text)
        let lateMemory = try BatchFixtures.run(scorer, [late], in: files, name: "late-memory")
        #expect(lateMemory.report.regrouped)
        for parallel in [true, false] {
            let bounded = try BatchFixtures.run(scorer, [late], in: files, name: "late-bounded", parallel: parallel, maxMemoryBytes: 1 << 15)
            #expect(bounded.report.regrouped && bounded.report.sessionHashRuns == 0)
            expectSame(bounded, lateMemory, "late session, parallel \(parallel)")
        }
    }

    @Test("a record longer than the limit is an error naming its line, on both paths")
    func recordTooLong() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let path = try files.write("long.csv", "session_id,item_id,response\ns1,q1,1\n" + String(repeating: "x", count: 200_000) + "\ns2,q1,1\n")
        for parallel in [true, false] {
            do {
                _ = try BatchFixtures.run(scorer, [path], in: files, name: "o", parallel: parallel, maxMemoryBytes: 1 << 19)
                Issue.record("no error, parallel \(parallel)")
            } catch {
                #expect(
                    "\(error)"
                        == "\(path):3: error: a record longer than 65536 bytes starts here (the limit); is a line break missing, or a quote left open?",
                    "parallel \(parallel)")
            }
        }
    }

    @Test("interleaved sessions from a FIFO are scored (never reopened), as from a file")
    func fifo() throws {
        let files = try CSVFixtures()
        let scorer = try BatchFixtures.scorer(files)
        let text = BatchFixtures.longInterleaved(BatchFixtures.sessions(40))
        let regular = try files.write("i.csv", text)
        let expected = try BatchFixtures.run(scorer, [regular], in: files, name: "file")
        #expect(expected.report.regrouped)
        let fifo = files.directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            var bytes = Array(text.utf8)
            _ = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress!, $0.count) }
            close(fd)
        }
        writer.start()
        let out = try BatchFixtures.run(scorer, [fifo], in: files, name: "fifo")
        #expect(out.scores == expected.scores)
        #expect(out.report.sessionsScored == expected.report.sessionsScored && out.report.regrouped)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: files.directory.path).filter { $0.contains(".spill-") }.isEmpty,
            "the spooled copy is removed")
    }
}
