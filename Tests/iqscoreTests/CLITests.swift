import Foundation
import Testing
import TestSupport

/// The CLI suites' time limits (10 minutes, here and in the other `*CLITests` files) guard against a hang only.
/// They count from when a test starts, and the fuzz suite's synchronous launches can hold both of a 2-core
/// machine's test threads for minutes. Under that load, 2- and 3-minute limits failed tests that finish in under a
/// second alone (seen on 2026-11-23).
@Suite("iqscore CLI end to end", .timeLimit(.minutes(10)))
struct CLITests {
    static let bankHeader = "item_id,model,a,b,c,se_a,se_b,se_c,n_responses,p_value,flags"

    @Test("the executable is found next to the test bundle")
    func executableFound() throws {
        let binary = try #require(IQScoreCLI.executable, "iqscore executable not found; build it with `swift build --build-tests`")
        #expect(binary.lastPathComponent == "iqscore")
    }

    @Test("R's write.csv (row names under an empty header): the first column is read as the ids, with a note")
    func rWriteCSV() throws {
        let ws = try CLIWorkspace()
        let sim = try ws.run(
            "simulate", "--model", "2pl", "--items", "12", "--persons", "300", "--out", "plain.csv", "--bank-out", "truth.csv", "--seed", "5")
        #expect(sim.status == 0, "\(sim.stderr)")
        // As R writes it: every header name quoted, the first one empty; the row names quoted.
        let lines = try ws.read("plain.csv").split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let r =
            ([["\"\""] + lines[0].dropFirst().map { "\"\($0)\"" }] + lines.dropFirst().map { ["\"\($0[0])\""] + $0.dropFirst() })
            .map { $0.joined(separator: ",") }.joined(separator: "\n") + "\n"
        try ws.write("r.csv", r)
        let note = "note: r.csv: the first column has no name (as R's write.csv writes row names): read as the session ids"
        let calibrated = try ws.run("calibrate", "r.csv", "--model", "2pl", "--out", "bank_r.csv")
        #expect(calibrated.status == 0, "\(calibrated.stderr)")
        #expect(calibrated.stderrLines.contains(note), "\(calibrated.stderr)")
        #expect(try ws.run("calibrate", "plain.csv", "--model", "2pl", "--out", "bank_plain.csv").status == 0)
        #expect(try ws.read("bank_r.csv") == ws.read("bank_plain.csv"))
        let scored = try ws.run("score", "r.csv", "--bank", "bank_plain.csv", "--out", "scores_r.csv")
        #expect(scored.status == 0, "\(scored.stderr)")
        #expect(scored.stderrLines.contains(note), "\(scored.stderr)")
        #expect(try ws.run("score", "plain.csv", "--bank", "bank_plain.csv", "--out", "scores_plain.csv").status == 0)
        #expect(try ws.read("scores_r.csv") == ws.read("scores_plain.csv"))
        let analyzed = try ws.run("analyze", "r.csv", "--bank", "bank_plain.csv", "--out", "items.csv")
        #expect(analyzed.status == 0 && analyzed.stderrLines.contains(note), "\(analyzed.stderr)")
    }

    @Test("every subcommand's --help reads as prose: no runs of spaces inside its overview and discussion")
    func helpProse() throws {
        let ws = try CLIWorkspace()
        let commands: [[String]] = [
            ["calibrate"], ["score"], ["analyze"], ["report"], ["link"], ["assemble"], ["cat", "simulate"], ["simulate"],
            ["norms", "build"], ["norms", "table"], ["verify"], ["serve"]
        ]
        for command in commands {
            let r = try ws.run(command + ["--help"])
            #expect(r.status == 0, "\(command)")
            let prose = r.stdout.components(separatedBy: "\nUSAGE:")[0]
            for line in prose.split(separator: "\n") {
                let text = line.drop { $0 == " " }
                #expect(!text.contains("   "), "iqscore \(command.joined(separator: " ")) --help: \(text.prefix(120))")
            }
        }
    }

