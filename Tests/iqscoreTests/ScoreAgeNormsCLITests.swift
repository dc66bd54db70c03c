import Foundation
import Testing
import TestSupport

// End-to-end tests of `iqscore score --norms NORMS.json --age-column age` (helpers in CLITests.swift and
// ScoreCLITests.swift): age-specific norms written by hand with known coefficients, so that every expected IQ is
// computed here from the SHASH formula, independently of the library.

/// A continuous NORMS.json with known coefficients and the IQ it implies, computed here.
///
/// ```
/// t = 2·(clamp(age, 20, 80) − 20)/60 − 1,   μ = c₀ + c₁t,   σ = exp(s₀ + s₁t),   ε, δ = exp(τ) constants
/// S(θ) = sinh(δ·asinh((θ − μ)/σ) − ε),   IQ = 100 + 15·S(θ) (area),   percentile = 100·Φ(S(θ))
/// ```
struct HandNorms {
    var mu = [0.2, -0.4]
    var logSigma = [-0.1, 0.15]
    /// nil: ε ≡ 0 and δ ≡ 1 (a normal distribution).
    var epsilon: Double? = 0.25
    var logDelta: Double? = 0.1
    var minimumAge = 20.0, maximumAge = 80.0, extrapolation = 5.0

    var document: String {
        func list(_ v: [Double]) -> String { "[" + v.map { "\($0)" }.joined(separator: ", ") + "]" }
        return """
            {"format": "iqscore-norms/1", "name": "adults", "version": "2026-11", "method": "continuous", "created_by": "by hand",
             "ages": {"minimum": \(minimumAge), "maximum": \(maximumAge), "extrapolation": \(extrapolation)},
             "sample": {"n": 1000, "effective_n": 1000, "sum_of_weights": 1000, "design_effect": 1, "mean_standard_error": null},
             "weighting": {"method": "none", "converged": null, "iterations": null, "maximum_margin_error": null, "tolerance": null,
                           "trim_factor": null, "trimmed": 0, "trim_rounds": 0, "largest_weight_ratio": 1, "design_effect": 1,
                           "effective_n": 1000, "margins": []},
             "model": {"family": "shash", "basis": "legendre",
                       "degrees": {"mu": \(mu.count - 1), "log_sigma": \(logSigma.count - 1), "epsilon": \(epsilon == nil ? "null" : "0"), "log_delta": \(logDelta == nil ? "null" : "0")},
                       "coefficients": {"mu": \(list(mu)), "log_sigma": \(list(logSigma)), "epsilon": \(epsilon.map { list([$0]) } ?? "null"), "log_delta": \(logDelta.map { list([$0]) } ?? "null")},
                       "log_likelihood": -1000, "converged": true, "iterations": 10},
             "bands": null, "criterion": "bic", "criterion_table": [],
             "percentile_check": {"ages": 101, "percentiles": 99, "crossings": 0, "minimum_gap": 0.01, "minimum_gap_age": 20},
             "warnings": []}

            """
    }

    /// μ and σ at `age` (clamped to the covered range).
    func parameters(age: Double) -> (mu: Double, sigma: Double) {
        let t = 2 * (min(max(age, minimumAge), maximumAge) - minimumAge) / (maximumAge - minimumAge) - 1
        return (mu[0] + mu[1] * t, exp(logSigma[0] + logSigma[1] * t))
    }

    /// S(θ): the standard normal deviate of θ at `age`.
    func deviate(theta: Double, age: Double) -> Double {
        let (m, s) = parameters(age: age)
        return sinh(exp(logDelta ?? 0) * asinh((theta - m) / s) - (epsilon ?? 0))
    }

    static func phi(_ x: Double) -> Double { 0.5 * erfc(-x / 2.0.squareRoot()) }
}

@Suite("iqscore score with age-specific norms end to end", .timeLimit(.minutes(10)))
struct ScoreAgeNormsCLITests {
    static let bank = ScoreCLITests.bankWithoutDomain
    static let header = ScoreCLITests.scoreHeader + ",age"
    static let z = 1.959963984540054

    /// Sessions with the answers of `ScoreCLITests.sessions` and the given ages, in long layout with the age column
    /// between item and response; the age is written on the first row and on every other row, blank elsewhere.
    static func long(_ ages: [String]) -> String {
        var text = "session_id,item_id,age,response\n"
        for (k, age) in ages.enumerated() {
            var row = 0
            for j in 1...6 where (k + 1 + j) % 5 != 0 {
                text += "p\(k + 1),q\(j),\(row % 2 == 0 ? age : ""),\((7 * (k + 1) + 3 * j) % 4 < 2 ? 1 : 0)\n"
                row += 1
            }
        }
        return text
    }

