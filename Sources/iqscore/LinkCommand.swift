import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

struct LinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "link",
        abstract: "Put a new calibration on the scale of an old one through their common items.",
        usage: """
            iqscore link --reference <old-bank.csv> --new <new-bank.csv> --out <linked-bank.csv> [--method <method>] \
            [--summary-json <summary-json>] [--criterion <criterion>] [--quadrature-points <n>] [--theta-bound <b>]
            """,
        discussion: """
            --reference is the OLD bank (the scale to keep), --new the NEW bank (the calibration to move); both as \
            written by calibrate \
            (item_id,a,b[,c], SE and metadata columns). Common items are matched by item_id. The constants \
            follow θ_old = slope · θ_new + intercept, so new-bank parameters move to the old scale by \
            a* = a/slope, b* = slope·b + intercept, c* = c; standard errors by se_a/slope and slope·se_b.

            Methods: mean-mean (Loyd & Hoover 1980), mean-sigma (Marco 1977), haebara (Haebara 1980, item \
            characteristic curves) and stocking-lord (Stocking & Lord 1983, test characteristic curve). The \
            curve methods compare curves on --quadrature-points equally spaced θ on [-B, B] with N(0, 1) \
            weights: on the old scale (--criterion new-to-old, plink's default), on the new scale (old-to-new) \
            or both (symmetric), and minimise by Newton's method from the mean-sigma constants.

            OUT is the whole NEW bank on the old scale (every item, metadata columns kept), written atomically.

            --from and --to, the names before 2026-11-27, are refused: in plink the "from" scale is the new \
            form's, here it was the old bank's, and a swapped pair links the wrong way without an error.

            Exit status: 0 linked; 3 written but the curve criterion did not converge (a warning says so); \
            1 failed (bad bank, too few common items: nothing written); 64 usage error.
            """
    )

    @Option(name: .customLong("reference"), help: ArgumentHelp("OLD bank CSV: the reference scale, kept (required).", valueName: "old-bank.csv"))
    var reference: String?

    @Option(name: .customLong("new"), help: ArgumentHelp("NEW bank CSV: the calibration put on the old scale (required).", valueName: "new-bank.csv"))
    var new: String?

    @Option(name: .customLong("from"), help: .hidden)
    var refusedFrom: String?

    @Option(name: .customLong("to"), help: .hidden)
    var refusedTo: String?

    var oldBank: String { reference ?? "" }
    var newBank: String { new ?? "" }

    @Option(help: "Linking method: stocking-lord, haebara, mean-sigma or mean-mean.")
    var method: LinkingMethod = .stockingLord

    @Option(help: ArgumentHelp("Output: the NEW bank on the old scale (written atomically).", valueName: "linked-bank.csv"))
    var out: String

    @Option(name: .customLong("summary-json"), help: "Also write a JSON summary of the linking.")
    var summaryJSON: String?

    @Option(help: "Curves compared by haebara/stocking-lord: new-to-old (on the old scale), old-to-new or symmetric.")
    var criterion: LinkingDirection = .newToOld

    @Option(name: .customLong("quadrature-points"), help: "θ points for the curve criteria, \(QuadratureGrid.allowedPointCounts.text).")
    var quadraturePoints = 61

    @Option(name: .customLong("theta-bound"), help: "Curve criteria on [-B, B] of each scale; B in \(QuadratureGrid.allowedBounds).")
    var thetaBound = 6.0

    @OptionGroup var bankModel: BankModelOption

    func validate() throws {
        if refusedFrom != nil || refusedTo != nil {
            throw ValidationError(
                "--from and --to are ambiguous (plink's \"from\" is the new form, here it was the old bank); name the banks by role: --reference OLD_BANK.csv (the scale to keep) --new NEW_BANK.csv (the calibration to move)"
            )
        }
        guard reference != nil, new != nil else {
            throw ValidationError("give both banks: --reference OLD_BANK.csv (the scale to keep) and --new NEW_BANK.csv (the calibration to move)")
        }
        try throwIfAny(QuadratureGrid.validationProblems(points: quadraturePoints, bound: thetaBound, naming: .option))
        let target = URL(fileURLWithPath: out).standardizedFileURL.path
        for (option, path) in [("--reference", oldBank), ("--new", newBank)] where URL(fileURLWithPath: path).standardizedFileURL.path == target {
            throw ValidationError("--out must not overwrite the \(option) bank (\(path)); choose another output file")
        }
    }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(
                inputs: [("--reference", oldBank), ("--new", newBank)], outputs: [("--out", out)] + given("--summary-json", summaryJSON))
            let old = try loadBank(oldBank, categoryItems: bankModel.reading)
            let new = try loadBank(newBank, categoryItems: bankModel.reading)
            var options = ScaleLinkingOptions(method: method)
            options.direction = criterion
            // Each scale's population as its bank states it (N(0, 1) unless the bank carries a latent scale).
            options.oldScaleQuadrature = try .latent(old.latentScale, count: quadraturePoints, bound: thetaBound)
            options.newScaleQuadrature = try .latent(new.latentScale, count: quadraturePoints, bound: thetaBound)
            let result: ScaleLinkingResult
            do {
                result = try ScaleLinking.link(old: old, new: new, options: options)
            } catch let error as PsychometricsError {
                printError("error: cannot link \(newBank) onto \(oldBank): \(error.message)")
                return ExitStatus.failure
            }
            // The moment methods' constants beside the chosen method's (each threshold a difficulty for items in
            // more than two categories; undefined with a nominal common item).
            let meanMean = try? ScaleLinking.link(old: old, new: new, options: ScaleLinkingOptions(method: .meanMean)).transformation
            let meanSigma = try? ScaleLinking.link(old: old, new: new, options: ScaleLinkingOptions(method: .meanSigma)).transformation

            // On the reference scale, scored against the reference population.
            var linked = result.linkedBank(new)
            linked.latentScale = old.latentScale
            let outOfRange = linked.parameterProblems()
            if !outOfRange.isEmpty {
                // The constants carry some item beyond what a bank may hold: writing it would give a file no command
                // reads back, so it is an error (with the constants, which are what is wrong).
                printError(
                    "error: linking \(newBank) onto \(oldBank) gives θ_old = \(result.slope.formatted6) · θ_new + \(result.intercept.formatted6), which puts \(outOfRange.count) item\(outOfRange.count == 1 ? "" : "s") outside the ranges a bank may hold: \(outOfRange.prefix(5).joined(separator: "; "))\(outOfRange.count > 5 ? "; …" : ""); check the common items"
                )
                return ExitStatus.failure
            }
            try writeAtomically(linked.csv(), to: out)
            if let summaryJSON {
                let summary = LinkSummary(result: result, command: self, old: old, new: new, meanMean: meanMean, meanSigma: meanSigma)
                try writeAtomically(try summary.json(), to: summaryJSON)
            }
            printError(humanSummary(result: result, old: old, new: new, meanMean: meanMean, meanSigma: meanSigma))
            return result.converged ? ExitStatus.success : ExitStatus.notConverged
        }
    }

    func humanSummary(result: ScaleLinkingResult, old: ItemBank, new: ItemBank, meanMean: ScaleTransformation?, meanSigma: ScaleTransformation?)
        -> String
    {
        func signed(_ v: Double) -> String { v < 0 ? "− \(fixed(-v, 6))" : "+ \(fixed(v, 6))" }
        func constants(_ t: ScaleTransformation?) -> String {
            t.map { "slope \(fixed($0.slope, 6)), intercept \(fixed($0.intercept, 6))" } ?? "undefined"
        }
        let ids = result.commonItemIDs
        var lines: [String] = []
        lines.append("iqscore link: \(method)\(method.isCharacteristicCurve ? " (\(criterion))" : ""), \(newBank) onto the scale of \(oldBank)")
        lines.append(
            "banks: old \(old.items.count) items, new \(new.items.count) items; \(ids.count) common items (\(ids.prefix(8).joined(separator: ", "))\(ids.count > 8 ? ", …" : ""))"
        )
        lines.append("θ_old = \(fixed(result.slope, 6)) · θ_new \(signed(result.intercept)) (a* = a/slope, b* = slope·b + intercept, c* = c)")
        if let value = result.criterion {
            let status =
                result.converged
                ? "converged in \(result.iterations) Newton iteration\(result.iterations == 1 ? "" : "s")"
                : "NOT CONVERGED after \(result.iterations) Newton iterations"
            lines.append(
                "criterion \(String(format: "%.4e", value)) on \(quadraturePoints) points of [-\(thetaBound.formatted6), \(thetaBound.formatted6)] with N(0, 1) weights; \(status) from \(constants(result.start))"
            )
        }
        lines.append("moments: mean-mean \(constants(meanMean)); mean-sigma \(constants(meanSigma))")
        for warning in result.warnings { lines.append("warning: \(warning)") }
        let newOnly = new.items.count - ids.count
        lines.append("wrote \(out) (\(new.items.count) items: \(ids.count) common, \(newOnly) new-only)" + (summaryJSON.map { " and \($0)" } ?? ""))
        return lines.joined(separator: "\n")
    }
}