    @Test("simulate then calibrate: 2PL, 12 items × 1500 persons; bank and summary JSON")
    func simulateCalibrateRoundTrip() throws {
        let ws = try CLIWorkspace()
        let sim = try ws.run(
            "simulate", "--model", "2pl", "--items", "12", "--persons", "1500", "--seed", "42",
            "--out", "responses.csv", "--bank-out", "true_bank.csv")
        #expect(sim.status == 0, "\(sim.stderr)")
        #expect(sim.stdout.isEmpty)
        let responses = try ws.csvRows("responses.csv")
        #expect(responses.count == 1501)
        #expect(responses.first == ["session_id"] + (1...12).map { String(format: "i%04d", $0) })
        #expect(responses[1].first == "s0001")

        let cal = try ws.run("calibrate", "responses.csv", "--model", "2pl", "--out", "BANK.csv", "--summary-json", "summary.json")
        #expect(cal.status == 0, "\(cal.stderr)")
        #expect(cal.stdout.isEmpty, "stdout carries results only; the summary goes to stderr")
        #expect(cal.stderrLines.first == "iqscore calibrate: 2PL on responses.csv (wide layout, 1,500 data rows)")
        #expect(cal.stderr.contains("wrote BANK.csv (12 items) and summary.json"))

        let bankText = try ws.read("BANK.csv")
        #expect(bankText.hasPrefix(Self.bankHeader))
        let bank = try ws.csvRows("BANK.csv")
        #expect(bank.count == 13)
        #expect(bank.dropFirst().map { $0[0] } == (1...12).map { String(format: "i%04d", $0) })
        #expect(bank.dropFirst().allSatisfy { $0.count == 11 && $0[1] == "2pl" && $0[8] == "1500" })

        // The estimates are near the simulated truth (same item order in both files).
        let truth = try ws.csvRows("true_bank.csv")
        #expect(truth.count == 13)
        for (estimated, actual) in zip(bank.dropFirst(), truth.dropFirst()) {
            let b = try #require(Double(estimated[3])), trueB = try #require(Double(actual[3]))
            let a = try #require(Double(estimated[2])), trueA = try #require(Double(actual[2]))
            #expect(abs(b - trueB) < 0.5, "item \(estimated[0]): b \(b) vs true \(trueB)")
            #expect(abs(a - trueA) < 0.5, "item \(estimated[0]): a \(a) vs true \(trueA)")
        }

        let summary = try ws.json("summary.json")
        for key in ["model", "n_persons", "n_items", "log_likelihood", "aic", "bic", "cycles", "converged", "elapsed_seconds"] {
            #expect(summary[key] != nil, "summary JSON lacks \(key)")
        }
        #expect(summary["model"] as? String == "2pl")
        #expect(summary["n_persons"] as? Int == 1500)
        #expect(summary["n_items"] as? Int == 12)
        #expect(summary["converged"] as? Bool == true)
        #expect((summary["log_likelihood"] as? Double).map { $0 < 0 && $0.isFinite } == true)
        #expect((summary["cycles"] as? Int).map { $0 >= 1 } == true)
    }

    @Test("the same seed gives byte-identical simulate output; another seed does not")
    func simulateDeterministic() throws {
        let ws = try CLIWorkspace()
        for (name, seed) in [("a", "7"), ("b", "7"), ("c", "8")] {
            let r = try ws.run(
                "simulate", "--model", "3pl", "--items", "10", "--persons", "300", "--items-per-session", "6",
                "--layout", "long", "--seed", seed, "--out", "\(name).csv", "--bank-out", "\(name)_bank.csv",
                "--thetas-out", "\(name)_thetas.csv")
            #expect(r.status == 0, "\(r.stderr)")
        }
        let a = try Data(contentsOf: ws.url("a.csv")), b = try Data(contentsOf: ws.url("b.csv"))
        #expect(a.count > 1000)
        #expect(a == b)
        #expect(try Data(contentsOf: ws.url("a_bank.csv")) == Data(contentsOf: ws.url("b_bank.csv")))
        #expect(try Data(contentsOf: ws.url("a_thetas.csv")) == Data(contentsOf: ws.url("b_thetas.csv")))
        #expect(try Data(contentsOf: ws.url("c.csv")) != a)
        #expect(try ws.csvRows("a.csv").count == 1 + 300 * 6)
    }

    @Test("--items ITEMS.csv carries a domain column into the bank; items missing from it get a warning")
    func itemMetadata() throws {
        let ws = try CLIWorkspace()
        let sim = try ws.run("simulate", "--items", "12", "--persons", "1500", "--seed", "5", "--out", "responses.csv")
        #expect(sim.status == 0, "\(sim.stderr)")
        let domains = ["pattern", "logic", "spatial"]
        // i0012 is deliberately left out; rows in a different order than the bank.
        let metadata = (1...11).reversed().map { "\(String(format: "i%04d", $0)),\(domains[$0 % 3])" }
        try ws.write("ITEMS.csv", "item_id,domain\n" + metadata.joined(separator: "\n") + "\n")

        let cal = try ws.run("calibrate", "responses.csv", "--items", "ITEMS.csv", "--out", "BANK.csv")
        #expect(cal.status == 0, "\(cal.stderr)")
        #expect(cal.stderrLines.contains("warning: 1 calibrated item not in ITEMS.csv: i0012 (metadata left empty)"))
        let bank = try ws.csvRows("BANK.csv")
        #expect(bank.first == (Self.bankHeader + ",domain").split(separator: ",").map(String.init))
        #expect(bank.count == 13)
        for (k, row) in bank.dropFirst().enumerated() {
            let expected = k + 1 <= 11 ? domains[(k + 1) % 3] : ""
            #expect(row.count == 12)
            #expect(row.last == expected, "\(row[0])")
        }
    }

