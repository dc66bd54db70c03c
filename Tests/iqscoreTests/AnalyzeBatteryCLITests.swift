import Foundation
import Testing

// Issue 28: `analyze` on a bifactor or testlet bank compares its model with one factor.

@Suite("analyze on a multidimensional bank")
struct AnalyzeBatteryCLITests {
    static let data = IQScoreCLI.packageRoot.appendingPathComponent("Data/icar16.csv").path
    static let items = IQScoreCLI.packageRoot.appendingPathComponent("Data/icar16_items.csv").path

    @Test("ICAR16 by domain: LR, AIC/BIC, M2 and Q3 for the 2PL against the bifactor bank; the files")
    func bifactor() throws {
        let ws = try CLIWorkspace()
        let c = try ws.run("calibrate", Self.data, "--model", "bifactor", "--items", Self.items, "--max-cycles", "60", "--no-se", "--out", "bank.csv")
        #expect(c.status == 0 || c.status == 3, "\(c.stderr)")
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
        #expect(items[0] == "item_id,factor,n,p_value,a_general,a_specific,d,c,loading_general,loading_specific,communality,a_unidimensional,b_unidimensional,c_unidimensional,q3_max_unidimensional,q3_max_bifactor")
        #expect(items[1].hasPrefix("reason.4,logic,1442,0.6761,"))
        let q3 = try String(contentsOf: ws.directory.appendingPathComponent("q3.csv"), encoding: .utf8).split(separator: "\n")
        #expect(q3[0] == "item_a,item_b,same_factor,n,q3_unidimensional,q3_bifactor" && q3.count == 121)
    }

    @Test("a testlet bank counts one ratio per factor; options of the unidimensional analysis are refused by name")
    func testletAndRefusals() throws {
        let ws = try CLIWorkspace()
        let c = try ws.run("calibrate", Self.data, "--model", "testlet", "--items", Self.items, "--max-cycles", "60", "--no-se", "--out", "bank.csv")
        #expect(c.status == 0 || c.status == 3, "\(c.stderr)")
        let r = try ws.run("analyze", Self.data, "--bank", "bank.csv", "--out", "items.csv", "--summary-json", "fit.json")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("testlet model") && r.stderr.contains("(testlet: a_s/a_g constant within each factor)"))
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: ws.directory.appendingPathComponent("fit.json"))) as! [String: Any]
        #expect((summary["multidimensional"] as! [String: Any])["parameters"] as? Int == 35)
        #expect((summary["likelihood_ratio"] as! [String: Any])["df"] as? Int == 3)

        let refused = try ws.run("analyze", Self.data, "--bank", "bank.csv", "--out", "x.csv", "--persons-out", "p.csv")
        #expect(refused.status == 64 && refused.stderr.contains("is a multidimensional bank; analyze compares its model with one factor and does not take --persons-out"))
    }
}
