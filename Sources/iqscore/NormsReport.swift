import Foundation
import Norming
import Psychometrics

/// The HTML report of `iqscore norms build`: the weighting (raking convergence, margins achieved against targets,
/// trimming, deff, effective n), the model and its criterion table, the percentile curves over age with the
/// sample (at most `maximumPoints` persons drawn, every k-th in file order), and the non-crossing check.
struct NormsReport {
    let build: NormsBuild
    let sample: NormSample
    let samplePath: String
    let marginsPath: String?

    static let maximumPoints = 3000
    /// Percentiles drawn: the IQ 70, 85, 100, 115 and 130 curves.
    static let curves: [(percent: Double, label: String)] = [
        (100 * StandardNormal.cdf(-2), "2.3% (IQ 70)"), (100 * StandardNormal.cdf(-1), "15.9% (IQ 85)"), (50, "50% (IQ 100)"),
        (100 * StandardNormal.cdf(1), "84.1% (IQ 115)"), (100 * StandardNormal.cdf(2), "97.7% (IQ 130)")
    ]

    func html() -> String {
        let d = build.document
        func num(_ v: Double?, _ digits: Int = 3) -> String {
            v.map { $0.isFinite ? fixed($0, digits).replacingOccurrences(of: "-", with: "−") : "–" } ?? "–"
        }
        func sci(_ v: Double?) -> String { v.map { String(format: "%.2e", $0) } ?? "–" }

        // Percentile curves over age, with the sample.
        let low = d.ages.minimum, high = d.ages.maximum
        let ageGrid = (0...200).map { low + (high - low) * Double($0) / 200 }
        let lines = Self.curves.map { c in ageGrid.map { ($0, build.norms.quantile(c.percent / 100, age: $0)) } }
        let step = max(1, sample.count / Self.maximumPoints)
        let points = stride(from: 0, to: sample.count, by: step).map { (sample.ages[$0], sample.thetas[$0]) }
        let sortedThetas = sample.thetas.sorted()
        let thetaLow = min(sortedThetas[sortedThetas.count / 200], lines[0].map(\.1).min() ?? -3)
        let thetaHigh = max(sortedThetas[sortedThetas.count - 1 - sortedThetas.count / 200], lines[4].map(\.1).max() ?? 3)
        let pad = 0.05 * (thetaHigh - thetaLow)
        var chart = SVGChart(
            x: low...high, y: (thetaLow - pad)...(thetaHigh + pad), title: "Percentile curves of θ over age",
            xLabel: "age (years)", yLabel: "θ", width: 900, height: 460)
        chart.dots(points, color: "#999999", radius: 1.4, opacity: 0.35)
        let colors = ["#D55E00", "#E69F00", "#0072B2", "#E69F00", "#D55E00"]
        for (k, line) in lines.enumerated() { chart.line(line, color: colors[k], width: k == 2 ? 2.2 : 1.6, dash: k == 1 || k == 3 ? "5 3" : nil) }
        chart.legend(
            Self.curves.enumerated().map {
                SVGChart.LegendEntry(
                    label: $0.element.label, color: colors[$0.offset], kind: .line(dash: $0.offset == 1 || $0.offset == 3 ? "5 3" : nil))
            }
                + [SVGChart.LegendEntry(label: "sample (\(formatCount(points.count)) of \(formatCount(sample.count)))", color: "#999999", kind: .dot)]
        )

        // Weighting.
        let w = d.weighting
        var weighting =
            "<table><tr><td>method</td><td>\(escapeHTML(w.method))\(marginsPath.map { " (margins <code>\(escapeHTML($0))</code>)" } ?? "")</td></tr>"
        if w.method == "raking" {
            weighting +=
                "<tr><td>raking</td><td>\(w.converged == true ? "converged" : "<b>not converged</b>") in \(w.iterations ?? 0) sweeps; largest |achieved − target| \(sci(w.maximumMarginError)) (tolerance \(sci(w.tolerance)))</td></tr>"
            weighting +=
                "<tr><td>trimming</td><td>\(w.trimFactor.map { "weights above \(num($0, 1)) × the mean cut, then re-raked: \(w.trimmed) persons trimmed in \(w.trimRounds) rounds" } ?? "none")</td></tr>"
        }
        weighting +=
            "<tr><td>design effect (Kish)</td><td>\(num(w.designEffect))</td></tr><tr><td>effective n</td><td>\(num(w.effectiveN, 1)) of \(formatCount(d.sample.n))</td></tr>"
        weighting += "<tr><td>largest weight / mean</td><td>\(num(w.largestWeightRatio, 2))</td></tr></table>"
        var marginTable = ""
        if !w.margins.isEmpty {
            marginTable =
                "<table><tr><th>variable</th><th>category</th><th>n</th><th>sample share</th><th>target</th><th>achieved</th><th>achieved − target</th></tr>"
            for m in w.margins {
                marginTable +=
                    "<tr><td>\(escapeHTML(m.variable))</td><td>\(escapeHTML(m.category))</td><td>\(m.count)</td><td>\(num(m.sample, 4))</td><td>\(num(m.target, 4))</td><td>\(num(m.achieved, 4))</td><td>\(sci(m.achieved - m.target))</td></tr>"
            }
            marginTable += "</table>"
        }

        // Model.
        var model = ""
        if let m = d.model {
            model +=
                "<p>θ | age ~ SHASH(μ, σ, ε, δ) (Jones &amp; Pewsey 2009); μ, log σ, ε, log δ are Legendre polynomials in age mapped to [−1, 1] over \(num(low, 1))–\(num(high, 1)) years, fitted by weighted maximum likelihood (weights summing to the effective n). Chosen by \(d.criterion.rawValue.uppercased()): degrees μ \(m.degrees.mu), log σ \(m.degrees.logSigma), ε \(m.degrees.epsilon.map(String.init) ?? "none (0)"), log δ \(m.degrees.logDelta.map(String.init) ?? "none (δ = 1)"); \(m.converged ? "converged" : "<b>not converged</b>") in \(m.iterations) Newton iterations; log-likelihood \(num(m.logLikelihood, 2)).</p>"
            model +=
                "<table><tr><th>μ</th><th>log σ</th><th>ε</th><th>log δ</th><th>parameters</th><th>log-likelihood</th><th>\(d.criterion.rawValue.uppercased())</th><th>converged</th></tr>"
            for row in d.criterionTable.sorted(by: { $0.value < $1.value }) {
                let chosen =
                    row.mu == m.degrees.mu && row.logSigma == m.degrees.logSigma && row.epsilon == m.degrees.epsilon
                    && row.logDelta == m.degrees.logDelta
                model +=
                    "<tr class=\"\(chosen ? "chosen" : "")\"><td>\(row.mu)</td><td>\(row.logSigma)</td><td>\(row.epsilon.map(String.init) ?? "–")</td><td>\(row.logDelta.map(String.init) ?? "–")</td><td>\(row.parameters)</td><td>\(num(row.logLikelihood, 2))</td><td>\(num(row.value, 2))</td><td>\(row.converged ? "yes" : "no")</td></tr>"
            }
            model += "</table>"
        } else if let bands = d.bands {
            model +=
                "<p>\(bands.count) age bands; within each, a normal, skewed (ε free) or SHASH distribution chosen by \(d.criterion.rawValue.uppercased()).</p><table><tr><th>ages</th><th>n</th><th>effective n</th><th>family</th><th>μ</th><th>σ</th><th>ε</th><th>δ</th></tr>"
            for b in bands {
                model +=
                    "<tr><td>\(num(b.ageMinimum, 1))–\(num(b.ageMaximum, 1))</td><td>\(b.n)</td><td>\(num(b.effectiveN, 1))</td><td>\(b.family)</td><td>\(num(b.mu))</td><td>\(num(b.sigma))</td><td>\(num(b.epsilon))</td><td>\(num(b.delta))</td></tr>"
            }
            model += "</table>"
        }
        let check = d.percentileCheck
        let warnings = d.warnings.isEmpty ? "<p>None.</p>" : "<ul>" + d.warnings.map { "<li>\(escapeHTML($0))</li>" }.joined() + "</ul>"
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Norms \(escapeHTML(d.name)) \(escapeHTML(d.version))</title>
            <style>
            body { font-family: sans-serif; margin: 24px auto; max-width: 960px; color: #222; }
            h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ccc; }
            table { border-collapse: collapse; font-size: 12px; } td, th { border: 1px solid #ddd; padding: 3px 6px; text-align: right; }
            td:first-child, th { text-align: left; } tr.chosen td { background: #e8f4fb; font-weight: bold; }
            </style></head><body>
            <h1>Norms \(escapeHTML(d.name)) \(escapeHTML(d.version))</h1>
            <p>Built by \(escapeHTML(d.createdBy)) from <code>\(escapeHTML(samplePath))</code>: \(formatCount(d.sample.n)) persons aged \(num(low, 1))–\(num(high, 1)) \
            (used unflagged up to \(num(d.ages.extrapolation, 1)) years beyond), method \(d.method.rawValue)\(d.sample.meanStandardError.map { "; mean SE of θ \(num($0))" } ?? "").</p>
            <h2 id="weighting">Weighting</h2>
            \(weighting)
            \(marginTable)
            <h2 id="curves">Percentile curves</h2>
            \(chart.svg())
            <p>Non-crossing check (percentiles 1–99 at \(check.ageCount) ages): <b>\(check.passed ? "passed" : "FAILED")</b> — \(escapeHTML(check.summary)).</p>
            <h2 id="model">Model</h2>
            \(model)
            <h2 id="warnings">Warnings</h2>
            \(warnings)
            </body></html>

            """
    }
}
