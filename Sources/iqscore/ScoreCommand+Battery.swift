import ArgumentParser
import Foundation
import Psychometrics
import PsychometricsIO

/// `--indexes auto|all|none|NAME,…` (`score`, `serve`).
extension IndexReporting: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.trimmingCharacters(in: .whitespaces) {
        case "auto": self = .addingValue
        case "all": self = .all
        case "none": self = .none
        case let list:
            let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !names.isEmpty, !names.contains(where: \.isEmpty) else { return nil }
            self = .named(names)
        }
    }

    public var defaultValueDescription: String { "auto" }

    /// The value as given on the command line.
    var argument: String {
        switch self {
        case .addingValue: "auto"
        case .all: "all"
        case .none: "none"
        case .named(let names): names.joined(separator: ",")
        }
    }
}

/// `--indexes`, which `score` and `serve` share: the domain indexes a battery bank's scores carry.
struct IndexSelection: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "On a battery (bifactor or correlated) bank: the domain indexes each score carries — auto (those that add value over the full-scale score by Haberman's criterion), all, none, or a comma list of domains.",
            valueName: "which"))
    var indexes: IndexReporting = .addingValue
}

/// A battery bank (bifactor, testlet or correlated factors) as `score` uses it: the battery, its unidimensional
/// view and the added value of its indexes.
struct ScoringBattery {
    var battery: Battery
    var bank: ItemBank
    var layout: String
    var addedValue: [IndexAddedValue]
    /// `--index-norms`: each normed index's norms label (the others on the calibration population).
    var indexNorms: [String: String] = [:]
}

extension ScoreCommand {
    /// The battery of a multidimensional `--bank` (bifactor, testlet or correlated factors; nil for a
    /// unidimensional one), its indexes chosen by `--indexes`; the options a battery does not take refused.
    func loadBattery() throws -> ScoringBattery? {
        guard BifactorBank.isMultidimensional(csv: bank) else { return nil }
        var refused: [String] = []
        if method != .eap && method != .map { refused.append("--method \(method.rawValue) (a battery is scored by EAP or MAP on its factors)") }
        if scoring.priorMean != nil || scoring.priorSD != nil { refused.append("--prior-mean/--prior-sd (the factors' distribution is the model's)") }
        if bankModel.bankModel != nil { refused.append("--bank-model (a battery's items are 2pl or 3pl)") }
        if let q = scoring.quadraturePoints,
            let problem = BifactorScorer.allowedPointCounts.problem(q, "--quadrature-points on a battery bank (points per factor)")
        {
            refused.append(problem)
        }
        if !refused.isEmpty {
            throw ValidationError("\(bank) is a multidimensional (battery) bank; it does not take " + refused.joined(separator: "; "))
        }
        let file = try BatteryBank.load(csv: bank, quadraturePoints: scoring.quadraturePoints, bound: scoring.thetaBound)
        if file.layout != "iqscore" { printError("note: \(bank): read as \(file.layout)") }
        let battery = file.battery, items = battery.itemCount
        if let k = indexFormLength, !(1...items).contains(k) {
            throw ValidationError("--index-form-length must be 1…\(items) (the bank's items), got \(k)")
        }
        if indexSelection.indexes == .addingValue && indexFormLength == nil && items > Battery.maximumFixedFormItems {
            throw ValidationError(
                "\(bank) has \(items) items, a pool tests are drawn from rather than one form: for --indexes auto give --index-form-length (the items a test draws), or name the indexes (--indexes all or a list)"
            )
        }
        let addedValue = try battery.addedValue(formLength: indexFormLength)
        return ScoringBattery(
            battery: try battery.reporting(indexSelection.indexes, addedValue: addedValue), bank: file.bank, layout: file.layout,
            addedValue: addedValue)
    }