    @Test("long layout with overridden column names (the app's export) gives the same bank as default names")
    func longLayoutOverriddenNames() throws {
        let ws = try CLIWorkspace()
        let sim = try ws.run(
            "simulate", "--items", "12", "--persons", "1500", "--items-per-session", "8", "--layout", "long",
            "--seed", "11", "--out", "long.csv")
        #expect(sim.status == 0, "\(sim.stderr)")
        let rows = try ws.csvRows("long.csv")
        #expect(rows.first == ["session_id", "item_id", "response"])
        #expect(rows.count == 1 + 1500 * 8)
        let export = rows.dropFirst().map { r in "u-\(r[0]),\(r[1]),\(r[2] == "1" ? "true" : "false"),\(r[0]),note" }
        try ws.write("export.csv", "user_id,question_id,is_correct,test_session_id,extra\n" + export.joined(separator: "\n") + "\n")

        let plain = try ws.run("calibrate", "long.csv", "--out", "bank_default.csv", "--summary-json", "default.json")
        #expect(plain.status == 0, "\(plain.stderr)")
        let renamed = try ws.run(
            "calibrate", "export.csv", "--session-column", "test_session_id", "--item-column", "question_id",
            "--response-column", "is_correct", "--out", "bank_export.csv", "--summary-json", "export.json")
        #expect(renamed.status == 0, "\(renamed.stderr)")
        #expect(renamed.stderrLines.first == "iqscore calibrate: 2PL on export.csv (long layout, 12,000 data rows)")

        let bank = try ws.read("bank_export.csv")
        #expect(bank.hasPrefix(Self.bankHeader + "\n"))
        #expect(bank == (try ws.read("bank_default.csv")))
        #expect(try ws.csvRows("bank_export.csv").count == 13)
        let summary = try ws.json("export.json")
        #expect(summary["layout"] as? String == "long")
        #expect(summary["n_persons"] as? Int == 1500)
        #expect(summary["n_responses"] as? Int == 12_000)
    }

    @Test("ICAR16 calibrates under 3PL and converges")
    func icar16ThreePL() throws {
        let ws = try CLIWorkspace()
        let data = Repository.file("Data/icar16.csv").path
        let cal = try ws.run("calibrate", data, "--model", "3pl", "--out", "BANK.csv", "--summary-json", "summary.json")
        #expect(cal.status == 0, "\(cal.stderr)")
        let summary = try ws.json("summary.json")
        #expect(summary["converged"] as? Bool == true)
        #expect(summary["model"] as? String == "3pl")
        #expect(summary["n_items"] as? Int == 16)
        #expect(summary["n_persons"] as? Int == 1509)
        #expect(summary["persons_without_responses"] as? Int == 16)
        // The JSON counts what stderr's "excluded:" line says.
        #expect(summary["excluded_persons"] as? Int == 16 && summary["persons_only_excluded_items"] as? Int == 0)
        #expect(cal.stderrLines.contains("excluded: 16 persons with no responses"))
        #expect(summary["iqscore_version"] as? String == IQScoreCLI.version)
        let bank = try ws.csvRows("BANK.csv")
        #expect(bank.count == 17)
        #expect(bank.dropFirst().first?.first == "reason.4")
        #expect(bank.dropFirst().allSatisfy { $0[1] == "3pl" && !$0[4].isEmpty && !$0[7].isEmpty })
    }

