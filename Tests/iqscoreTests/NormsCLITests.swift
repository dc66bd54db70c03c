import Foundation
import Testing
import TestSupport

/// End-to-end tests of `iqscore norms build` and `iqscore norms table` (helpers in CLITests.swift).
@Suite("iqscore norms end to end", .timeLimit(.minutes(10)))
struct NormsCLITests {
    /// 900 persons aged 16–90 with θ falling with age and by education, and the educated over-represented
    /// (high 1/2, mid 1/3, low 1/6); deterministic (no random numbers).
    static var sample: String {
        var text = "person,age,theta,se,education\n"
        for k in 0..<900 {
            let age = 16 + Double((k * 37) % 741) / 10
            let education = k % 6 < 3 ? "high" : k % 6 < 5 ? "mid" : "low"
            let shift = education == "high" ? 0.4 : education == "mid" ? 0 : -0.4
            let theta = -0.015 * (age - 40) + shift + 0.9 * sin(Double(k) * 1.7) + 0.3 * sin(Double(k) * 0.31)
            text += "p\(k),\(age),\(String(format: "%.4f", theta)),0.3,\(education)\n"
        }
        return text
    }

    static let margins = "variable,category,share\neducation,low,0.3\neducation,mid,0.45\neducation,high,0.25\n"

