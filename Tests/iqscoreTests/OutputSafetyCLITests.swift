import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
    import Glibc
#endif

// Outputs that would destroy inputs or each other are refused before anything is read; outputs commit as a set
// with a manifest written last (`iqscore verify` checks it); SIGTERM removes temporary files, and the next run
// removes those a SIGKILL left.

@Suite("iqscore outputs: identity checks, manifest, temporary files", .timeLimit(.minutes(10)))
struct OutputSafetyCLITests {
    static let bank = ScoreCLITests.bank

    /// A workspace with BANK.csv and in.csv (a few sessions).
    static func workspace() throws -> CLIWorkspace {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", bank)
        try ws.write("in.csv", ScoreCLITests.sessions(4).text)
        return ws
    }

    @Test(
        "an output that is an input, the bank, another output or a link to an input: exit 1, nothing read or written",
        arguments: [
            (["--out", "in.csv"], "in.csv: error: --out is the same file as the input file in.csv; refusing to overwrite it (name another path)"),
            (
                ["--out", "BANK.csv"],
                "BANK.csv: error: --out is the same file as the --bank file BANK.csv; refusing to overwrite it (name another path)"
            ),
            (
                ["--out", "x.csv", "--rejects", "x.csv"],
                "x.csv: error: --rejects is the same file as the --out file x.csv; refusing to overwrite it (name another path)"
            ),
            (["--out", "link.csv"], "link.csv: error: --out is the same file as the input file in.csv; refusing to overwrite it (name another path)"),
            (
                ["--out", "x.csv", "--rejects", "./hard.csv"],
                "./hard.csv: error: --rejects is the same file as the input file in.csv; refusing to overwrite it (name another path)"
            ),
            (
                ["--out", "x.csv", "--summary-json", "BANK.csv"],
                "BANK.csv: error: --summary-json is the same file as the --bank file BANK.csv; refusing to overwrite it (name another path)"
            ),
            (
                ["--out", "/dev/null"],
                "/dev/null: error: --out is not a regular file, so there is no place beside it for the rejects; name one with --rejects"
            ),
            (["--out", "no-such-dir/x.csv"], "no-such-dir/x.csv: error: cannot write --out: the directory 'no-such-dir' does not exist")
        ])
    func refused(arguments: [String], message: String) throws {
        let ws = try Self.workspace()
        try FileManager.default.createSymbolicLink(atPath: ws.url("link.csv").path, withDestinationPath: "in.csv")
        try FileManager.default.linkItem(atPath: ws.url("in.csv").path, toPath: ws.url("hard.csv").path)
        let before = try ws.read("in.csv"), bankBefore = try ws.read("BANK.csv")
        let r = try IQScoreCLI.run(["score", "in.csv", "--bank", "BANK.csv"] + arguments, in: ws.directory)
        #expect(r.status == 1)
        #expect(r.stderr == message + "\n")
        #expect(try ws.read("in.csv") == before)
        #expect(try ws.read("BANK.csv") == bankBefore)
        #expect(try ws.contents() == ["BANK.csv", "in.csv", "link.csv", "hard.csv"])
    }

