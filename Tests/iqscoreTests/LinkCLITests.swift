import Foundation
import Testing
import TestSupport

/// End-to-end tests of `iqscore link` (helpers `IQScoreCLI`, `CLIWorkspace` in CLITests.swift).
@Suite("iqscore link end to end", .timeLimit(.minutes(10)))
struct LinkCLITests {
    static let header = "item_id,model,a,b,c,se_a,se_b,se_c,n_responses,p_value,flags,domain"

    /// Old bank: q1…q4 common, o1 only in the old bank.
    static let oldBank = """
        \(header)
        q1,3pl,0.8,-1.0,0.2,0.05,0.1,0.02,1000,0.7,,logic
        q2,3pl,1.2,0.0,0.15,0.06,0.08,0.02,1000,0.55,,logic
        o1,2pl,1.1,0.3,0,0.05,0.07,,1000,0.5,,spatial
        q3,3pl,0.6,1.25,0.25,0.04,0.12,0.03,1000,0.4,,pattern
        q4,3pl,1.6,2.25,0.1,0.1,0.09,0.01,1000,0.2,,pattern

        """

    /// The same common items calibrated where θ_old = 1.25·θ_new + 0.5 (a_new = 1.25·a_old,
    /// b_new = (b_old − 0.5)/1.25, se_a and se_b likewise), in another order, plus two items only in the new bank.
    static let newBank = """
        \(header)
        n1,3pl,1.25,0.8,0.2,0.125,0.08,0.03,800,0.45,,spatial
        q4,3pl,2.0,1.4,0.1,0.125,0.072,0.01,800,0.2,,pattern
        q2,3pl,1.5,-0.4,0.15,0.075,0.064,0.02,800,0.55,,logic
        q1,3pl,1.0,-1.2,0.2,0.0625,0.08,0.02,800,0.7,,logic
        n2,2pl,0.5,-2.0,0,0.05,0.2,,800,0.9,,spatial
        q3,3pl,0.75,0.6,0.25,0.05,0.096,0.03,800,0.4,,pattern

        """

    @Test("a known transformation: JSON keys and values, every new item on the old scale, metadata kept")
    func knownTransformation() throws {
        let ws = try CLIWorkspace()
        try ws.write("old.csv", Self.oldBank)
        try ws.write("new.csv", Self.newBank)
        let r = try ws.run(
            "link", "--reference", "old.csv", "--new", "new.csv", "--method", "stocking-lord", "--out", "linked.csv",
            "--summary-json", "summary.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderrLines.first == "iqscore link: stocking-lord (new-to-old), new.csv onto the scale of old.csv")
        #expect(r.stderrLines.contains("banks: old 5 items, new 6 items; 4 common items (q4, q2, q1, q3)"))
        #expect(r.stderrLines.contains("θ_old = 1.250000 · θ_new + 0.500000 (a* = a/slope, b* = slope·b + intercept, c* = c)"))
        #expect(r.stderrLines.contains("wrote linked.csv (6 items: 4 common, 2 new-only) and summary.json"))

        let summary = try ws.json("summary.json")
        for key in [
            "slope", "intercept", "method", "common_items", "common_item_ids", "criterion", "converged", "iterations",
            "criterion_direction", "quadrature_points", "theta_bound", "mean_mean", "mean_sigma", "n_new_items"
        ] {
            #expect(summary[key] != nil, "summary JSON lacks \(key)")
        }
        #expect(summary["method"] as? String == "stocking-lord")
        #expect((summary["slope"] as? Double).map { abs($0 - 1.25) < 1e-6 } == true, "slope \(summary["slope"] ?? "nil")")
        #expect((summary["intercept"] as? Double).map { abs($0 - 0.5) < 1e-6 } == true, "intercept \(summary["intercept"] ?? "nil")")
        #expect(summary["common_items"] as? Int == 4)
        #expect(summary["common_item_ids"] as? [String] == ["q4", "q2", "q1", "q3"])
        #expect((summary["criterion"] as? Double).map { $0 >= 0 && $0 < 1e-12 } == true)
        #expect(summary["converged"] as? Bool == true)
        #expect(summary["criterion_direction"] as? String == "new-to-old")
        #expect(summary["quadrature_points"] as? Int == 61)

        // The whole new bank, in its order, on the old scale; SEs se_a/slope, slope·se_b; domain kept.
        let rows = try ws.csvRows("linked.csv")
        #expect(rows.first == Self.header.split(separator: ",").map(String.init))
        #expect(rows.dropFirst().map { $0[0] } == ["n1", "q4", "q2", "q1", "n2", "q3"])
        let old = Dictionary(uniqueKeysWithValues: try rowsOf(Self.oldBank).map { ($0[0], $0) })
        for row in rows.dropFirst() {
            #expect(row.count == 12)
            if let reference = old[row[0]] {
                for column in [2, 3, 4, 5, 6, 7] { // a, b, c and their SEs equal the old calibration's
                    let value = try #require(Double(row[column])), expected = try #require(Double(reference[column]))
                    #expect(abs(value - expected) < 2e-6, "\(row[0]) column \(column): \(value) vs \(expected)")
                }
                #expect(row[11] == reference[11])
            }
        }
        let n1 = try #require(rows.first { $0[0] == "n1" })
        #expect(abs(try #require(Double(n1[2])) - 1.0) < 2e-6) // a = 1.25/1.25
        #expect(abs(try #require(Double(n1[3])) - 1.5) < 2e-6) // b = 1.25·0.8 + 0.5
        #expect(n1[4] == "0.200000")
        #expect(abs(try #require(Double(n1[5])) - 0.1) < 2e-6) // se_a = 0.125/1.25
        #expect(abs(try #require(Double(n1[6])) - 0.1) < 2e-6) // se_b = 1.25·0.08
        #expect(n1[7] == "0.030000" && n1[8] == "800" && n1[11] == "spatial")
        #expect(try ws.contents() == ["old.csv", "new.csv", "linked.csv", "summary.json"])

        // Mean-sigma gives the same constants here; its criterion is null.
        let ms = try ws.run(
            "link", "--reference", "old.csv", "--new", "new.csv", "--method", "mean-sigma", "--out", "ms.csv", "--summary-json", "ms.json")
        #expect(ms.status == 0, "\(ms.stderr)")
        let msSummary = try ws.json("ms.json")
        #expect(msSummary["method"] as? String == "mean-sigma")
        #expect((msSummary["slope"] as? Double).map { abs($0 - 1.25) < 1e-9 } == true)
        #expect(msSummary["criterion"] is NSNull)
        #expect(msSummary["converged"] as? Bool == true)
    }

    @Test("one common item: exit 1, the reason on stderr, nothing written")
    func tooFewCommonItems() throws {
        let ws = try CLIWorkspace()
        try ws.write("old.csv", Self.oldBank)
        try ws.write("new.csv", "item_id,a,b\nq1,1.0,-1.2\nn1,1.3,0.4\n")
        let r = try ws.run("link", "--reference", "old.csv", "--new", "new.csv", "--out", "linked.csv", "--summary-json", "summary.json")
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "error: cannot link new.csv onto old.csv: only 1 common item (q1); linking needs at least 2\n")
        #expect(try ws.contents() == ["old.csv", "new.csv"])
    }

