import Foundation
import Psychometrics
import PsychometricsIO

/// The report's charts, each built from the analysis table and the empirical item curves; no statistics are
/// computed here beyond summing, sorting and taking quantiles of model curves for display.
struct ReportCharts {
    /// θ from −4 to 4 in steps of 0.1: where every curve is drawn.
    static let thetas = stride(from: -4.0, through: 4.0, by: 0.1).map { ($0 * 10).rounded() / 10 }
    static let modelColor = "#0072B2", informationColor = "#D55E00", observedColor = "#000000"

    let table: ItemAnalysisTable
    /// Each row's domain (the bank's `domain` column), or "" without one.
    let domains: [String]
    /// Distinct domains in order of first appearance; empty when the bank has fewer than two.
    let domainNames: [String]
    let curves: [EmpiricalItemCurve]

    init(table: ItemAnalysisTable, bank: ItemBank, curves: [EmpiricalItemCurve]) {
        self.table = table
        self.curves = curves
        var byID: [String: String] = [:]
        for item in bank.items { byID[item.itemID] = item.metadata["domain"] ?? "" }
        domains = table.rows.map { byID[$0.itemID] ?? "" }
        var seen = Set<String>(), names: [String] = []
        for d in domains where !seen.contains(d) { seen.insert(d); names.append(d) }
        domainNames = names.count >= 2 ? names : []
    }

    func domainColor(_ name: String) -> String {
        guard let k = domainNames.firstIndex(of: name) else { return Self.modelColor }
        return SVGChart.palette[k % SVGChart.palette.count]
    }
    func domainLabel(_ name: String) -> String { name.isEmpty ? "(no domain)" : name }

    // MARK: test information and SE

    /// Bank information with one line per domain when there are domains, on its own axis.
    func informationChart() -> SVGChart {
        let itemInfo = table.rows.map { row in Self.thetas.map { row.parameters.information(at: $0) } }
        let total = Self.thetas.indices.map { k in itemInfo.reduce(0) { $0 + $1[k] } }
        let top = SVGChart.niceCeiling((total.filter(\.isFinite).max() ?? 1) * 1.05)
        var chart = SVGChart(
            x: -4...4, y: 0...top, title: "Test information I(θ) = Σ item information", xLabel: "θ", yLabel: "information", width: 540)
        var legend: [SVGChart.LegendEntry] = [.init(label: "all \(table.rows.count) items", color: "#000000", kind: .line(dash: nil))]
        for name in domainNames {
            let members = domains.indices.filter { domains[$0] == name }
            let sum = Self.thetas.indices.map { k in members.reduce(0) { $0 + itemInfo[$1][k] } }
            chart.line(zip(Self.thetas, sum).map { ($0, $1) }, color: domainColor(name), width: 1.5)
            legend.append(.init(label: "\(domainLabel(name)) (\(members.count))", color: domainColor(name), kind: .line(dash: nil)))
        }
        chart.line(zip(Self.thetas, total).map { ($0, $1) }, color: "#000000", width: 2)
        if legend.count > 1 { chart.legend(legend) }
        return chart
    }

