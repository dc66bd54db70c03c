import Foundation
import Testing

@Suite("iqscore analyze end to end")
struct AnalyzeCLITests {
    @Test("ICAR16: ITEMS.csv and the summary JSON carry the contract fields")
    func icar16() throws {
        let ws = try CLIWorkspace()
        let data = IQScoreCLI.packageRoot.appendingPathComponent("Data").path
        var r = try ws.run("calibrate", "\(data)/icar16.csv", "--model", "2pl", "--items", "\(data)/icar16_items.csv", "--out", "bank.csv")
        #expect(r.status == 0)
        r = try ws.run("analyze", "\(data)/icar16.csv", "--bank", "bank.csv", "--out", "items.csv", "--summary-json", "summary.json",
                       "--options", "\(data)/icar16_options.csv", "--items", "\(data)/icar16_items.csv", "--distractors-out", "d.csv")
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try ws.read("items.csv").split(separator: "\n").map(String.init)
        #expect(lines[0] == "item_id,n,p_value,point_biserial,alpha_if_deleted,a,b,c,infit,outfit,sx2,sx2_df,sx2_p,flags")
        #expect(lines.count == 17)
        let json = try JSONSerialization.jsonObject(with: Data(try ws.read("summary.json").utf8)) as! [String: Any]
        for key in ["alpha", "sem", "marginal_reliability", "n_persons"] { #expect(json[key] != nil, "missing \(key)") }
        #expect(json["n_persons"] as? Int == 1509)
        let alpha = try #require(json["alpha"] as? Double)
        #expect(alpha > 0.8 && alpha < 0.86)
        #expect(try ws.read("d.csv").hasPrefix("item_id,option,is_key,n,rate,rate_top,rate_bottom,discrimination,flags\n"))
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
