import ArgumentParser
import Foundation
import Norming
import Psychometrics
import PsychometricsIO

struct NormsBuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Build age-specific norms from a norm sample: NORMS.json (and an HTML report).",
        discussion: """
            SAMPLE has one row per person with an age (--age-column, years in [0, 130]) and θ (--theta-column, \
            in [-10, 10], e.g. the theta column of `iqscore score`), optionally an SE (--se-column), a weight \
            (--weight-column, > 0) and categorical columns named by MARGINS. Other columns are ignored. \
            With --bank BANK.csv, SAMPLE holds responses instead of θ: the columns named after the bank's items \
            (\(ResponseCell.allowedDescription)) are scored to θ and its SE by EAP (the defaults of `iqscore \
            score`), and --theta-column and --se-column do not apply.

            Weighting: --margins MARGINS.csv (variable,category,share; each variable a column of SAMPLE, each \
            variable's shares summing to 1) rakes the sample to the population margins by iterative \
            proportional fitting (on top of --weight-column when both are given) to --raking-tolerance (the \
            largest |achieved − target| share), then cuts weights above --trim-factor × the mean weight and \
            rakes again (--no-trimming: never). Without --margins the weights are --weight-column, or equal. \
            The design effect deff = n·Σw²/(Σw)² and the effective n = (Σw)²/Σw² are reported.

            --method continuous (default): θ | age ~ SHASH(μ, σ, ε, δ) (Jones & Pewsey 2009) with μ, log σ, ε and \
            log δ polynomials in age (Legendre, age mapped to [-1, 1] over the sample's ages), fitted by \
            weighted maximum likelihood (weights rescaled to sum to the effective n) by Newton's method; the \
            degrees are chosen by --criterion (BIC default) in a stepwise search up to --max-degrees. \
            --method bands: age bands (--band-edges, or automatic with at least --min-band-n effective \
            persons), each with a normal, skewed or SHASH distribution (chosen by the criterion). The \
            percentile curves 1–99 are checked not to cross on 401 ages.

            IQ under these norms: 100 + 15·Φ⁻¹(F_age(θ)); ages outside the sample's range are scored at the \
            nearest covered age, flagged age_outside_norms beyond --extrapolation years.

            Outputs (NORMS.json, and --report) are written atomically as one set. Exit status: 0 built; \
            3 written, but raking or the fit did not converge (a warning says so); 1 failed (bad input, \
            nothing written); 64 usage error.
            """
    )

    @Argument(help: ArgumentHelp("Norm sample CSV: one row per person.", valueName: "sample.csv"))
    var sample: String

    @Option(name: .customLong("age-column"), help: "Age column (years, 0–130).")
    var ageColumn = "age"

    @Option(name: .customLong("theta-column"), help: "θ column (−10 to 10) (default: theta).")
    var thetaColumn: String?

    @Option(
        help: ArgumentHelp(
            "Item bank: score each row's responses (columns named after its items) to θ by EAP instead of reading θ.", valueName: "bank.csv"))
    var bank: String?

    @Option(name: .customLong("se-column"), help: "Column of θ's standard errors (recorded as the sample's mean SE).")
    var seColumn: String?

    @Option(name: .customLong("weight-column"), help: "Column of design weights (> 0).")
    var weightColumn: String?

    @Option(help: ArgumentHelp("Population margins to rake to: variable,category,share.", valueName: "margins.csv"))
    var margins: String?

    @Option(help: "continuous or bands.")
    var method: NormingMethod = .continuous

    @Option(
        name: .customLong("min-band-n"), help: "Bands: the least effective n of an automatic band (\(BandNormsOptions.allowedMinimumEffectiveN)).")
    var minimumBandN = 200.0

    @Option(name: .customLong("band-edges"), help: ArgumentHelp("Bands: interior band edges in years, e.g. 20,25,30,40.", valueName: "ages"))
    var bandEdges: String?

    @Option(
        name: .customLong("max-degrees"),
        help: ArgumentHelp("Continuous: the largest degrees of μ, log σ, ε, log δ the search may choose.", valueName: "μ,σ,ε,δ"))
    var maximumDegrees = "5,3,2,1"

    @Option(help: "Information criterion choosing the degrees (and band families): bic or aic.")
    var criterion: InformationCriterion = .bic

    @Option(name: .customLong("raking-tolerance"), help: "Raking stops when every margin is within this share (0 < t < 1).")
    var rakingTolerance = 1e-10

    @Option(name: .customLong("raking-iterations"), help: "Raking sweeps before giving up (1–1000000).")
    var rakingIterations = 1000

    @Option(name: .customLong("trim-factor"), help: "Raking: cut weights above this many times the mean weight, then rake again (1 < k ≤ 1000).")
    var trimFactor = 5.0

    @Flag(name: .customLong("no-trimming"), help: "Raking: never cut weights.")
    var noTrimming = false

    @Option(help: "Years outside the sample's ages within which the norms may be used without the age_outside_norms flag (0–130).")
    var extrapolation = 0.0

    @Option(help: "Name of the norms (recorded in NORMS.json and in score files).")
    var name: String

    @Option(name: .customLong("norms-version"), help: "Version of the norms (e.g. 2026-11).")
    var normsVersion: String

    @Option(help: ArgumentHelp("Output NORMS.json (written atomically).", valueName: "norms.json"))
    var out: String

    @Option(help: ArgumentHelp("Also write an HTML report: weighting, model, criterion table, percentile curves.", valueName: "norms.html"))
    var report: String?

    /// The parsed --max-degrees.
    var degrees: SHASHDegrees? {
        let parts = maximumDegrees.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 4 else { return nil }
        let values = parts.map { $0 == "-" || $0 == "none" ? Optional<Int>.none : Int($0) }
        guard let mu = values[0], let sigma = values[1], parts[2] == "-" || parts[2] == "none" || values[2] != nil,
            parts[3] == "-" || parts[3] == "none" || values[3] != nil
        else { return nil }
        return SHASHDegrees(location: mu, logScale: sigma, skewness: values[2], logTailWeight: values[3])
    }

    /// The parsed --band-edges.
    var edges: [Double]?? {
        guard let bandEdges else { return .some(nil) }
        let values = bandEdges.split(separator: ",").map { DecimalNumber.parse($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else { return nil }
        return .some(values.map { $0! })
    }

    var options: NormsBuildOptions {
        var options = NormsBuildOptions(name: name, version: normsVersion)
        options.method = method
        options.extrapolation = extrapolation
        options.raking.tolerance = rakingTolerance
        options.raking.maximumIterations = rakingIterations
        options.raking.trimFactor = noTrimming ? nil : trimFactor
        if let degrees { options.continuous.maximumDegrees = degrees }
        options.continuous.criterion = criterion
        options.bands.criterion = criterion
        options.bands.minimumEffectiveN = minimumBandN
        options.bands.edges = edges ?? nil
        return options
    }

    func validate() throws {
        if degrees == nil {
            throw ValidationError(
                "--max-degrees must be four degrees μ,σ,ε,δ (ε and δ may be '-' for none), e.g. 5,3,2,1, got \(TextFidelity.quoted(maximumDegrees))")
        }
        if edges == nil {
            throw ValidationError("--band-edges must be ages separated by commas, e.g. 20,30,40, got \(TextFidelity.quoted(bandEdges ?? ""))")
        }
        if bandEdges != nil && method != .bands { throw ValidationError("--band-edges applies to --method bands") }
        if bank != nil, let given = [("--theta-column", thetaColumn), ("--se-column", seColumn)].first(where: { $0.1 != nil }) {
            throw ValidationError("--bank scores θ and its SE from the responses; \(given.0) does not apply with it")
        }
        for (option, value) in [
            ("--age-column", ageColumn), ("--theta-column", thetaColumn ?? "x"), ("--se-column", seColumn ?? "x"),
            ("--weight-column", weightColumn ?? "x")
        ]
        where value.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("\(option) must name a column, got '\(value)'")
        }
        try throwIfAny(
            options.validationProblems().map { problem in
                problem.replacingOccurrences(of: "norms need a version", with: "--norms-version must not be empty")
                    .replacingOccurrences(of: "norms need a name", with: "--name must not be empty")
            })
    }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(
                inputs: [("input", sample)] + given("--margins", margins) + given("--bank", bank),
                outputs: [("--out", out)] + given("--report", report))
            let targets = try margins.map { try RakingTargets.load(csv: $0) }
            let scorer = try bank.map { try SessionScorer(bank: try loadBank($0, categoryItems: .read()), scale: IQScale()) }
            let columns = NormSampleColumns(
                age: ageColumn, theta: thetaColumn ?? "theta", standardError: seColumn, weight: weightColumn,
                variables: targets?.variables ?? [], scorer: scorer)
            let normSample = try NormSample.load(csv: sample, columns: columns)
            let build: NormsBuild
            do {
                build = try NormsBuilder.build(normSample, margins: targets, options: options)
            } catch let error as PsychometricsError {
                // Margins that do not fit the sample name both files.
                let files = margins.map { "\(sample) and \($0)" } ?? sample
                throw PsychometricsError(error.code, "\(files): \(error.message)")
            }
            let text = try build.document.jsonText()
            let outWriter = try AtomicFileWriter(path: out)
            try outWriter.write(text)
            var outputs: [(role: String, writer: AtomicFileWriter, rows: Int)] = [("norms", outWriter, 0)]
            if let report {
                let writer = try AtomicFileWriter(path: report)
                try writer.write(NormsReport(build: build, sample: normSample, samplePath: sample, marginsPath: margins).html())
                outputs.append(("report", writer, 0))
            }
            try OutputSet.commit(outputs, manifest: nil) { _ in "" }
            printError(summary(build))
            return build.converged ? ExitStatus.success : ExitStatus.notConverged
        }
    }

    func summary(_ build: NormsBuild) -> String {
        let d = build.document
        var lines = [
            "iqscore norms build: \(formatCount(d.sample.n)) persons aged \(fixed(d.ages.minimum, 1))–\(fixed(d.ages.maximum, 1)) from \(sample)"
        ]
        if let bank { lines.append("θ: EAP from the responses to the items of \(bank)") }
        let w = d.weighting
        switch w.method {
        case "raking":
            let status = w.converged == true ? "converged in \(w.iterations ?? 0) sweeps" : "NOT CONVERGED after \(w.iterations ?? 0) sweeps"
            lines.append(
                "weighting: raking to \(margins ?? "") \(status), largest margin error \(String(format: "%.1e", w.maximumMarginError ?? 0)); \(w.trimmed) trimmed; deff \(fixed(w.designEffect, 2)), effective n \(formatCount(Int(w.effectiveN.rounded())))"
            )
        case "given":
            lines.append(
                "weighting: --weight-column \(weightColumn ?? ""); deff \(fixed(w.designEffect, 2)), effective n \(formatCount(Int(w.effectiveN.rounded())))"
            )
        default:
            lines.append("weighting: none (equal weights)")
        }
        if let m = d.model {
            let degrees = SHASHDegrees(
                location: m.degrees.mu, logScale: m.degrees.logSigma, skewness: m.degrees.epsilon, logTailWeight: m.degrees.logDelta)
            lines.append(
                "model: continuous SHASH, degrees \(degrees) (\(d.criterion.rawValue.uppercased()) over \(d.criterionTable.count) models), \(m.converged ? "converged" : "NOT CONVERGED") in \(m.iterations) Newton iterations"
            )
        } else if let bands = d.bands {
            lines.append(
                "model: \(bands.count) age bands (\(bands.map { "\(fixed($0.ageMinimum, 1))–\(fixed($0.ageMaximum, 1))" }.prefix(6).joined(separator: ", "))\(bands.count > 6 ? ", …" : ""))"
            )
        }
        lines.append("percentile curves: \(d.percentileCheck.summary)")
        for warning in d.warnings { lines.append("warning: \(warning)") }
        lines.append("wrote \(out)" + (report.map { " and \($0)" } ?? ""))
        return lines.joined(separator: "\n")
    }
}