extension LinkingMethod: ExpressibleByArgument {}
extension LinkingDirection: ExpressibleByArgument {}

private extension Double {
    /// "6" for 6.0, "4.5" for 4.5.
    func formatted() -> String { self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self) }
}

/// The `--summary-json` document. Keys are snake_case; `criterion`, `criterion_direction` and the moment
/// constants are `null` when they do not apply.
struct LinkSummary: Encodable {
    var method: String
    var old_bank: String
    var new_bank: String
    var out: String
    var slope: Double
    var intercept: Double
    var common_items: Int
    var common_item_ids: [String]
    var criterion: Double?
    var criterion_direction: String?
    var converged: Bool
    var iterations: Int
    var quadrature_points: Int?
    var theta_bound: Double?
    var start: [String: Double]?
    var mean_mean: [String: Double]?
    var mean_sigma: [String: Double]?
    var n_old_items: Int
    var n_new_items: Int
    var n_linked_items: Int
    var warnings: [String]

    init(
        result: ScaleLinkingResult, command: LinkCommand, old: ItemBank, new: ItemBank, meanMean: ScaleTransformation?,
        meanSigma: ScaleTransformation?
    ) {
        func pair(_ t: ScaleTransformation?) -> [String: Double]? { t.map { ["slope": $0.slope, "intercept": $0.intercept] } }
        method = result.method.rawValue
        old_bank = command.oldBank
        new_bank = command.newBank
        out = command.out
        slope = result.slope
        intercept = result.intercept
        common_items = result.commonItemCount
        common_item_ids = result.commonItemIDs
        criterion = result.criterion
        criterion_direction = result.direction?.rawValue
        converged = result.converged
        iterations = result.iterations
        quadrature_points = result.method.isCharacteristicCurve ? command.quadraturePoints : nil
        theta_bound = result.method.isCharacteristicCurve ? command.thetaBound : nil
        start = pair(result.start)
        mean_mean = pair(meanMean)
        mean_sigma = pair(meanSigma)
        n_old_items = old.items.count
        n_new_items = new.items.count
        n_linked_items = new.items.count
        warnings = result.warnings
    }

