import Foundation
import Psychometrics
import PsychometricsIO

/// `report --monitor MONITOR.csv`: the items' time series from `iqscore monitor` — the alarms, and for each alarmed
/// item its moving-window proportion correct and time intensity over the days, the bank's time intensity and the
/// days of its alarms.
extension ReportCommand {
    /// Panels drawn at most (the alarmed items, first alarm first).
    static let maximumMonitorPanels = 24

    /// One row of the monitor file.
    struct MonitorRow {
        var item: String
        var day: Int
        var alarm: Bool
        var windowProportion: Double?
        var windowIntensity: Double?
        var bankIntensity: Double?
        var cusum: Double?
    }

    /// Reads `iqscore monitor`'s output, its columns by name.
    /// - Throws: `InputError` for a missing column, a bad date or number (file:line:column).
    static func readMonitor(_ path: String) throws -> [MonitorRow] {
        let reader = try CSVReader(path: path)
        guard try reader.nextRow() else { throw InputError(file: path, message: "the file is empty; expected iqscore monitor's header") }
        let header = try reader.headerFields()
        func column(_ name: String) throws -> Int {
            guard let c = header.firstIndex(of: name) else {
                throw InputError(
                    file: path, line: reader.line,
                    message:
                        "no \(name) column: is this iqscore monitor's output? (found: \(header.map(\.escapingControlCharacters).joined(separator: ",")))"
                )
            }
            return c
        }
        let item = try column("item_id"), date = try column("date"), alarm = try column("alarm"), p = try column("window_p_correct")
        let beta = try column("window_time_intensity"), bankBeta = try column("time_intensity"), cusum = try column("cusum")
        var rows: [MonitorRow] = []
        while try reader.nextRow() {
            guard reader.fieldCount == header.count else { throw reader.fieldCountError(expected: header.count) }
            guard let day = SessionDate.day(reader.string(date)) else {
                throw InputError(
                    file: path, line: reader.line, column: date + 1,
                    message: "date \(TextFidelity.quoted(reader.string(date))) is not a date YYYY-MM-DD")
            }
            func number(_ c: Int) throws -> Double? {
                let text = reader.string(c).trimmingCharacters(in: .whitespaces)
                if text.isEmpty { return nil }
                guard let v = DecimalNumber.parse(text) else {
                    throw InputError(
                        file: path, line: reader.line, column: c + 1, message: "\(header[c]) \(TextFidelity.quoted(text)) is not a number")
                }
                return v
            }
            rows.append(
                MonitorRow(
                    item: reader.string(item), day: day, alarm: reader.string(alarm).trimmingCharacters(in: .whitespaces) == "1",
                    windowProportion: try number(p), windowIntensity: try number(beta), bankIntensity: try number(bankBeta), cusum: try number(cusum))
            )
        }
        return rows
    }

    func monitorSection(_ path: String) throws -> String {
        let rows = try Self.readMonitor(path)
        guard let first = rows.map(\.day).min(), let last = rows.map(\.day).max() else {
            return "<h2 id=\"monitor\">Items over time</h2><p>\(escapeHTML(path)) has no item-days.</p>"
        }
        var byItem: [String: [MonitorRow]] = [:]
        for r in rows { byItem[r.item, default: []].append(r) }
        let alarms = rows.filter(\.alarm).sorted { ($0.day, $0.item) < ($1.day, $1.item) }
        var order: [String] = []
        for a in alarms where !order.contains(a.item) { order.append(a.item) }
        var table = ""
        for item in order {
            let days = alarms.filter { $0.item == item }.map { SessionDate.text($0.day) }
            table +=
                "<tr class=\"flag\"><td>\(escapeHTML(item))</td><td>\(days.first!)</td><td>\(days.count)</td><td>\(escapeHTML(days.joined(separator: ", ")))</td></tr>\n"
        }
        var panels = ""
        let span = Double(max(1, last - first))
        for item in order.prefix(Self.maximumMonitorPanels) {
            let series = byItem[item]!.sorted { $0.day < $1.day }
            let intensities = series.compactMap(\.windowIntensity) + series.compactMap(\.bankIntensity)
            var c = SVGChart(
                x: 0...span, y: 0...1, title: item, xLabel: "days since \(SessionDate.text(first))", yLabel: "p correct (window)", width: 340,
                height: 230)
            c.margin = (44, 8, 26, 36)
            c.tickFontSize = 9
            c.labelFontSize = 10
            if let lo = intensities.min(), let hi = intensities.max() {
                c.secondAxis((lo - 0.2)...(hi + 0.2), label: "time intensity β", color: "#D55E00")
                c.line(series.compactMap { r in r.windowIntensity.map { (Double(r.day - first), $0) } }, color: "#D55E00", width: 1.5, axis: .right)
                if let bankBeta = series.compactMap(\.bankIntensity).first {
                    c.line([(0, bankBeta), (span, bankBeta)], color: "#D55E00", width: 1, dash: "4 3", axis: .right)
                }
            }
            c.line(series.compactMap { r in r.windowProportion.map { (Double(r.day - first), $0) } }, color: "#0072B2", width: 1.5)
            for a in series where a.alarm { c.clipMarker(atX: Double(a.day - first), color: "#CC0000") }
            panels +=
                "<figure class=\"flag\">\(c.svg())<figcaption>\(escapeHTML(item)): first alarm \(SessionDate.text(series.first(where: \.alarm)!.day))</figcaption></figure>\n"
        }
        // swift-format 6.3 re-indents this literal but not the literals nested in it (a compile error): left as written.
        // swift-format-ignore
        return """
        <h2 id="monitor">Items over time</h2>
        <p>From <code>iqscore monitor</code> (\(escapeHTML(path))): \(byItem.count) items watched from \(SessionDate.text(first)) to \(SessionDate.text(last)); \
        \(alarms.count) alarm\(alarms.count == 1 ? "" : "s") on \(order.count) item\(order.count == 1 ? "" : "s") (a CUSUM per item on its daily correctness and time residuals: \
        answered right more often and faster than its takers predict, the signature of a leak).</p>
        \(order.isEmpty ? "<p>No item raised an alarm.</p>" : """
        <table><tr><th>item</th><th>first alarm</th><th>alarms</th><th>alarm dates</th></tr>
        \(table)</table>
        <h3>Alarmed items: moving-window proportion correct and time intensity</h3>
        <p>Blue: the proportion correct over the monitor's moving window (left axis); orange: the window's time intensity β̂ = mean(log t + τ̂) (right axis; a leak makes it fall), dashed: the bank's β; red marks: alarms.</p>
        <div class="charts">\(panels)</div>
        """)
        """
    }
}
