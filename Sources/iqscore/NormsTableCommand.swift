import ArgumentParser
import Foundation
import Norming
import Psychometrics
import PsychometricsIO

struct NormsTableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table",
        abstract: "Write the norm table: IQ and percentile for every age and θ of a grid.",
        discussion: """
            NORMS is a NORMS.json document (`iqscore norms build`) or linear norms {name, version, mean, sd}. \
            TABLE has one row per (age, θ), ages outer: age,theta,iq,percentile. The IQ is what `iqscore score` \
            reports under these norms: 100 + 15·Φ⁻¹(F_age(θ)) (--iq-transform area, default) or \
            100 + 15·(θ − mean(age))/SD(age) (linear), rounded half away from zero and clamped to 40–160; the \
            percentile is 100·F_age(θ) to one decimal. Ages outside the norms' covered range are evaluated at \
            the nearest covered age (a note on stderr names them). At most 10,000,000 rows; written atomically.
            """
    )

    /// The most rows a table may have.
    static let maximumRows = 10_000_000

    @Argument(help: ArgumentHelp("Norms: NORMS.json or linear norms JSON.", valueName: "norms.json"))
    var norms: String

    @Option(help: ArgumentHelp("Ages as start:stop:step (years, 0–130).", valueName: "start:stop:step"))
    var ages = "16:90:1"

    @Option(parsing: .unconditional, help: ArgumentHelp("θ values as start:stop:step (−10 to 10); may start with '-'.", valueName: "start:stop:step"))
    var theta = "-4:4:0.05"

    @Option(name: .customLong("iq-transform"), help: "area (normalised, default) or linear (as score --iq-transform).")
    var transformation: IQTransformation = .area

    @Option(help: ArgumentHelp("Output CSV (written atomically).", valueName: "table.csv"))
    var out: String

    /// start:stop:step as the grid's values (start + k·step, k = 0… while ≤ stop + step·1e-9), or a problem.
    static func grid(_ text: String, option: String, range: NumberRange) -> Result<[Double], ValidationError> {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { DecimalNumber.parse($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 3, let start = parts[0], let stop = parts[1], let step = parts[2] else {
            return .failure(ValidationError("\(option) must be start:stop:step with three numbers, e.g. 16:90:1, got \(TextFidelity.quoted(text))"))
        }
        guard range.contains(start), range.contains(stop), start <= stop else {
            return .failure(
                ValidationError("\(option) must run from start to stop within \(range) with start ≤ stop, got \(TextFidelity.quoted(text))"))
        }
        guard step > 0, (stop - start) / step < Double(maximumRows) else {
            return .failure(
                ValidationError("\(option) needs a step > 0 giving at most \(formatCount(maximumRows)) values, got \(TextFidelity.quoted(text))"))
        }
        let count = Int(((stop - start) / step * (1 + 1e-12) + 1e-9).rounded(.down)) + 1
        return .success((0..<count).map { start + Double($0) * step })
    }

    func validate() throws {
        let a = try Self.grid(ages, option: "--ages", range: NormSample.allowedAges).get()
        let t = try Self.grid(theta, option: "--theta", range: NormSample.allowedThetas).get()
        if a.count * t.count > Self.maximumRows {
            throw ValidationError("--ages × --theta give \(formatCount(a.count * t.count)) rows; at most \(formatCount(Self.maximumRows))")
        }
    }

    /// A grid value as text: at most 6 decimals, trailing zeros dropped ("16", "-3.95").
    static func text(_ v: Double) -> String {
        var s = String(format: "%.6f", v)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s == "-0" ? "0" : s
    }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(inputs: [("input", norms)], outputs: [("--out", out)])
            let ageNorms = try AgeNorms.load(json: norms)
            let scale = AgeNormScale(norms: ageNorms, transformation: transformation, settings: try IQScale())
            let ageGrid = try Self.grid(ages, option: "--ages", range: NormSample.allowedAges).get()
            let thetaGrid = try Self.grid(theta, option: "--theta", range: NormSample.allowedThetas).get()
            let writer = try AtomicFileWriter(path: out)
            try writer.write("age,theta,iq,percentile\n")
            let settings = scale.settings
            var chunk = ""
            for age in ageGrid {
                for t in thetaGrid {
                    let raw = scale.rawIQ(theta: t, age: age)
                    let iq = min(max(Int(min(max(raw.rounded(.toNearestOrAwayFromZero), -1e6), 1e6)), settings.minimumIQ), settings.maximumIQ)
                    let percentile = (1000 * ageNorms.cdf(theta: t, age: age)).rounded(.toNearestOrAwayFromZero) / 10
                    chunk += "\(Self.text(age)),\(Self.text(t)),\(iq),\(String(format: "%.1f", percentile))\n"
                }
                if chunk.utf8.count > 1 << 20 { try writer.write(chunk); chunk = "" }
            }
            try writer.write(chunk)
            try OutputSet.commit([("table", writer, ageGrid.count * thetaGrid.count)], manifest: nil) { _ in "" }
            if let range = ageNorms.coveredAges {
                let outside = ageGrid.filter { !range.contains($0) }
                if !outside.isEmpty {
                    let flagged = outside.filter { ageNorms.isOutside(age: $0) }
                    let which =
                        outside.count == 1
                        ? "1 age (\(Self.text(outside[0]))) lies"
                        : "\(outside.count) ages (\(Self.text(outside.first!))…\(Self.text(outside.last!))) lie"
                    printError(
                        "note: \(which) outside the norms' ages \(fixed(range.lowerBound, 1))–\(fixed(range.upperBound, 1)) and use\(outside.count == 1 ? "s" : "") the nearest covered age; \(flagged.count) of them \(flagged.count == 1 ? "is" : "are") beyond the \(Self.text(ageNorms.extrapolation))-year margin, where scores are flagged age_outside_norms"
                    )
                }
            }
            printError(
                "iqscore norms table: \(ageNorms.label), \(ageGrid.count) ages × \(thetaGrid.count) θ (\(transformation.rawValue) transformation)\nwrote \(out) (\(formatCount(ageGrid.count * thetaGrid.count)) rows)"
            )
            return ExitStatus.success
        }
    }
}