    @Test("a garbage column: exit 1, the located error on stderr, nothing written")
    func garbageColumn() throws {
        let ws = try CLIWorkspace()
        try ws.write("responses.csv", "session_id,q1,q2,q3\ns1,1,0,1\ns2,0,yes,1\ns3,1,0,0\ns4,1,no,1\n")
        let cal = try ws.run("calibrate", "responses.csv", "--out", "BANK.csv", "--summary-json", "summary.json")
        #expect(cal.status == 1)
        #expect(cal.stdout.isEmpty)
        #expect(
            cal.stderr
                == "responses.csv:3:3: error: column 'q2': 'yes' is not a response; allowed: 1, 0, true, false, t, f, or empty/NA for not administered (2 invalid cells in this column)\n"
        )
        #expect(try ws.contents() == ["responses.csv"], "no bank, summary or temporary file may be left behind")
    }

    @Test("a missing responses file: exit 1 with the path and the system's reason")
    func missingFile() throws {
        let ws = try CLIWorkspace()
        let cal = try ws.run("calibrate", "missing.csv", "--out", "BANK.csv")
        #expect(cal.status == 1)
        #expect(cal.stdout.isEmpty)
        #expect(cal.stderr == "missing.csv: error: cannot open file: No such file or directory\n")
        #expect(try ws.contents().isEmpty)
    }

    @Test("a run that does not converge (--max-cycles 2) exits 3 and still writes the bank")
    func notConverged() throws {
        let ws = try CLIWorkspace()
        let sim = try ws.run("simulate", "--items", "12", "--persons", "1500", "--seed", "3", "--out", "responses.csv")
        #expect(sim.status == 0, "\(sim.stderr)")
        let cal = try ws.run("calibrate", "responses.csv", "--max-cycles", "2", "--out", "BANK.csv", "--summary-json", "summary.json")
        #expect(cal.status == 3, "\(cal.stderr)")
        #expect(cal.stderr.contains("NOT CONVERGED after 2 cycles"))
        #expect(cal.stderrLines.contains { $0.hasPrefix("warning: EM did not converge in 2 cycles") })
        #expect(try ws.read("BANK.csv").hasPrefix(Self.bankHeader))
        #expect(try ws.csvRows("BANK.csv").count == 13)
        let summary = try ws.json("summary.json")
        #expect(summary["converged"] as? Bool == false)
        #expect(summary["cycles"] as? Int == 2)
        #expect(try ws.contents() == ["responses.csv", "BANK.csv", "summary.json"])
    }

    @Test("--acceleration squarem (default) and none: the same bank to 1e-3, E-steps and the method in the summary")
    func acceleration() throws {
        let ws = try CLIWorkspace()
        let sim = try ws.run("simulate", "--model", "3pl", "--items", "12", "--persons", "1500", "--seed", "3", "--out", "responses.csv")
        #expect(sim.status == 0, "\(sim.stderr)")
        let fast = try ws.run(
            "calibrate", "responses.csv", "--model", "3pl", "--tolerance", "1e-6", "--out", "fast.csv", "--summary-json", "fast.json")
        let plain = try ws.run(
            "calibrate", "responses.csv", "--model", "3pl", "--tolerance", "1e-6", "--acceleration", "none", "--out", "plain.csv", "--summary-json",
            "plain.json")
        #expect(fast.status == 0 && plain.status == 0, "\(fast.stderr)\n\(plain.stderr)")
        let f = try ws.json("fast.json"), p = try ws.json("plain.json")
        #expect(f["acceleration"] as? String == "squarem" && p["acceleration"] as? String == "none")
        let fastESteps = try #require(f["e_steps"] as? Int), plainESteps = try #require(p["e_steps"] as? Int)
        #expect(p["cycles"] as? Int == plainESteps && p["extrapolations"] as? Int == 0)
        #expect(fastESteps < plainESteps)
        #expect(fast.stderrLines.contains { $0.hasPrefix("converged in ") && $0.contains("; \(fastESteps) E-steps with SQUAREM, ") })
        #expect(!plain.stderr.contains("SQUAREM"))
        let llFast = try #require(f["log_likelihood"] as? Double), llPlain = try #require(p["log_likelihood"] as? Double)
        #expect(abs(llFast - llPlain) < 1e-3)
        for (x, y) in zip(try ws.csvRows("fast.csv").dropFirst(), try ws.csvRows("plain.csv").dropFirst()) {
            for column in 2...4 { #expect(abs(Double(x[column])! - Double(y[column])!) < 1e-3, "\(x[0]) column \(column)") }
        }
        let bad = try ws.run("calibrate", "responses.csv", "--acceleration", "fast", "--out", "bad.csv")
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--acceleration"))
        #expect(!ws.exists("bad.csv"))
    }

    @Test("an invalid option value is a usage error: exit 64 with the validation message")
    func invalidOption() throws {
        let ws = try CLIWorkspace()
        try ws.write("responses.csv", "q1,q2\n1,0\n0,1\n")
        let cal = try ws.run("calibrate", "responses.csv", "--quadrature-points", "1", "--out", "BANK.csv")
        #expect(cal.status == 64)
        #expect(cal.stderr.contains("--quadrature-points must be 5…401, got 1"))
        #expect(!ws.exists("BANK.csv"))

        let sim = try ws.run("simulate", "--items", "0", "--persons", "10", "--out", "x.csv")
        #expect(sim.status == 64)
        #expect(sim.stderr.contains("--items must be 1…100000, got 0"))
        #expect(!ws.exists("x.csv"))
    }
}
