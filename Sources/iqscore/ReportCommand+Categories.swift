import Foundation
import Psychometrics
import PsychometricsIO

extension ReportCommand {
    /// Okabe–Ito colours for up to eight categories, then repeated.
    static let categoryColors = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]

    /// The report of a bank with items scored in more than two categories: per item its category curves
    /// P_k(θ) with the observed share of each θ group choosing k (Wilson intervals) and the model's expected share
    /// for the same persons (`EmpiricalItemCurve.categoryCurves`: θ from the other responses), and the table of
    /// `CategoryItemFit`.
    func renderCategoryReport(bank itemBank: ItemBank) throws -> (html: String, persons: Int, items: Int, flagged: Int) {
        let (data, items, unknown) = try AnalyzeCommand.categoryData(
            responses: responses, fileOptions: columns.fileOptions, bank: itemBank, bankPath: bank)
        let models = items.map(\.responseModel)
        let fit = try CategoryItemFit(
            data: data, items: models, freeParameters: AnalyzeCommand.freeParameters(items), latentScale: itemBank.latentScale)
        var options = EmpiricalItemCurve.Options()
        options.priorMean = itemBank.latentScale.mean
        options.priorSD = itemBank.latentScale.sd
        let curves = EmpiricalItemCurve.categoryCurves(data: data, items: models, options: options)
        func num(_ v: Double?, _ d: Int = 3) -> String { v.map { $0.isFinite ? ReportCharts.minus(fixed($0, d)) : "–" } ?? "–" }
        let thetas = ReportCharts.thetas
        var panels = "", rows = "", flagged = 0
        for (j, item) in items.enumerated() {
            let model = models[j], f = fit.items[j]
            var chart = SVGChart(
                x: -4...4, y: 0...1, title: "\(item.itemID) (\(item.modelName))", xLabel: "θ (rest-of-pattern EAP for the groups)",
                yLabel: "P(category)", width: 340, height: 230)
            chart.margin = (44, 8, 26, 36)
            chart.tickFontSize = 9
            chart.labelFontSize = 10
            let curvesByTheta = thetas.map { model.categoryProbabilities(at: $0) }
            var misses = 0
            for k in 0..<model.categoryCount {
                let color = Self.categoryColors[k % Self.categoryColors.count]
                chart.line(zip(thetas, curvesByTheta).map { ($0, $1[k]) }, color: color, width: 2)
                let groups = curves[j][k].groups
                chart.openDiamonds(groups.map { ($0.meanTheta, $0.expected) }, color: color)
                chart.pointsWithBars(groups.map { ($0.meanTheta, $0.observed, $0.interval.lower, $0.interval.upper) }, color: color)
                misses += curves[j][k].groupsMissingExpectation
            }
            let labels = item.categoryModel?.responseLabels ?? []
            chart.legend(
                (0..<model.categoryCount).map { k in
                    .init(
                        label: labels.isEmpty ? String(k) : labels[k], color: Self.categoryColors[k % Self.categoryColors.count],
                        kind: .line(dash: nil))
                })
            var flags: [String] = []
            if let p = f.sx2P, p < 0.01 { flags.append("misfit (S-X² p \(String(format: "%.2g", p)))") }
            if f.categoryCounts.contains(where: { $0 < 10 }) && f.categoryCounts.count > 2 { flags.append("sparse category (< 10 responses)") }
            if !flags.isEmpty { flagged += 1 }
            let caption =
                "n = \(f.responses); categories \(f.categoryCounts.map(String.init).joined(separator: " / ")); \(misses) group interval\(misses == 1 ? "" : "s") miss the model"
            panels +=
                "<figure id=\"item-\(escapeHTML(item.itemID))\" class=\"\(flags.isEmpty ? "" : "flag")\">\(chart.svg())<figcaption>\(escapeHTML(caption))\(flags.isEmpty ? "" : "<br><b>" + escapeHTML(flags.joined(separator: "; ")) + "</b>")</figcaption></figure>\n"
            rows +=
                "<tr class=\"\(flags.isEmpty ? "" : "flag")\"><td>\(escapeHTML(item.itemID))</td><td>\(item.modelName)</td><td>\(f.responses)</td><td>\(num(f.meanScore, 2))</td><td>\(f.maximumScore)</td><td>\(num(f.itemRestCorrelation))</td><td>\(f.categoryCounts.map(String.init).joined(separator: " / "))</td><td>\(num(f.infit, 2))</td><td>\(num(f.outfit, 2))</td><td>\(num(f.sx2, 1))</td><td>\(f.sx2DegreesOfFreedom.map(String.init) ?? "–")</td><td>\(num(f.sx2P, 4))</td><td>\(escapeHTML(flags.joined(separator: "; ")))</td></tr>\n"
        }
        let html = """
            \(htmlHead)
            <h1>\(escapeHTML(title))</h1>
            <p>Responses <code>\(escapeHTML(responses))</code>, bank <code>\(escapeHTML(bank))</code>: \(data.personCount) persons × \(items.count) items (\(Set(items.map(\.modelName)).sorted().joined(separator: ", ")))\(unknown.isEmpty ? "" : "; \(unknown.count) items of the file not in the bank left out").</p>
            <h2 id="items">Category curves: the model against the data</h2>
            <p>Each line is the model's probability of a category. Persons who answered the item are grouped by θ estimated from their \
            <em>other</em> responses (EAP under the bank's latent distribution) into up to 10 quantile groups of at least 20; each point is \
            the share of a group choosing the category, with a 95% Wilson interval, and the diamond of the same colour the model's \
            expected share for the same persons. Flagged items (S-X² p &lt; 0.01, a category chosen by fewer than 10) have an orange frame.</p>
            <div class="charts">
            \(panels)</div>
            <h2 id="fit">Item statistics and fit</h2>
            <table><tr><th>item</th><th>model</th><th>n</th><th>mean</th><th>max</th><th>r<sub>item-rest</sub></th><th>per category</th><th>infit</th><th>outfit</th><th>S-X²</th><th>df</th><th>p(S-X²)</th><th>flags</th></tr>
            \(rows)</table>
            <p style="font-size:11px;color:#666">S-X²: Kang &amp; Chen's generalised statistic over each person's form; infit/outfit of the scores given the summed score (see iqscore analyze).</p>
            </body></html>

            """
        return (html, data.personCount, items.count, flagged)
    }
}
