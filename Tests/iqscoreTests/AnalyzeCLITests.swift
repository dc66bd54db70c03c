import Foundation
import Testing
import TestSupport

@Suite("iqscore analyze end to end")
struct AnalyzeCLITests {
    @Test("ICAR16: ITEMS.csv and the summary JSON carry the contract fields")
    func icar16() throws {
        let ws = try CLIWorkspace()
        let data = Repository.file("Data").path
        var r = try ws.run("calibrate", "\(data)/icar16.csv", "--model", "2pl", "--items", "\(data)/icar16_items.csv", "--out", "bank.csv")
        #expect(r.status == 0)
        r = try ws.run(
            "analyze", "\(data)/icar16.csv", "--bank", "bank.csv", "--out", "items.csv", "--summary-json", "summary.json",
            "--options", "\(data)/icar16_options.csv", "--items", "\(data)/icar16_items.csv", "--distractors-out", "d.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try ws.read("items.csv").split(separator: "\n").map(String.init)
        // The original 14 columns first, in their order; the new ones appended.
        #expect(
            lines[0]
                == "item_id,n,p_value,point_biserial,alpha_if_deleted,a,b,c,infit,outfit,sx2,sx2_df,sx2_p,flags,rmsd,rmsd_critical,infit_z,outfit_z")
        #expect(lines.count == 17)
        let json = try JSONSerialization.jsonObject(with: Data(try ws.read("summary.json").utf8)) as! [String: Any]
        for key in ["alpha", "sem", "marginal_rxx", "mean_error_variance_reliability", "n_persons", "fit_flags", "undefined", "q3_pairs_compared"] {
            #expect(json[key] != nil, "missing \(key)")
        }
        // Complete-enough data: α is defined, so "undefined" does not list it.
        #expect((json["undefined"] as? [String: String])?["alpha"] == nil)
        #expect(json["n_persons"] as? Int == 1509)
        let alpha = try #require(json["alpha"] as? Double)
        #expect(alpha > 0.8 && alpha < 0.86)
        // mirt 1.47, mirt(icar16 without its 16 empty rows, 1, itemtype = "2PL") then marginal_rxx(mod): 0.8286331779.
        // Our own calibration of the same data gives it to 1e-3 (the two fits' parameters differ by about 1e-3).
        let rxx = try #require(json["marginal_rxx"] as? Double)
        #expect(abs(rxx - 0.8286331779) < 1e-3, "\(rxx)")
        // The mean error variance over the persons' forms is another statistic (0.793 here).
        let meanError = try #require(json["mean_error_variance_reliability"] as? Double)
        #expect(abs(meanError - rxx) > 0.02)
        #expect(try ws.read("d.csv").hasPrefix("item_id,option,is_key,n,rate,rate_top,rate_bottom,discrimination,flags\n"))
        // M2 on the 1,248 complete patterns: 136 moments, 32 parameters; near the 557.14 of the 2PL fitted at
        // TOL 1e-6 by analyze's bifactor comparison (this bank stops at 1e-4).
        let m2 = try #require(json["m2"] as? [String: Any])
        #expect(m2["df"] as? Int == 104 && m2["persons"] as? Int == 1_248 && m2["parameters"] as? Int == 32)
        #expect(abs((m2["m2"] as! Double) - 557.14) < 1, "\(m2)")
        #expect(r.stderr.contains("M2 5") && r.stderr.contains("on 104 df (p < 1e-4), RMSEA 0.059"))
    }

