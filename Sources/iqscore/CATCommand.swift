import ArgumentParser
import Assembly
import Foundation
import Psychometrics
import PsychometricsIO

/// `iqscore cat …`: adaptive testing.
struct CATCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat",
        abstract: "Computerized adaptive testing (CAT): simulation studies of adaptive rules on a bank.",
        subcommands: [CATSimulateCommand.self]
    )
}

struct CATSimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Simulate adaptive tests from a bank and report recovery, length, precision, exposure and overlap.",
        discussion: """
            CAT.json holds the rules (snake_case keys; only max_items is required): min_items, max_items, \
            se_target, min_per_domain (an integer, or {"domain": n, …}), domain_weights, randomesque, \
            a_stratification, selection (maximum_information, or progressive: a random part that fades as the \
            test gathers information, with progressive_acceleration t), exposure_target (Sympson–Hetter r_max, \
            default 0.25; null = none), \
            exposure_calibration_simulees, exposure_calibration_iterations, exposure_margin, estimator \
            (eap|map|ml|wle), prior_mean, prior_sd, quadrature_points. The bank needs a domain column.

            With an exposure_target the Sympson–Hetter parameters are calibrated first by simulation (simulees \
            θ ~ N(prior_mean, prior_sd²)), then the study runs --simulees tests with θ ~ N(--theta-mean, \
            --theta-sd²). The same --seed gives the same report (except elapsed_seconds) for any --threads. \
            --exposure FILE runs with parameters calibrated earlier (--exposure-out's file; also what \
            iqscore serve --exposure reads) instead of calibrating: how do stored parameters hold up on this \
            bank and these rules?

            REPORT.json has mean_length, rmse, bias, share_se_reached, max_exposure, mean_exposure, \
            overlap_rate, content_violations, stop_reasons, bins (conditional bias and RMSE by θ), \
            exposure_control (the calibration record) and more; a summary goes to stderr.

            A bifactor or testlet bank (calibrate --model bifactor|testlet): simulees are drawn from the bifactor \
            model (θ_g and each specific factor N(0, 1); --theta-mean/--theta-sd move θ_g), the CAT selects, \
            estimates and stops on the items' general-factor marginals (the rule iqscore serve uses: most \
            information about θ_g at the interim estimate, the specific factors integrated out), and each test \
            is scored at the end by the full model (the EAP of θ_g over every factor, as score and serve report \
            it): rmse, bias, mean_se are of that score, REPORT.json's "battery" holds those of the CAT's interim \
            marginal estimate. Sympson–Hetter parameters are calibrated on the marginal model. A correlated-factors \
            bank (calibrate --model correlated) is simulated the same way on its full-scale composite θ_FS: each \
            simulee's factors drawn from N(0, R) given its θ_FS, selection on the items' marginals on θ_FS, the \
            final score the full model's EAP of θ_FS ("battery": {"model": "correlated", …}).

            Example: iqscore cat simulate --bank bank.csv --config cat.json --simulees 10000 --seed 7 \
            --out cat_report.json

            Exit status: 0 done; 1 bad bank or configuration (named on stderr; nothing written); 64 usage error.
            """
    )

    @Option(help: "Item bank CSV with a domain column (as written by calibrate or simulate --bank-out).")
    var bank: String

    @Option(help: "CAT rules JSON.")
    var config: String

    @Option(help: "Number of simulated test takers, \(SimulationStudy.allowedSimulees.text).")
    var simulees = 1000

    @Option(help: "Random seed.")
    var seed: UInt64 = 1

    @Option(help: "Report JSON to write (atomically).")
    var out: String

    @Option(
        name: .customLong("exposure"),
        help: ArgumentHelp(
            "Run with these Sympson–Hetter parameters (item_id,k per bank item, as --exposure-out writes) instead of calibrating them; the configuration's exposure_target then only counts the items above it.",
            valueName: "file"))
    var exposure: String?

    @Option(
        name: .customLong("exposure-out"),
        help: "Also write the calibrated Sympson–Hetter parameters, item_id,k per bank item (read back by ExposureParameters.load(csv:bank:)).")
    var exposureOut: String?

    @Option(
        name: .customLong("theta-mean"),
        help: "Mean of the simulees' θ, in \(ResponseSimulator.allowedThetaMeans) (default: the bank's latent_mean, 0 on most banks).")
    var thetaMean: Double?

    @Option(
        name: .customLong("theta-sd"),
        help:
            "SD of the simulees' θ, in \(ResponseSimulator.allowedThetaSDs) (default: the bank's latent_sd, 1 on most banks; a Rasch bank's estimated SD)."
    )
    var thetaSD: Double?

    @Option(help: "Worker threads, 1…\(WorkerThreads.maximum) (default: all cores, at most \(WorkerThreads.maximum)); results do not depend on it.")
    var threads: Int?

    /// The study's settings as the library will run them on a bank with latent scale `latent` (the default θ
    /// distribution); every range is the library's (`SimulationStudy`).
    func studyOptions(_ latent: LatentScale = .standard) -> CATSimulation.Options {
        var options = CATSimulation.Options(simulees: simulees, seed: seed)
        options.thetaMean = thetaMean ?? latent.mean
        options.thetaSD = thetaSD ?? latent.sd
        options.threads = threads ?? WorkerThreads.all
        return options
    }

    @OptionGroup var bankModel: BankModelOption

    func validate() throws {
        try throwIfAny(studyOptions().validationProblems(naming: .option))
        if exposure != nil, exposureOut != nil {
            throw ValidationError(
                "--exposure and --exposure-out exclude each other: given parameters are not calibrated, so there is nothing new to write")
        }
    }

    func run() throws {
        try runReportingErrors {
            try prepareOutputs(
                inputs: [("--bank", bank), ("--config", config)] + given("--exposure", exposure),
                outputs: [("--out", out)] + given("--exposure-out", exposureOut))
            let configuration = try CATConfiguration.load(json: config)
            let battery = try loadCATBattery()
            let assemblyBank = try AssemblyBank(bank: battery?.bank ?? loadBank(bank, categoryItems: bankModel.reading))
            let pool: CATItemPool
            do {
                pool = try CATItemPool(bank: assemblyBank, configuration: configuration)
            } catch let error as AssemblyError where error.code == .invalidConfiguration {
                throw InputError(file: config, message: error.description)
            }
            let options = studyOptions(assemblyBank.latentScale)
            let simulated = battery.map { file -> CATSimulation.Battery in
                let position = Dictionary(uniqueKeysWithValues: file.bank.items.enumerated().map { ($1.itemID, $0) })
                let poolItem = assemblyBank.items.map { position[$0.id]! }
                switch file.battery.model {
                case .bifactor(let scorer): return CATSimulation.Battery(scorer: scorer, poolItem: poolItem)
                case .correlated(let scorer): return CATSimulation.Battery(correlated: scorer, poolItem: poolItem)
                }
            }
            let calibration: SympsonHetter?
            var report: CATSimulationReport
            if let exposure {
                calibration = nil
                report = try CATSimulation.run(
                    pool: pool, given: ExposureParameters.load(csv: exposure, bank: assemblyBank), options: options, battery: simulated)
                report.exposureControl?.source = exposure
            } else {
                calibration = try pool.configuration.exposureTarget.map { _ in
                    try SympsonHetter.calibrate(pool: pool, seed: seed, threads: options.threads)
                }
                report = try CATSimulation.run(pool: pool, exposure: calibration, options: options, battery: simulated)
            }
            try writeAtomically(try report.json(), to: out)
            if let exposureOut, let calibration {
                var text = "item_id,k\n"
                for (item, k) in zip(assemblyBank.items, calibration.parameters.probabilities) {
                    text += "\(csvField(item.id)),\(String(format: "%.6f", k))\n"
                }
                try writeAtomically(text, to: exposureOut)
            }
            for line in summary(report, calibration, pool.configuration, pool) { printError(line) }
            if let note = pool.exposureTargetNote { printError("note: " + note) }
            var written = [out]
            if let exposureOut {
                if calibration != nil {
                    written.append(exposureOut)
                } else {
                    printError("note: no exposure_target, so \(exposureOut) was not written")
                }
            }
            printError("wrote " + written.joined(separator: ", "))
            return ExitStatus.success
        }
    }

    private func summary(_ r: CATSimulationReport, _ calibration: SympsonHetter?, _ c: CATConfiguration, _ pool: CATItemPool) -> [String] {
        func percent(_ x: Double) -> String { fixed(100 * x, 1) + "%" }
        var lines: [String] = []
        lines.append(
            "iqscore cat simulate: \(formatCount(r.simulees)) simulees on \(bank) (\(formatCount(r.bankItems)) items, \(r.eligibleItems == r.bankItems ? "" : "\(formatCount(r.eligibleItems)) active, ")\(r.domains.count) domain\(r.domains.count == 1 ? "" : "s")), seed \(seed)"
        )
        var rules = ["\(c.minItems)–\(c.maxItems) items"]
        if let se = c.seTarget { rules.append("SE ≤ \(se.formatted6)") }
        switch c.minPerDomain {
        case .all(let n) where n > 0: rules.append("at least \(n) per domain")
        case .perDomain(let map) where !map.isEmpty:
            rules.append("domain minima " + map.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        default: break
        }
        if c.domainWeights != nil { rules.append("domain weights") }
        rules.append(c.randomesque > 1 ? "randomesque \(c.randomesque)" : "maximum information")
        if let k = c.aStratification, k > 1 { rules.append("\(k) a-strata") }
        rules.append(
            exposure != nil
                ? "given Sympson–Hetter parameters" : c.exposureTarget.map { "Sympson–Hetter r_max \($0.formatted6)" } ?? "no exposure control")
        rules.append(c.estimator.rawValue.uppercased())
        lines.append("rules: " + rules.joined(separator: ", "))
        if let calibration {
            let last = calibration.rounds.last!
            let status =
                calibration.converged
                ? "converged in \(calibration.rounds.count) round\(calibration.rounds.count == 1 ? "" : "s")"
                : "did not converge in \(calibration.rounds.count) rounds (last max exposure \(fixed(last.maxExposure, 3)))"
            lines.append(
                "exposure control: \(status) of \(formatCount(calibration.simulees)) simulees (\(fixed(calibration.elapsedSeconds, 1)) s); \(calibration.parameters.controlledCount) items controlled, smallest K \(fixed(calibration.parameters.probabilities.min() ?? 1, 3))"
            )
            if !calibration.converged {
                lines.append("warning: Sympson–Hetter calibration did not converge; raise exposure_calibration_iterations or exposure_margin")
            }
        } else if let given = r.exposureControl {
            lines.append(
                "exposure control: Sympson–Hetter parameters from \(given.source ?? "the caller") (not calibrated); \(given.controlledItems) items controlled, smallest K \(fixed(given.minParameter, 3))"
            )
        }
        let reasons = AdaptiveSession.StopReason.allCases.compactMap { reason -> String? in
            let n = r.stopReasons[reason.rawValue] ?? 0
            return n > 0 ? "\(reason.rawValue) \(formatCount(n))" : nil
        }
        lines.append(
            "length: mean \(fixed(r.meanLength, 2)) (\(r.minLength)–\(r.maxLength))"
                + (r.figures.shareSEReached.map { "; SE target reached by \(percent($0))" } ?? "") + "; stopped: " + reasons.joined(separator: ", "))
        if let b = r.battery {
            let target: String
            if b.model == "correlated" {
                target = "θ_FS"
                lines.append(
                    "correlated-factors bank (\(b.specificFactors) factors): selection and stopping on the items' marginals on the full-scale composite θ_FS; the final score the full model's EAP of θ_FS"
                )
            } else {
                target = "θ_g"
                lines.append(
                    "bifactor bank (\(b.specificFactors) specific factors): selection and stopping on the general-factor marginal items; the final score the full model's EAP of θ_g (\(b.quadraturePoints)×\(b.quadraturePoints) points per factor)"
                )
            }
            lines.append(
                "recovery of \(target), final score: bias \(fixed(r.figures.bias, 3)), RMSE \(fixed(r.figures.rmse, 3)), mean SE \(fixed(r.figures.meanSE, 3)), r(θ, θ̂) \(fixed(r.figures.correlation, 3))"
            )
            lines.append(
                "recovery of \(target), the CAT's marginal estimate: bias \(fixed(b.marginalBias, 3)), RMSE \(fixed(b.marginalRMSE, 3)), mean SE \(fixed(b.marginalMeanSE, 3)), r(θ, θ̂) \(fixed(b.marginalCorrelation, 3))"
            )
        } else {
            lines.append(
                "recovery: bias \(fixed(r.figures.bias, 3)), RMSE \(fixed(r.figures.rmse, 3)), mean SE \(fixed(r.figures.meanSE, 3)), r(θ, θ̂) \(fixed(r.figures.correlation, 3))"
            )
        }
        lines.append(
            "exposure: max \(fixed(r.figures.maxExposure, 3)), mean \(fixed(r.figures.meanExposure, 4)), \(formatCount(r.figures.itemsNeverAdministered)) items never used; overlap rate \(fixed(r.figures.overlapRate, 3)); content violations \(formatCount(r.contentViolations))"
        )
        lines.append("simulated in \(fixed(r.elapsedSeconds, 2)) s (\(formatCount(r.steps)) steps, \(r.threads) thread\(r.threads == 1 ? "" : "s"))")
        return lines
    }
}

extension CATSimulateCommand {
    /// The battery bank of `--bank` (bifactor, testlet or correlated factors; nil for a unidimensional one), read
    /// as `score` reads it (`BatteryBank.load`, 31 points per factor for a grid).
    func loadCATBattery() throws -> BatteryBank? {
        guard BifactorBank.isMultidimensional(csv: bank) else { return nil }
        if bankModel.bankModel != nil {
            throw ValidationError("\(bank) is a multidimensional (battery) bank; cat simulate does not take --bank-model (its items are 2pl or 3pl)")
        }
        let file = try BatteryBank.load(csv: bank, quadraturePoints: nil, bound: 6)
        if file.layout != "iqscore" { printError("note: \(bank): read as \(file.layout)") }
        return file
    }
}
