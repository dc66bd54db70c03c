import ArgumentParser
import Foundation
import Integrity
import Psychometrics
import PsychometricsIO

extension CalibrateCommand {
    /// `--time-column`/`--time-suffix` go with the unidimensional 0/1 models, on one group, all items free.
    func validateTimes() throws {
        if excludeRapidGuesses && !times.isSet { throw ValidationError("--exclude-rapid-guesses goes with --time-column or --time-suffix") }
        guard times.isSet else { return }
        guard let m = model.dichotomous, m != .rasch else {
            throw ValidationError(
                "--time-column and --time-suffix calibrate the response times with --model 1pl, 2pl or 3pl (the speed-accuracy model's ability is N(0, 1)), not --model \(model)"
            )
        }
        if excludeRapidGuesses && !times.isSet { throw ValidationError("--exclude-rapid-guesses goes with --time-column or --time-suffix") }
        if groupSource != nil || fixedBankPath != nil {
            throw ValidationError(
                "--time-column and --time-suffix calibrate one group with every item free: leave out \(fixedBankPath != nil ? "--fixed" : "--group-column/--group-file")"
            )
        }
    }

    /// The joint calibration of responses and times (`SpeedAccuracyCalibrator`): the bank with each item's time
    /// intensity and discrimination and the speed population, the summary with the speed-accuracy section.
    func runSpeedAccuracy(bankWriter: AtomicFileWriter, manifestWriter: AtomicFileWriter?) throws -> Int32 {
        var options = try calibrationOptions()
        let readStart = Date()
        let metadata = try items.map { try ItemMetadata.load(csv: $0) }
        if guessingPrior == "options", let metadata, let path = items { options.itemGuessingPriors = try Self.optionPriors(metadata, file: path) }
        var (data, report) = try ResponseMatrix.load(
            csv: responses, options: times.applied(to: columns.fileOptions), maxMemoryBytes: maxMemory.bytes,
            threads: threads ?? WorkerThreads.all)
        noteUnnamedIDColumn(report)
        var removed = 0
        if excludeRapidGuesses {
            let kept = RapidGuessThresholds.normative(matrix: data, times: report.times!).removingRapidGuesses(from: data, times: report.times!)
            (data, removed) = (kept.matrix, kept.removed)
            report.times = kept.times
        }
        let readSeconds = Date().timeIntervalSince(readStart)
        let status = TerminalStatusLine()
        let result = try SpeedAccuracyCalibrator(options: options).calibrate(data, times: report.times!, progress: Self.progress(on: status))
        status.clear()
        let bank = ItemBank(speedAccuracy: result, metadata: metadata)
        try bankWriter.write(bank.csv())
        try OutputSet.commit([("bank", bankWriter, bank.items.count)], manifest: manifestWriter) { entries in
            var summary = calibrationSummary(result: result.irt, report: report, readSeconds: readSeconds)
            summary.fit.response_times = ResponseTimeSummary(result: result, report: report)
            summary.fit.response_times?.rapid_guesses_removed = excludeRapidGuesses ? removed : nil
            summary.fit.elapsed_seconds = result.elapsedSeconds + readSeconds
            summary.common.outputs = entries
            return try summary.json()
        }
        var lines = [humanSummary(result: result.irt, report: report, readSeconds: readSeconds, bankItems: bank.items.count)]
        let tail = lines[0].components(separatedBy: "\n").filter { $0.hasPrefix("warning:") || $0.hasPrefix("wrote ") }
        lines = lines[0].components(separatedBy: "\n").filter { !$0.hasPrefix("warning:") && !$0.hasPrefix("wrote ") }
        let p = result.population
        lines.append(
            "response times: \(formatCount(result.timedResponses)) timed responses"
                + (excludeRapidGuesses ? "; \(formatCount(removed)) rapid guesses (below NT10) left out" : "")
                + (report.droppedTimes > 0
                    ? "; \(formatCount(report.droppedTimes)) times of 0 or more than a day dropped (first on line \(report.firstDroppedTimeLine!))"
                    : ""))
        lines.append(
            "speed-accuracy model (van der Linden 2007): speed SD \(fixed(p.speedSD, 4))"
                + (result.speedSDStandardError.map { " (SE \(fixed($0, 4)))" } ?? "")
                + ", ability-speed correlation \(fixed(p.correlation, 4))" + (result.correlationStandardError.map { " (SE \(fixed($0, 4)))" } ?? ""))
        let timed = result.timeItems.compactMap(\.parameters)
        if !timed.isEmpty {
            lines.append(
                "time intensity β: \(fixed(timed.map(\.timeIntensity).min()!, 3)) … \(fixed(timed.map(\.timeIntensity).max()!, 3)) (median times \(fixed(exp(timed.map(\.timeIntensity).min()!), 1)) … \(fixed(exp(timed.map(\.timeIntensity).max()!), 1)) s), time discrimination α: \(fixed(timed.map(\.timeDiscrimination).min()!, 3)) … \(fixed(timed.map(\.timeDiscrimination).max()!, 3))"
            )
        }
        lines.append(
            "joint log-likelihood \(fixed(result.logLikelihood, 2)) (responses alone \(fixed(result.responseOnlyLogLikelihood, 2))); the times shrink θ's posterior SD by \(fixed(100 * (1 - result.collateralSDRatio), 1))% on average"
        )
        let warnings = result.warnings.filter { w in !result.irt.warnings.contains(w) }
        lines += warnings.prefix(8).map { "warning: \($0)" } + tail
        printError(lines.joined(separator: "\n"))
        return result.converged ? ExitStatus.success : ExitStatus.notConverged
    }
}

/// The summary JSON's `response_times` section of a joint calibration.
struct ResponseTimeSummary: Encodable {
    var model = "lognormal (van der Linden 2006) with a bivariate normal ability-speed population (van der Linden 2007)"
    var timed_responses: Int
    var dropped_times: Int
    var first_dropped_time_line: Int?
    var speed_sd: Double
    var speed_sd_se: Double?
    var correlation: Double
    var correlation_se: Double?
    var joint_log_likelihood: Double
    var responses_only_log_likelihood: Double
    /// Mean posterior SD of θ with times over without.
    var theta_sd_ratio: Double
    var items_without_time_model: [String]
    var standard_errors: String
    /// With --exclude-rapid-guesses: responses left out as rapid guesses.
    var rapid_guesses_removed: Int?

    init(result: SpeedAccuracyResult, report: ResponseFileReport) {
        timed_responses = result.timedResponses
        dropped_times = report.droppedTimes
        first_dropped_time_line = report.firstDroppedTimeLine
        speed_sd = result.population.speedSD
        speed_sd_se = result.speedSDStandardError
        correlation = result.population.correlation
        correlation_se = result.correlationStandardError
        joint_log_likelihood = result.logLikelihood
        responses_only_log_likelihood = result.responseOnlyLogLikelihood
        theta_sd_ratio = result.collateralSDRatio
        items_without_time_model = result.timeItems.filter { $0.parameters == nil }.map(\.itemID)
        standard_errors = result.standardErrorMethod
    }
}