    @Test("a missing-by-design bank (300 items, sessions of 15): every fit statistic defined, α undefined with the reason, no NaN")
    func sparse() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "simulate", "--model", "2pl", "--items", "300", "--items-per-session", "15", "--persons", "3000", "--layout", "long",
            "--out", "s.csv", "--bank-out", "bank.csv", "--seed", "12")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run(
            "analyze", "s.csv", "--bank", "bank.csv", "--out", "items.csv", "--summary-json", "summary.json",
            "--persons-out", "persons.csv", "--q3-out", "q3.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderrLines.first == "iqscore analyze: 3,000 persons × 300 items (0 answered every item; 15.0 items per person)")
        #expect(r.stderrLines[1].hasPrefix("alpha undefined, SEM undefined, marginal_rxx 0."), "\(r.stderrLines[1])")
        #expect(
            r.stderrLines.contains(
                "note: alpha, SEM and alpha-if-deleted undefined: missing by design: persons answered 15.0 of the 300 items on average (5.0% of the cells, below the 50% at which α is computed); α describes the total score on all 300 items, which nobody took. The model's reliabilities (marginal_rxx, mean_error_variance_reliability) apply to any design"
            ))
        let json = try JSONSerialization.jsonObject(with: Data(try ws.read("summary.json").utf8)) as! [String: Any]
        #expect(json["alpha"] is NSNull && json["sem"] is NSNull)
        #expect(
            json["m2"] is NSNull
                && json["m2_undefined"] as? String
                    == "M2 is computed for at most 80 items (45150 moments; its matrix grows as the square of that), got 300"
        )
        let undefined = try #require(json["undefined"] as? [String: String])
        #expect(Set(undefined.keys).isSuperset(of: ["alpha", "sem", "alpha_if_deleted", "mean_score", "sd_score"]))
        // mirt's marginal_rxx counts all 300 items (the bank taken whole); the mean error variance the 15-item forms.
        let rxx = try #require(json["marginal_rxx"] as? Double)
        let reliability = try #require(json["mean_error_variance_reliability"] as? Double)
        #expect(reliability > 0.6 && reliability < 0.95)
        #expect(rxx > reliability && rxx < 1, "\(rxx) \(reliability)")
        // S-X², infit/outfit with ZSTD and RMSD for every item; flags near the nominal level on model data.
        let rows = try ws.read("items.csv").split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.count == 300)
        for row in rows { for column in [8, 9, 10, 11, 12, 14, 15, 16, 17] { #expect(!row[column].isEmpty, "\(row[0]) column \(column)") } }
        let flags = try #require(json["fit_flags"] as? [String: [String: Int]])
        #expect(flags["sx2"]?["tested"] == 300 && (flags["sx2"]?["flagged"] ?? 99) <= 9)
        // At --misfit-p 0.01: about 3 of 300 items per statistic, at most (150 persons per item, true parameters).
        #expect((flags["infit_or_outfit"]?["flagged"] ?? 99) <= 6)
        #expect((flags["rmsd"]?["flagged"] ?? 99) <= 6)
        #expect(flags["q3_pairs"]?["flagged"] == 0)
        for file in ["items.csv", "persons.csv", "q3.csv"] {
            for field in try ws.read(file).split(whereSeparator: { $0 == "," || $0 == "\n" }) {
                #expect(Double(field).map(\.isFinite) ?? true, "\(file): \(field)")
            }
        }
        #expect(try ws.read("q3.csv").hasPrefix("item_a,item_b,q3,n,q3_star,z\n"))
        #expect(try ws.read("persons.csv").hasPrefix("person_id,theta_wle,se,lz,lz_star\n"))
    }

    @Test("every analyze option has help text; new thresholds are range-checked")
    func options() throws {
        let ws = try CLIWorkspace()
        let help = try ws.run("analyze", "--help")
        #expect(help.status == 0)
        // ArgumentParser prints an option's help after its name or on the next, indented line.
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "OPTIONS:"))
        var checked = 0
        for (k, line) in lines.enumerated() where k > start && line.hasPrefix("  -") {
            // The option's names and value placeholders, then its help (if on the same line).
            let words = line.split(separator: " ")
            let sameLine = words.contains { !$0.hasPrefix("-") && !$0.hasPrefix("<") }
            let nextLine = k + 1 < lines.count && lines[k + 1].hasPrefix(String(repeating: " ", count: 26)) && lines[k + 1].contains { $0 != " " }
            #expect(sameLine || nextLine, "no help: \(line)")
            checked += 1
        }
        #expect(checked >= 20)
        for text in [
            "--min-slope <min-slope> Flag slopes a below this", "--max-rmsd <max-rmsd>   Flag RMSD above this (and above the critical value",
            "Compare Q3 only for item pairs"
        ] {
            #expect(help.stdout.contains(text), "\(text)")
        }
        try ws.write("bank.csv", "item_id,a,b,c\nx1,1,0,0\nx2,1,0,0\n")
        try ws.write("r.csv", "session_id,x1,x2\ns1,1,0\ns2,0,1\n")
        let r = try ws.run("analyze", "r.csv", "--bank", "bank.csv", "--out", "items.csv", "--q3-min-persons", "5", "--max-rmsd", "2")
        #expect(r.status == 64)
        #expect(r.stderrLines.first == "Error: --max-rmsd must be in [0, 1], got 2.0; --q3-min-persons must be at least 10, got 5")
    }

    @Test("responses whose items are not in the bank: exit 1 with the reason")
    func noCommonItems() throws {
        let ws = try CLIWorkspace()
        try ws.write("bank.csv", "item_id,a,b,c\nx1,1,0,0\nx2,1,0,0\n")
        try ws.write("r.csv", "session_id,q1,q2\ns1,1,0\ns2,0,1\n")
        let r = try ws.run("analyze", "r.csv", "--bank", "bank.csv", "--out", "items.csv")
        #expect(r.status == 1)
        #expect(r.stderr == "r.csv: error: only 0 of the 2 items are in the bank bank.csv; analysis needs at least 2\n")
        #expect(!ws.exists("items.csv"))
    }
}
