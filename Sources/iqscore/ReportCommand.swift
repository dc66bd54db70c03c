import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write a self-contained HTML report with SVG plots: curves, information, score distribution, fit, flags.",
        discussion: """
            One HTML file with inline CSS and SVG (no scripts, no network): test summary (α, SEM, marginal \
            reliability); test information (per domain when the bank has a domain column) and conditional SE \
            (also for a session of the mean length when persons answered a subset of the bank; where a curve \
            leaves the axis the chart says so); the EAP θ / IQ distribution; an overview of the item curves (up to \
            60 items: every curve labelled with its id; more: the median curve and 10–90% band per domain) and a \
            slope–difficulty scatter; item panels with the model curve, observed proportions correct in up to 10 θ \
            groups with 95% Wilson intervals, the model's expected proportion per group, and item information on a \
            right-hand axis (every item up to 60 items, otherwise the flagged items and those whose groups miss the \
            model beyond a Bonferroni |z|, at most 60, the largest |z| first); the item table of `iqscore analyze` \
            with each item's largest |z|; flagged items with reasons and flagged Q3 pairs. A bifactor or testlet \
            bank gets the comparison with one factor (as analyze), its reliabilities (ω, ω_H, ECV, H; per domain \
            ω_S, ω_HS, H), the information per factor (the general factor's from the items' general-factor \
            marginals; each domain's about its specific factor at θ_g = 0) and the loadings. A correlated-factors \
            bank gets the comparison, the factor correlations, each factor's added value over the full-scale \
            composite (Haberman's PRMSEs on the bank as a fixed form), the information per factor (and the \
            full-scale composite's, from the items' marginals) and the loadings.
            Groups: persons who answered the item, by the EAP θ of their other responses (so the item's own \
            response takes no part in the grouping), quantile groups of at least 20 persons.
            """
    )

    /// Banks up to this size get a panel for every item and a labelled overlay of all curves; larger ones a panel
    /// for each flagged or missing item, at most this many.
    static let maximumPanels = 60

    @Argument(help: "Responses CSV (wide or long).")
    var responses: String

    @Option(help: "Calibrated bank CSV.")
    var bank: String

    @Option(help: "Output HTML file (written atomically).")
    var out: String

    @Option(help: "Report title.")
    var title = "iqscore item bank report"

    @OptionGroup var columns: ResponseColumnOptions

    @OptionGroup var bankModel: BankModelOption

    @Option(
        name: .customLong("group-column"),
        help: "Add a DIF section (0/1 banks): the response file's column holding each person's group; needs --reference.")
    var groupColumn: String?

    @Option(help: "With --group-column: the reference group.")
    var reference: String?

    @Option(name: .customLong("dif-methods"), help: "With --group-column: the DIF methods, as `iqscore dif --methods` (default mh,irt).")
    var difMethods = "mh,irt"

    @Option(
        help:
            "Add an items-over-time section (0/1 banks) from iqscore monitor's output: the alarms and each alarmed item's moving-window proportion correct and time intensity."
    )
    var monitor: String?

    func validate() throws {
        if (groupColumn == nil) != (reference == nil) { throw ValidationError("--group-column and --reference go together (the DIF section)") }
        if groupColumn != nil { _ = try DIFCommand.parsedMethods(difMethods, option: "--dif-methods") }
    }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(inputs: [("input", responses), ("--bank", bank)] + given("--monitor", monitor), outputs: [("--out", out)])
            if BifactorBank.isMultidimensional(csv: bank) {
                let correlated = CorrelatedFactorsBank.isCorrelated(csv: bank)
                let report = try correlated ? renderCorrelatedReport() : renderBatteryReport()
                try writeAtomically(report.html, to: out)
                printError(
                    "iqscore report: \(formatCount(report.persons)) persons × \(report.items) items, \(correlated ? "correlated-factors" : "bifactor") bank\nwrote \(out)"
                )
                return ExitStatus.success
            }
            let itemBank = try loadBank(bank, requirePositiveSlopes: false, categoryItems: bankModel.reading)
            if itemBank.hasCategoryItems {
                let report = try renderCategoryReport(bank: itemBank)
                try writeAtomically(report.html, to: out)
                printError("iqscore report: \(formatCount(report.persons)) persons × \(report.items) items, \(report.flagged) flagged\nwrote \(out)")
                return ExitStatus.success
            }
            var fileOptions = columns.fileOptions
            if let groupColumn, !fileOptions.ignoredColumns.contains(groupColumn) { fileOptions.ignoredColumns.append(groupColumn) }
            let table = try ItemAnalysisTable(responses: responses, fileOptions: fileOptions, bank: itemBank, rules: FlagRules())
            var html = try render(table, bank: itemBank)
            if let groupColumn, let reference {
                let section = try difSection(table, fileOptions: fileOptions, groupColumn: groupColumn, reference: reference)
                html = html.replacingOccurrences(of: "</body></html>", with: section + "</body></html>")
            }
            if let monitor {
                html = html.replacingOccurrences(of: "</body></html>", with: try monitorSection(monitor) + "</body></html>")
            }
            try writeAtomically(html, to: out)
            printError(
                "iqscore report: \(formatCount(table.data.personCount)) persons × \(table.rows.count) items, \(table.flaggedCount) flagged\nwrote \(out)"
            )
            return ExitStatus.success
        }
    }

    /// The report's document head and style, opening the body.
    var htmlHead: String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escapeHTML(title))</title>
        <style>
        body { font-family: sans-serif; margin: 24px auto; max-width: 1100px; color: #222; }
        h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ccc; }
        table { border-collapse: collapse; font-size: 12px; } td, th { border: 1px solid #ddd; padding: 3px 6px; text-align: right; }
        td:first-child, td:last-child, th { text-align: left; } tr.flag td { background: #fff3e0; }
        .stats td { font-size: 14px; } .charts { display: flex; flex-wrap: wrap; gap: 8px; }
        figure { margin: 0; border: 1px solid #eee; padding: 4px; } figure.flag { border-color: #E69F00; }
        figure.miss { border: 2px solid #D55E00; } figcaption { font-size: 11px; max-width: 340px; }
        </style></head><body>
        """
    }

    func render(_ t: ItemAnalysisTable, bank itemBank: ItemBank) throws -> String {
        func num(_ v: Double?, _ d: Int = 3) -> String { v.map { $0.isFinite ? ReportCharts.minus(fixed($0, d)) : "–" } ?? "–" }
        let curves = EmpiricalItemCurve.curves(data: t.data, parameters: t.parameters)
        let charts = ReportCharts(table: t, bank: itemBank, curves: curves)

        // Test information and SE.
        let infoChart = charts.informationChart()
        let (seChart, seNote, sessionLength) = charts.standardErrorChart()

        // θ and IQ distribution from EAP.
        let eap = try AbilityEstimator(parameters: t.parameters)
        var estimates: [Double] = []
        for i in 0..<t.data.personCount {
            let cells = t.data.cells(ofPerson: i)
            estimates.append(try eap.estimate(items: cells.map { Int(t.data.itemIndices[$0]) }, responses: cells.map { t.data.responses[$0] }).theta)
        }
        let width = 0.25
        var counts = [Int](repeating: 0, count: 32)
        // Clamped before the conversion to Int, which would trap on a non-finite θ.
        for e in estimates { counts[Int(min(31, max(0, ((e + 4) / width).rounded(.down))))] += 1 }
        let maxCount = Double(counts.max() ?? 1)
        var histogram = SVGChart(
            x: -4...4, y: 0...SVGChart.niceCeiling(maxCount * 1.05), title: "Distribution of EAP θ (IQ = 100 + 15θ below the axis)",
            xLabel: "θ  (IQ: 40 at −4, 70 at −2, 100 at 0, 130 at 2, 160 at 4)", yLabel: "persons")
        histogram.bars(
            counts.enumerated().map { (-4 + Double($0.offset) * width, -4 + Double($0.offset + 1) * width, Double($0.element)) }, color: "#56B4E9")

        // Observed against expected: a group misses when |z| exceeds the Bonferroni bound over every group shown.
        let totalGroups = curves.map(\.groups.count).reduce(0, +)
        let zBound = StandardNormal.quantile(1 - 0.025 / Double(max(1, totalGroups)))
        func largestZ(_ j: Int) -> Double? { curves[j].largestResidual?.standardizedResidual.map(abs) }
        let missing = t.rows.indices.filter { (largestZ($0) ?? 0) > zBound }

        // Item curves: overview, then panels.
        let small = t.rows.count <= Self.maximumPanels
        let flagged = t.rows.indices.filter { !t.rows[$0].flags.isEmpty }
        // Large banks: flagged and missing items, the largest |z| first, at most `Self.maximumPanels`.
        let candidates =
            small
            ? Array(t.rows.indices)
            : Array(Set(flagged).union(missing)).sorted { (largestZ($0) ?? -1, $1) > (largestZ($1) ?? -1, $0) }
        let shown = Array(candidates.prefix(Self.maximumPanels))
        let overview = small ? charts.labelledOverlay().svg() : charts.summaryCurves().map { $0.svg() }.joined(separator: "\n")
        let scatter = charts.slopeDifficultyScatter(flagged: Set(flagged), labelled: small)
        var panels = ""
        for j in shown {
            let row = t.rows[j], curve = curves[j]
            var evidence: String
            if curve.groups.isEmpty {
                evidence = "\(curve.responseCount) responses: too few for θ groups"
            } else {
                let smallest = curve.groups.map(\.count).min()!
                evidence =
                    "\(curve.groups.count) groups of ≥ \(smallest) (n = \(curve.responseCount)); \(curve.groupsMissingExpectation) interval\(curve.groupsMissingExpectation == 1 ? "" : "s") miss the model"
                if let g = curve.largestResidual, let z = g.standardizedResidual {
                    evidence +=
                        "; largest |z| \(num(abs(z), 1)) at θ̄ \(num(g.meanTheta, 2)) (observed \(num(g.observed, 2)), expected \(num(g.expected, 2)))"
                }
            }
            let misses = (largestZ(j) ?? 0) > zBound
            let classes = [row.flags.isEmpty ? nil : "flag", misses ? "miss" : nil].compactMap { $0 }.joined(separator: " ")
            let params =
                "a \(num(row.bankParameters.discrimination, 2)), b \(num(row.bankParameters.difficulty, 2))\(row.bankParameters.guessing > 0 ? ", c \(num(row.bankParameters.guessing, 2))" : "")"
            panels +=
                "<figure id=\"item-\(escapeHTML(row.itemID))\" class=\"\(classes)\">\(charts.itemPanel(j).svg())<figcaption>\(params)<br>\(escapeHTML(evidence))\(misses ? " <b>(beyond |z| \(num(zBound, 2)))</b>" : "")\(row.flags.isEmpty ? "" : "<br><b>" + escapeHTML(row.flags.joined(separator: "; ")) + "</b>")</figcaption></figure>\n"
        }
        let panelLegend = SVGChart.legendSVG(ReportCharts.panelLegend, width: 1000, title: "Key to the item panels")

        var rows = ""
        for (k, r) in t.rows.enumerated() {
            rows +=
                "<tr class=\"\(r.flags.isEmpty ? "" : "flag")\"><td>\(escapeHTML(r.itemID))</td><td>\(r.classical.responses)</td><td>\(num(r.classical.pValue))</td><td>\(num(r.classical.pointBiserial))</td><td>\(num(r.bankParameters.discrimination))</td><td>\(num(r.bankParameters.difficulty))</td><td>\(num(r.bankParameters.guessing))</td><td>\(num(r.fit.infit, 2))</td><td>\(num(r.fit.outfit, 2))</td><td>\(num(r.fit.sx2, 1))</td><td>\(r.fit.sx2DegreesOfFreedom.map(String.init) ?? "–")</td><td>\(num(r.fit.sx2P, 4))</td><td>\(num(largestZ(k), 1))</td><td>\(escapeHTML(r.flags.joined(separator: "; ")))</td></tr>\n"
        }
        let flaggedList =
            flagged.isEmpty
            ? "<p>No item is flagged.</p>"
            : "<ul>"
                + flagged.map { "<li><b>\(escapeHTML(t.rows[$0].itemID))</b>: \(escapeHTML(t.rows[$0].flags.joined(separator: "; ")))</li>" }.joined()
                + "</ul>"
        let q3 =
            t.fit.q3Flagged.isEmpty
            ? "<p>No item pair has Q3 more than 0.2 above the mean Q3 (\(num(t.fit.q3Mean))).</p>"
            : "<ul>"
                + t.fit.q3Flagged.map { "<li>\(escapeHTML($0.first)) – \(escapeHTML($0.second)): Q3 \(num($0.q3)) (mean \(num(t.fit.q3Mean)))</li>" }
                .joined() + "</ul>"

        return """
            \(htmlHead)
            <h1>\(escapeHTML(title))</h1>
            <p>Responses <code>\(escapeHTML(responses))</code>, bank <code>\(escapeHTML(bank))</code> (\(t.model.rawValue.uppercased())).</p>
            <table class="stats">
            <tr><td>persons</td><td>\(t.data.personCount)</td><td>answered every item</td><td>\(t.classical.completePersons)</td></tr>
            <tr><td>items</td><td>\(t.rows.count)</td><td>flagged items</td><td>\(t.flaggedCount)</td></tr>
            <tr><td>Cronbach's α</td><td>\(num(t.classical.alpha))</td><td>SEM (raw score)</td><td>\(num(t.classical.sem))</td></tr>
            <tr><td>marginal_rxx (mirt) / mean-error-variance / empirical reliability</td><td>\(num(t.fit.marginalRXX)) / \(num(t.fit.meanErrorVarianceReliability)) / \(num(t.fit.empiricalReliability))</td><td>max |Q3|</td><td>\(num(t.fit.q3MaxAbs))</td></tr>
            </table>
            <h2 id="information">Test information and conditional SE</h2>
            <div class="charts">\(infoChart.svg())\(seChart.svg())</div>
            <p>Information of the whole bank\(charts.domainNames.isEmpty ? "" : " and of each domain"); SE(θ) = 1/√I(θ)\(sessionLength.map { ", also for a session of \(SVGChart.label($0)) items (the mean number answered here) with the bank's average information per item (the bank's SE alone would be far smaller than any person's)" } ?? "")\(seNote.map { ". " + escapeHTML($0) } ?? "").</p>
            <h2 id="distribution">Ability distribution</h2>
            \(histogram.svg())
            <h2 id="curves">Item characteristic curves: overview</h2>
            <div class="charts">\(overview)</div>
            <p>\(small ? "Every item's curve, labelled with its id on the curve\(charts.domainNames.isEmpty ? "" : " and coloured by domain"). " : "Per \(charts.domainNames.isEmpty ? "bank" : "domain"): at each θ the median of the items' P(θ) and the range between the 10th and 90th percentiles of the items (not an interval for one item). ")</p>
            \(scatter.svg())
            <h2 id="items">Item panels: the model against the data</h2>
            <p>\(small ? "Every item" : "The items that are flagged or whose observed proportions miss the model, the largest |z| first: \(candidates.count > shown.count ? "the first \(shown.count) of \(candidates.count) (the others are in the table below)" : "\(shown.count)") of \(t.rows.count)"). \
            Persons who answered the item are grouped by θ estimated from their <em>other</em> responses (EAP, N(0, 1) prior), into up to 10 \
            quantile groups of at least 20 persons; each point is a group's observed proportion correct at its mean θ, with a 95% Wilson \
            score interval. The diamond is the model's expected proportion for the same persons, averaged over each person's posterior \
            (so flatter than the curve at the extremes); the item fits where the intervals cover the diamonds. z = (correct − expected) / SD \
            per group; a panel with a red frame has a group beyond |z| = \(num(zBound, 2)) (Bonferroni, 5% over all \(totalGroups) groups); \
            flagged items have an orange frame. Information is on the right-hand axis, with its own scale.</p>
            \(panelLegend)
            <div class="charts">
            \(panels)</div>
            <h2 id="fit">Item statistics and fit</h2>
            <table><tr><th>item</th><th>n</th><th>p</th><th>r<sub>pbis</sub></th><th>a</th><th>b</th><th>c</th><th>infit</th><th>outfit</th><th>S-X²</th><th>df</th><th>p(S-X²)</th><th>max |z|</th><th>flags</th></tr>
            \(rows)</table>
            <h2 id="flagged">Flagged items</h2>
            \(flaggedList)
            <h2 id="q3">Local dependence (Yen's Q3)</h2>
            \(q3)
            <p style="font-size:11px;color:#666">S-X² (Orlando–Thissen) on persons who answered every item; infit/outfit at WLE θ; max |z|: the largest standardised difference between observed and expected proportions correct over the item's θ groups (item panels); marginal reliability from EAP; α from pairwise-complete covariances.</p>
            </body></html>

            """
    }
}
