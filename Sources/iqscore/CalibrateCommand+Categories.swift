import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

extension CalibrateCommand {
    /// The options a fit of items in more than two categories does not take, refused by name.
    func validateCategoryModel() throws {
        if guessingPrior != nil {
            throw ValidationError("--guessing-prior applies to --model 3pl; --model \(model) has no lower asymptote (--slope-prior applies to its graded and gpcm items)")
        }
        if fixedBankPath != nil {
            throw ValidationError("--fixed holds 0/1 items at their values; --model \(model) calibrates every item (online calibration of items in more than two categories is not built yet)")
        }
        if eStep == .dense {
            throw ValidationError("--e-step dense is the 0/1 engine's BLAS E-step; --model \(model) runs the sparse E-step over answered cells")
        }
    }

    /// Per-item models from the `model` column of `--items` (graded, gpcm, pcm, rsm or nominal; empty: `--model`).
    static func itemModels(_ metadata: ItemMetadata, file: String) throws -> [String: ItemModelKind] {
        guard metadata.columns.contains("model") else { return [:] }
        var models: [String: ItemModelKind] = [:], problems: [String] = []
        for (id, row) in metadata.values.sorted(by: { $0.key < $1.key }) {
            let text = (row["model"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            if text.isEmpty { continue }
            guard let kind = ItemModelKind(rawValue: text) else {
                problems.append("item '\(id)': model \(TextFidelity.quoted(text)) is not one of \(ItemModelKind.allCases.map(\.rawValue).joined(separator: ", ")) (0/1 items are fitted as 2PL by graded and gpcm, as Rasch by pcm)")
                continue
            }
            models[id] = kind
        }
        if !problems.isEmpty { throw InputError(file: file, message: problems.prefix(5).joined(separator: "; ") + (problems.count > 5 ? "; …" : "")) }
        return models
    }

    /// `calibrate --model graded|gpcm|pcm|rsm|nominal`: responses read as categories, `PolytomousCalibrator`, the bank
    /// (`ItemBank(calibration:metadata:)`) and its summary written as one set.
    func runCategoryModel(_ kind: ItemModelKind, bankWriter: AtomicFileWriter, manifestWriter: AtomicFileWriter?) throws -> Int32 {
        let options = try calibrationOptions()
        let readStart = Date()
        let metadata = try items.map { try ItemMetadata.load(csv: $0) }
        let perItem = try metadata.map { try Self.itemModels($0, file: items!) } ?? [:]
        var fileOptions = columns.fileOptions
        fileOptions.categoryResponses = true
        let (data, report) = try ResponseMatrix.load(csv: responses, options: fileOptions, maxMemoryBytes: maxMemory.bytes,
                                                     threads: threads ?? WorkerThreads.all)
        noteUnnamedIDColumn(report)
        let readSeconds = Date().timeIntervalSince(readStart)
        let status = TerminalStatusLine()
        let result = try PolytomousCalibrator(options: options).calibrate(data, model: kind, itemModels: perItem, progress: Self.progress(on: status))
        status.clear()
        let bank = try ItemBank(calibration: result, metadata: metadata)
        try bankWriter.write(bank.csv())
        try OutputSet.commit([("bank", bankWriter, bank.items.count)], manifest: manifestWriter) { entries in
            var summary = CategoryCalibrationSummary(result: result, model: kind, itemModels: perItem, report: report,
                                                     responsesPath: responses, bankPath: out, readSeconds: readSeconds, options: options)
            summary.outputs = entries
            return try encodeJSON(summary)
        }
        var lines = ["iqscore calibrate: \(kind.rawValue) on \(responses) (\(report.layout.rawValue) layout, \(formatCount(report.dataRows)) data rows)"]
        let counts = Dictionary(grouping: bank.items, by: \.modelName).map { "\($0.value.count) \($0.key)" }.sorted()
        lines.append("data: \(formatCount(result.personCount)) persons × \(result.items.count) items (\(counts.joined(separator: ", "))), \(formatCount(data.cellCount)) responses; categories per item \(Set(bank.items.map(\.categoryCount)).sorted().map(String.init).joined(separator: ", "))")
        let state = result.converged ? "converged in \(result.cycles) cycles" : "NOT CONVERGED after \(result.cycles) cycles"
        lines.append("\(state) (\(result.eSteps) E-steps, \(options.acceleration.rawValue)); read \(fixed(readSeconds, 2)) s, fit \(fixed(result.elapsedSeconds, 2)) s")
        if let prior = options.slopePrior { lines.append("slope prior: a ~ \(prior) on the graded and gpcm items (MAP item estimates)") }
        lines.append("log-likelihood \(fixed(result.logLikelihood, 2)), AIC \(fixed(result.aic, 2)), BIC \(fixed(result.bic, 2)) (\(result.parameterCount) parameters)")
        let rasch: Set<ItemModelKind> = [.partialCredit, .ratingScale]
        if rasch.contains(kind) || perItem.values.contains(where: rasch.contains) {
            lines.append("latent SD \(fixed(result.latentSD, 4))" + (result.latentSDStandardError.map { " (SE \(fixed($0, 4)))" } ?? ""))
        }
        if let scale = result.items.lazy.compactMap({ $0.item as? RatingScaleItem }).first {
            lines.append("rating-scale thresholds τ (shared; an rsm item's steps are its location + τ): "
                         + scale.thresholds.map { fixed($0, 4) }.joined(separator: ", "))
        }
        for warning in result.warnings.prefix(8) { lines.append("warning: \(warning)") }
        if result.warnings.count > 8 { lines.append("warning: … and \(result.warnings.count - 8) more (see the summary JSON)") }
        lines.append("wrote \(out) (\(bank.items.count) items)" + (manifestPath.map { " and \($0)" } ?? ""))
        printError(lines.joined(separator: "\n"))
        return result.converged ? ExitStatus.success : ExitStatus.notConverged
    }
}

/// The `--summary-json` document of a fit of items in more than two categories (the manifest of its run).
struct CategoryCalibrationSummary: Encodable {
    var manifest_version = 1
    var command = "calibrate"
    var iqscore_version = iqscoreVersion
    var outputs: [ManifestEntry] = []
    var model: String
    /// Items whose model the items file's `model` column set.
    var item_models: [String: String]
    var responses: String
    var bank: String
    var layout: String
    var n_persons: Int
    var n_items: Int
    var n_responses: Int
    var persons_without_responses: Int
    var excluded_items: [String]
    var log_likelihood: Double
    var aic: Double
    var bic: Double
    var n_parameters: Int
    var cycles: Int
    var acceleration: String
    var e_steps: Int
    var converged: Bool
    var tolerance: Double
    var max_cycles: Int
    var quadrature_points: Int
    var theta_bound: Double
    var latent_sd: Double
    var latent_sd_se: Double?
    var standard_errors: String
    /// The prior on the graded and gpcm items' slopes (`--slope-prior`), or "none".
    var priors: [String: String]
    var warnings: [String]
    var read_seconds: Double
    var fit_seconds: Double
    var elapsed_seconds: Double

    init(result: PolytomousCalibrationResult, model kind: ItemModelKind, itemModels: [String: ItemModelKind],
         report: ResponseFileReport, responsesPath: String, bankPath: String, readSeconds: Double, options: CalibrationOptions) {
        model = kind.rawValue
        item_models = itemModels.mapValues(\.rawValue)
        responses = responsesPath
        bank = bankPath
        layout = report.layout.rawValue
        n_persons = result.personCount
        n_items = result.items.count
        n_responses = result.items.reduce(0) { $0 + $1.responses }
        persons_without_responses = report.emptyPersons.count
        excluded_items = result.excludedItems
        log_likelihood = result.logLikelihood
        aic = result.aic
        bic = result.bic
        n_parameters = result.parameterCount
        cycles = result.cycles
        acceleration = options.acceleration.rawValue
        e_steps = result.eSteps
        converged = result.converged
        tolerance = options.tolerance
        max_cycles = options.maxCycles
        quadrature_points = options.quadraturePoints
        theta_bound = options.thetaBound
        latent_sd = result.latentSD
        latent_sd_se = result.latentSDStandardError
        standard_errors = !options.standardErrors ? "none (--no-se)"
            : result.items.contains(where: { $0.standardErrors.contains { $0 != nil } }) ? "observed information (Louis 1982), delta method to the IRT form" : "unavailable (see warnings)"
        priors = ["slope": options.slopePrior.map { "a ~ \($0) on graded and gpcm items" } ?? "none"]
        warnings = result.warnings
        read_seconds = readSeconds
        fit_seconds = result.elapsedSeconds
        elapsed_seconds = result.elapsedSeconds + readSeconds
    }
}
