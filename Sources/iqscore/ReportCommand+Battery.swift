import Foundation
import Psychometrics
import PsychometricsIO

extension ReportCommand {
    /// The report of a bifactor or testlet bank: the model comparison with one factor (`BatteryModelComparison`,
    /// as `analyze` prints it), the reliabilities (`BifactorReliability`), the information each factor gets
    /// (general: the items' general-factor marginals, the specific factors unknown; each domain: its items'
    /// information about its specific factor at θ_g = 0) and the table of loadings.
    func renderBatteryReport() throws -> (html: String, persons: Int, items: Int) {
        let (file, data, items, _, _) = try AnalyzeCommand.batteryData(bank: bank, responses: responses, fileOptions: columns.fileOptions)
        let structure = file.structure, factors = structure.specificFactors
        let comparison = try BatteryModelComparison.compare(data, items: items, specificFactorCount: factors.count)
        let reliability = BifactorReliability(items: items, structure: structure)
        func num(_ v: Double?, _ d: Int = 3) -> String { v.map { $0.isFinite ? ReportCharts.minus(fixed($0, d)) : "–" } ?? "–" }

        // Information: the general factor's (marginal items) and each domain's about its specific factor.
        let thetas = ReportCharts.thetas
        let general = thetas.map { t in items.reduce(0) { $0 + $1.generalMarginal.information(at: t) } }
        let specific = factors.indices.map { f in
            thetas.map { t in items.filter { $0.specific == f }.reduce(0) { $0 + $1.information(general: 0, specific: t).specific } }
        }
        let chart = Self.informationChart(
            overall: (label: "\(structure.generalFactor) (all \(items.count) items, marginal)", values: general),
            factors: factors.enumerated().map { f, name in
                (label: "\(name) (\(items.filter { $0.specific == f }.count) items, at θ_g = 0)", values: specific[f])
            })

        var domainRows = ""
        for d in reliability.domains {
            domainRows +=
                "<tr><td>\(escapeHTML(d.factor))</td><td>\(d.items)</td><td>\(num(d.omega))</td><td>\(num(d.omegaHierarchical))</td><td>\(num(d.construct))</td></tr>\n"
        }
        var itemRows = ""
        for (j, item) in items.enumerated() {
            let l = BifactorReliability.loadings(item)
            itemRows +=
                "<tr><td>\(escapeHTML(data.itemIDs[j]))</td><td>\(escapeHTML(item.specific.map { factors[$0] } ?? "–"))</td><td>\(num(item.generalSlope))</td><td>\(num(item.specificSlope))</td><td>\(num(item.intercept))</td><td>\(num(item.guessing))</td><td>\(num(l.general))</td><td>\(num(l.specific))</td><td>\(num(l.general * l.general + l.specific * l.specific))</td></tr>\n"
        }
        let html = """
            \(htmlHead)
            <h1>\(escapeHTML(title))</h1>
            <p>Responses <code>\(escapeHTML(responses))</code>, bank <code>\(escapeHTML(bank))</code>: \(data.personCount) persons × \(items.count) items, \
            \(escapeHTML(comparison.multidimensional.name)) model: \(escapeHTML(structure.generalFactor)) + \(factors.map(escapeHTML).joined(separator: ", ")).</p>
            \(Self.comparisonSection(comparison))
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

    /// A battery's information chart on `ReportCharts.thetas`: the overall (general or full-scale) curve in black,
    /// one coloured curve per factor.
    static func informationChart(overall: (label: String, values: [Double]), factors: [(label: String, values: [Double])]) -> SVGChart {
        let thetas = ReportCharts.thetas
        let top = SVGChart.niceCeiling(((factors.flatMap(\.values) + overall.values).filter(\.isFinite).max() ?? 1) * 1.05)
        var chart = SVGChart(x: -4...4, y: 0...top, title: "Information per factor", xLabel: "θ of the factor", yLabel: "information", width: 540)
        var legend: [SVGChart.LegendEntry] = [.init(label: overall.label, color: "#000000", kind: .line(dash: nil))]
        for (f, factor) in factors.enumerated() {
            let color = SVGChart.palette[f % SVGChart.palette.count]
            chart.line(zip(thetas, factor.values).map { ($0, $1) }, color: color, width: 1.5)
            legend.append(.init(label: factor.label, color: color, kind: .line(dash: nil)))
        }
        chart.line(zip(thetas, overall.values).map { ($0, $1) }, color: "#000000", width: 2)
        chart.legend(legend)
        return chart
    }

    /// The model comparison's section of a battery report (as `analyze` prints it).
    static func comparisonSection(_ comparison: BatteryModelComparison) -> String {
        func num(_ v: Double?, _ d: Int = 3) -> String { v.map { $0.isFinite ? ReportCharts.minus(fixed($0, d)) : "–" } ?? "–" }
        var fitRows = ""
        for f in [comparison.unidimensional, comparison.multidimensional] {
            let m2 = f.m2.map { "\(num($0.m2, 2)) (\($0.degreesOfFreedom))" } ?? "–"
            fitRows +=
                "<tr><td>\(escapeHTML(f.name))</td><td>\(num(f.logLikelihood, 3))</td><td>\(f.parameters)</td><td>\(num(f.aic, 2))</td><td>\(num(f.bic, 2))</td><td>\(m2)</td><td>\(num(f.m2?.rmsea, 4))</td><td>\(num(f.m2?.srmsr, 4))</td><td>\(num(f.q3.meanWithinFactors))</td><td>\(num(f.q3.meanBetweenFactors))</td></tr>\n"
        }
        let p = comparison.pValue < 1e-10 ? "&lt; 1e-10" : String(format: "%.3g", comparison.pValue)
        let correlated = comparison.multidimensional.name == "correlated"
        let boundary =
            correlated
            ? "one factor is every factor correlation at 1, on the boundary of the model"
            : "under one factor the specific slopes' signs are not identified"
        let factorKind = correlated ? "factor" : "specific factor"
        let undefined = [comparison.unidimensional, comparison.multidimensional].compactMap { f in
            f.m2Unavailable.map { "M2 of \(escapeHTML(f.name)) undefined: \(escapeHTML($0)). " }
        }.joined()
        return """
            <h2 id="fit">One factor or a battery</h2>
            <table><tr><th>model</th><th>log L</th><th>p</th><th>AIC</th><th>BIC</th><th>M2 (df)</th><th>RMSEA</th><th>SRMSR</th><th>Q3 within factors</th><th>Q3 between</th></tr>
            \(fitRows)</table>
            <p>Likelihood ratio G² = \(num(comparison.likelihoodRatio, 2)) on \(comparison.degreesOfFreedom) df, p \(p) (the χ² reference is approximate: \(boundary)). \
            The \(escapeHTML(comparison.unidimensional.name)) is fitted to the same responses; M2 \
            (Maydeu-Olivares &amp; Joe) uses the persons who answered every item; Q3 is the mean residual correlation at each model's EAPs over pairs of \
            items on the same \(factorKind) and on different ones (see <code>iqscore analyze</code>). \(undefined)</p>
            """
    }

    /// The report of a correlated-factors bank: the model comparison with one factor, the factor correlations,
    /// each index's added value over the full-scale score (`IndexAddedValue` on the bank's items as a fixed form),
    /// the information each factor gets from its items and the full-scale score from every item's marginal, and the
    /// table of slopes and loadings.
    func renderCorrelatedReport() throws -> (html: String, persons: Int, items: Int) {
        let (file, data, items, _) = try AnalyzeCommand.correlatedData(bank: bank, responses: responses, fileOptions: columns.fileOptions)
        let comparison = try BatteryModelComparison.compare(data, correlatedItems: items, correlations: file.correlations)
        let battery = try BatteryBank.load(csv: bank, quadraturePoints: nil, bound: 6).battery
        let addedValue = try battery.addedValue()
        let scorer = try CorrelatedFactorsScorer(items: file.items, correlations: file.correlations)
        let factors = file.factors, k = factors.count
        func num(_ v: Double?, _ d: Int = 3) -> String { v.map { $0.isFinite ? ReportCharts.minus(fixed($0, d)) : "–" } ?? "–" }

        // Information: each factor's from its items, and the full-scale score's from every item's marginal on it.
        let thetas = ReportCharts.thetas
        let marginals = (0..<file.items.count).map { scorer.fullScaleMarginal(item: $0) }
        let fullScale = thetas.map { t in marginals.reduce(0) { $0 + $1.information(at: t) } }
        let perFactor = (0..<k).map { f in
            thetas.map { t in
                file.items.filter { $0.factor == f }.reduce(0) { total, item in
                    total
                        + ItemParameters(discrimination: item.slope, difficulty: -item.intercept / item.slope, guessing: item.guessing).information(
                            at: t)
                }
            }
        }
        let chart = Self.informationChart(
            overall: (label: "full scale (all \(file.items.count) items, marginal)", values: fullScale),
            factors: factors.enumerated().map { f, name in
                (label: "\(name) (\(file.items.filter { $0.factor == f }.count) items)", values: perFactor[f])
            })

        var correlationRows = "<tr><th></th>" + factors.map { "<th>\(escapeHTML($0))</th>" }.joined() + "</tr>\n"
        for f in 0..<k {
            correlationRows +=
                "<tr><td>\(escapeHTML(factors[f]))</td>" + (0..<k).map { "<td>\(num(file.correlations[f * k + $0]))</td>" }.joined() + "</tr>\n"
        }
        var valueRows = ""
        for v in addedValue {
            valueRows +=
                "<tr><td>\(escapeHTML(v.factor))</td><td>\(v.items)</td><td>\(num(v.subscore))</td><td>\(num(v.total))</td><td>\(num(v.augmented))</td><td>\(v.hasAddedValue ? "yes" : "no")</td></tr>\n"
        }
        var itemRows = ""
        for (j, item) in items.enumerated() {
            let loading = BifactorReliability.loadings(BifactorItem(generalSlope: item.slope, intercept: item.intercept)).general
            itemRows +=
                "<tr><td>\(escapeHTML(data.itemIDs[j]))</td><td>\(escapeHTML(factors[item.factor]))</td><td>\(num(item.slope))</td><td>\(num(item.intercept))</td><td>\(num(item.guessing))</td><td>\(num(loading))</td></tr>\n"
        }
        let html = """
            \(htmlHead)
            <h1>\(escapeHTML(title))</h1>
            <p>Responses <code>\(escapeHTML(responses))</code>, bank <code>\(escapeHTML(bank))</code>: \(data.personCount) persons × \(items.count) items, \
            correlated-factors model: \(factors.map(escapeHTML).joined(separator: ", ")); the full-scale score is their equally weighted composite \
            θ<sub>FS</sub> = Σθ<sub>f</sub>/√(1ᵀR1).</p>
            \(Self.comparisonSection(comparison))
            <h2 id="correlations">Factor correlations</h2>
            <table>\(correlationRows)</table>
            <h2 id="added-value">Which indexes add value</h2>
            <p>PRMSE of each true factor score predicted from its own items (subscore), linearly from the full-scale score (total), and from every \
            answer (the index iqscore reports), on the bank's items as one fixed form, \(formatCount(IndexAddedValue.defaultSimulees)) simulees \
            (Haberman 2008): an index adds value when its subscore's PRMSE exceeds the total's.</p>
            <table><tr><th>factor</th><th>items</th><th>PRMSE sub</th><th>PRMSE total</th><th>PRMSE index</th><th>adds value</th></tr>
            \(valueRows)</table>
            <h2 id="information">Information per factor</h2>
            <p>Coloured: each factor's information from its own items, I = Σ a² (P − c)²(1 − P)/((1 − c)² P). Black: the full-scale score's, from \
            every item's marginal on it (what adaptive selection and forms see).</p>
            <div class="charts"><figure>\(chart.svg())</figure></div>
            <h2 id="loadings">Items: slopes and standardized loadings</h2>
            <table><tr><th>item</th><th>factor</th><th>a</th><th>d</th><th>c</th><th>λ</th></tr>
            \(itemRows)</table>
            <p style="font-size:11px;color:#666">Loading λ = (a/1.702)/√(1 + (a/1.702)²), as mirt's summary().</p>
            </body></html>

            """
        return (html, data.personCount, items.count)
    }
}
