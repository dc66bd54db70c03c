import Foundation

/// What a chart draws: lines, bands, bars, points with error bars, text, and the legend that names them.
extension SVGChart {
    enum Axis { case left, right }

    /// The Okabe–Ito colour-blind-safe palette (Okabe & Ito 2008), without its yellow, which is too pale on white.
    static let palette = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"]

    /// A darker shade of a palette colour for text on white (the light ones fail WCAG contrast as text).
    static func textColor(_ color: String) -> String {
        ["#E69F00": "#9A6A00", "#009E73": "#00785A", "#D55E00": "#B04D00", "#CC79A7": "#A5507F", "#56B4E9": "#1F7DB4"][color] ?? color
    }

    struct LegendEntry {
        enum Kind {
            case line(dash: String?)
            case band
            case pointWithBar
            case openDiamond
            case ring
            case dot
        }
        var label: String
        var color: String
        var kind: Kind
    }

    private func yPixel(_ v: Double, _ axis: Axis) -> Double { axis == .left ? py(v) : py2(v) }

    /// A polyline; it breaks at points with a non-finite coordinate.
    mutating func line(
        _ points: [(Double, Double)], color: String, width stroke: Double = 1.5, dash: String? = nil, opacity: Double = 1, axis: Axis = .left
    ) {
        var run: [String] = []
        func flush() {
            if run.count > 1 {
                body +=
                    "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(Self.label(stroke))\"\(opacity < 1 ? " stroke-opacity=\"\(Self.label(opacity))\"" : "")\(dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") points=\"\(run.joined(separator: " "))\"/>\n"
            }
            run.removeAll()
        }
        for (a, b) in points {
            guard a.isFinite, b.isFinite else { flush(); continue }
            run.append("\(Self.f(px(a))),\(Self.f(yPixel(b, axis)))")
        }
        flush()
    }

    /// A filled band between two curves over the same x values (e.g. a 10–90% range).
    mutating func band(_ points: [(x: Double, lower: Double, upper: Double)], color: String, opacity: Double = 0.25) {
        let finite = points.filter { $0.x.isFinite && $0.lower.isFinite && $0.upper.isFinite }
        guard finite.count > 1 else { return }
        let upper = finite.map { "\(Self.f(px($0.x))),\(Self.f(py($0.upper)))" }
        let lower = finite.reversed().map { "\(Self.f(px($0.x))),\(Self.f(py($0.lower)))" }
        body +=
            "<polygon fill=\"\(color)\" fill-opacity=\"\(Self.label(opacity))\" stroke=\"none\" points=\"\((upper + lower).joined(separator: " "))\"/>\n"
    }

    mutating func bars(_ bins: [(lower: Double, upper: Double, value: Double)], color: String) {
        for b in bins where b.value > 0 && b.lower.isFinite && b.upper.isFinite && b.value.isFinite {
            let x0 = px(b.lower), x1 = px(b.upper), y0 = py(b.value), base = py(y.lowerBound)
            body +=
                "<rect x=\"\(Self.f(x0))\" y=\"\(Self.f(y0))\" width=\"\(Self.f(max(0, x1 - x0)))\" height=\"\(Self.f(max(0, base - y0)))\" fill=\"\(color)\" stroke=\"white\" stroke-width=\"0.5\"/>\n"
        }
    }

    /// Points with vertical error bars (caps 3 px wide), e.g. observed proportions with their intervals.
    mutating func pointsWithBars(_ points: [(x: Double, y: Double, lower: Double, upper: Double)], color: String, radius: Double = 2.6) {
        for p in points where p.x.isFinite && p.y.isFinite && p.lower.isFinite && p.upper.isFinite {
            let cx = px(p.x), lo = py(p.lower), hi = py(p.upper)
            body +=
                "<path d=\"M\(Self.f(cx)) \(Self.f(lo))V\(Self.f(hi))M\(Self.f(cx - 3)) \(Self.f(lo))h6M\(Self.f(cx - 3)) \(Self.f(hi))h6\" stroke=\"\(color)\" stroke-width=\"1\" fill=\"none\"/>"
            body += "<circle cx=\"\(Self.f(cx))\" cy=\"\(Self.f(py(p.y)))\" r=\"\(Self.label(radius))\" fill=\"\(color)\"/>\n"
        }
    }

    /// Open diamonds (e.g. the model's expectation for a group).
    mutating func openDiamonds(_ points: [(Double, Double)], color: String, size: Double = 4) {
        for (a, b) in points where a.isFinite && b.isFinite {
            let cx = px(a), cy = py(b)
            body +=
                "<path d=\"M\(Self.f(cx)) \(Self.f(cy - size))l\(Self.label(size)) \(Self.label(size))l-\(Self.label(size)) \(Self.label(size))l-\(Self.label(size)) -\(Self.label(size))z\" fill=\"white\" fill-opacity=\"0.6\" stroke=\"\(color)\" stroke-width=\"1.3\"/>\n"
        }
    }

    /// Dots of a scatter plot; `ring` draws a dark ring around each (e.g. flagged items).
    mutating func dots(_ points: [(Double, Double)], color: String, radius: Double = 2.5, opacity: Double = 0.8, ring: Bool = false) {
        for (a, b) in points where a.isFinite && b.isFinite {
            if ring {
                body +=
                    "<circle cx=\"\(Self.f(px(a)))\" cy=\"\(Self.f(py(b)))\" r=\"\(Self.label(radius + 2))\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.2\"/>"
            } else {
                body +=
                    "<circle cx=\"\(Self.f(px(a)))\" cy=\"\(Self.f(py(b)))\" r=\"\(Self.label(radius))\" fill=\"\(color)\" fill-opacity=\"\(Self.label(opacity))\"/>"
            }
        }
        body += "\n"
    }

