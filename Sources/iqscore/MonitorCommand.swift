import ArgumentParser
import Foundation
import Integrity
import Psychometrics
import PsychometricsIO

struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Watch every item over time for a leak: daily residuals, moving windows and a CUSUM alarm per item.",
        discussion: """
            Each session's ability (EAP) and speed (the lognormal model's, from its times with --time-column or \
            --time-suffix and a bank calibrated with times) give each response a residual on correctness, \
            (u − P(θ̂))/√(P(1 − P)), and on time, α(log t − (β − τ̂)). Per item and day they make x = (Σe/√n − \
            Σz/√m)/√2, near N(0, 1) while nothing changes and above it when an item is answered correctly more often \
            and faster than the takers predict — the signature of a leak. An upward CUSUM per item (--cusum-k, \
            --cusum-h: about one false alarm in 19,000 item-days at the defaults 0.5 and 8, in 930 at h = 5) raises an alarm naming the day it fired \
            and the day the change began. Rapid guesses (NT10 on the bank's time model) are left out.

            OUT has one row per item and day with responses: item_id, date, n, n_timed, p_correct, \
            response_residual (Σe/√n), time_residual (−Σz/√m: positive is faster), statistic, cusum, alarm, \
            window_n, window_p_correct and window_time_intensity over the last --window days, and the bank's \
            time_intensity. The alarms go to stderr and the summary JSON. Exit 0 with no alarm, 4 with alarms \
            (a result, as `verify` does), 1 on an input error.
            """
    )

    @Argument(help: "Sessions CSV (long or wide layout) with a date column.")
    var responses: String

    @Option(help: "Item bank CSV (0/1 items; with time columns for the time residuals).")
    var bank: String

    @Option(
        name: .customLong("date-column"),
        help: "The column of each session's date, YYYY-MM-DD (a time after it is ignored; every row of a session the same).")
    var dateColumn: String

    @Option(help: "Output CSV: one row per item and day.")
    var out: String

    @Option(name: .customLong("summary-json"), help: "JSON summary with the alarms and the run manifest (default: OUT with .summary.json).")
    var summaryJSON: String?

    @OptionGroup var columns: ResponseColumnOptions
    @OptionGroup var times: ResponseTimeOptions

    @Option(help: "Moving-window length in days, \(ItemMonitor.allowedWindowDays.text).") var window = 7
    @Option(name: .customLong("cusum-k"), help: "CUSUM reference value k (half the shift in SDs to detect fastest), in \(CUSUM.allowedReferences).")
    var cusumK = 0.5
    @Option(name: .customLong("cusum-h"), help: "CUSUM decision threshold h, in \(CUSUM.allowedThresholds).") var cusumH = 8.0

    func validate() throws {
        try throwIfAny(
            [
                ItemMonitor.allowedWindowDays.problem(window, "--window"), CUSUM.allowedReferences.problem(cusumK, "--cusum-k"),
                CUSUM.allowedThresholds.problem(cusumH, "--cusum-h")
            ].compactMap { $0 })
    }

    var manifestPath: String? { iqscore.manifestPath(summaryJSON: summaryJSON, out: out) }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(inputs: [("input", responses), ("--bank", bank)], outputs: [("--out", out)] + given("--summary-json", manifestPath))
            let started = Date()
            let bankValue = try loadBank(bank)
            guard !bankValue.hasCategoryItems else {
                throw ValidationError("monitor watches 0/1 items; \(bank) has items in more than two categories")
            }
            var fileOptions = times.applied(to: columns.fileOptions)
            if (fileOptions.layout ?? .wide) == .wide { fileOptions.ignoredColumns.append(dateColumn) }
            // Unless the layout is forced long, the date column is not an item of a wide file.
            let (data, report) = try ResponseMatrix.load(csv: responses, options: fileOptions)
            if report.layout == .long { fileOptions.ignoredColumns.removeAll { $0 == dateColumn } }
            let dates = try PersonGroups.load(
                csv: responses, column: dateColumn, options: fileOptions, report: report, matrix: data, noun: "date",
                maximumDistinct: nil
            ) { text in
                SessionDate.day(text) == nil
                    ? "date \(TextFidelity.quoted(text)) is not a date YYYY-MM-DD (years \(SessionDate.allowedYears.text))" : nil
            }
            let index = Dictionary(uniqueKeysWithValues: bankValue.items.enumerated().map { ($1.itemID, $0) })
            let unknown = data.itemIDs.filter { index[$0] == nil }
            var sessions: [DatedSession] = []
            sessions.reserveCapacity(data.personCount)
            for i in 0..<data.personCount {
                var items: [Int] = [], answers: [UInt8] = [], seconds: [Double] = []
                for k in data.cells(ofPerson: i) {
                    guard let j = index[data.itemIDs[Int(data.itemIndices[k])]] else { continue }
                    items.append(j)
                    answers.append(data.responses[k])
                    seconds.append(report.times.map { Double($0.seconds[k]) } ?? .nan)
                }
                sessions.append(DatedSession(day: SessionDate.day(dates[i])!, items: items, responses: answers, seconds: seconds))
            }
            let timeItems = bankValue.items.map(\.timeModel)
            var monitor = ItemMonitor(
                parameters: bankValue.items.map(\.parameters), timeItems: timeItems,
                estimator: try AbilityEstimator(parameters: bankValue.items.map(\.parameters), latentScale: bankValue.latentScale))
            monitor.reference = cusumK
            monitor.threshold = cusumH
            monitor.windowDays = window
            if report.times != nil, let population = bankValue.speedPopulation {
                monitor.rapidGuesses = RapidGuessThresholds.normative(items: timeItems, population: population)
            }
            let result = monitor.run(sessions)
            func num(_ v: Double?) -> String { v.map { $0.isFinite ? String(format: "%.6f", $0) : "" } ?? "" }
            var text =
                "item_id,date,n,n_timed,p_correct,response_residual,time_residual,statistic,cusum,alarm,window_n,window_p_correct,window_time_intensity,time_intensity\n"
            for d in result.days {
                let item = bankValue.items[d.item]
                text +=
                    "\(csvField(item.itemID)),\(SessionDate.text(d.day)),\(d.responses),\(d.timed),\(num(Double(d.correct) / Double(d.responses))),\(num(d.responseResidual)),\(num(d.timeResidual)),\(num(d.statistic)),\(num(d.cusum)),\(d.alarm ? 1 : 0),\(d.windowResponses),\(num(d.windowProportionCorrect)),\(num(d.windowTimeIntensity)),\(num(item.timeModel?.timeIntensity))\n"
            }
            let writer = try AtomicFileWriter(path: out)
            try writer.write(text)
            let manifestWriter = try manifestPath.map { try AtomicFileWriter(path: $0) }
            let alarms = result.alarms.map {
                ["item_id": bankValue.items[$0.item].itemID, "alarm_date": SessionDate.text($0.day), "change_date": SessionDate.text($0.changeDay)]
            }
            let firstDay = sessions.map(\.day).min() ?? 0, lastDay = sessions.map(\.day).max() ?? 0
            try OutputSet.commit([("monitor", writer, result.days.count)], manifest: manifestWriter) { entries in
                try encodeJSON(
                    MonitorSummary(
                        outputs: entries, responses: responses, bank: bank, sessions: sessions.count, first_date: SessionDate.text(firstDay),
                        last_date: SessionDate.text(lastDay), item_days: result.days.count, times: report.times != nil && bankValue.hasTimeModels,
                        cusum_k: cusumK, cusum_h: cusumH, window_days: window, alarms: alarms, items_not_in_bank: unknown,
                        elapsed_seconds: Date().timeIntervalSince(started)))
            }
            var lines = [
                "iqscore monitor: \(formatCount(sessions.count)) sessions from \(SessionDate.text(firstDay)) to \(SessionDate.text(lastDay)), \(formatCount(result.days.count)) item-days on \(bankValue.items.count) bank items"
                    + (report.times != nil && bankValue.hasTimeModels
                        ? " (responses and times)" : " (responses only: no times or no time model in the bank)")
            ]
            if !unknown.isEmpty {
                lines.append(
                    "warning: \(unknown.count) item\(unknown.count == 1 ? "" : "s") not in the bank left out: \(unknown.prefix(5).joined(separator: ", "))\(unknown.count > 5 ? ", …" : "")"
                )
            }
            lines.append(
                "CUSUM k = \(cusumK.formatted6), h = \(cusumH.formatted6): \(result.alarms.count) alarm\(result.alarms.count == 1 ? "" : "s") on \(Set(result.alarms.map(\.item)).count) item\(Set(result.alarms.map(\.item)).count == 1 ? "" : "s")"
            )
            // Per item its first alarm (later ones: the shift goes on), in the order of the first alarms.
            var firstAlarm: [Int: ItemMonitor.Alarm] = [:], count: [Int: Int] = [:]
            for a in result.alarms { if firstAlarm[a.item] == nil { firstAlarm[a.item] = a }; count[a.item, default: 0] += 1 }
            let ordered = firstAlarm.values.sorted { ($0.day, $0.item) < ($1.day, $1.item) }
            for a in ordered.prefix(20) {
                lines.append(
                    "alarm: item \(bankValue.items[a.item].itemID) on \(SessionDate.text(a.day)), change from \(SessionDate.text(a.changeDay))"
                        + (count[a.item]! > 1 ? " (\(count[a.item]!) alarms)" : ""))
            }
            if ordered.count > 20 { lines.append("… and \(ordered.count - 20) more items (see the summary JSON)") }
            lines.append("wrote \(out)" + (manifestPath.map { " and \($0)" } ?? ""))
            printError(lines.joined(separator: "\n"))
            return result.alarms.isEmpty ? ExitStatus.success : ExitStatus.alarms
        }
    }
}

/// The `iqscore monitor` summary JSON.
struct MonitorSummary: Encodable {
    var manifest_version = 1
    var command = "monitor"
    var iqscore_version = iqscoreVersion
    var outputs: [ManifestEntry]
    var responses: String
    var bank: String
    var sessions: Int
    var first_date: String
    var last_date: String
    var item_days: Int
    var times: Bool
    var cusum_k: Double
    var cusum_h: Double
    var window_days: Int
    var alarms: [[String: String]]
    var items_not_in_bank: [String]
    var elapsed_seconds: Double
}
