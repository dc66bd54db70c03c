import Foundation
import Testing

@Suite("iqscore report end to end")
struct ReportCLITests {
    @Test("ICAR16: one self-contained HTML file with every section and inline SVG")
    func icar16() throws {
        let ws = try CLIWorkspace()
        let data = IQScoreCLI.packageRoot.appendingPathComponent("Data").path
        var r = try ws.run("calibrate", "\(data)/icar16.csv", "--model", "2pl", "--out", "bank.csv")
        #expect(r.status == 0)
        r = try ws.run("report", "\(data)/icar16.csv", "--bank", "bank.csv", "--out", "report.html", "--title", "ICAR16 <2PL>")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderrLines.first == "iqscore report: 1,509 persons × 16 items, 4 flagged")
        let html = try ws.read("report.html")
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<title>ICAR16 &lt;2PL&gt;</title>"))
        for id in ["information", "distribution", "curves", "fit", "flagged", "q3"] { #expect(html.contains("<h2 id=\"\(id)\">")) }
        // Self-contained: no scripts, no external resources (the only URL is the SVG namespace).
        #expect(!html.contains("<script") && !html.contains("<link") && !html.contains("src=") && !html.contains("href="))
        #expect(html.components(separatedBy: "http").count - 1 == html.components(separatedBy: "xmlns=\"http://www.w3.org/2000/svg\"").count - 1)
        // 2 information charts + histogram + overlay + 16 item panels.
        #expect(html.components(separatedBy: "<svg ").count - 1 == 20)
        #expect(html.contains("<b>rotate.3</b>: misfit"))
    }
}
