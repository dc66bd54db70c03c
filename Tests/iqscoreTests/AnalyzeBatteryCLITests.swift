import Foundation
import Testing
import TestSupport

// Issue 28: `analyze` on a bifactor or testlet bank compares its model with one factor.

@Suite("analyze on a multidimensional bank")
struct AnalyzeBatteryCLITests {
    static let data = Repository.file("Data/icar16.csv").path
    static let items = Repository.file("Data/icar16_items.csv").path

    /// A workspace with bank.csv: ICAR16 by domain under `model` (60 cycles, no SEs; exit 3 if not converged).
    static func workspace(model: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> CLIWorkspace {
        let ws = try CLIWorkspace()
        let c = try ws.run("calibrate", data, "--model", model, "--items", items, "--max-cycles", "60", "--no-se", "--out", "bank.csv")
        #expect(c.status == 0 || c.status == 3, "\(c.stderr)", sourceLocation: sourceLocation)
        return ws
    }

    @Test("ICAR16 by domain: LR, AIC/BIC, M2 and Q3 for the 2PL against the bifactor bank; the files")
    func bifactor() throws {
        let ws = try Self.workspace(model: "bifactor")
        let r = try ws.run("analyze", Self.data, "--bank", "bank.csv", "--out", "items.csv", "--summary-json", "fit.json", "--q3-out", "q3.csv")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("bifactor model, factors general + logic, pattern, spatial"))
        #expect(r.stderr.contains("note: M2 uses the 1,248 persons who answered every item (of 1,509)"))
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: ws.directory.appendingPathComponent("fit.json"))) as! [String: Any]
        let uni = summary["unidimensional"] as! [String: Any], multi = summary["multidimensional"] as! [String: Any]
        // The 2PL fitted here is the 2PL calibrate fits (README: −12612.701); the bank's log-likelihood is above it.
        #expect(abs((uni["log_likelihood"] as! Double) + 12612.701) < 0.01)
        #expect(uni["parameters"] as? Int == 32 && multi["parameters"] as? Int == 48)
        let lr = summary["likelihood_ratio"] as! [String: Any]
        #expect(lr["df"] as? Int == 16)
        #expect(abs((lr["g2"] as! Double) - 2 * ((multi["log_likelihood"] as! Double) - (uni["log_likelihood"] as! Double))) < 1e-6)
        #expect((lr["g2"] as! Double) > 300)
        let m2Uni = uni["m2"] as! [String: Any], m2Multi = multi["m2"] as! [String: Any]
        #expect(m2Uni["df"] as? Int == 104 && m2Multi["df"] as? Int == 88 && m2Uni["persons"] as? Int == 1_248)
        #expect((m2Multi["m2"] as! Double) < (m2Uni["m2"] as! Double) / 2)
        let items = try String(contentsOf: ws.directory.appendingPathComponent("items.csv"), encoding: .utf8).split(separator: "\n")
        #expect(items.count == 17)
        #expect(
            items[0]
                == "item_id,factor,n,p_value,a_general,a_specific,d,c,loading_general,loading_specific,communality,a_unidimensional,b_unidimensional,c_unidimensional,q3_max_unidimensional,q3_max_bifactor"
        )
        #expect(items[1].hasPrefix("reason.4,logic,1442,0.6761,"))
        let q3 = try String(contentsOf: ws.directory.appendingPathComponent("q3.csv"), encoding: .utf8).split(separator: "\n")
        #expect(q3[0] == "item_a,item_b,same_factor,n,q3_unidimensional,q3_bifactor" && q3.count == 121)
    }

    @Test("a testlet bank counts one ratio per factor; options of the unidimensional analysis are refused by name")
    func testletAndRefusals() throws {
        let ws = try Self.workspace(model: "testlet")
        let r = try ws.run("analyze", Self.data, "--bank", "bank.csv", "--out", "items.csv", "--summary-json", "fit.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("testlet model") && r.stderr.contains("(testlet: a_s/a_g constant within each factor)"))
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: ws.directory.appendingPathComponent("fit.json"))) as! [String: Any]
        #expect((summary["multidimensional"] as! [String: Any])["parameters"] as? Int == 35)
        #expect((summary["likelihood_ratio"] as! [String: Any])["df"] as? Int == 3)

        let refused = try ws.run("analyze", Self.data, "--bank", "bank.csv", "--out", "x.csv", "--persons-out", "p.csv")
        #expect(
            refused.status == 64
                && refused.stderr.contains("is a multidimensional bank; analyze compares its model with one factor and does not take --persons-out"))
    }

    @Test("report on a bifactor bank: the comparison, reliabilities, information per factor and loadings in one HTML file")
    func report() throws {
        let ws = try Self.workspace(model: "bifactor")
        let r = try ws.run("report", Self.data, "--bank", "bank.csv", "--out", "report.html")
        #expect(r.status == 0 && r.stderr.contains("1,509 persons × 16 items, bifactor bank"), "\(r.stderr)")
        let html = try ws.read("report.html")
        for section in [
            "id=\"fit\"", "id=\"reliability\"", "id=\"information\"", "id=\"loadings\"", "<svg", "Information per factor",
            "spatial (4 items, at θ_g = 0)", "general (all 16 items, marginal)", "<td>rotate.3</td><td>spatial</td>"
        ] {
            #expect(html.contains(section), "missing \(section)")
        }
        #expect(!html.contains("nan") && !html.contains("inf<"))
    }

    @Test("assemble from a bifactor bank: forms on the general-factor marginals, information per factor; --simulate refused")
    func assemble() throws {
        let ws = try Self.workspace(model: "bifactor")
        try ws.write("bp.json", #"{"length": 8, "domain_counts": {"logic": 2, "pattern": 4, "spatial": 2}}"#)
        let r = try ws.run(
            "assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "form.csv", "--report-json", "forms.json", "--seed", "3")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("bifactor bank: forms assembled on the items' general-factor marginals"))
        #expect(r.stderr.contains("  general (8 items, marginal): θ ") && r.stderr.contains("  spatial (2 items, at θ_g = 0): θ "))
        let report = try JSONSerialization.jsonObject(with: Data(ws.read("forms.json").utf8)) as! [String: Any]
        let form = (report["forms"] as! [[String: Any]])[0]
        let factors = form["factor_information"] as! [[String: Any]]
        #expect(factors.map { $0["factor"] as! String } == ["general", "logic", "pattern", "spatial"])
        #expect(factors.map { $0["items"] as! Int } == [8, 2, 4, 2])
        // The general factor's information is the form's (the assembler sees the same marginal items).
        let formInformation = (form["information"] as! [[String: Any]]).map { $0["information"] as! Double }
        let general = (factors[0]["information"] as! [[String: Any]]).map { $0["information"] as! Double }
        #expect(zip(formInformation, general).allSatisfy { abs($0 - $1) < 1e-9 })

        let refused = try ws.run(
            "assemble", "--bank", "bank.csv", "--blueprint", "bp.json", "--out", "f.csv", "--simulate", "100", "--simulation-out", "s.json")
        #expect(refused.status == 64 && refused.stderr.contains("is a multidimensional (battery) bank; assemble does not take --simulate"))
    }

    @Test("cat simulate on a bifactor bank: simulees from the bifactor model, selection on the marginals, the final score by the full model")
    func catSimulate() throws {
        let ws = try Self.workspace(model: "bifactor")
        try ws.write("cat.json", #"{"max_items": 8, "min_items": 4, "se_target": 0.45, "exposure_target": null}"#)
        let r = try ws.run(
            "cat", "simulate", "--bank", "bank.csv", "--config", "cat.json", "--simulees", "1500", "--seed", "5", "--out", "report.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("bifactor bank (3 specific factors): selection and stopping on the general-factor marginal items"))
        let report = try JSONSerialization.jsonObject(with: Data(ws.read("report.json").utf8)) as! [String: Any]
        let battery = try #require(report["battery"] as? [String: Any])
        #expect(battery["specific_factors"] as? Int == 3 && battery["model"] as? String == "bifactor")
        // The full model's posterior SD describes its error (mean SE within 10% of the RMSE); both estimates
        // track θ_g.
        let rmse = report["rmse"] as! Double, meanSE = report["mean_se"] as! Double
        #expect(abs(meanSE / rmse - 1) < 0.1, "RMSE \(rmse), mean SE \(meanSE)")
        #expect((report["correlation"] as! Double) > 0.75 && (battery["marginal_correlation"] as! Double) > 0.75)
        // The same seed gives the same study.
        let again = try ws.run(
            "cat", "simulate", "--bank", "bank.csv", "--config", "cat.json", "--simulees", "1500", "--seed", "5", "--out", "again.json", "--threads",
            "1")
        #expect(again.status == 0)
        let second = try JSONSerialization.jsonObject(with: Data(ws.read("again.json").utf8)) as! [String: Any]
        #expect(
            second["rmse"] as! Double == rmse
                && (second["battery"] as! [String: Any])["marginal_rmse"] as! Double == battery["marginal_rmse"] as! Double)
    }
}
