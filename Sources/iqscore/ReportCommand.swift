import ArgumentParser
import Foundation
import Psychometrics

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write a self-contained HTML report with SVG plots: curves, information, score distribution, fit, flags.",
        discussion: """
            One HTML file with inline CSS and SVG (no scripts, no network): test summary (α, SEM, marginal \
            reliability), test information and conditional SE, the EAP θ / IQ distribution, item characteristic \
            and information curves (every item when there are at most 60, otherwise the flagged ones and an \
            overlay of all), the item table of `iqscore analyze`, flagged items with reasons and flagged Q3 pairs.
            """
    )

    @Argument(help: "Responses CSV (wide or long).")
    var responses: String

    @Option(help: "Calibrated bank CSV.")
    var bank: String

    @Option(help: "Output HTML file (written atomically).")
    var out: String

    @Option(help: "Report title.")
    var title = "iqscore item bank report"

    @OptionGroup var columns: ResponseColumnOptions

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(inputs: [("input", responses), ("--bank", bank)], outputs: [("--out", out)])
            let itemBank = try loadBank(bank, requirePositiveSlopes: false)
            let table = try ItemAnalysisTable(responses: responses, fileOptions: columns.fileOptions, bank: itemBank, rules: FlagRules())
            let html = try render(table)
            try writeAtomically(html, to: out)
            printError("iqscore report: \(formatCount(table.data.personCount)) persons × \(table.rows.count) items, \(table.flaggedCount) flagged\nwrote \(out)")
            return ExitStatus.success
        }
    }

    func render(_ t: ItemAnalysisTable) throws -> String {
        let thetas = stride(from: -4.0, through: 4.0, by: 0.1).map { $0 }
        let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
        func num(_ v: Double?, _ d: Int = 3) -> String { v.map { $0.isFinite ? fixed($0, d) : "–" } ?? "–" }

        // Test information and SE.
        let info = ModelFit.testInformation(t.parameters, at: thetas)
        let maxInfo = max(1, info.map(\.information).max() ?? 1)
        var infoChart = SVGChart(x: -4...4, y: 0...(maxInfo * 1.1), title: "Test information I(θ)", xLabel: "θ", yLabel: "information", width: 540)
        infoChart.line(info.map { ($0.theta, $0.information) }, color: palette[0], width: 2)
        let seTop = min(2, max(0.5, (info.map(\.standardError).filter(\.isFinite).min() ?? 0.5) * 3))
        var seChart = SVGChart(x: -4...4, y: 0...seTop, title: "Conditional standard error SE(θ) = 1/√I(θ)", xLabel: "θ", yLabel: "SE(θ)", width: 540)
        seChart.line(info.map { ($0.theta, min($0.standardError, seTop)) }, color: palette[3], width: 2)

        // θ and IQ distribution from EAP.
        let eap = try AbilityEstimator(parameters: t.parameters)
        var estimates: [Double] = []
        for i in 0..<t.data.personCount {
            let cells = t.data.cells(ofPerson: i)
            estimates.append(eap.estimate(items: cells.map { Int(t.data.itemIndices[$0]) }, responses: cells.map { t.data.responses[$0] }).theta)
        }
        let width = 0.25
        var counts = [Int](repeating: 0, count: 32)
        // Clamped before the conversion to Int, which would trap on a non-finite θ.
        for e in estimates { counts[Int(min(31, max(0, ((e + 4) / width).rounded(.down))))] += 1 }
        let maxCount = Double(counts.max() ?? 1)
        var histogram = SVGChart(x: -4...4, y: 0...(maxCount * 1.1), title: "Distribution of EAP θ (IQ = 100 + 15θ below the axis)", xLabel: "θ  (IQ: 40 at −4, 70 at −2, 100 at 0, 130 at 2, 160 at 4)", yLabel: "persons")
        histogram.bars(counts.enumerated().map { (-4 + Double($0.offset) * width, -4 + Double($0.offset + 1) * width, Double($0.element)) }, color: "#6baed6")

        // Item curves.
        let flagged = t.rows.indices.filter { !t.rows[$0].flags.isEmpty }
        let shown = t.rows.count <= 60 ? Array(t.rows.indices) : flagged
        var overlay = SVGChart(x: -4...4, y: 0...1, title: "Item characteristic curves (all \(t.rows.count) items)", xLabel: "θ", yLabel: "P(correct)")
        for (k, row) in t.rows.enumerated() {
            overlay.line(thetas.map { ($0, row.parameters.probability(at: $0)) }, color: palette[k % palette.count], width: 1.2, opacity: t.rows.count > 60 ? 0.3 : 0.9)
        }
        var small = ""
        for j in shown {
            let row = t.rows[j]
            let itemInfo = thetas.map { ($0, row.parameters.information(at: $0)) }
            let top = max(0.5, itemInfo.map(\.1).max() ?? 0.5)
            var c = SVGChart(x: -4...4, y: 0...1, title: row.itemID, xLabel: "θ", yLabel: "P / info ÷ \(SVGChart.label((top * 100).rounded() / 100))", width: 300, height: 200)
            c.margin = (44, 8, 24, 36)
            c.line(thetas.map { ($0, row.parameters.probability(at: $0)) }, color: palette[0], width: 2)
            c.line(itemInfo.map { ($0.0, $0.1 / top) }, color: palette[1], width: 1.5, dash: "4,3")
            small += "<figure class=\"\(row.flags.isEmpty ? "" : "flag")\">\(c.svg())<figcaption>a \(num(row.parameters.discrimination, 2)), b \(num(row.parameters.difficulty, 2))\(row.parameters.guessing > 0 ? ", c \(num(row.parameters.guessing, 2))" : "")\(row.flags.isEmpty ? "" : " — " + escapeHTML(row.flags.joined(separator: "; ")))</figcaption></figure>\n"
        }

        var rows = ""
        for r in t.rows {
            rows += "<tr class=\"\(r.flags.isEmpty ? "" : "flag")\"><td>\(escapeHTML(r.itemID))</td><td>\(r.classical.responses)</td><td>\(num(r.classical.pValue))</td><td>\(num(r.classical.pointBiserial))</td><td>\(num(r.parameters.discrimination))</td><td>\(num(r.parameters.difficulty))</td><td>\(num(r.parameters.guessing))</td><td>\(num(r.fit.infit, 2))</td><td>\(num(r.fit.outfit, 2))</td><td>\(num(r.fit.sx2, 1))</td><td>\(r.fit.sx2DegreesOfFreedom.map(String.init) ?? "–")</td><td>\(num(r.fit.sx2P, 4))</td><td>\(escapeHTML(r.flags.joined(separator: "; ")))</td></tr>\n"
        }
        let flaggedList = flagged.isEmpty ? "<p>No item is flagged.</p>" : "<ul>" + flagged.map { "<li><b>\(escapeHTML(t.rows[$0].itemID))</b>: \(escapeHTML(t.rows[$0].flags.joined(separator: "; ")))</li>" }.joined() + "</ul>"
        let q3 = t.fit.q3Flagged.isEmpty ? "<p>No item pair has Q3 more than 0.2 above the mean Q3 (\(num(t.fit.q3Mean))).</p>"
            : "<ul>" + t.fit.q3Flagged.map { "<li>\(escapeHTML($0.first)) – \(escapeHTML($0.second)): Q3 \(num($0.q3)) (mean \(num(t.fit.q3Mean)))</li>" }.joined() + "</ul>"

        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escapeHTML(title))</title>
        <style>
        body { font-family: sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
        h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ccc; }
        table { border-collapse: collapse; font-size: 12px; } td, th { border: 1px solid #ddd; padding: 3px 6px; text-align: right; }
        td:first-child, td:last-child, th { text-align: left; } tr.flag td { background: #fff3e0; }
        .stats td { font-size: 14px; } .charts { display: flex; flex-wrap: wrap; gap: 8px; }
        figure { margin: 0; border: 1px solid #eee; padding: 4px; } figure.flag { border-color: #f0a040; }
        figcaption { font-size: 11px; max-width: 300px; }
        </style></head><body>
        <h1>\(escapeHTML(title))</h1>
        <p>Responses <code>\(escapeHTML(responses))</code>, bank <code>\(escapeHTML(bank))</code> (\(t.model.rawValue.uppercased())).</p>
        <table class="stats">
        <tr><td>persons</td><td>\(t.data.personCount)</td><td>answered every item</td><td>\(t.classical.completePersons)</td></tr>
        <tr><td>items</td><td>\(t.rows.count)</td><td>flagged items</td><td>\(t.flaggedCount)</td></tr>
        <tr><td>Cronbach's α</td><td>\(num(t.classical.alpha))</td><td>SEM (raw score)</td><td>\(num(t.classical.sem))</td></tr>
        <tr><td>marginal reliability</td><td>\(num(t.fit.marginalReliability))</td><td>max |Q3|</td><td>\(num(t.fit.q3MaxAbs))</td></tr>
        </table>
        <h2 id="information">Test information and conditional SE</h2>
        <div class="charts">\(infoChart.svg())\(seChart.svg())</div>
        <h2 id="distribution">Ability distribution</h2>
        \(histogram.svg())
        <h2 id="curves">Item characteristic and information curves</h2>
        \(overlay.svg())
        <p>Per item: P(correct) (solid) and item information scaled to the panel (dashed)\(t.rows.count > 60 ? "; flagged items only" : ""). Flagged items have an orange frame.</p>
        <div class="charts">
        \(small)</div>
        <h2 id="fit">Item statistics and fit</h2>
        <table><tr><th>item</th><th>n</th><th>p</th><th>r<sub>pbis</sub></th><th>a</th><th>b</th><th>c</th><th>infit</th><th>outfit</th><th>S-X²</th><th>df</th><th>p(S-X²)</th><th>flags</th></tr>
        \(rows)</table>
        <h2 id="flagged">Flagged items</h2>
        \(flaggedList)
        <h2 id="q3">Local dependence (Yen's Q3)</h2>
        \(q3)
        <p style="font-size:11px;color:#666">S-X² (Orlando–Thissen) on persons who answered every item; infit/outfit at WLE θ; marginal reliability from EAP; α from pairwise-complete covariances.</p>
        </body></html>

        """
    }
}