    @Test("--out /dev/null with --rejects: scores nowhere, rejects and no default manifest")
    func devNull() throws {
        let ws = try Self.workspace()
        let r = try ws.run("score", "in.csv", "--bank", "BANK.csv", "--out", "/dev/null", "--rejects", "r.csv", "--rejects", "/dev/null")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try ws.contents() == ["BANK.csv", "in.csv"])
    }

    @Test("the manifest names every output with rows, bytes and CRC-32; verify passes, then fails on a changed or missing output")
    func manifest() throws {
        let ws = try Self.workspace()
        try ws.write("bad.csv", "session_id,item_id,response\ns1,q1,7\n")
        let r = try ws.run("score", "in.csv", "bad.csv", "--bank", "BANK.csv", "--out", "scores.csv")
        #expect(r.status == 2, "\(r.stderr)")
        let manifest = try ws.json("scores.summary.json")
        let outputs = try #require(manifest["outputs"] as? [[String: Any]])
        #expect(outputs.map { $0["role"] as? String } == ["rejects", "scores"])
        #expect(outputs.map { $0["path"] as? String } == ["scores.rejects.csv", "scores.csv"])
        #expect(outputs.map { $0["rows"] as? Int } == [1, 4])
        for output in outputs {
            let data = try Data(contentsOf: ws.url(output["path"] as! String))
            #expect(output["bytes"] as? Int == data.count)
            #expect((output["crc32"] as? String)?.count == 8)
        }
        #expect(manifest["sessions_read"] as? Int == 5 && manifest["sessions_scored"] as? Int == 4 && manifest["sessions_rejected"] as? Int == 1)
        let ok = try ws.run("verify", "scores.summary.json")
        #expect(ok.status == 0)
        #expect(ok.stderr == "scores.summary.json: complete; every output matches its size and CRC-32\n")

        // One byte changed (same size): the checksum differs.
        var scores = Array(try Data(contentsOf: ws.url("scores.csv")))
        scores[scores.count - 2] ^= 1
        try Data(scores).write(to: ws.url("scores.csv"))
        try FileManager.default.removeItem(at: ws.url("scores.rejects.csv"))
        let bad = try ws.run("verify", "scores.summary.json")
        #expect(bad.status == 1)
        #expect(bad.stderrLines.count == 3)
        #expect(bad.stderrLines[0] == "error: scores.rejects.csv: missing or unreadable (rejects)")
        #expect(bad.stderrLines[1].hasPrefix("error: scores.csv: CRC-32 "))
    }

    @Test("calibrate writes its summary beside the bank as the manifest (bank rows, bytes, CRC-32)")
    func calibrateManifest() throws {
        let ws = try CLIWorkspace()
        #expect(try ws.run("simulate", "--items", "4", "--persons", "500", "--out", "r.csv", "--seed", "1").status == 0)
        let r = try ws.run("calibrate", "r.csv", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let outputs = try #require(try ws.json("bank.summary.json")["outputs"] as? [[String: Any]])
        #expect(outputs.map { $0["role"] as? String } == ["bank"])
        #expect(outputs.first?["rows"] as? Int == 4)
        #expect(try ws.run("verify", "bank.summary.json").status == 0)
        #expect(try ws.contents() == ["r.csv", "bank.csv", "bank.summary.json"])
    }

    /// A pid that no process has now (one that just ran and exited).
    static func deadPID() throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        return p.processIdentifier
    }

    @Test("temporary files of processes that no longer run are removed by the next run, and said so; a live one is kept")
    func staleTemporaries() throws {
        let ws = try Self.workspace()
        let dead = try Self.deadPID()
        try ws.write(".scores.csv.tmp-\(dead)", "half a file")
        try ws.write(".scores.rejects.csv.tmp-\(dead)", "half a file")
        try ws.write(".scores.csv.spill-\(dead)-3", "spill")
        try ws.write(".scores.csv.tmp-1", "init's: a running process")
        let r = try ws.run("score", "in.csv", "--bank", "BANK.csv", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let notes = r.stderrLines.filter { $0.hasPrefix("note: removed") }.sorted()
        #expect(
            notes
                == [".scores.csv.spill-\(dead)-3", ".scores.csv.tmp-\(dead)", ".scores.rejects.csv.tmp-\(dead)"].map {
                    "note: removed ./\($0), a temporary file left by an interrupted run"
                })
        #expect(try ws.contents() == ["BANK.csv", "in.csv", "scores.csv", "scores.rejects.csv", "scores.summary.json", ".scores.csv.tmp-1"])
    }

    @Test(
        "SIGTERM or SIGKILL at seeded moments of a run: the previous set stays whole (by its manifest) and no temporary file outlives the next run",
        arguments: [SIGTERM, SIGKILL])
    func interrupted(signal: Int32) throws {
        let ws = try CLIWorkspace()
        let binary = try #require(IQScoreCLI.executable)
        func iqscore(_ arguments: [String]) throws -> Process {
            let p = Process()
            p.executableURL = binary
            p.arguments = arguments
            p.currentDirectoryURL = ws.directory
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        let simulate = try iqscore([
            "simulate", "--items", "100", "--persons", "40000", "--items-per-session", "25", "--layout", "long",
            "--out", "big.csv", "--bank-out", "bank.csv", "--seed", "5"
        ])
        simulate.waitUntilExit()
        #expect(simulate.terminationStatus == 0)
        // The previous set: a complete run on the first lines.
        let lines = try ws.read("big.csv").split(separator: "\n", omittingEmptySubsequences: false)
        try ws.write("small.csv", lines.prefix(2001).joined(separator: "\n") + "\n")
        let first = try ws.run("score", "small.csv", "--bank", "bank.csv", "--out", "scores.csv")
        #expect(first.status == 0)
        let command = ["score", "big.csv", "--bank", "bank.csv", "--out", "scores.csv", "--threads", "1"]
        var moments = try KillMoments(
            test: "interrupted-\(signal)", fullRun: ["score", "big.csv", "--bank", "bank.csv", "--out", "timing.csv", "--threads", "1"], in: ws)
        for round in 0..<3 {
            let p = try iqscore(command)
            let delay = moments.next()
            usleep(delay.microseconds)
            kill(p.processIdentifier, signal)
            p.waitUntilExit()
            let verified = try ws.run("verify", "scores.summary.json")
            let status = p.terminationStatus
            if p.terminationReason == .exit && (status == 0 || status == 2) {
                #expect(verified.status == 0, "round \(round), \(delay): a finished run must leave a complete set")
            } else {
                // Killed: the previous set (from `first` or an earlier finished round) is complete.
                #expect(verified.status == 0, "round \(round), \(delay): \(verified.stderr)")
                if signal == SIGTERM {
                    // Before the command installs its handler (at its start, before it reads or writes anything) the
                    // signal ends it as it ends any process; from then on it removes its temporary files and exits
                    // 128 + 15. A busy machine can take longer than the shortest wait to start the binary.
                    let beforeHandler = p.terminationReason == .uncaughtSignal && status == SIGTERM
                    #expect(
                        beforeHandler || (p.terminationReason == .exit && status == 128 + SIGTERM),
                        "round \(round), \(delay): \(p.terminationReason) \(status)")
                    #expect(try ws.contents().filter { $0.hasPrefix(".") }.isEmpty, "SIGTERM removes temporary files")
                }
            }
        }
        // The next run cleans up whatever SIGKILL left.
        let last = try ws.run("score", "small.csv", "--bank", "bank.csv", "--out", "scores.csv")
        #expect(last.status == 0)
        #expect(try ws.contents().filter { $0.hasPrefix(".") }.isEmpty)
        #expect(try ws.run("verify", "scores.summary.json").status == 0)
    }

    @Test("calibrate interrupted by SIGTERM or SIGKILL: the previous bank and summary stay a complete set", arguments: [SIGTERM, SIGKILL])
    func calibrateInterrupted(signal: Int32) throws {
        let ws = try CLIWorkspace()
        #expect(try ws.run("simulate", "--items", "60", "--persons", "20000", "--out", "r.csv", "--seed", "9").status == 0)
        let first = try ws.run("calibrate", "r.csv", "--out", "bank.csv", "--max-cycles", "3", "--no-se")
        #expect(first.status == 0 || first.status == 3)
        let binary = try #require(IQScoreCLI.executable)
        var moments = try KillMoments(
            test: "calibrateInterrupted-\(signal)", fullRun: ["calibrate", "r.csv", "--out", "timing.csv", "--threads", "1"], in: ws)
        for round in 0..<3 {
            let p = Process()
            p.executableURL = binary
            p.arguments = ["calibrate", "r.csv", "--out", "bank.csv", "--threads", "1"]
            p.currentDirectoryURL = ws.directory
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            let delay = moments.next()
            usleep(delay.microseconds)
            kill(p.processIdentifier, signal)
            p.waitUntilExit()
            let verified = try ws.run("verify", "bank.summary.json")
            #expect(verified.status == 0, "round \(round), \(delay) (\(p.terminationReason), \(p.terminationStatus)): \(verified.stderr)")
            if signal == SIGTERM && p.terminationReason == .exit && p.terminationStatus == 128 + SIGTERM {
                #expect(try ws.contents().filter { $0.hasPrefix(".") }.isEmpty, "SIGTERM removes temporary files")
            }
        }
        let last = try ws.run("calibrate", "r.csv", "--out", "bank.csv", "--max-cycles", "3", "--no-se")
        #expect(last.status == 0 || last.status == 3)
        #expect(try ws.contents().filter { $0.hasPrefix(".") }.isEmpty)
    }
}