    /// SE(θ) = 1/√I(θ) of the whole bank and, when persons answered fewer items than the bank holds, of a session
    /// of the mean length n̄ (when that is below 90% of the bank) with the bank's average information per item, 1/√(I(θ)·n̄/J). The axis ends at a tick
    /// at or above the curves' maximum, at most max(1, 4 × their minimum); beyond it the curve stops at the edge
    /// with a marker and the chart says where.
    func standardErrorChart() -> (chart: SVGChart, note: String?, sessionLength: Double?) {
        let J = Double(table.rows.count)
        let info = Self.thetas.map { t in table.rows.reduce(0) { $0 + $1.parameters.information(at: t) } }
        let meanItems = Double(table.data.cellCount) / Double(max(1, table.data.personCount))
        var series: [(label: String, color: String, values: [Double])] = [
            ("all \(table.rows.count) items", Self.modelColor, info.map { $0 > 0 ? 1 / $0.squareRoot() : .infinity })
        ]
        if meanItems < 0.9 * J {
            let n = meanItems.rounded()
            series.append(
                (
                    "a session of \(SVGChart.label(n)) items (I × \(SVGChart.label(n))/\(table.rows.count))", Self.informationColor,
                    info.map { $0 > 0 ? 1 / ($0 * n / J).squareRoot() : .infinity }
                ))
        }
        let highest = series.last!.values
        let finite = highest.filter(\.isFinite)
        let low = finite.min() ?? 0.5, high = finite.count == highest.count ? (finite.max() ?? 1) : .infinity
        let top = SVGChart.niceCeiling(min(high, max(1, 4 * low)))
        var chart = SVGChart(x: -4...4, y: 0...top, title: "Conditional standard error SE(θ) = 1/√I(θ)", xLabel: "θ", yLabel: "SE(θ)", width: 540)
        var notes: [String] = []
        for s in series {
            let (segments, crossings, ranges) = Self.clip(Self.thetas, s.values, top: top)
            for seg in segments { chart.line(seg, color: s.color, width: 2) }
            for c in crossings { chart.clipMarker(atX: c, color: s.color) }
            if !ranges.isEmpty {
                notes.append(
                    (series.count > 1 ? s.label.components(separatedBy: " (").first! + ": " : "") + "SE > \(SVGChart.label(top)) for "
                        + ranges.joined(separator: " and "))
            }
        }
        if series.count > 1 { chart.legend(series.map { .init(label: $0.label, color: $0.color, kind: .line(dash: nil)) }) }
        for (k, n) in notes.enumerated() {
            chart.text(
                "▲ " + n + " (off the chart)", pixelX: (chart.plotLeft + chart.plotRight) / 2, pixelY: chart.plotTop + 14 + 13 * Double(k),
                color: "#444", size: 10, anchor: "middle")
        }
        return (chart, notes.isEmpty ? nil : notes.joined(separator: "; ") + " (off the chart)", series.count > 1 ? meanItems.rounded() : nil)
    }

    /// Splits a curve where it rises above `top`: the runs at or below it (ending on the edge, by linear
    /// interpolation), the θ where it crosses, and the θ ranges above it in words ("θ < −3.5").
    static func clip(_ xs: [Double], _ ys: [Double], top: Double) -> (segments: [[(Double, Double)]], crossings: [Double], ranges: [String]) {
        var segments: [[(Double, Double)]] = [], current: [(Double, Double)] = [], crossings: [Double] = [], ranges: [String] = []
        func isAbove(_ y: Double) -> Bool { !(y <= top) } // NaN and +∞ count as above
        var runStart = -Double.infinity // where the current run above began (−∞: the left edge)
        for k in xs.indices {
            let above = isAbove(ys[k])
            if k > 0 && above != isAbove(ys[k - 1]) {
                // Crossing between k − 1 and k by linear interpolation; an infinite end crosses at the finite point.
                let y0 = ys[k - 1], y1 = ys[k]
                let f = y0.isFinite && y1.isFinite ? (top - y0) / (y1 - y0) : (y0.isFinite ? 0 : 1)
                let xc = xs[k - 1] + f * (xs[k] - xs[k - 1])
                crossings.append(xc)
                if above {
                    current.append((xc, top))
                    segments.append(current)
                    current = []
                    runStart = xc
                } else {
                    ranges.append(runStart == -.infinity ? "θ < \(minus(fixed(xc, 1)))" : "\(minus(fixed(runStart, 1))) < θ < \(minus(fixed(xc, 1)))")
                    current = [(xc, top)]
                }
            }
            if !above { current.append((xs[k], ys[k])) }
        }
        if current.count > 1 { segments.append(current) }
        if let last = ys.last, isAbove(last) { ranges.append(runStart == -.infinity ? "every θ shown" : "θ > \(minus(fixed(runStart, 1)))") }
        return (segments, crossings, ranges)
    }