    @Test("build raked continuous norms with a report, then a norm table from them")
    func buildAndTable() throws {
        let ws = try CLIWorkspace()
        try ws.write("sample.csv", Self.sample)
        try ws.write("margins.csv", Self.margins)
        let r = try ws.run(
            "norms", "build", "sample.csv", "--margins", "margins.csv", "--se-column", "se", "--max-degrees", "3,1,1,-",
            "--name", "adults", "--norms-version", "2026-11", "--extrapolation", "2", "--out", "NORMS.json", "--report", "NORMS.html")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderrLines.first == "iqscore norms build: 900 persons aged 16.0–90.0 from sample.csv")
        #expect(
            r.stderrLines.contains { $0.hasPrefix("weighting: raking to margins.csv converged in ") && $0.contains("0 trimmed; deff ") },
            "\(r.stderr)")
        #expect(r.stderrLines.contains { $0.hasPrefix("percentile curves: no crossing: percentiles 1–99 at 401 ages") })
        #expect(r.stderrLines.contains("wrote NORMS.json and NORMS.html"))
        let json = try ws.json("NORMS.json")
        #expect(json["format"] as? String == "iqscore-norms/1")
        #expect(json["name"] as? String == "adults" && json["version"] as? String == "2026-11" && json["method"] as? String == "continuous")
        let ages = try #require(json["ages"] as? [String: Any])
        #expect(ages["minimum"] as? Double == 16 && ages["maximum"] as? Double == 90 && ages["extrapolation"] as? Double == 2)
        let weighting = try #require(json["weighting"] as? [String: Any])
        #expect(weighting["method"] as? String == "raking" && weighting["converged"] as? Bool == true)
        #expect((weighting["margins"] as? [Any])?.count == 3)
        let html = try ws.read("NORMS.html")
        for part in [
            "<h2 id=\"weighting\">Weighting</h2>", "Percentile curves of θ over age", "Non-crossing check", "<b>passed</b>", "<th>BIC</th>",
            "education"
        ] {
            #expect(html.contains(part), "the report lacks \(part)")
        }

        let t = try ws.run("norms", "table", "NORMS.json", "--ages", "14:20:2", "--theta", "-2:2:0.5", "--out", "TABLE.csv")
        #expect(t.status == 0, "\(t.stderr)")
        #expect(
            t.stderrLines.contains(
                "note: 1 age (14) lies outside the norms' ages 16.0–90.0 and uses the nearest covered age; 0 of them are beyond the 2-year margin, where scores are flagged age_outside_norms"
            ), "\(t.stderr)")
        #expect(t.stderrLines.contains("wrote TABLE.csv (36 rows)"))
        let rows = try ws.csvRows("TABLE.csv")
        #expect(rows.first == ["age", "theta", "iq", "percentile"])
        #expect(rows.count == 37)
        #expect(rows[1] == ["14", "-2", rows[1][2], rows[1][3]])
        // Age 14 uses the norms of 16; IQ and percentile rise with θ at each age.
        #expect(Array(rows[1...9].map { [$0[2], $0[3]] }) == Array(rows[10...18].map { [$0[2], $0[3]] }))
        for block in stride(from: 1, to: 37, by: 9) {
            let iqs = rows[block..<(block + 9)].map { Int($0[2])! }, percentiles = rows[block..<(block + 9)].map { Double($0[3])! }
            #expect(zip(iqs, iqs.dropFirst()).allSatisfy { $0 < $1 } && zip(percentiles, percentiles.dropFirst()).allSatisfy { $0 <= $1 })
        }
    }

    @Test("bands: automatic bands of at least --min-band-n")
    func bands() throws {
        let ws = try CLIWorkspace()
        try ws.write("sample.csv", Self.sample)
        let r = try ws.run(
            "norms", "build", "sample.csv", "--method", "bands", "--min-band-n", "250", "--name", "adults", "--norms-version", "1",
            "--out", "NORMS.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderrLines.contains("weighting: none (equal weights)"))
        let bands = try #require(try ws.json("NORMS.json")["bands"] as? [[String: Any]])
        #expect(bands.count == 3)
        #expect(bands.allSatisfy { ($0["n"] as? Int ?? 0) >= 250 })
    }

    @Test("raking that does not converge writes the norms with a warning and exits 3")
    func notConverged() throws {
        let ws = try CLIWorkspace()
        try ws.write("sample.csv", Self.sample)
        try ws.write("margins.csv", Self.margins)
        let r = try ws.run(
            "norms", "build", "sample.csv", "--margins", "margins.csv", "--raking-iterations", "1", "--raking-tolerance", "1e-15",
            "--max-degrees", "2,0,-,-", "--name", "a", "--norms-version", "1", "--out", "N.json")
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderrLines.contains { $0.hasPrefix("weighting: raking to margins.csv NOT CONVERGED after ") })
        #expect(r.stderrLines.contains { $0.hasPrefix("warning: raking did not converge: after 1 sweeps") })
        #expect(try ws.json("N.json")["weighting"].flatMap { ($0 as? [String: Any])?["converged"] as? Bool } == false)
    }

    @Test("linear norms JSON still makes a table: IQ = 100 + 15(θ − μ)/σ")
    func linearTable() throws {
        let ws = try CLIWorkspace()
        try ws.write("linear.json", #"{"name": "pop", "version": "1", "mean": 0.5, "sd": 0.5}"#)
        let t = try ws.run("norms", "table", "linear.json", "--ages", "30:30:1", "--theta", "0:1:0.5", "--out", "T.csv")
        #expect(t.status == 0, "\(t.stderr)")
        #expect(
            try ws.csvRows("T.csv") == [
                ["age", "theta", "iq", "percentile"], ["30", "0", "85", "15.9"], ["30", "0.5", "100", "50.0"], ["30", "1", "115", "84.1"]
            ])
    }

    @Test("bad input names file, line, column, value and what is allowed; nothing is written")
    func badInput() throws {
        let ws = try CLIWorkspace()
        try ws.write("bad.csv", "age,theta,education\n30,0.1,high\n200,0.2,low\n40,abc,mid\n50,0.3,\n")
        try ws.write("margins.csv", Self.margins)
        let r = try ws.run("norms", "build", "bad.csv", "--margins", "margins.csv", "--name", "a", "--norms-version", "1", "--out", "N.json")
        #expect(r.status == 1)
        #expect(
            r.stderrLines.prefix(3) == [
                "bad.csv:3:1: error: age '200' is not an age: a number in [0, 130] (years)",
                "bad.csv:4:2: error: theta 'abc' is not a θ: a number in [-10, 10]",
                "bad.csv:5:3: error: education is empty; every person needs a category"
            ])
        #expect(!ws.exists("N.json"))

        try ws.write(
            "phd.csv",
            "age,theta,education\n30,0.1,high\n40,0.2,low\n50,0.3,mid\n60,0.3,phd\n" + (0..<20).map { "\(20 + $0),0.\($0 % 10),mid\n" }.joined())
        let u = try ws.run("norms", "build", "phd.csv", "--margins", "margins.csv", "--name", "a", "--norms-version", "1", "--out", "N.json")
        #expect(u.status == 1)
        #expect(u.stderrLines.first == "error: phd.csv and margins.csv: the sample has education = 'phd' (1 person), which the margins do not list")

        try ws.write("sum.csv", "variable,category,share\neducation,low,0.3\neducation,high,0.6\n")
        let s = try ws.run("norms", "build", "phd.csv", "--margins", "sum.csv", "--name", "a", "--norms-version", "1", "--out", "N.json")
        #expect(s.status == 1)
        #expect(s.stderrLines.first == "sum.csv:2:1: error: the shares of education sum to 0.900000, not 1 (allowed ±1e-06)")

        let g = try ws.run("norms", "table", "linear.json", "--ages", "30:20:1", "--out", "T.csv")
        #expect(g.status == 64)
        #expect(g.stderr.contains("--ages must run from start to stop within [0, 130] with start ≤ stop, got '30:20:1'"))
    }

    @Test("--bank: θ scored by EAP from each row's responses; the norms follow the population's age trend; bad responses are located")
    func fromResponses() throws {
        let ws = try CLIWorkspace()
        // 30 2PL items, b from −2 to 2; 1,500 persons aged 20–80 whose θ falls by 0.02 a year from 0.6 at 20.
        var bank = "item_id,a,b\n"
        for j in 0..<30 { bank += "q\(j),1.5,\(String(format: "%.3f", -2 + 4 * Double(j) / 29))\n" }
        try ws.write("bank.csv", bank)
        var rows = "person,age," + (0..<30).map { "q\($0)" }.joined(separator: ",") + "\n"
        // SplitMix64 uniforms: the same file on every run.
        var generator = SplitMix64(seed: 14)
        func uniform() -> Double { generator.uniform() }
        for k in 0..<1500 {
            let age = 20 + Double(k % 601) / 10
            let normal = (-2 * log(uniform())).squareRoot() * cos(2 * Double.pi * uniform())
            let theta = 0.6 - 0.02 * (age - 20) + 0.9 * normal
            let cells = (0..<30).map { j -> String in
                let b = -2 + 4 * Double(j) / 29
                return uniform() < 1 / (1 + exp(-1.5 * (theta - b))) ? "1" : "0"
            }
            rows += "p\(k),\(age)," + cells.joined(separator: ",") + "\n"
        }
        try ws.write("responses.csv", rows)
        let r = try ws.run(
            "norms", "build", "responses.csv", "--bank", "bank.csv", "--max-degrees", "2,1,-,-",
            "--name", "r", "--norms-version", "1", "--out", "N.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderrLines.prefix(2) == [
                "iqscore norms build: 1,500 persons aged 20.0–80.0 from responses.csv",
                "θ: EAP from the responses to the items of bank.csv"
            ])
        let sample = try #require(try ws.json("N.json")["sample"] as? [String: Any])
        let meanSE = try #require(sample["mean_standard_error"] as? Double)
        #expect(meanSE > 0.2 && meanSE < 0.45, "30 items of a = 1.5: an EAP SE of about 0.3, got \(meanSE)")
        // The median IQ-100 θ at 25 and at 75: 1 θ apart in the population (EAP shrinks it a little).
        let t = try ws.run("norms", "table", "N.json", "--ages", "25:75:50", "--theta", "-2:2:0.05", "--out", "T.csv")
        #expect(t.status == 0, "\(t.stderr)")
        let table = try ws.read("T.csv").split(separator: "\n").dropFirst().map { $0.split(separator: ",").map(String.init) }
        func median(_ age: String) -> Double {
            table.filter { $0[0] == age }.min { abs(Double($0[3])! - 50) < abs(Double($1[3])! - 50) }.map { Double($0[1])! } ?? .nan
        }
        let drop = median("25") - median("75")
        #expect(drop > 0.75 && drop < 1.1, "median θ at 25 minus at 75: \(drop), population 1.0")

        try ws.write("bad.csv", "person,age,q0,q1\np1,30,1,2\np2,40,,\n")
        let b = try ws.run("norms", "build", "bad.csv", "--bank", "bank.csv", "--name", "a", "--norms-version", "1", "--out", "B.json")
        #expect(b.status == 1)
        #expect(
            b.stderrLines.prefix(2) == [
                "bad.csv:2:4: error: column 'q1': '2' is not a response; allowed: 1, 0, true, false, t, f, or empty/NA for not administered",
                "bad.csv:3:3: error: no answered item: θ cannot be scored from this row's responses"
            ])
        let c = try ws.run(
            "norms", "build", "bad.csv", "--bank", "bank.csv", "--theta-column", "theta", "--name", "a", "--norms-version", "1", "--out", "B.json")
        #expect(c.status == 64)
        #expect(c.stderr.contains("--bank scores θ and its SE from the responses; --theta-column does not apply with it"))
        #expect(!ws.exists("B.json"))
    }
}