@Suite("iqscore --max-memory", .timeLimit(.minutes(10)))
struct MaxMemoryCLITests {
    @Test("a size that is not one, or out of range, is a usage error naming the allowed form", arguments: ["3X", "16M", "2T", "0", "nan", "1e3G"])
    func badSizes(text: String) throws {
        let ws = try CLIWorkspace()
        for command in [["score", "s.csv", "--bank", "b.csv", "--out", "o.csv"], ["calibrate", "r.csv", "--out", "b.csv"]] {
            let r = try IQScoreCLI.run(command + ["--max-memory", text], in: ws.directory)
            #expect(r.status == 64)
            #expect(r.stderr.contains("--max-memory must be a size from 32M to 1T such as 512M or 2G (K, M, G, T = ×1024ⁿ), got '\(text)'"))
        }
    }

    @Test("calibrate refuses a fit whose estimated peak exceeds the budget, before it starts; without standard errors it fits")
    func calibrateBudget() throws {
        let ws = try CLIWorkspace()
        #expect(try ws.run("simulate", "--items", "600", "--persons", "300", "--out", "r.csv", "--seed", "2").status == 0)
        let r = try ws.run("calibrate", "r.csv", "--out", "b.csv", "--max-memory", "32M", "--threads", "2")
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("error: the fit needs about "))
        #expect(
            r.stderr.hasSuffix(
                "MiB of memory (300 persons, 600 items, 180000 responses, dense E-step), more than the limit of 32 MiB; raise --max-memory, use --e-step sparse or skip standard errors (--no-se)\n"
            ))
        #expect(try ws.contents() == ["r.csv"], "nothing written")
        let ok = try ws.run("calibrate", "r.csv", "--out", "b.csv", "--max-memory", "32M", "--no-se", "--max-cycles", "5")
        #expect(ok.status == 0 || ok.status == 3, "\(ok.stderr)")
    }
}