    /// A number as text with a true minus sign.
    static func minus(_ s: String) -> String { s.replacingOccurrences(of: "-", with: "−") }

    // MARK: overview of the item curves

    /// Small banks: every ICC, coloured by domain, each labelled with its item id on the curve.
    func labelledOverlay() -> SVGChart {
        var chart = SVGChart(
            x: -4...4, y: 0...1, title: "Item characteristic curves (all \(table.rows.count) items, labelled)", xLabel: "θ", yLabel: "P(correct)",
            width: 1000, height: 440)
        if !domainNames.isEmpty { chart.legend(domainNames.map { .init(label: domainLabel($0), color: domainColor($0), kind: .line(dash: nil)) }) }
        let colors = table.rows.indices.map { domainNames.isEmpty ? SVGChart.palette[$0 % SVGChart.palette.count] : domainColor(domains[$0]) }
        for (k, row) in table.rows.enumerated() {
            chart.line(Self.thetas.map { ($0, row.parameters.probability(at: $0)) }, color: colors[k], width: 1.4, opacity: 0.9)
        }
        // Labels: for each item (by b) the first of these heights on its curve whose label box is free.
        var placed: [(Double, Double, Double, Double)] = []
        func free(_ box: (Double, Double, Double, Double)) -> Bool {
            box.0 >= chart.plotLeft && box.0 + box.2 <= chart.plotRight && box.1 >= chart.plotTop && box.1 + box.3 <= chart.plotBottom
                && !placed.contains { !($0.0 + $0.2 < box.0 || box.0 + box.2 < $0.0 || $0.1 + $0.3 < box.1 || box.1 + box.3 < $0.1) }
        }
        let levels = [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.45, 0.55, 0.35, 0.65, 0.25, 0.75, 0.15, 0.85, 0.1, 0.9]
        var unlabelled: [String] = []
        for k in table.rows.indices.sorted(by: { table.rows[$0].parameters.difficulty < table.rows[$1].parameters.difficulty }) {
            let p = table.rows[k].parameters, id = table.rows[k].itemID
            let w = SVGChart.textWidth(id, size: 10.5) + 2
            var done = false
            for level in levels where level > p.guessing && p.discrimination != 0 {
                let q = (level - p.guessing) / (1 - p.guessing)
                let theta = p.difficulty + log(q / (1 - q)) / p.discrimination
                guard theta > -3.9, theta < 3.9 else { continue }
                let x = chart.px(theta), y = chart.py(p.probability(at: theta))
                // Text to the right of the point for a rising curve's upper-left side; box in pixels.
                let box = (x + 4, y - 12, w, 12.0)
                if free(box) {
                    placed.append(box)
                    chart.body += "<circle cx=\"\(SVGChart.f(x))\" cy=\"\(SVGChart.f(y))\" r=\"2.5\" fill=\"\(colors[k])\"/>"
                    chart.text(id, pixelX: x + 5, pixelY: y - 2.5, color: SVGChart.textColor(colors[k]), size: 10.5)
                    done = true
                    break
                }
            }
            if !done { unlabelled.append(id) }
        }
        if !unlabelled.isEmpty {
            chart.text(
                "not labelled (no room): " + unlabelled.joined(separator: ", "), pixelX: chart.plotRight, pixelY: chart.plotBottom - 6, color: "#444",
                size: 9, anchor: "end")
        }
        return chart
    }

