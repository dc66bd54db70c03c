import Foundation

/// A minimal SVG chart for the HTML report: linear axes with ticks and labels, an optional second y axis on the
/// right with its own scale, and marks (lines, bands, bars, points with error bars, text) in `SVGChart+Marks.swift`.
///
/// Every coordinate written is finite: marks skip points with a non-finite value, and values outside an axis'
/// range are clamped to its edge.
struct SVGChart {
    var width = 640.0, height = 320.0
    var margin = (left: 56.0, right: 16.0, top: 28.0, bottom: 44.0)
    var x: ClosedRange<Double>
    var y: ClosedRange<Double>
    /// The right-hand axis (its own scale), when there is one.
    var y2: ClosedRange<Double>?
    var title: String
    var xLabel: String
    var yLabel: String
    var y2Label = ""
    /// Colours of the axis labels, so that a two-axis chart says which curve reads on which axis.
    var yLabelColor = "#222", y2LabelColor = "#222"
    var tickFontSize = 10.0, labelFontSize = 11.0, titleFontSize = 13.0
    var body = ""
    /// Legend entries, drawn in a row under the title (see `legend(_:)`).
    var legendEntries: [LegendEntry] = []

    init(x: ClosedRange<Double>, y: ClosedRange<Double>, title: String, xLabel: String, yLabel: String, width: Double = 640, height: Double = 320) {
        self.x = x; self.y = y; self.title = title; self.xLabel = xLabel; self.yLabel = yLabel
        self.width = width; self.height = height
    }

    /// Adds the right-hand axis and makes room for its tick labels.
    mutating func secondAxis(_ range: ClosedRange<Double>, label: String, color: String) {
        y2 = range
        y2Label = label
        y2LabelColor = color
        margin.right = max(margin.right, 46)
    }

    var plotLeft: Double { margin.left }
    var plotRight: Double { width - margin.right }
    var plotTop: Double { margin.top }
    var plotBottom: Double { height - margin.bottom }

    func px(_ v: Double) -> Double {
        margin.left + (min(max(v, x.lowerBound), x.upperBound) - x.lowerBound) / (x.upperBound - x.lowerBound) * (width - margin.left - margin.right)
    }
    func py(_ v: Double) -> Double { Self.scale(v, y, top: plotTop, bottom: plotBottom) }
    func py2(_ v: Double) -> Double { Self.scale(v, y2 ?? y, top: plotTop, bottom: plotBottom) }

    static func scale(_ v: Double, _ r: ClosedRange<Double>, top: Double, bottom: Double) -> Double {
        bottom - (min(max(v, r.lowerBound), r.upperBound) - r.lowerBound) / (r.upperBound - r.lowerBound) * (bottom - top)
    }

    static func ticks(_ r: ClosedRange<Double>, count: Int = 6) -> [Double] {
        let step = tickStep(r, count: count)
        var t = ceil(r.lowerBound / step - 1e-9) * step
        var out: [Double] = []
        while t <= r.upperBound + step * 1e-9 { out.append(abs(t) < step * 1e-9 ? 0 : t); t += step }
        return out
    }

    /// The 1-2-2.5-5 step that gives about `count` ticks over `r`.
    static func tickStep(_ r: ClosedRange<Double>, count: Int = 6) -> Double {
        let raw = (r.upperBound - r.lowerBound) / Double(count)
        let magnitude = pow(10, floor(log10(raw)))
        return [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw * (1 - 1e-12) } ?? raw
    }

    /// The smallest tick value at or above `v` for a 0-based axis with about `count` ticks: an axis top that ends on
    /// a labelled tick.
    static func niceCeiling(_ v: Double, count: Int = 5) -> Double {
        guard v.isFinite, v > 0 else { return 1 }
        let step = tickStep(0...v, count: count)
        return (v / step - 1e-9).rounded(.up) * step
    }

    /// A tick label: whole numbers without a point ("2", not "2.0"), negative ones with a minus sign ("−2"); only
    /// those below 10¹⁵ go through `Int`, whose conversion traps on larger values.
    static func label(_ v: Double) -> String {
        let s = v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%g", (v * 1000).rounded() / 1000)
        return s.replacingOccurrences(of: "-", with: "−")
    }

    /// One decimal, for SVG coordinates (a non-finite value, which no mark passes, would be written as 0).
    static func f(_ v: Double) -> String { String(format: "%.1f", v.isFinite ? v : 0) }