    /// Text at pixel coordinates, with a white halo so that it stays readable over curves.
    mutating func text(
        _ s: String, pixelX: Double, pixelY: Double, color: String = "#222", size: Double = 10, anchor: String = "start", bold: Bool = false
    ) {
        guard pixelX.isFinite, pixelY.isFinite else { return }
        body +=
            "<text x=\"\(Self.f(pixelX))\" y=\"\(Self.f(pixelY))\" font-size=\"\(Self.label(size))\" fill=\"\(color)\" text-anchor=\"\(anchor)\"\(bold ? " font-weight=\"bold\"" : "") stroke=\"white\" stroke-width=\"3\" stroke-opacity=\"0.85\" paint-order=\"stroke\">\(escapeHTML(s))</text>\n"
    }

    /// A small upward triangle at the top edge of the plot at x (a curve leaving the axis' range there).
    mutating func clipMarker(atX v: Double, color: String) {
        guard v.isFinite else { return }
        let cx = px(v), top = plotTop
        body +=
            "<path d=\"M\(Self.f(cx - 4)) \(Self.f(top + 6))L\(Self.f(cx)) \(Self.f(top - 1))L\(Self.f(cx + 4)) \(Self.f(top + 6))z\" fill=\"\(color)\"/>\n"
    }

    /// Sets the legend, drawn in rows under the title, and lowers the plot's top edge to make room for it
    /// (call after `secondAxis`, which narrows the plot).
    mutating func legend(_ entries: [LegendEntry]) {
        legendEntries = entries
        margin.top = max(margin.top, 28 + 14 * Double(Self.legendRows(entries, maxWidth: plotRight - plotLeft - 4)))
    }

    /// Approximate width of a legend entry's text in pixels at 10 px sans-serif.
    static func textWidth(_ s: String, size: Double = 10) -> Double { Double(s.count) * size * 0.56 }

    /// Legend entries in rows from (x, y): a 20-px key, then the label; a new row when `maxWidth` is reached.
    static func legendRow(_ entries: [LegendEntry], x: Double, y: Double, maxWidth: Double) -> String {
        var s = "<g font-size=\"10\">", lx = x, ly = y
        for e in entries {
            let w = 26 + textWidth(e.label) + 10
            if lx > x && lx + w - x > maxWidth { lx = x; ly += 14 }
            let c = e.color
            switch e.kind {
            case .line(let dash):
                s +=
                    "<line x1=\"\(f(lx))\" y1=\"\(f(ly - 3))\" x2=\"\(f(lx + 20))\" y2=\"\(f(ly - 3))\" stroke=\"\(c)\" stroke-width=\"2\"\(dash.map { " stroke-dasharray=\"\($0)\"" } ?? "")/>"
            case .band:
                s += "<rect x=\"\(f(lx))\" y=\"\(f(ly - 8))\" width=\"20\" height=\"10\" fill=\"\(c)\" fill-opacity=\"0.3\"/>"
            case .pointWithBar:
                s +=
                    "<path d=\"M\(f(lx + 10)) \(f(ly - 9))V\(f(ly + 3))M\(f(lx + 7)) \(f(ly - 9))h6M\(f(lx + 7)) \(f(ly + 3))h6\" stroke=\"\(c)\" fill=\"none\"/><circle cx=\"\(f(lx + 10))\" cy=\"\(f(ly - 3))\" r=\"2.6\" fill=\"\(c)\"/>"
            case .openDiamond:
                s += "<path d=\"M\(f(lx + 10)) \(f(ly - 7))l4 4l-4 4l-4 -4z\" fill=\"white\" stroke=\"\(c)\" stroke-width=\"1.3\"/>"
            case .ring:
                s += "<circle cx=\"\(f(lx + 10))\" cy=\"\(f(ly - 3))\" r=\"4.5\" fill=\"none\" stroke=\"\(c)\" stroke-width=\"1.2\"/>"
            case .dot:
                s += "<circle cx=\"\(f(lx + 10))\" cy=\"\(f(ly - 3))\" r=\"3\" fill=\"\(c)\"/>"
            }
            s += "<text x=\"\(f(lx + 25))\" y=\"\(f(ly + 1))\">\(escapeHTML(e.label))</text>"
            lx += w
        }
        return s + "</g>\n"
    }

    /// Rows the legend takes at `maxWidth` (for making room in the top margin).
    static func legendRows(_ entries: [LegendEntry], maxWidth: Double) -> Int {
        var rows = entries.isEmpty ? 0 : 1, used = 0.0
        for e in entries {
            let w = 26 + textWidth(e.label) + 10
            if used > 0 && used + w > maxWidth { rows += 1; used = 0 }
            used += w
        }
        return rows
    }

    /// A legend on its own (shared by a grid of small charts).
    static func legendSVG(_ entries: [LegendEntry], width: Double, title: String) -> String {
        let rows = legendRows(entries, maxWidth: width - 8)
        let h = 8 + 14 * Double(rows)
        return
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) \(Int(h))\" width=\"\(Int(width))\" height=\"\(Int(h))\" font-family=\"sans-serif\" role=\"img\" aria-label=\"\(escapeHTML(title))\"><title>\(escapeHTML(title))</title>\n"
            + legendRow(entries, x: 4, y: 15, maxWidth: width - 8) + "</svg>"
    }
}