    @Test("a bad bank: exit 1 with the located error")
    func badBank() throws {
        let ws = try CLIWorkspace()
        try ws.write("old.csv", "item_id,a,b\nq1,0.8,-1.0\nq2,1.2,abc\n")
        try ws.write("new.csv", Self.newBank)
        let r = try ws.run("link", "--reference", "old.csv", "--new", "new.csv", "--out", "linked.csv")
        #expect(r.status == 1)
        #expect(r.stderr == "old.csv:3:3: error: item 'q2': b 'abc' is not a number\n")
        #expect(!ws.exists("linked.csv"))
    }

    @Test("usage errors exit 64: output over an input, unknown method, the refused --from/--to, a bank left out")
    func usageErrors() throws {
        let ws = try CLIWorkspace()
        try ws.write("old.csv", Self.oldBank)
        try ws.write("new.csv", Self.newBank)
        let same = try ws.run("link", "--reference", "old.csv", "--new", "new.csv", "--out", "./old.csv")
        #expect(same.status == 64)
        #expect(same.stderr.contains("--out must not overwrite the --reference bank (old.csv); choose another output file"))
        let method = try ws.run("link", "--reference", "old.csv", "--new", "new.csv", "--method", "irt", "--out", "linked.csv")
        #expect(method.status == 64)
        #expect(method.stderr.contains("--method"))
        // The names before 2026-11-27 are refused whichever way round, with the names to use; a bank left out too.
        for pair in [
            ["--from", "old.csv", "--to", "new.csv"], ["--from", "new.csv", "--to", "old.csv"], ["--reference", "old.csv", "--to", "new.csv"]
        ] {
            let old = try ws.run(["link"] + pair + ["--out", "linked.csv"])
            #expect(old.status == 64, "\(pair)")
            #expect(old.stderr.contains("--from and --to are ambiguous") && old.stderr.contains("--reference OLD_BANK.csv"), "\(old.stderr)")
        }
        let missing = try ws.run("link", "--reference", "old.csv", "--out", "linked.csv")
        #expect(missing.status == 64 && missing.stderr.contains("give both banks"), "\(missing.stderr)")
        let help = try ws.run("link", "--help")
        #expect(help.stdout.contains("--reference <old-bank.csv>") && !help.stdout.contains("--from <"))
        #expect(try ws.contents() == ["old.csv", "new.csv"])
        #expect(try ws.read("old.csv") == Self.oldBank)
    }

    private func rowsOf(_ text: String) throws -> [[String]] {
        text.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }
}