    /// The same sessions in wide layout, the age column second.
    static func wide(_ ages: [String]) -> String {
        var text = "session_id,age,q1,q2,q3,q4,q5,q6\n"
        for (k, age) in ages.enumerated() {
            text +=
                "p\(k + 1),\(age),"
                + (1...6).map { j in (k + 1 + j) % 5 == 0 ? "" : ((7 * (k + 1) + 3 * j) % 4 < 2 ? "1" : "0") }.joined(separator: ",") + "\n"
        }
        return text
    }

    /// Rounded half away from zero and clamped to 40–160, as the scale reports an IQ.
    static func reported(_ raw: Double) -> Int { min(max(Int(raw.rounded(.toNearestOrAwayFromZero)), 40), 160) }

    /// Checks a score row against the norms: IQ, interval and percentile as the formula gives them for every θ
    /// and SE that the row's 4-decimal θ and SE may stand for; flags exactly.
    static func expectRow(
        _ row: [String], norms: HandNorms, age: Double, iq: (Double, Double) -> Double,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let theta = Double(row[3])!, se = Double(row[4])!, h = 0.00005
        func within(_ value: String, _ lo: Double, _ hi: Double) {
            let v = Int(value)!
            #expect(v >= reported(lo) && v <= reported(hi), "\(row[0]): \(v) not in \(reported(lo))…\(reported(hi))", sourceLocation: sourceLocation)
        }
        within(row[5], iq(theta - h, age), iq(theta + h, age))
        within(row[6], iq(theta - z * (se + h) - h, age), iq(theta - z * (se - h) + h, age))
        within(row[7], iq(theta + z * (se - h) - h, age), iq(theta + z * (se + h) + h, age))
        let p = Double(row[8])!
        let pLo = 100 * HandNorms.phi(norms.deviate(theta: theta - h, age: age)), pHi = 100 * HandNorms.phi(norms.deviate(theta: theta + h, age: age))
        #expect(
            p >= (pLo * 10).rounded(.toNearestOrAwayFromZero) / 10 && p <= (pHi * 10).rounded(.toNearestOrAwayFromZero) / 10,
            "\(row[0]): percentile \(p) not in \(pLo)…\(pHi)", sourceLocation: sourceLocation)
        var flags: [String] = []
        let raw = iq(theta, age)
        if raw.rounded(.toNearestOrAwayFromZero) < 40 { flags.append("clamped_low") }
        if raw.rounded(.toNearestOrAwayFromZero) > 160 { flags.append("clamped_high") }
        if se > 0.5 { flags.append("low_precision") }
        if row[1] == row[2] { flags.append("perfect_score") }
        if row[2] == "0" { flags.append("zero_score") }
        flags.append("few_items")
        if age < norms.minimumAge - norms.extrapolation || age > norms.maximumAge + norms.extrapolation { flags.append("age_outside_norms") }
        #expect(row[10] == flags.joined(separator: ";"), "\(row[0])", sourceLocation: sourceLocation)
    }

    static let ages = ["20", "50", "34.567", "80", "83", "90", "12", "0", "130", "64.5"]
    static let shownAges = ["20", "50", "34.57", "80", "83", "90", "12", "0", "130", "64.5"]

    @Test("continuous norms, area transformation: IQ = 100 + 15·S(θ) at each session's age, long and wide alike; age_outside_norms beyond the margin")
    func areaTransformation() throws {
        let ws = try CLIWorkspace()
        let norms = HandNorms()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("NORMS.json", norms.document)
        try ws.write("long.csv", Self.long(Self.ages))
        try ws.write("wide.csv", Self.wide(Self.ages))
        let r = try ws.run("score", "long.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--out", "scores.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try ws.csvRows("scores.csv")
        #expect(rows.first?.joined(separator: ",") == Self.header)
        #expect(rows.count == 1 + Self.ages.count)
        for (k, row) in rows.dropFirst().enumerated() {
            #expect(row.count == 13)
            #expect(row[0] == "p\(k + 1)" && row[9] == "eap" && row[11] == "adults@2026-11" && row[12] == Self.shownAges[k])
            Self.expectRow(row, norms: norms, age: Double(Self.ages[k])!) { 100 + 15 * norms.deviate(theta: $0, age: $1) }
        }
        // 90, 12, 0 and 130 lie beyond 20–80 ± 5; 83 is within the margin.
        #expect(rows.dropFirst().map { $0[10].contains("age_outside_norms") } == [false, false, false, false, false, true, true, true, true, false])
        #expect(
            r.stderrLines.contains(
                "method EAP (prior N(0, 1²), 61 points on [-6, 6]); norms adults@2026-11 (continuous, ages 20–80 ± 5, area transformation), ages from column 'age'; 95% intervals"
            ), "\(r.stderr)")
        #expect(r.stderrLines.contains { $0.hasPrefix("flags: ") && $0.hasSuffix("age_outside_norms 4") }, "\(r.stderr)")
        let summary = try ws.json("scores.summary.json")
        #expect(summary["norms"] as? String == "adults@2026-11")
        #expect(summary["norms_method"] as? String == "continuous")
        #expect(summary["iq_transform"] as? String == "area")
        #expect(summary["age_column"] as? String == "age")
        #expect((summary["flags"] as? [String: Int])?["age_outside_norms"] == 4)

        // Wide layout (the age column is no item), JSON Lines, 3 threads: the same scores.
        let w = try ws.run(
            "score", "wide.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--out", "wide-scores.csv", "--threads", "3")
        #expect(w.status == 0, "\(w.stderr)")
        #expect(try ws.read("wide-scores.csv") == ws.read("scores.csv"))
        let j = try ws.run(
            "score", "long.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--out", "scores.jsonl", "--format", "jsonl")
        #expect(j.status == 0, "\(j.stderr)")
        let lines = try ws.read("scores.jsonl").split(separator: "\n")
        #expect(lines.count == Self.ages.count)
        for (line, row) in zip(lines, rows.dropFirst()) {
            #expect(line.contains(#","norms":"adults@2026-11","age":\#(row[12])}"#), "\(line)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["age"] as? Double == Double(row[12]))
            #expect(object["iq"] as? Int == Int(row[5]))
        }
    }

    @Test("--iq-transform linear: IQ = 100 + 15·(θ − m(age))/s(age); for normal norms that is the area IQ too")
    func linearTransformation() throws {
        let ws = try CLIWorkspace()
        let norms = HandNorms(epsilon: nil, logDelta: nil)
        try ws.write("BANK.csv", Self.bank)
        try ws.write("NORMS.json", norms.document)
        try ws.write("long.csv", Self.long(Self.ages))
        let r = try ws.run(
            "score", "long.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--iq-transform", "linear", "--out",
            "linear.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try ws.csvRows("linear.csv")
        for (k, row) in rows.dropFirst().enumerated() {
            Self.expectRow(row, norms: norms, age: Double(Self.ages[k])!) { theta, age in
                let (m, s) = norms.parameters(age: age)
                return 100 + 15 * (theta - m) / s
            }
        }
        #expect(try ws.json("linear.summary.json")["iq_transform"] as? String == "linear")
        let a = try ws.run("score", "long.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--out", "area.csv")
        #expect(a.status == 0, "\(a.stderr)")
        #expect(try ws.read("area.csv") == ws.read("linear.csv"))
    }

    @Test("age-specific norms without --age-column: a usage error (exit 64) before anything is read")
    func ageColumnRequired() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("NORMS.json", HandNorms().document)
        let r = try ws.run("score", "missing.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--out", "scores.csv")
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("the norms adults@2026-11 are age-specific (ages 20–80): name the age column with --age-column"), "\(r.stderr)")
        #expect(try ws.contents() == ["BANK.csv", "NORMS.json"])

        let same = try ws.run("score", "missing.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "item_id", "--out", "scores.csv")
        #expect(same.status == 64)
        #expect(
            same.stderr.contains("--item-column and --age-column name the same column 'item_id'; the age column must be another column"),
            "\(same.stderr)")
    }

    @Test("score --help names the age column, the options, the IQ under age norms and the flag")
    func help() throws {
        let ws = try CLIWorkspace()
        let r = try ws.run("score", "--help")
        #expect(r.status == 0)
        let text = r.stdout.replacing("\n", with: " ").replacing(#/ +/#, with: " ")
        for part in [
            "plus age (years, at most 2 decimals) with --age-column", "--age-column <age-column>", "--iq-transform <iq-transform>",
            "IQ = 100 + 15·Φ⁻¹(F_age(θ)) (--iq-transform area, the default) or 100 + 15·(θ − m(age))/s(age)",
            "theta_at_bound, age_outside_norms", "an age that is not a number in 0–130"
        ] {
            #expect(text.contains(part), "score --help lacks \(part)")
        }
    }

    @Test("linear norms with --age-column: ages read, checked and written; the IQ is the linear one")
    func linearNormsWithAges() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("linear.json", #"{"name": "pop", "version": "3", "mean": 0.5, "sd": 0.8}"#)
        try ws.write("long.csv", Self.long(Self.ages))
        let plain = try ws.run("score", "long.csv", "--bank", "BANK.csv", "--norms", "linear.json", "--out", "plain.csv")
        #expect(plain.status == 0, "\(plain.stderr)")
        let aged = try ws.run("score", "long.csv", "--bank", "BANK.csv", "--norms", "linear.json", "--age-column", "age", "--out", "aged.csv")
        #expect(aged.status == 0, "\(aged.stderr)")
        let plainRows = try ws.csvRows("plain.csv"), agedRows = try ws.csvRows("aged.csv")
        #expect(agedRows.first?.joined(separator: ",") == Self.header)
        #expect(agedRows.dropFirst().map { Array($0.prefix(12)) } == Array(plainRows.dropFirst()))
        #expect(agedRows.dropFirst().map { $0[12] } == Self.shownAges)
        #expect(agedRows.dropFirst().allSatisfy { $0[11] == "pop@3" && !$0[10].contains("age_outside_norms") })
        for row in agedRows.dropFirst() {
            let theta = Double(row[3])!
            #expect(
                Int(row[5])! >= Self.reported(100 + 15 * (theta - 0.50005) / 0.8) && Int(row[5])! <= Self.reported(100 + 15 * (theta - 0.49995) / 0.8)
            )
        }
        #expect(
            aged.stderrLines.contains(
                "method EAP (prior N(0, 1²), 61 points on [-6, 6]); norms pop@3 (θ mean 0.5, SD 0.8), ages from column 'age'; 95% intervals"),
            "\(aged.stderr)")
        let summary = try ws.json("aged.summary.json")
        #expect(summary["norms_method"] as? String == "linear" && summary["age_column"] as? String == "age" && summary["iq_transform"] == nil)
    }

    @Test("bad ages reject their session with file, line, column and reason; a missing age column is an error naming the header")
    func rejections() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("NORMS.json", HandNorms().document)
        try ws.write(
            "s.csv",
            """
            session_id,item_id,response,age
            ok,q1,1,34
            ok,q2,0,
            nan,q1,1,abc
            nan,q2,1,30
            old,q1,1,40
            old,q2,0,131
            none,q1,1,
            none,q2,0,NA
            diff,q1,1,34
            diff,q2,1,
            diff,q3,0,34.0
            diff,q4,0,35
            diff,q5,1,36
            neg,q1,1,-1
            bad,q9,1,31
            bad,q1,1,32
            late,q1,1,50

            """)
        try ws.write("more.csv", "session_id,item_id,response,age\nlate,q2,0,50.5\n")
        let r = try ws.run("score", "s.csv", "more.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--out", "scores.csv")
        #expect(r.status == 2, "\(r.stderr)")
        #expect(try ws.csvRows("scores.csv").dropFirst().map { [$0[0], $0[12]] } == [["ok", "34"]])
        let allowed = "allowed: 0–130 years"
        #expect(
            try ws.csvRecords("scores.rejects.csv") == [
                ["session_id", "file", "line", "column", "reason"],
                ["nan", "s.csv", "4", "4", "age 'abc' is not a number; \(allowed)"],
                ["old", "s.csv", "7", "4", "age 131 is outside 0–130 years"],
                ["none", "s.csv", "8", "4", "no age: the age column is blank on every row of the session"],
                ["diff", "s.csv", "13", "4", "the age differs within the session: 34 on line 10, 35 on line 13"],
                ["neg", "s.csv", "15", "4", "age -1 is outside 0–130 years"],
                // The first error in line order: the unknown item on line 16 comes before any age question.
                ["bad", "s.csv", "16", "2", "unknown item id 'q9' (not in the bank)"],
                ["late", "more.csv", "2", "4", "the age differs within the session: 50 on line 18 of s.csv, 50.5 on line 2"]
            ])
        // The same rejects on one thread and on the regrouping path (ok's rows apart).
        try ws.write("apart.csv", try ws.read("s.csv") + "ok,q3,1,34\n")
        let apart = try ws.run(
            "score", "apart.csv", "more.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--out", "apart-scores.csv",
            "--threads", "1")
        #expect(apart.status == 2, "\(apart.stderr)")
        #expect(apart.stderr.contains("note: rows of some sessions were not contiguous; the input was regrouped in memory"))
        #expect(
            try ws.csvRecords("apart-scores.rejects.csv").dropFirst().map {
                ($0[0] + "|" + $0[2...].joined(separator: "|")).replacing("apart.csv", with: "s.csv")
            }
                == (try ws.csvRecords("scores.rejects.csv")).dropFirst().map { $0[0] + "|" + $0[2...].joined(separator: "|") })

        // Wide layout: the same reasons in the age column's place.
        try ws.write("w.csv", "session_id,q1,q2,age\nw1,1,0,abc\nw2,1,1,\nw3,0,1,200\nw4,1,1,45.25\n")
        let w = try ws.run("score", "w.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--out", "w-scores.csv")
        #expect(w.status == 2, "\(w.stderr)")
        #expect(try ws.csvRows("w-scores.csv").dropFirst().map { [$0[0], $0[12]] } == [["w4", "45.25"]])
        #expect(
            try ws.csvRecords("w-scores.rejects.csv").dropFirst().map { $0 } == [
                ["w1", "w.csv", "2", "4", "age 'abc' is not a number; \(allowed)"],
                ["w2", "w.csv", "3", "4", "no age: the age column is blank on every row of the session"],
                ["w3", "w.csv", "4", "4", "age 200 is outside 0–130 years"]
            ])

        // No age column: an error naming the file, the header line and the columns found; nothing written.
        try ws.write("noage.csv", "session_id,item_id,response\ns1,q1,1\n")
        let n = try ws.run("score", "noage.csv", "--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age", "--out", "n.csv")
        #expect(n.status == 1)
        #expect(n.stderr == "noage.csv:1: error: no age column 'age' in the header (session_id,item_id,response); name it with --age-column\n")
        #expect(!ws.exists("n.csv"))
    }

    /// `count` sessions with ages in long layout, contiguous or with rows dealt round-robin (non-contiguous);
    /// about one session in nine has a bad age.
    static func many(_ count: Int, interleaved: Bool) -> String {
        var sessions: [[String]] = []
        for k in 1...count {
            let age = k % 9 == 0 ? ["abc", "131", "", "40"][k / 9 % 4] : String(format: "%.2f", 10 + Double(k * 37 % 8000) / 100)
            var rows: [String] = []
            var r = 0
            for j in 1...6 where (k + j) % 5 != 0 {
                let cell = k % 9 == 0 && k / 9 % 4 == 3 ? String(40 + r) : (r == 1 ? "" : age)
                rows.append("s\(k),q\(j),\((7 * k + 3 * j) % 4 < 2 ? 1 : 0),\(cell)\n")
                r += 1
            }
            sessions.append(rows)
        }
        var text = "session_id,item_id,response,age\n"
        if interleaved {
            for r in 0..<6 { for s in sessions where r < s.count { text += s[r] } }
        } else {
            text += sessions.joined().joined()
        }
        return text
    }

    @Test("every path gives the same scores and rejects: 1 or 3 threads, parallel chunks, regrouped in memory (partitions: SessionAgeTests)")
    func samePaths() throws {
        let ws = try CLIWorkspace()
        try ws.write("BANK.csv", Self.bank)
        try ws.write("NORMS.json", HandNorms().document)
        try ws.write("long.csv", Self.many(3000, interleaved: false))
        try ws.write("mixed.csv", Self.many(3000, interleaved: true))
        let base = ["--bank", "BANK.csv", "--norms", "NORMS.json", "--age-column", "age"]
        let one = try IQScoreCLI.run(["score", "long.csv"] + base + ["--out", "one.csv", "--threads", "1"], in: ws.directory)
        #expect(one.status == 2, "\(one.stderr)")
        let rows = try ws.csvRows("one.csv")
        #expect(rows.count == 1 + 3000 - 3000 / 9)
        #expect(try ws.csvRows("one.rejects.csv").count == 1 + 3000 / 9)
        // 32M: chunks of ~21 KB on 3 threads, so sessions cross chunk borders.
        let three = try IQScoreCLI.run(
            ["score", "long.csv"] + base + ["--out", "three.csv", "--threads", "3", "--max-memory", "32M"], in: ws.directory)
        #expect(three.status == 2, "\(three.stderr)")
        #expect(try ws.read("three.csv") == ws.read("one.csv"))
        #expect(try ws.read("three.rejects.csv") == ws.read("one.rejects.csv"))
        let mixed = try IQScoreCLI.run(
            ["score", "mixed.csv"] + base + ["--out", "mixed.csv.out", "--rejects", "mixed.rejects", "--threads", "3"], in: ws.directory)
        #expect(mixed.status == 2, "\(mixed.stderr)")
        #expect(mixed.stderr.contains("regrouped in memory"))
        #expect(try ws.read("mixed.csv.out") == ws.read("one.csv"))
        #expect(try ws.csvRows("mixed.rejects").map { [$0[0], $0[3]] } == (try ws.csvRows("one.rejects.csv")).map { [$0[0], $0[3]] })
    }
}