    enum CodingKeys: String, CodingKey {
        case method, old_bank, new_bank, out, slope, intercept, common_items, common_item_ids, criterion, criterion_direction,
            converged, iterations, quadrature_points, theta_bound, start, mean_mean, mean_sigma, n_old_items, n_new_items,
            n_linked_items, warnings
    }

    /// Like the synthesised encoder, but absent optionals are written as `null` so every key is always present.
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(method, forKey: .method)
        try c.encode(old_bank, forKey: .old_bank)
        try c.encode(new_bank, forKey: .new_bank)
        try c.encode(out, forKey: .out)
        try c.encode(slope, forKey: .slope)
        try c.encode(intercept, forKey: .intercept)
        try c.encode(common_items, forKey: .common_items)
        try c.encode(common_item_ids, forKey: .common_item_ids)
        try c.encode(criterion, forKey: .criterion)
        try c.encode(criterion_direction, forKey: .criterion_direction)
        try c.encode(converged, forKey: .converged)
        try c.encode(iterations, forKey: .iterations)
        try c.encode(quadrature_points, forKey: .quadrature_points)
        try c.encode(theta_bound, forKey: .theta_bound)
        try c.encode(start, forKey: .start)
        try c.encode(mean_mean, forKey: .mean_mean)
        try c.encode(mean_sigma, forKey: .mean_sigma)
        try c.encode(n_old_items, forKey: .n_old_items)
        try c.encode(n_new_items, forKey: .n_new_items)
        try c.encode(n_linked_items, forKey: .n_linked_items)
        try c.encode(warnings, forKey: .warnings)
    }

    func json() throws -> String { try encodeJSON(self) }
}