    func svg() -> String {
        var s =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" width=\"\(Int(width))\" height=\"\(Int(height))\" font-family=\"sans-serif\" role=\"img\" aria-label=\"\(escapeHTML(title))\">\n"
        s += "<title>\(escapeHTML(title))</title>\n"
        s +=
            "<text x=\"\(Self.f(width / 2))\" y=\"16\" text-anchor=\"middle\" font-size=\"\(Self.label(titleFontSize))\" font-weight=\"bold\">\(escapeHTML(title))</text>\n"
        let bottom = plotBottom, left = plotLeft, right = plotRight
        for t in Self.ticks(y, count: 5) {
            s += "<line x1=\"\(Self.f(left))\" y1=\"\(Self.f(py(t)))\" x2=\"\(Self.f(right))\" y2=\"\(Self.f(py(t)))\" stroke=\"#e4e4e4\"/>"
            s +=
                "<text x=\"\(Self.f(left - 5))\" y=\"\(Self.f(py(t) + 3))\" text-anchor=\"end\" font-size=\"\(Self.label(tickFontSize))\">\(Self.label(t))</text>\n"
        }
        s += "<line x1=\"\(Self.f(left))\" y1=\"\(Self.f(bottom))\" x2=\"\(Self.f(right))\" y2=\"\(Self.f(bottom))\" stroke=\"#333\"/>"
        s += "<line x1=\"\(Self.f(left))\" y1=\"\(Self.f(plotTop))\" x2=\"\(Self.f(left))\" y2=\"\(Self.f(bottom))\" stroke=\"#333\"/>\n"
        for t in Self.ticks(x) {
            s += "<line x1=\"\(Self.f(px(t)))\" y1=\"\(Self.f(bottom))\" x2=\"\(Self.f(px(t)))\" y2=\"\(Self.f(bottom + 4))\" stroke=\"#333\"/>"
            s +=
                "<text x=\"\(Self.f(px(t)))\" y=\"\(Self.f(bottom + 15))\" text-anchor=\"middle\" font-size=\"\(Self.label(tickFontSize))\">\(Self.label(t))</text>\n"
        }
        if let y2 {
            s +=
                "<line x1=\"\(Self.f(right))\" y1=\"\(Self.f(plotTop))\" x2=\"\(Self.f(right))\" y2=\"\(Self.f(bottom))\" stroke=\"\(y2LabelColor)\"/>\n"
            for t in Self.ticks(y2, count: 5) {
                s +=
                    "<line x1=\"\(Self.f(right))\" y1=\"\(Self.f(py2(t)))\" x2=\"\(Self.f(right + 4))\" y2=\"\(Self.f(py2(t)))\" stroke=\"\(y2LabelColor)\"/>"
                s +=
                    "<text x=\"\(Self.f(right + 6))\" y=\"\(Self.f(py2(t) + 3))\" text-anchor=\"start\" font-size=\"\(Self.label(tickFontSize))\" fill=\"\(y2LabelColor)\">\(Self.label(t))</text>\n"
            }
            let mid = (plotTop + bottom) / 2, lx = width - 8
            s +=
                "<text x=\"\(Self.f(lx))\" y=\"\(Self.f(mid))\" text-anchor=\"middle\" font-size=\"\(Self.label(labelFontSize))\" fill=\"\(y2LabelColor)\" transform=\"rotate(90 \(Self.f(lx)) \(Self.f(mid)))\">\(escapeHTML(y2Label))</text>\n"
        }
        s +=
            "<text x=\"\(Self.f((left + right) / 2))\" y=\"\(Self.f(height - 8))\" text-anchor=\"middle\" font-size=\"\(Self.label(labelFontSize))\">\(escapeHTML(xLabel))</text>\n"
        let mid = (plotTop + bottom) / 2
        s +=
            "<text x=\"14\" y=\"\(Self.f(mid))\" text-anchor=\"middle\" font-size=\"\(Self.label(labelFontSize))\" fill=\"\(yLabelColor)\" transform=\"rotate(-90 14 \(Self.f(mid)))\">\(escapeHTML(yLabel))</text>\n"
        s += body
        if !legendEntries.isEmpty { s += Self.legendRow(legendEntries, x: left + 4, y: 30, maxWidth: right - left - 4) }
        return s + "</svg>"
    }
}

func escapeHTML(_ s: String) -> String {
    var out = ""
    for ch in s {
        switch ch {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default: out.append(ch)
        }
    }
    return out
}