    /// The summary's lines on a battery: the model, each index's added value and what is reported.
    func batteryLines(_ b: ScoringBattery) -> [String] {
        let structure = b.battery.structure
        let estimator = method == .map ? "MAP, from the EAP on" : "EAP,"
        let integration = "\(estimator) \(b.battery.integrationDescription) on [-\(scoring.thetaBound.formatted6), \(scoring.thetaBound.formatted6)]"
        var lines: [String]
        if case .correlated(let scorer) = b.battery.model {
            lines = [
                "correlated-factors bank (\(scorer.factorCount) factors): full-scale θ = their equally weighted composite w·Σθ_f, w = 1/√(1ᵀR1) = \(fixed(scorer.compositeWeight, 4)) "
                    + "(\(integration)); a domain's index = its factor θ_f, IQ 100 + 15·index on the calibration population"
            ]
        } else {
            lines = [
                "bifactor bank: full-scale θ = the general factor '\(structure.generalFactor)' (\(integration)); "
                    + "a domain's index = its reference composite w_g·θ_g + w_s·θ_s (Reckase 2009; DeMars 2013), IQ 100 + 15·index on the calibration population"
            ]
        }
        if !b.addedValue.isEmpty {
            let form = indexFormLength.map { "tests of \($0) items drawn from the bank" } ?? "the bank as one form"
            lines.append(
                "added value (Haberman 2008: PRMSE of the true index from the domain's items alone vs from the full-scale score; \(form), \(formatCount(IndexAddedValue.defaultSimulees)) simulees):"
            )
            for v in b.addedValue {
                lines.append(
                    "  \(v.factor): \(v.items) items, PRMSE sub \(fixed(v.subscore, 3)), total \(fixed(v.total, 3)), augmented \(fixed(v.augmented, 3)) (±\(fixed(v.monteCarloError, 3))): "
                        + (v.hasAddedValue ? "adds value" : "no added value"))
            }
        }
        let names = b.battery.reportedNames
        let indexes = indexSelection.indexes
        let rule = indexes == .addingValue ? "those that add value" : "as asked"
        lines.append("indexes reported: " + (names.isEmpty ? "none" : names.joined(separator: ", ")) + " — \(rule) (--indexes \(indexes.argument))")
        if !b.indexNorms.isEmpty {
            lines.append("index norms: " + names.map { "\($0) \(b.indexNorms[$0] ?? "calibration population")" }.joined(separator: ", "))
        }
        return lines
    }
}

/// The battery in `score`'s manifest.
struct BatterySummary: Encodable {
    /// "bifactor" or "correlated".
    var model: String
    /// The full-scale factor: a bifactor bank's general factor, a correlated bank's composite.
    var general_factor: String
    /// The index factors.
    var specific_factors: [String]
    var bank_layout: String
    /// Points per factor of the grid (nil: quasi–Monte Carlo, `integration`).
    var quadrature_points: Int?
    var integration: String
    var full_scale_definition: String
    var index_definition: String
    var indexes_reported: [String]
    var index_selection: String
    /// Items per test the added value was computed for (the bank's size: one fixed form).
    var index_form_length: Int
    var added_value: [AddedValue]
    /// Per reported index, the norms its IQ is on (`--index-norms`, else the calibration population).
    var index_norms: [String: String]

    struct AddedValue: Encodable {
        var factor: String
        var items: Int
        var prmse_subscore: Double
        var prmse_total: Double
        var prmse_augmented: Double
        var monte_carlo_error: Double
        var adds_value: Bool
        var general_weight: Double
        var specific_weight: Double
    }

    init(_ b: ScoringBattery, selection: IndexReporting) {
        let structure = b.battery.structure
        if case .correlated(let scorer) = b.battery.model {
            model = "correlated"
            full_scale_definition =
                "equally weighted composite of the factors, w·Σθ_f with w = 1/√(1ᵀR1) = \(fixed(scorer.compositeWeight, 6)), N(0, 1) in the calibration population"
            index_definition = "the domain's factor θ_f, N(0, 1) in the calibration population"
        } else {
            model = "bifactor"
            full_scale_definition = "the general factor θ_g"
            index_definition =
                "reference composite w_g·θ_g + w_s·θ_s of the domain's slopes (Reckase 2009; DeMars 2013), N(0, 1) in the calibration population"
        }
        general_factor = structure.generalFactor
        specific_factors = structure.specificFactors
        bank_layout = b.layout
        integration = b.battery.integrationDescription
        quadrature_points = b.battery.quadraturePoints
        indexes_reported = b.battery.reportedNames
        index_selection = selection.argument
        index_form_length = b.addedValue.first?.formLength ?? b.battery.itemCount
        index_norms = Dictionary(uniqueKeysWithValues: b.battery.reportedNames.map { ($0, b.indexNorms[$0] ?? "calibration population") })
        added_value = b.addedValue.map { v in
            let composite = b.battery.composites.first { structure.specificFactors[$0.factor] == v.factor }
            return AddedValue(
                factor: v.factor, items: v.items, prmse_subscore: v.subscore, prmse_total: v.total, prmse_augmented: v.augmented,
                monte_carlo_error: v.monteCarloError, adds_value: v.hasAddedValue,
                general_weight: composite?.generalWeight ?? 0, specific_weight: composite?.specificWeight ?? 0)
        }
    }
}
