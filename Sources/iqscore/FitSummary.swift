import Foundation
import Psychometrics
import PsychometricsIO

/// What every calibration's result gives its summary and its stderr lines: the marginal log-likelihood, the
/// information criteria, the EM run, the persons, the warnings and the fit's time (the 0/1, category, bifactor,
/// correlated-factors and multiple-group fits).
protocol CalibrationFitStatistics {
    var logLikelihood: Double { get }
    var aic: Double { get }
    var bic: Double { get }
    var parameterCount: Int { get }
    var cycles: Int { get }
    var eSteps: Int { get }
    var converged: Bool { get }
    var personCount: Int { get }
    var warnings: [String] { get }
    var elapsedSeconds: Double { get }
}

extension CalibrationResult: CalibrationFitStatistics {}
extension PolytomousCalibrationResult: CalibrationFitStatistics {}
extension BifactorCalibrationResult: CalibrationFitStatistics {}
extension CorrelatedFactorsResult: CalibrationFitStatistics {}
extension MultipleGroupResult: CalibrationFitStatistics {}

extension CalibrationFitStatistics {
    /// "converged in N cycles" or "NOT CONVERGED after N cycles", as the stderr summaries say it.
    var convergenceText: String { converged ? "converged in \(cycles) cycles" : "NOT CONVERGED after \(cycles) cycles" }

    /// The stderr line "log-likelihood L, AIC A, BIC B (k parameters)", L to `decimals` places, AIC and BIC to 2.
    func fitLine(logLikelihoodDecimals decimals: Int) -> String {
        "log-likelihood \(fixed(logLikelihood, decimals)), AIC \(fixed(aic, 2)), BIC \(fixed(bic, 2)) (\(parameterCount) parameters)"
    }
}

/// The keys every calibration's `--summary-json` document has: the manifest's header and outputs, the files, the
/// fit (`CalibrationFitStatistics`), the EM's settings and the times, and, where a fit had them, its starts
/// (`--starts`) and the bank it held items of (`--fixed`). `FitSummary` writes them into one JSON object with the
/// fit's own keys; nil ones are left out, as in the synthesised encoding.
struct FitSummaryCommon: Encodable {
    var manifest_version = 1
    var command = "calibrate"
    var iqscore_version = iqscoreVersion
    /// The outputs of the run (the bank) with rows, bytes and CRC-32: the summary is the run's manifest.
    var outputs: [ManifestEntry] = []
    var model: String
    var responses: String
    var bank: String
    var layout: String
    var n_persons: Int
    var log_likelihood: Double
    var aic: Double
    var bic: Double
    var n_parameters: Int
    var cycles: Int
    var e_steps: Int
    var converged: Bool
    var tolerance: Double
    /// The EM's cycle limit and acceleration (squarem or none); nil (absent) in a multiple-group fit's summary.
    var max_cycles: Int?
    var acceleration: String?
    var warnings: [String]
    var read_seconds: Double
    var fit_seconds: Double
    /// Every start's run (with --starts).
    var starts: [StartRecord]?
    /// Online calibration (`--fixed`): the bank, its items held, and those not in the data.
    var fixed_bank: String?
    var fixed_items: [String]?
    var fixed_items_not_in_data: [String]?

    /// The keys of a fit of `responses` (read in `readSeconds`) written to `bank`, under `options`.
    init(
        model: String, fit: some CalibrationFitStatistics, responses: String, bank: String, layout: String, options: CalibrationOptions,
        readSeconds: Double
    ) {
        self.model = model
        self.responses = responses
        self.bank = bank
        self.layout = layout
        n_persons = fit.personCount
        log_likelihood = fit.logLikelihood
        aic = fit.aic
        bic = fit.bic
        n_parameters = fit.parameterCount
        cycles = fit.cycles
        e_steps = fit.eSteps
        converged = fit.converged
        tolerance = options.tolerance
        max_cycles = options.maxCycles
        acceleration = options.acceleration.rawValue
        warnings = fit.warnings
        read_seconds = readSeconds
        fit_seconds = fit.elapsedSeconds
    }

    /// With `--fixed` (`bank` not nil): the bank, the items held at its values and its items not in the data;
    /// without, nothing.
    mutating func setFixed(bank: String?, items: [String], notInData: [String]) {
        guard let bank else { return }
        fixed_bank = bank
        fixed_items = items
        fixed_items_not_in_data = notInData
    }
}

/// A calibration's `--summary-json` document: the keys every fit has (`common`) and the fit's own (`fit`, whose
/// keys are none of `common`'s), in one JSON object.
struct FitSummary<Fit: Encodable>: Encodable {
    var common: FitSummaryCommon
    var fit: Fit

    /// Both into the encoder's one keyed container: a second `container(keyedBy:)` at the same level is the first
    /// one, so the keys sit side by side (and `encodeJSON` sorts them).
    func encode(to encoder: any Encoder) throws {
        try common.encode(to: encoder)
        try fit.encode(to: encoder)
    }

    /// The document as `encodeJSON` writes it.
    func json() throws -> String { try encodeJSON(self) }
}

extension CalibrateCommand {
    /// The common keys of this run's summary: `fit` of the responses file (read in `readSeconds`, its layout from
    /// `report`) under `options`, the bank written to `--out`, and every start's run when there were several.
    func summaryCommon(
        model: String, fit: some CalibrationFitStatistics, options: CalibrationOptions, report: ResponseFileReport, readSeconds: Double,
        starts: [StartRecord] = []
    ) -> FitSummaryCommon {
        var common = FitSummaryCommon(
            model: model, fit: fit, responses: responses, bank: out, layout: report.layout.rawValue, options: options, readSeconds: readSeconds)
        if starts.count > 1 { common.starts = starts }
        return common
    }
}