    /// Large banks: per domain (or for all items) the median ICC and the band between the 10th and 90th
    /// percentiles of P(θ) over the items at each θ (linear interpolation between order statistics, R type 7),
    /// with the whole bank's median for reference.
    func summaryCurves() -> [SVGChart] {
        func quantile(_ sorted: [Double], _ p: Double) -> Double {
            let h = Double(sorted.count - 1) * p, lo = Int(h.rounded(.down)), hi = min(lo + 1, sorted.count - 1)
            return sorted[lo] + (h - Double(lo)) * (sorted[hi] - sorted[lo])
        }
        func summary(_ members: [Int]) -> [(x: Double, lower: Double, median: Double, upper: Double)] {
            Self.thetas.map { t in
                let ps = members.map { table.rows[$0].parameters.probability(at: t) }.sorted()
                return (t, quantile(ps, 0.1), quantile(ps, 0.5), quantile(ps, 0.9))
            }
        }
        let all = summary(Array(table.rows.indices))
        let groups: [(String, [Int])] =
            domainNames.isEmpty
            ? [("", Array(table.rows.indices))] : domainNames.map { name in (name, domains.indices.filter { domains[$0] == name }) }
        return groups.map { name, members in
            let s = summary(members)
            let color = domainColor(name)
            let titleText = name.isEmpty ? "All \(members.count) items: median ICC and 10–90% band" : "\(name) (\(members.count) items)"
            var chart = SVGChart(
                x: -4...4, y: 0...1, title: titleText, xLabel: "θ", yLabel: "P(correct)", width: name.isEmpty ? 640 : 360,
                height: name.isEmpty ? 320 : 250)
            var legend: [SVGChart.LegendEntry] = [
                .init(label: "median", color: color, kind: .line(dash: nil)), .init(label: "10–90% of items", color: color, kind: .band)
            ]
            if !name.isEmpty { legend.append(.init(label: "bank median", color: "#555", kind: .line(dash: "4,3"))) }
            chart.legend(legend)
            chart.band(s.map { ($0.x, $0.lower, $0.upper) }, color: color, opacity: 0.25)
            if !name.isEmpty { chart.line(all.map { ($0.x, $0.median) }, color: "#555", width: 1.2, dash: "4,3") }
            chart.line(s.map { ($0.x, $0.median) }, color: color, width: 2.2)
            return chart
        }
    }

    /// a against b, one dot per item coloured by domain, flagged items ringed; item ids beside the dots for
    /// small banks. b beyond ±6 is drawn at the edge (the chart says how many).
    func slopeDifficultyScatter(flagged: Set<Int>, labelled: Bool) -> SVGChart {
        let bs = table.rows.map(\.parameters.difficulty), as_ = table.rows.map(\.parameters.discrimination)
        let finiteB = bs.filter(\.isFinite), finiteA = as_.filter(\.isFinite)
        let bLow = max(-6, min(-3, (finiteB.min() ?? -3).rounded(.down))), bHigh = min(6, max(3, (finiteB.max() ?? 3).rounded(.up)))
        let aLow = min(0, (finiteA.min() ?? 0).rounded(.down)), aHigh = SVGChart.niceCeiling(max(0.5, (finiteA.max() ?? 2) * 1.05))
        var chart = SVGChart(
            x: bLow...bHigh, y: aLow...aHigh, title: "Slope a against difficulty b (one dot per item)", xLabel: "difficulty b", yLabel: "slope a",
            width: 640, height: 360)
        var legend: [SVGChart.LegendEntry] =
            domainNames.isEmpty
            ? [.init(label: "item", color: Self.modelColor, kind: .dot)]
            : domainNames.map { .init(label: domainLabel($0), color: domainColor($0), kind: .dot) }
        if !flagged.isEmpty { legend.append(.init(label: "flagged (\(flagged.count))", color: "#000000", kind: .ring)) }
        chart.legend(legend)
        let groups = domainNames.isEmpty ? [""] : domainNames
        for name in groups {
            let members = table.rows.indices.filter { domainNames.isEmpty || domains[$0] == name }
            chart.dots(
                members.map { (bs[$0], as_[$0]) }, color: domainColor(name), radius: table.rows.count > 300 ? 2.2 : 3.2,
                opacity: table.rows.count > 300 ? 0.6 : 0.9)
        }
        chart.dots(flagged.sorted().map { (bs[$0], as_[$0]) }, color: "#000", radius: table.rows.count > 300 ? 2.2 : 3.2, ring: true)
        let outside = bs.filter { $0 < bLow || $0 > bHigh }.count
        if outside > 0 {
            chart.text(
                "\(outside) item\(outside == 1 ? "" : "s") with b outside \(SVGChart.label(bLow))…\(SVGChart.label(bHigh)) drawn at the edge",
                pixelX: chart.plotRight, pixelY: chart.plotBottom - 6, color: "#444", size: 10, anchor: "end")
        }
        if labelled {
            var boxes: [(Double, Double, Double, Double)] = []
            let dotsPx = table.rows.indices.map { (chart.px(bs[$0]), chart.py(as_[$0])) }
            func free(_ b: (Double, Double, Double, Double)) -> Bool {
                b.0 >= chart.plotLeft && b.0 + b.2 <= chart.plotRight && b.1 >= chart.plotTop && b.1 + b.3 <= chart.plotBottom
                    && !boxes.contains { !($0.0 + $0.2 < b.0 || b.0 + b.2 < $0.0 || $0.1 + $0.3 < b.1 || b.1 + b.3 < $0.1) }
                    && !dotsPx.contains { $0.0 > b.0 - 2 && $0.0 < b.0 + b.2 + 2 && $0.1 > b.1 - 2 && $0.1 < b.1 + b.3 + 2 }
            }
            for k in table.rows.indices.sorted(by: { as_[$0] > as_[$1] }) {
                let id = table.rows[k].itemID, w = SVGChart.textWidth(id, size: 9) + 2
                let (x, y) = dotsPx[k]
                // Right, left, above, below the dot.
                let candidates = [
                    (x + 6, y - 5.5, "start", x + 6), (x - 6 - w, y - 5.5, "end", x - 6), (x - w / 2, y - 17, "middle", x),
                    (x - w / 2, y + 6, "middle", x)
                ]
                if let c = candidates.first(where: { free(($0.0, $0.1, w, 11)) }) {
                    boxes.append((c.0, c.1, w, 11))
                    chart.text(id, pixelX: c.3, pixelY: c.1 + 9, color: "#333", size: 9, anchor: c.2)
                }
            }
        }
        return chart
    }

