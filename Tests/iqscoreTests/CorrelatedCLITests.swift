import Foundation
import Testing
import TestSupport

// Issue 28: `simulate --model correlated`, `calibrate --model correlated`, and `score`, `analyze`, `assemble`, `cat simulate` and `report` on the bank it writes.

@Suite("calibrate --model correlated")
struct CorrelatedCLITests {
    @Test("a simulated three-factor bank recovered: the bank's a_<factor> and r_<factor> columns, the correlations on stderr and in the summary")
    func roundTrip() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "simulate", "--model", "correlated", "--items", "18", "--persons", "1500", "--domains", "a,b,c",
            "--factor-correlation", "0.5", "--out", "responses.csv", "--bank-out", "truth.csv", "--thetas-out", "thetas.csv", "--seed", "3")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("correlated 2PL bank of 18 items on 3 factors (a, b, c; every correlation 0.5)"))
        let truth = try ws.read("truth.csv").split(separator: "\n")
        #expect(truth[0] == "item_id,model,a_a,a_b,a_c,d,c,se_a_a,se_a_b,se_a_c,se_d,se_c,factor,r_a,r_b,r_c,n_responses,p_value,flags,domain")
        #expect(truth[2].contains(",b,0.500000,1.000000,0.500000,"))
        #expect(try ws.read("thetas.csv").hasPrefix("session_id,theta_a,theta_b,theta_c\n"))
        r = try ws.run("calibrate", "--model", "correlated", "responses.csv", "--items", "truth.csv", "--quadrature-points", "9", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("factors: a (6), b (6), c (6)") && r.stderr.contains("9^3 = 729 nodes"))
        let summary = try JSONSerialization.jsonObject(with: Data(ws.read("bank.summary.json").utf8)) as! [String: Any]
        #expect(summary["model"] as? String == "correlated" && summary["nodes"] as? Int == 729)
        let correlations = try #require(summary["correlations"] as? [[Double]]), ses = try #require(summary["correlation_ses"] as? [[Double]])
        for (f, g) in [(1, 0), (2, 0), (2, 1)] {
            #expect(
                abs(correlations[f][g] - 0.5) < 4 * ses[f][g] && correlations[f][g] == correlations[g][f],
                "ρ\(f)\(g) \(correlations[f][g]) SE \(ses[f][g])")
        }
        let bank = try ws.read("bank.csv").split(separator: "\n")
        #expect(
            bank.count == 19
                && bank[0].hasPrefix("item_id,model,a_a,a_b,a_c,d,c,se_a_a,se_a_b,se_a_c,se_d,se_c,factor,r_a,r_b,r_c,n_responses,p_value,flags"))
        // Scored as a battery: the full-scale composite and every factor's index, which track the true factors.
        r = try ws.run("score", "responses.csv", "--bank", "bank.csv", "--out", "scores.csv", "--indexes", "all", "--quadrature-points", "15")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stderr.contains("correlated-factors bank (3 factors): full-scale θ = their equally weighted composite")
                && r.stderr.contains("15^3 product grid"), "\(r.stderr)")
        let manifest = try JSONSerialization.jsonObject(with: Data(ws.read("scores.summary.json").utf8)) as! [String: Any]
        let battery = try #require(manifest["battery"] as? [String: Any])
        #expect(
            battery["model"] as? String == "correlated" && battery["general_factor"] as? String == "full_scale"
                && battery["quadrature_points"] as? Int == 15)
        let scores = try ws.read("scores.csv").split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let thetas = try ws.read("thetas.csv").split(separator: "\n").dropFirst().map { $0.split(separator: ",").map(String.init) }
        #expect(scores.count == 1501 && thetas.count == 1500)
        for (f, name) in ["a", "b", "c"].enumerated() {
            // Corr²(EAP, θ) is the reliability the posterior claims, 1 − E Var(θ | u) (about 0.56 for 6 items).
            let column = try #require(scores[0].firstIndex(of: "index_\(name)_theta")),
                seColumn = try #require(scores[0].firstIndex(of: "index_\(name)_se"))
            let estimates = scores.dropFirst().map { Double($0[column])! }, truth = thetas.map { Double($0[f + 1])! }
            let n = Double(truth.count), me = estimates.reduce(0, +) / n, mt = truth.reduce(0, +) / n
            let cov = zip(estimates, truth).reduce(0) { $0 + ($1.0 - me) * ($1.1 - mt) }
            let ve = estimates.reduce(0) { $0 + ($1 - me) * ($1 - me) }, vt = truth.reduce(0) { $0 + ($1 - mt) * ($1 - mt) }
            let claimed = 1 - scores.dropFirst().reduce(0) { $0 + pow(Double($1[seColumn])!, 2) } / n
            #expect(abs(cov * cov / (ve * vt) - claimed) < 0.05, "factor \(name): r² = \(cov * cov / (ve * vt)), claimed \(claimed)")
        }
        // analyze: the bank's model against one factor; on data simulated from the correlated model M2 fits and the LR test rejects one factor.
        r = try ws.run("analyze", "responses.csv", "--bank", "bank.csv", "--out", "analysis.csv", "--summary-json", "analysis.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("correlated model, factors a, b, c") && r.stderr.contains("one factor is every correlation at 1"), "\(r.stderr)")
        let analysis = try JSONSerialization.jsonObject(with: Data(ws.read("analysis.json").utf8)) as! [String: Any]
        let lr = try #require(analysis["likelihood_ratio"] as? [String: Any]), multi = try #require(analysis["multidimensional"] as? [String: Any])
        let m2 = try #require(multi["m2"] as? [String: Any]),
            uniM2 = try #require((analysis["unidimensional"] as? [String: Any])?["m2"] as? [String: Any])
        #expect(lr["df"] as? Int == 3 && (lr["p"] as? Double ?? 1) < 1e-6 && multi["parameters"] as? Int == 39, "\(lr)")
        #expect(m2["df"] as? Int == 171 - 39 && (m2["p"] as? Double ?? 0) > 0.001 && (uniM2["p"] as? Double ?? 1) < 1e-6, "\(m2) \(uniM2)")
        #expect(try ws.read("analysis.csv").hasPrefix("item_id,factor,n,p_value,a,d,c,loading,a_unidimensional,"))
        // assemble: forms on the items' full-scale marginals, the information per factor reported.
        try ws.write("bp.json", #"{"length": 6, "domain_counts": {"a": 2, "b": 2, "c": 2}}"#)
        r = try ws.run("assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form.csv", "--report-json", "form.json")
        #expect(r.status == 0 && r.stderr.contains("correlated-factors bank: forms assembled on the items' marginals"), "\(r.stderr)")
        let forms = try JSONSerialization.jsonObject(with: Data(ws.read("form.json").utf8)) as! [String: Any]
        let form = try #require((forms["forms"] as? [[String: Any]])?.first)
        let factorInformation = try #require(form["factor_information"] as? [[String: Any]])
        #expect(
            factorInformation.map { $0["factor"] as? String } == ["full_scale", "a", "b", "c"]
                && factorInformation.map { $0["items"] as? Int } == [6, 2, 2, 2])
        let formInformation = (form["information"] as! [[String: Any]]).map { $0["information"] as! Double }
        let fullScale = (factorInformation[0]["information"] as! [[String: Any]]).map { $0["information"] as! Double }
        #expect(zip(formInformation, fullScale).allSatisfy { abs($0 - $1) < 1e-9 })
        // cat simulate: simulees from N(0, R) given their full-scale θ, selection on the marginals, the final score by
        // the full model, whose posterior SD describes its error.
        try ws.write("cat.json", #"{"max_items": 8, "min_items": 4, "se_target": 0.45, "exposure_target": null}"#)
        r = try ws.run(
            "cat", "simulate", "--bank", "bank.csv", "--config", "cat.json", "--simulees", "1500", "--seed", "5", "--out", "cat_report.json")
        #expect(
            r.status == 0 && r.stderr.contains("correlated-factors bank (3 factors): selection and stopping on the items' marginals"), "\(r.stderr)")
        let cat = try JSONSerialization.jsonObject(with: Data(ws.read("cat_report.json").utf8)) as! [String: Any]
        let catBattery = try #require(cat["battery"] as? [String: Any])
        #expect(catBattery["model"] as? String == "correlated" && catBattery["specific_factors"] as? Int == 3)
        let catRMSE = cat["rmse"] as! Double, catSE = cat["mean_se"] as! Double
        #expect(abs(catSE / catRMSE - 1) < 0.1 && (cat["correlation"] as! Double) > 0.75, "RMSE \(catRMSE), mean SE \(catSE)")
        r = try ws.run("report", "responses.csv", "--bank", "bank.csv", "--out", "report.html")
        #expect(r.status == 0 && r.stderr.contains("correlated-factors bank"), "\(r.stderr)")
        let html = try ws.read("report.html")
        #expect(
            html.contains("<h2 id=\"correlations\">Factor correlations</h2>") && html.contains("Which indexes add value") && html.contains("<svg"))
    }

    @Test("equal to mirt 1.47 on the same data: log-likelihood, correlations and items (15 points per factor, TOL 1e-6)")
    func asMirt() throws {
        // mirt(d, mirt.model("a = 1,4,…\nb = …\nc = …\nCOV = a*b*c"), TOL = 1e-6) on these responses (quadpts 15, its
        // default for 3 factors): logLik −21798.8495745, 74 cycles; cov a–b 0.4862430179, a–c 0.5519479180, b–c 0.5519719727.
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "simulate", "--model", "correlated", "--items", "18", "--persons", "2000", "--domains", "a,b,c",
            "--factor-correlation", "0.5", "--out", "r.csv", "--bank-out", "truth.csv", "--seed", "3")
        #expect(r.status == 0)
        r = try ws.run(
            "calibrate", "--model", "correlated", "r.csv", "--items", "truth.csv", "--quadrature-points", "15", "--tolerance", "1e-6",
            "--no-se", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(ws.read("bank.summary.json").utf8)) as! [String: Any]
        let ll = try #require(summary["log_likelihood"] as? Double), rho = try #require(summary["correlations"] as? [[Double]])
        #expect(abs(ll - -21798.8495745) < 1e-3, "log-likelihood \(ll)")
        #expect(abs(rho[1][0] - 0.4862430179) < 1e-4 && abs(rho[2][0] - 0.5519479180) < 1e-4 && abs(rho[2][1] - 0.5519719727) < 1e-4, "\(rho)")
        // mirt's first item: a1 0.777665766938952, d 1.38205582191959.
        let first = try #require(ws.read("bank.csv").split(separator: "\n").dropFirst().first).split(separator: ",")
        #expect(abs(Double(first[2])! - 0.777665766938952) < 1e-3 && abs(Double(first[5])! - 1.38205582191959) < 1e-3, "\(first)")
    }

    @Test("online calibration: --fixed holds a correlated bank's items to the bit and estimates the new ones on its factors")
    func onlineCalibration() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "simulate", "--model", "correlated", "--items", "18", "--persons", "3000", "--domains", "a,b,c",
            "--factor-correlation", "0.5", "--out", "r.csv", "--bank-out", "truth.csv", "--seed", "5")
        #expect(r.status == 0, "\(r.stderr)")
        let truth = try ws.read("truth.csv").split(separator: "\n").map(String.init)
        // Every other item of the true bank is held; the rest are new.
        try ws.write(
            "fixed.csv", ([truth[0]] + truth.dropFirst().enumerated().filter { $0.offset % 2 == 0 }.map(\.element)).joined(separator: "\n") + "\n")
        r = try ws.run(
            "calibrate", "--model", "correlated", "r.csv", "--items", "truth.csv", "--fixed", "fixed.csv", "--quadrature-points", "11",
            "--no-se", "--out", "online.csv")
        #expect(r.status == 0 && r.stderr.contains("fixed: 9 items held at their values in fixed.csv, 9 free items"), "\(r.stderr)")
        r = try ws.run(
            "calibrate", "--model", "correlated", "r.csv", "--items", "truth.csv", "--quadrature-points", "11", "--no-se", "--out", "free.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let online = try ws.read("online.csv").split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let rows = truth.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let flags = try #require(online[0].firstIndex(of: "flags"))
        var squared = 0.0
        for i in 1..<rows.count {
            let held = i % 2 == 1
            #expect((online[i][flags] == "fixed") == held, "\(online[i])")
            // Columns 2…5: a_a, a_b, a_c, d (the true bank's values to its 6 decimals when held).
            if held {
                #expect(Array(online[i][2...5]) == Array(rows[i][2...5]), "\(online[i]) vs \(rows[i])")
            } else {
                for c in 2...5 { squared += pow(Double(online[i][c])! - Double(rows[i][c])!, 2) }
            }
        }
        #expect((squared / 36).squareRoot() < 0.08, "RMSE of the free items' parameters \((squared / 36).squareRoot())")
        let summary = try JSONSerialization.jsonObject(with: Data(ws.read("online.summary.json").utf8)) as! [String: Any]
        let freeSummary = try JSONSerialization.jsonObject(with: Data(ws.read("free.summary.json").utf8)) as! [String: Any]
        #expect((summary["fixed_items"] as? [String])?.count == 9 && summary["fixed_bank"] as? String == "fixed.csv")
        let llOnline = try #require(summary["log_likelihood"] as? Double), llFree = try #require(freeSummary["log_likelihood"] as? Double)
        #expect(llOnline <= llFree + 1e-6 && llFree - llOnline < 20, "online \(llOnline), free \(llFree)")
        // A bank of another model is refused by name.
        r = try ws.run("calibrate", "--model", "2pl", "r.csv", "--out", "uni.csv", "--no-se")
        r = try ws.run("calibrate", "--model", "correlated", "r.csv", "--items", "truth.csv", "--fixed", "uni.csv", "--out", "x.csv")
        #expect(r.status == 1 && r.stderr.contains("--fixed with --model correlated takes a correlated-factors bank"), "\(r.stderr)")
    }

    @Test("--index-norms: an index reported on its own norms, the others and the full scale unchanged; bad values named")
    func indexNorms() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "simulate", "--model", "correlated", "--items", "12", "--persons", "400", "--domains", "a,b",
            "--factor-correlation", "0.6", "--out", "r.csv", "--bank-out", "truth.csv", "--seed", "8")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("score", "r.csv", "--bank", "truth.csv", "--indexes", "all", "--out", "plain.csv")
        #expect(r.status == 0, "\(r.stderr)")
        try ws.write("a.json", #"{"name": "a-norms", "version": "1", "mean": 0.5, "sd": 2}"#)
        r = try ws.run("score", "r.csv", "--bank", "truth.csv", "--indexes", "all", "--index-norms", "a=a.json", "--out", "normed.csv")
        #expect(r.status == 0 && r.stderr.contains("index norms: a a-norms@1, b calibration population"), "\(r.stderr)")
        func table(_ name: String) throws -> [[String]] {
            try ws.read(name).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        }
        let plain = try table("plain.csv"), normed = try table("normed.csv")
        let header = normed[0]
        let theta = try #require(header.firstIndex(of: "index_a_theta")), iq = try #require(header.firstIndex(of: "index_a_iq"))
        let percentile = try #require(header.firstIndex(of: "index_a_percentile")), bStart = try #require(header.firstIndex(of: "index_b_theta"))
        #expect(plain.count == 401 && normed.count == 401)
        for (p, n) in zip(plain.dropFirst(), normed.dropFirst()) {
            let z = (Double(n[theta])! - 0.5) / 2
            #expect(abs(Double(n[iq])! - (100 + 15 * z)) <= 0.5 + 1e-3 * 15, "\(n[theta]) → \(n[iq])")
            #expect(abs(Double(n[percentile])! - 100 * NormalCDF(z)) <= 0.05 + 1e-3, "\(n[theta]) → \(n[percentile])")
            // The full scale and the other index as without index norms.
            #expect(Array(p[0..<theta]) == Array(n[0..<theta]) && Array(p[bStart...]) == Array(n[bStart...]))
        }
        let manifest = try JSONSerialization.jsonObject(with: Data(ws.read("normed.summary.json").utf8)) as! [String: Any]
        let norms = (manifest["battery"] as? [String: Any])?["index_norms"] as? [String: String]
        #expect(norms == ["a": "a-norms@1", "b": "calibration population"], "\(String(describing: norms))")
        // --starts: every run on stderr and in the summary, the kept one marked; refused for one-factor models.
        r = try ws.run(
            "calibrate", "--model", "correlated", "r.csv", "--items", "truth.csv", "--quadrature-points", "9", "--no-se", "--starts", "2", "--out",
            "bank2.csv")
        #expect(r.status == 0 && r.stderr.contains("starts: 2 runs, ") && r.stderr.contains("(kept)"), "\(r.stderr)")
        let fit = try JSONSerialization.jsonObject(with: Data(ws.read("bank2.summary.json").utf8)) as! [String: Any]
        let starts = try #require(fit["starts"] as? [[String: Any]])
        #expect(starts.count == 2 && starts.filter { $0["kept"] as? Bool == true }.count == 1 && starts[1]["start"] as? Int == 1)
        r = try ws.run("calibrate", "--model", "2pl", "r.csv", "--starts", "3", "--out", "x.csv")
        #expect(r.status == 64 && r.stderr.contains("--starts goes with --model bifactor, testlet or correlated"), "\(r.stderr)")
        r = try ws.run("score", "r.csv", "--bank", "truth.csv", "--indexes", "b", "--index-norms", "a=a.json", "--out", "x.csv")
        #expect(r.status == 64 && r.stderr.contains("--index-norms a: not a reported index (reported: b; --indexes chooses them)"), "\(r.stderr)")
        r = try ws.run("score", "r.csv", "--bank", "truth.csv", "--index-norms", "a:a.json", "--out", "x.csv")
        #expect(r.status == 64 && r.stderr.contains("--index-norms must be NAME=NORMS.json"), "\(r.stderr)")
    }

    /// Φ(z) for the percentile check.
    func NormalCDF(_ z: Double) -> Double { 0.5 * erfc(-z / 2.squareRoot()) }

    @Test("refusals: an item without a factor, one factor, a correlation that is not a correlation matrix's")
    func refusals() throws {
        let ws = try CLIWorkspace()
        try ws.write(
            "responses.csv",
            "id,i1,i2,i3,i4\n" + (0..<40).map { "p\($0),\($0 % 2),\($0 % 3 == 0 ? 1 : 0),\($0 % 5 == 0 ? 0 : 1),\($0 % 2)" }.joined(separator: "\n")
                + "\n")
        try ws.write("items.csv", "item_id,domain\ni1,a\ni2,a\ni3,b\ni4,\n")
        var r = try ws.run("calibrate", "--model", "correlated", "responses.csv", "--items", "items.csv", "--out", "bank.csv")
        #expect(r.status == 1 && r.stderr.contains("1 item has no factor (i4)"), "\(r.stderr)")
        try ws.write("items.csv", "item_id,domain\ni1,a\ni2,a\ni3,a\ni4,a\n")
        r = try ws.run("calibrate", "--model", "correlated", "responses.csv", "--items", "items.csv", "--out", "bank.csv")
        #expect(r.status == 1 && r.stderr.contains("the correlated-factors model needs at least 2"), "\(r.stderr)")
        r = try ws.run(
            "simulate", "--model", "correlated", "--items", "6", "--persons", "10", "--domains", "a,b,c", "--factor-correlation=-0.6", "--out",
            "x.csv")
        #expect(r.status == 64 && r.stderr.contains("--factor-correlation must be greater than −1/(K−1) = -0.5000"), "\(r.stderr)")
        r = try ws.run("simulate", "--model", "2pl", "--items", "6", "--persons", "10", "--factor-correlation", "0.3", "--out", "x.csv")
        #expect(r.status == 64 && r.stderr.contains("--factor-correlation goes with --model correlated"))
    }
}
