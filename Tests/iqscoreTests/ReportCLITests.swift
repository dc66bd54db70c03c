import Foundation
import Testing
import TestSupport

@Suite("iqscore report end to end", .timeLimit(.minutes(10)))
struct ReportCLITests {
    @Test("ICAR16: one self-contained HTML file with every section, empirical points, a second axis and legends")
    func icar16() throws {
        let ws = try CLIWorkspace()
        let data = Repository.file("Data").path
        var r = try ws.run("calibrate", "\(data)/icar16.csv", "--model", "2pl", "--items", "\(data)/icar16_items.csv", "--out", "bank.csv")
        #expect(r.status == 0)
        r = try ws.run("report", "\(data)/icar16.csv", "--bank", "bank.csv", "--out", "report.html", "--title", "ICAR16 <2PL>")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderrLines.first == "iqscore report: 1,509 persons × 16 items, 4 flagged")
        let html = try ws.read("report.html")
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<title>ICAR16 &lt;2PL&gt;</title>"))
        for id in ["information", "distribution", "curves", "items", "fit", "flagged", "q3"] { #expect(html.contains("<h2 id=\"\(id)\">")) }
        // Self-contained: no scripts, no external resources (the only URL is the SVG namespace).
        #expect(!html.contains("<script") && !html.contains("<link") && !html.contains("src=") && !html.contains("href="))
        #expect(count("http", in: html) == count("xmlns=\"http://www.w3.org/2000/svg\"", in: html))
        // Information, SE, histogram, labelled overlay, a–b scatter, the key to the panels, 16 item panels.
        #expect(count("<svg ", in: html) == 22)
        #expect(count("<figure id=\"item-", in: html) == 16)
        #expect(html.contains("<b>rotate.3</b>: misfit"))
        Self.expectFiniteCoordinates(html)

        // Legends: domains in the information chart and on the overlay; the panels' key names every mark.
        for label in ["logic (4)", "pattern (8)", "spatial (4)", "all 16 items"] { #expect(html.contains(">\(label)</text>"), "\(label)") }
        for label in [
            "model P(θ) (left axis)", "item information I(θ) (right axis)", "observed proportion correct in a θ group, 95% Wilson interval",
            "model's expected proportion for that group"
        ] {
            #expect(html.contains(">\(label)</text>"), "\(label)")
        }
        // Every curve of the overlay carries its id; no rescaled information ("÷") is left.
        let overview = try #require(section(html, from: "<h2 id=\"curves\">", to: "<h2 id=\"items\">"))
        for id in ["reason.4", "letter.7", "matrix.45", "rotate.3", "rotate.8"] { #expect(overview.contains(">\(id)</text>")) }
        #expect(!overview.contains("not labelled"))
        #expect(!html.contains("÷"))

        // Panels: 10 θ groups per item (≥ 1,438 respondents each), drawn as points with bars and diamonds, and
        // information on a right-hand axis labelled in its own colour.
        let panels = try #require(section(html, from: "<h2 id=\"items\">", to: "<h2 id=\"fit\">"))
        #expect(count("r=\"2.6\" fill=\"#000000\"/>", in: panels) == 160 + 1) // + the key
        #expect(count("fill=\"white\" fill-opacity=\"0.6\" stroke=\"#0072B2\"", in: panels) == 160)
        #expect(count("fill=\"#D55E00\" transform=\"rotate(90", in: panels) == 16)
        #expect(count("10 groups of ≥ ", in: panels) == 16)
        // The rotation items miss the model at low θ (more correct answers than a 2PL allows: guessing).
        let rotate3 = try #require(section(html, from: "<figure id=\"item-rotate.3\"", to: "</figure>"))
        #expect(rotate3.hasPrefix("<figure id=\"item-rotate.3\" class=\"flag miss\">"))
        #expect(rotate3.contains("(beyond |z| 3.60)"))
        // The SE axis ends at 2 and the chart says where the curve leaves it.
        #expect(html.contains("▲ SE &gt; 2 for θ &lt; −3.8 and θ &gt; 3.7 (off the chart)</text>"))
        #expect(!html.contains("a session of"))
        // The item table has the largest |z| per item.
        #expect(html.contains("<th>max |z|</th>"))
    }

    @Test("1,500-item bank in sparse sessions: a summary overview, not one curve per item; at most 60 panels")
    func largeBank() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "simulate", "--model", "2pl", "--items", "1500", "--items-per-session", "25", "--persons", "3000",
            "--domains", "pattern,logic,spatial,math,verbal,memory", "--layout", "long", "--out", "responses.csv",
            "--bank-out", "bank.csv", "--seed", "7")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("report", "responses.csv", "--bank", "bank.csv", "--out", "report.html")
        #expect(r.status == 0, "\(r.stderr)")
        let html = try ws.read("report.html")
        let overview = try #require(section(html, from: "<h2 id=\"curves\">", to: "<h2 id=\"items\">"))
        // Six domain charts, each a band and two lines (the domain's median, the bank's median), and one scatter.
        #expect(count("<polyline", in: overview) == 12)
        #expect(count("<polygon", in: overview) == 6)
        for d in ["pattern", "logic", "spatial", "math", "verbal", "memory"] { #expect(overview.contains(">\(d) (250 items)</text>")) }
        #expect(count("<circle", in: overview) >= 1500)
        // The whole document: far fewer polylines than items; panels capped; a second SE curve for a session.
        #expect(count("<polyline", in: html) < 200)
        #expect(count("<figure id=\"item-", in: html) == 60)
        #expect(html.contains("the first 60 of "))
        #expect(html.contains(">a session of 25 items (I × 25/1500)</text>"))
        #expect(html.utf8.count < 1_500_000, "\(html.utf8.count) bytes")
        Self.expectFiniteCoordinates(html)
    }

    @Test("an item whose responses rise and then fall with θ: its panel shows the observed proportions off the curve")
    func misfittingItem() throws {
        let ws = try CLIWorkspace()
        var r = try ws.run(
            "simulate", "--model", "2pl", "--items", "20", "--persons", "2000", "--out", "clean.csv",
            "--thetas-out", "thetas.csv", "--seed", "11")
        #expect(r.status == 0, "\(r.stderr)")
        // Item i0001 replaced: P(θ) = σ(2(θ + 1)) · (1 − 0.7 σ(3(θ − 1))), near 0.95 at θ = 0.5 and 0.4 at θ = 2.5 (an
        // item that able persons get wrong); uniform draws from a fixed linear congruential generator.
        let thetas = try ws.csvRows("thetas.csv").dropFirst().map { Double($0[1])! }
        var rows = try ws.csvRows("clean.csv")
        var state: UInt64 = 12345
        func uniform() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
        func sigmoid(_ z: Double) -> Double { 1 / (1 + exp(-z)) }
        for k in 1..<rows.count {
            let t = thetas[k - 1]
            rows[k][1] = uniform() < sigmoid(2 * (t + 1)) * (1 - 0.7 * sigmoid(3 * (t - 1))) ? "1" : "0"
        }
        try ws.write("responses.csv", rows.map { $0.joined(separator: ",") }.joined(separator: "\n") + "\n")
        r = try ws.run("calibrate", "responses.csv", "--model", "2pl", "--out", "bank.csv")
        #expect(r.status == 0, "\(r.stderr)")
        r = try ws.run("report", "responses.csv", "--bank", "bank.csv", "--out", "report.html")
        #expect(r.status == 0, "\(r.stderr)")
        let html = try ws.read("report.html")
        let panel = try #require(section(html, from: "<figure id=\"item-i0001\"", to: "</figure>"))
        #expect(panel.contains("class=\"flag miss\""), "\(panel.suffix(600))")
        // Its largest |z| is at high θ, where fewer answer correctly than the curve says.
        let caption = try #require(section(panel, from: "<figcaption>", to: "</figcaption>"))
        let observed = try #require(number(after: "(observed ", in: caption)), expected = try #require(number(after: "expected ", in: caption))
        let at = try #require(number(after: "at θ̄ ", in: caption)), z = try #require(number(after: "largest |z| ", in: caption))
        #expect(at > 0.5 && observed < expected - 0.15 && z > 5, "\(caption)")
        // The other 19 items follow the model: none of them misses it beyond the Bonferroni bound.
        #expect(count("miss\"><svg", in: html) == 1)
        Self.expectFiniteCoordinates(html)
    }

    /// Every numeric SVG attribute (x, y, x1…y2, cx, cy, r, width, height, points, d) holds only digits, signs,
    /// points, separators and path commands: no NaN or infinity.
    static func expectFiniteCoordinates(_ html: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let pattern = try! NSRegularExpression(pattern: " (x|y|x1|x2|y1|y2|cx|cy|r|width|height|points|d)=\"([^\"]*)\"")
        let allowed = CharacterSet(charactersIn: "0123456789.,- MLVHhlvz")
        var checked = 0
        for m in pattern.matches(in: html, range: NSRange(html.startIndex..., in: html)) {
            let value = String(html[Range(m.range(at: 2), in: html)!])
            if value.unicodeScalars.contains(where: { !allowed.contains($0) }) {
                Issue.record("non-numeric SVG coordinate: \(value.prefix(80))", sourceLocation: sourceLocation)
                return
            }
            checked += 1
        }
        #expect(checked > 100, sourceLocation: sourceLocation)
    }
}

private func count(_ needle: String, in haystack: String) -> Int { haystack.components(separatedBy: needle).count - 1 }

/// The text from the first `from` to the next `to` after it (inclusive of `from`).
private func section(_ s: String, from: String, to: String) -> String? {
    guard let a = s.range(of: from), let b = s.range(of: to, range: a.upperBound..<s.endIndex) else { return nil }
    return String(s[a.lowerBound..<b.lowerBound])
}

/// The decimal number (with − or -) right after `marker`.
private func number(after marker: String, in s: String) -> Double? {
    guard let r = s.range(of: marker) else { return nil }
    let text = s[r.upperBound...].prefix { "0123456789.−-".contains($0) }
    return Double(text.replacingOccurrences(of: "−", with: "-"))
}
