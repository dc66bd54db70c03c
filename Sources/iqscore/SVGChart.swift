import Foundation

/// A minimal SVG line/bar chart for the HTML report: linear axes with ticks and labels, polylines, bars.
struct SVGChart {
    var width = 640.0, height = 320.0
    var margin = (left: 56.0, right: 16.0, top: 28.0, bottom: 44.0)
    var x: ClosedRange<Double>
    var y: ClosedRange<Double>
    var title: String
    var xLabel: String
    var yLabel: String
    private var body = ""

    init(x: ClosedRange<Double>, y: ClosedRange<Double>, title: String, xLabel: String, yLabel: String, width: Double = 640, height: Double = 320) {
        self.x = x; self.y = y; self.title = title; self.xLabel = xLabel; self.yLabel = yLabel
        self.width = width; self.height = height
    }

    func px(_ v: Double) -> Double { margin.left + (v - x.lowerBound) / (x.upperBound - x.lowerBound) * (width - margin.left - margin.right) }
    func py(_ v: Double) -> Double { height - margin.bottom - (min(max(v, y.lowerBound), y.upperBound) - y.lowerBound) / (y.upperBound - y.lowerBound) * (height - margin.top - margin.bottom) }

    static func ticks(_ r: ClosedRange<Double>, count: Int = 6) -> [Double] {
        let span = r.upperBound - r.lowerBound
        let raw = span / Double(count)
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        var t = ceil(r.lowerBound / step) * step
        var out: [Double] = []
        while t <= r.upperBound + 1e-9 { out.append(abs(t) < 1e-12 ? 0 : t); t += step }
        return out
    }

    /// A tick label: whole numbers without a point ("2", not "2.0"); only those below 10¹⁵ go through `Int`,
    /// whose conversion traps on larger values.
    static func label(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%g", (v * 1000).rounded() / 1000)
    }

    mutating func line(_ points: [(Double, Double)], color: String, width stroke: Double = 1.5, dash: String? = nil, opacity: Double = 1) {
        guard points.count > 1 else { return }
        let coords = points.map { String(format: "%.1f,%.1f", px($0.0), py($0.1)) }.joined(separator: " ")
        body += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(stroke)\" stroke-opacity=\"\(opacity)\"\(dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") points=\"\(coords)\"/>\n"
    }

    mutating func bars(_ bins: [(lower: Double, upper: Double, value: Double)], color: String) {
        for b in bins where b.value > 0 {
            let x0 = px(b.lower), x1 = px(b.upper), y0 = py(b.value), base = py(y.lowerBound)
            body += String(format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\" stroke=\"white\" stroke-width=\"0.5\"/>\n",
                           x0, y0, max(0, x1 - x0), max(0, base - y0), color)
        }
    }

    mutating func legend(_ entries: [(String, String, String?)]) {
        var lx = margin.left + 8
        for (name, color, dash) in entries {
            body += "<line x1=\"\(lx)\" y1=\"\(margin.top + 10)\" x2=\"\(lx + 18)\" y2=\"\(margin.top + 10)\" stroke=\"\(color)\" stroke-width=\"2\"\(dash.map { " stroke-dasharray=\"\($0)\"" } ?? "")/>"
            body += "<text x=\"\(lx + 22)\" y=\"\(margin.top + 14)\" font-size=\"11\">\(escapeHTML(name))</text>\n"
            lx += 30 + Double(name.count) * 6.5
        }
    }

    func svg() -> String {
        var s = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" width=\"\(Int(width))\" height=\"\(Int(height))\" font-family=\"sans-serif\">\n"
        s += "<text x=\"\(width / 2)\" y=\"16\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">\(escapeHTML(title))</text>\n"
        let bottom = height - margin.bottom, left = margin.left
        s += "<line x1=\"\(left)\" y1=\"\(bottom)\" x2=\"\(width - margin.right)\" y2=\"\(bottom)\" stroke=\"#333\"/>"
        s += "<line x1=\"\(left)\" y1=\"\(margin.top)\" x2=\"\(left)\" y2=\"\(bottom)\" stroke=\"#333\"/>\n"
        for t in Self.ticks(x) {
            s += String(format: "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", px(t), bottom, px(t), bottom + 4)
            s += String(format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">%@</text>\n", px(t), bottom + 15, Self.label(t))
        }
        for t in Self.ticks(y, count: 5) {
            s += String(format: "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", left, py(t), width - margin.right, py(t))
            s += String(format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">%@</text>\n", left - 5, py(t) + 3, Self.label(t))
        }
        s += "<text x=\"\((left + width - margin.right) / 2)\" y=\"\(height - 8)\" text-anchor=\"middle\" font-size=\"11\">\(escapeHTML(xLabel))</text>\n"
        s += "<text x=\"14\" y=\"\((margin.top + bottom) / 2)\" text-anchor=\"middle\" font-size=\"11\" transform=\"rotate(-90 14 \((margin.top + bottom) / 2))\">\(escapeHTML(yLabel))</text>\n"
        return s + body + "</svg>"
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
