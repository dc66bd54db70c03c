import Foundation
import Psychometrics
import PsychometricsIO

extension ReportCommand {
    /// The report of a bifactor or testlet bank: the model comparison with one factor (`BifactorModelComparison`,
    /// as `analyze` prints it), the reliabilities (`BifactorReliability`), the information each factor gets
    /// (general: the items' general-factor marginals, the specific factors unknown; each domain: its items'
    /// information about its specific factor at θ_g = 0) and the table of loadings.
    func renderBatteryReport() throws -> (html: String, persons: Int, items: Int) {
        let (file, data, items, _, _) = try AnalyzeCommand.batteryData(bank: bank, responses: responses, fileOptions: columns.fileOptions)
        let structure = file.structure, factors = structure.specificFactors
        let comparison = try BifactorModelComparison.compare(data, items: items, specificFactorCount: factors.count)
        let reliability = BifactorReliability(items: items, structure: structure)
        func num(_ v: Double?, _ d: Int = 3) -> String { v.map { $0.isFinite ? ReportCharts.minus(fixed($0, d)) : "–" } ?? "–" }

        // Information: the general factor's (marginal items) and each domain's about its specific factor.
        let thetas = ReportCharts.thetas
        let general = thetas.map { t in items.reduce(0) { $0 + $1.generalMarginal.information(at: t) } }
        let specific = factors.indices.map { f in
            thetas.map { t in items.filter { $0.specific == f }.reduce(0) { $0 + $1.information(general: 0, specific: t).specific } }
        }
        let top = SVGChart.niceCeiling(((specific.flatMap { $0 } + general).filter(\.isFinite).max() ?? 1) * 1.05)
        var chart = SVGChart(x: -4...4, y: 0...top, title: "Information per factor", xLabel: "θ of the factor", yLabel: "information", width: 540)
        var legend: [SVGChart.LegendEntry] = [.init(label: "\(structure.generalFactor) (all \(items.count) items, marginal)", color: "#000000", kind: .line(dash: nil))]
        for (f, name) in factors.enumerated() {
            let color = SVGChart.palette[f % SVGChart.palette.count]
            chart.line(zip(thetas, specific[f]).map { ($0, $1) }, color: color, width: 1.5)
            legend.append(.init(label: "\(name) (\(items.filter { $0.specific == f }.count) items, at θ_g = 0)", color: color, kind: .line(dash: nil)))
        }
        chart.line(zip(thetas, general).map { ($0, $1) }, color: "#000000", width: 2)
        chart.legend(legend)

        var fitRows = ""
        for f in [comparison.unidimensional, comparison.multidimensional] {
            let m2 = f.m2.map { "\(num($0.m2, 2)) (\($0.degreesOfFreedom))" } ?? "–"
            fitRows += "<tr><td>\(escapeHTML(f.name))</td><td>\(num(f.logLikelihood, 3))</td><td>\(f.parameters)</td><td>\(num(f.aic, 2))</td><td>\(num(f.bic, 2))</td><td>\(m2)</td><td>\(num(f.m2?.rmsea, 4))</td><td>\(num(f.m2?.srmsr, 4))</td><td>\(num(f.q3.meanWithinFactors))</td><td>\(num(f.q3.meanBetweenFactors))</td></tr>\n"
        }
        var domainRows = ""
        for d in reliability.domains {
            domainRows += "<tr><td>\(escapeHTML(d.factor))</td><td>\(d.items)</td><td>\(num(d.omega))</td><td>\(num(d.omegaHierarchical))</td><td>\(num(d.construct))</td></tr>\n"
        }
        var itemRows = ""
        for (j, item) in items.enumerated() {
            let l = BifactorReliability.loadings(item)
            itemRows += "<tr><td>\(escapeHTML(data.itemIDs[j]))</td><td>\(escapeHTML(item.specific.map { factors[$0] } ?? "–"))</td><td>\(num(item.generalSlope))</td><td>\(num(item.specificSlope))</td><td>\(num(item.intercept))</td><td>\(num(item.guessing))</td><td>\(num(l.general))</td><td>\(num(l.specific))</td><td>\(num(l.general * l.general + l.specific * l.specific))</td></tr>\n"
        }
        let p = comparison.pValue < 1e-10 ? "&lt; 1e-10" : String(format: "%.3g", comparison.pValue)
        let html = """
        \(htmlHead)
        <h1>\(escapeHTML(title))</h1>
        <p>Responses <code>\(escapeHTML(responses))</code>, bank <code>\(escapeHTML(bank))</code>: \(data.personCount) persons × \(items.count) items, \
        \(escapeHTML(comparison.multidimensional.name)) model: \(escapeHTML(structure.generalFactor)) + \(factors.map(escapeHTML).joined(separator: ", ")).</p>
        <h2 id="fit">One factor or a battery</h2>
        <table><tr><th>model</th><th>log L</th><th>p</th><th>AIC</th><th>BIC</th><th>M2 (df)</th><th>RMSEA</th><th>SRMSR</th><th>Q3 within factors</th><th>Q3 between</th></tr>
        \(fitRows)</table>
        <p>Likelihood ratio G² = \(num(comparison.likelihoodRatio, 2)) on \(comparison.degreesOfFreedom) df, p \(p) (the χ² reference is approximate: under one \
        factor the specific slopes' signs are not identified). The \(escapeHTML(comparison.unidimensional.name)) is fitted to the same responses; M2 \
        (Maydeu-Olivares &amp; Joe) uses the persons who answered every item; Q3 is the mean residual correlation at each model's EAPs over pairs of \
        items on the same specific factor and on different ones (see <code>iqscore analyze</code>).</p>
        <h2 id="reliability">Reliability</h2>
        <p>ω \(num(reliability.omega)), ω<sub>H</sub> \(num(reliability.omegaHierarchical)), explained common variance \(num(reliability.explainedCommonVariance)), \
        H \(num(reliability.construct)) (Rodriguez, Reise &amp; Haviland 2016). Per domain: ω<sub>S</sub> the subscale's reliability, ω<sub>HS</sub> what its \
        specific factor holds beyond the general one, H its construct replicability.</p>
        <table><tr><th>domain</th><th>items</th><th>ω<sub>S</sub></th><th>ω<sub>HS</sub></th><th>H</th></tr>
        \(domainRows)</table>
        <h2 id="information">Information per factor</h2>
        <p>Black: information about the general factor from every item's general-factor marginal (the specific factors unknown: what the full-scale \
        score and adaptive selection see). Coloured: each domain's information about its own specific factor, I = Σ a<sub>s</sub>² (P − c)²(1 − P)/((1 − c)² P) \
        at θ<sub>g</sub> = 0.</p>
        <div class="charts"><figure>\(chart.svg())</figure></div>
        <h2 id="loadings">Items: slopes and standardized loadings</h2>
        <table><tr><th>item</th><th>factor</th><th>a<sub>g</sub></th><th>a<sub>s</sub></th><th>d</th><th>c</th><th>λ<sub>g</sub></th><th>λ<sub>s</sub></th><th>h²</th></tr>
        \(itemRows)</table>
        <p style="font-size:11px;color:#666">Loadings λ = (a/1.702)/√(1 + (a<sub>g</sub>/1.702)² + (a<sub>s</sub>/1.702)²), as mirt's summary(); h² = λ<sub>g</sub>² + λ<sub>s</sub>².</p>
        </body></html>

        """
        return (html, data.personCount, items.count)
    }
}