    // MARK: per-item panels

    static let panelLegend: [SVGChart.LegendEntry] = [
        .init(label: "model P(θ) (left axis)", color: modelColor, kind: .line(dash: nil)),
        .init(label: "item information I(θ) (right axis)", color: informationColor, kind: .line(dash: "5,3")),
        .init(label: "observed proportion correct in a θ group, 95% Wilson interval", color: observedColor, kind: .pointWithBar),
        .init(label: "model's expected proportion for that group", color: modelColor, kind: .openDiamond)
    ]

    /// One item: its ICC and the observed proportions by θ group (left axis, 0–1) and its information (right
    /// axis, its own scale).
    func itemPanel(_ j: Int) -> SVGChart {
        let row = table.rows[j]
        let info = Self.thetas.map { row.parameters.information(at: $0) }
        let top = SVGChart.niceCeiling(max(0.1, (info.filter(\.isFinite).max() ?? 0.1) * 1.05), count: 4)
        var c = SVGChart(
            x: -4...4, y: 0...1, title: row.itemID, xLabel: "θ (rest-of-pattern EAP for the groups)", yLabel: "P(correct)", width: 340, height: 230)
        c.margin = (44, 8, 26, 36)
        c.tickFontSize = 9
        c.labelFontSize = 10
        c.yLabelColor = Self.modelColor
        c.secondAxis(0...top, label: "information", color: Self.informationColor)
        c.line(zip(Self.thetas, info).map { ($0, $1) }, color: Self.informationColor, width: 1.5, dash: "5,3", axis: .right)
        c.line(Self.thetas.map { ($0, row.parameters.probability(at: $0)) }, color: Self.modelColor, width: 2)
        let groups = curves[j].groups
        c.openDiamonds(groups.map { ($0.meanTheta, $0.expected) }, color: Self.modelColor)
        c.pointsWithBars(groups.map { ($0.meanTheta, $0.observed, $0.interval.lower, $0.interval.upper) }, color: Self.observedColor)
        return c
    }
}