@Suite("iqscore model names", .timeLimit(.minutes(10)))
struct ModelNameCLITests {
    @Test("--model takes any case (2PL as the literature writes it); an unknown model is a usage error")
    func modelCase() throws {
        let ws = try CLIWorkspace()
        #expect(try ws.run("simulate", "--model", "2PL", "--items", "4", "--persons", "300", "--out", "r.csv", "--seed", "3").status == 0)
        let r = try ws.run("calibrate", "r.csv", "--model", "Rasch", "--out", "b.csv", "--no-se")
        #expect(r.status == 0 || r.status == 3, "\(r.stderr)")
        #expect(try ws.read("b.csv").split(separator: "\n").dropFirst().allSatisfy { $0.split(separator: ",")[1] == "rasch" })
        #expect(try ws.run("calibrate", "r.csv", "--model", "4pl", "--out", "b.csv").status == 64)
    }
}

/// When the interruption tests send their signal: at seeded fractions (2 % to 98 %) of a complete run of the same
/// work timed first on this machine, so that the kills land inside the run whatever the build and the load, and a
/// failure names its seed and fraction (`IQSCORE_TEST_SEED=<seed>` draws the same fractions again).
struct KillMoments {
    struct Moment: CustomStringConvertible {
        var fraction: Double
        var microseconds: UInt32
        var seed: UInt64
        var description: String {
            "killed at \(Int((fraction * 100).rounded())) % of a full run (\(microseconds) µs; seed \(seed))"
        }
    }

    private var generator: SplitMix64
    let seed: UInt64
    /// A complete run's wall time, in microseconds.
    let fullRun: Double

    init(test: String, fullRun arguments: [String], in workspace: CLIWorkspace) throws {
        let drawn = SplitMix64.forTest(test, fallback: 20_261_129)
        generator = drawn.generator
        seed = drawn.seed
        let started = ContinuousClock.now
        let run = try workspace.run(arguments)
        let elapsed = ContinuousClock.now - started
        #expect(run.status == 0 || run.status == 3, "the timed full run: \(run.stderr)")
        fullRun = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) * 1e-12
    }

    mutating func next() -> Moment {
        let fraction = 0.02 + 0.96 * generator.uniform()
        return Moment(fraction: fraction, microseconds: UInt32(min(fraction * fullRun, 60e6)), seed: seed)
    }
}
