import Foundation
import Psychometrics

/// How norms were built: continuous in age or in age bands.
package enum NormingMethod: String, Sendable, Hashable, Codable, CaseIterable {
    case continuous
    case bands
}

/// The NORMS.json document (`"format": "iqscore-norms/1"`): the norms, how they were built, from what sample, and
/// the checks made. Written by `iqscore norms build`, read back strictly by `NormsDocument.decode` (unknown keys,
/// wrong types and out-of-range values are errors naming the key); every number is written with the shortest
/// decimal that reads back to the same double, so a document round-trips exactly.
///
/// Keys (all present; `model` only for `continuous`, `bands` only for `bands`):
/// `format`, `name`, `version`, `method`, `created_by`, `ages` {`minimum`, `maximum`, `extrapolation`},
/// `sample` {`n`, `effective_n`, `sum_of_weights`, `design_effect`, `mean_standard_error`},
/// `weighting` {`method` ("raking", "given" or "none"), `converged`, `iterations`, `maximum_margin_error`,
/// `tolerance`, `trim_factor`, `trimmed`, `trim_rounds`, `largest_weight_ratio`, `design_effect`, `effective_n`,
/// `margins` [{`variable`, `category`, `target`, `achieved`, `sample`, `n`}]},
/// `model` {`family` "shash", `basis` "legendre", `degrees` {`mu`, `log_sigma`, `epsilon`, `log_delta`},
/// `coefficients` {`mu`, `log_sigma`, `epsilon`, `log_delta`}, `log_likelihood`, `converged`, `iterations`},
/// `bands` [{`age_minimum`, `age_maximum`, `n`, `effective_n`, `family`, `mu`, `sigma`, `epsilon`, `delta`}],
/// `criterion`, `criterion_table` [{`mu`, `log_sigma`, `epsilon`, `log_delta`, `parameters`, `log_likelihood`,
/// `value`, `converged`}], `percentile_check` {`ages`, `percentiles`, `crossings`, `minimum_gap`,
/// `minimum_gap_age`}, `warnings`.
package struct NormsDocument: Sendable, Hashable, Codable {
    /// The format this version writes and reads.
    package static let currentFormat = "iqscore-norms/1"

    package var format: String
    package var name: String
    package var version: String
    package var method: NormingMethod
    package var createdBy: String
    package var ages: AgeCoverage
    package var sample: SampleSummary
    package var weighting: WeightingSummary
    package var model: ContinuousModel?
    package var bands: [BandEntry]?
    package var criterion: InformationCriterion
    package var criterionTable: [CriterionRow]
    package var percentileCheck: PercentileCurveCheck
    package var warnings: [String]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, name, version, method, createdBy = "created_by", ages, sample, weighting, model, bands, criterion
        case criterionTable = "criterion_table", percentileCheck = "percentile_check", warnings
    }

    package struct AgeCoverage: Sendable, Hashable, Codable {
        package var minimum: Double
        package var maximum: Double
        /// Years beyond [minimum, maximum] within which the norms may be used (at the nearest covered age) unflagged.
        package var extrapolation: Double
    }

    package struct SampleSummary: Sendable, Hashable, Codable {
        package var n: Int
        package var effectiveN: Double
        package var sumOfWeights: Double
        package var designEffect: Double
        /// Mean SE of θ when the sample had them.
        package var meanStandardError: Double?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case n, effectiveN = "effective_n", sumOfWeights = "sum_of_weights", designEffect = "design_effect"
            case meanStandardError = "mean_standard_error"
        }
    }

    package struct WeightingSummary: Sendable, Hashable, Codable {
        /// "raking" (to margins, on given weights if any), "given" (a weight column) or "none".
        package var method: String
        package var converged: Bool?
        package var iterations: Int?
        package var maximumMarginError: Double?
        package var tolerance: Double?
        package var trimFactor: Double?
        package var trimmed: Int
        package var trimRounds: Int
        package var largestWeightRatio: Double
        package var designEffect: Double
        package var effectiveN: Double
        package var margins: [AchievedMargin]

        enum CodingKeys: String, CodingKey, CaseIterable {
            case method, converged, iterations, maximumMarginError = "maximum_margin_error", tolerance, trimFactor = "trim_factor"
            case trimmed, trimRounds = "trim_rounds", largestWeightRatio = "largest_weight_ratio", designEffect = "design_effect"
            case effectiveN = "effective_n", margins
        }

        package static let methods = ["raking", "given", "none"]
    }

    package struct Degrees: Sendable, Hashable, Codable {
        package var mu: Int
        package var logSigma: Int
        package var epsilon: Int?
        package var logDelta: Int?

        enum CodingKeys: String, CodingKey, CaseIterable { case mu, logSigma = "log_sigma", epsilon, logDelta = "log_delta" }
    }

    package struct Coefficients: Sendable, Hashable, Codable {
        package var mu: [Double]
        package var logSigma: [Double]
        package var epsilon: [Double]?
        package var logDelta: [Double]?

        enum CodingKeys: String, CodingKey, CaseIterable { case mu, logSigma = "log_sigma", epsilon, logDelta = "log_delta" }
    }

    package struct ContinuousModel: Sendable, Hashable, Codable {
        package var family: String
        package var basis: String
        package var degrees: Degrees
        package var coefficients: Coefficients
        package var logLikelihood: Double
        package var converged: Bool
        package var iterations: Int

        enum CodingKeys: String, CodingKey, CaseIterable {
            case family, basis, degrees, coefficients, logLikelihood = "log_likelihood", converged, iterations
        }
    }

    package struct BandEntry: Sendable, Hashable, Codable {
        package var ageMinimum: Double
        package var ageMaximum: Double
        package var n: Int
        package var effectiveN: Double
        /// "normal", "skewed" or "shash".
        package var family: String
        package var mu: Double
        package var sigma: Double
        package var epsilon: Double
        package var delta: Double

        enum CodingKeys: String, CodingKey, CaseIterable {
            case ageMinimum = "age_minimum", ageMaximum = "age_maximum", n, effectiveN = "effective_n", family, mu, sigma, epsilon, delta
        }

        package static let families = ["normal", "skewed", "shash"]
    }

    package struct CriterionRow: Sendable, Hashable, Codable {
        package var mu: Int
        package var logSigma: Int
        package var epsilon: Int?
        package var logDelta: Int?
        package var parameters: Int
        package var logLikelihood: Double
        package var value: Double
        package var converged: Bool

        enum CodingKeys: String, CodingKey, CaseIterable {
            case mu, logSigma = "log_sigma", epsilon, logDelta = "log_delta", parameters, logLikelihood = "log_likelihood", value, converged
        }
    }
}

// MARK: the strict reader's schema

extension NormsDocument: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var nestedJSONObjects: [String: any JSONObjectInput.Type] {
        [
            "ages": AgeCoverage.self, "sample": SampleSummary.self, "weighting": WeightingSummary.self, "model": ContinuousModel.self,
            "bands": BandEntry.self, "criterion_table": CriterionRow.self, "percentile_check": PercentileCurveCheck.self
        ]
    }
    package static let jsonDescription = "the norms document"
    package static let jsonExample = #"{"format": "iqscore-norms/1", "name": "adults", …} as `iqscore norms build` writes it"#
}

extension NormsDocument.AgeCoverage: JSONObjectInput {
    package static let jsonKeys = ["minimum", "maximum", "extrapolation"]
    package static let jsonDescription = "ages"
    package static let jsonExample = #"{"minimum": 16, "maximum": 90, "extrapolation": 0}"#
}

extension NormsDocument.SampleSummary: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var integerKeys: Set<String> { ["n"] }
    package static let jsonDescription = "sample"
    package static let jsonExample = #"{"n": 2000, "effective_n": 1800, …}"#
}

extension NormsDocument.WeightingSummary: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var integerKeys: Set<String> { ["iterations", "trimmed", "trim_rounds"] }
    package static var nestedJSONObjects: [String: any JSONObjectInput.Type] { ["margins": AchievedMargin.self] }
    package static let jsonDescription = "weighting"
    package static let jsonExample = #"{"method": "raking", …}"#
}

extension AchievedMargin: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var integerKeys: Set<String> { ["n"] }
    package static let jsonDescription = "a margin"
    package static let jsonExample = #"{"variable": "education", "category": "high", "target": 0.3, "achieved": 0.3, "sample": 0.45, "n": 900}"#
}

extension NormsDocument.ContinuousModel: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var integerKeys: Set<String> { ["iterations", "degrees"] }
    package static var nestedJSONObjects: [String: any JSONObjectInput.Type] {
        ["degrees": NormsDocument.Degrees.self, "coefficients": NormsDocument.Coefficients.self]
    }
    package static let jsonDescription = "model"
    package static let jsonExample = #"{"family": "shash", "basis": "legendre", …}"#
}

extension NormsDocument.Degrees: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var integerKeys: Set<String> { Set(jsonKeys) }
    package static let jsonDescription = "degrees"
    package static let jsonExample = #"{"mu": 3, "log_sigma": 1, "epsilon": 0, "log_delta": null}"#
}

extension NormsDocument.Coefficients: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static let jsonDescription = "coefficients"
    package static let jsonExample = #"{"mu": [0.1, -0.2], "log_sigma": [0], "epsilon": null, "log_delta": null}"#
}

extension NormsDocument.BandEntry: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var integerKeys: Set<String> { ["n"] }
    package static let jsonDescription = "a band"
    package static let jsonExample = #"{"age_minimum": 16, "age_maximum": 20, "n": 400, …}"#
}

extension NormsDocument.CriterionRow: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var integerKeys: Set<String> { ["mu", "log_sigma", "epsilon", "log_delta", "parameters"] }
    package static let jsonDescription = "a criterion table row"
    package static let jsonExample = #"{"mu": 3, "log_sigma": 1, "epsilon": null, "log_delta": null, "parameters": 6, …}"#
}

extension PercentileCurveCheck: JSONObjectInput {
    package static var jsonKeys: [String] { CodingKeys.allCases.map(\.rawValue) }
    package static var integerKeys: Set<String> { ["ages", "percentiles", "crossings"] }
    package static let jsonDescription = "percentile_check"
    package static let jsonExample = #"{"ages": 401, "percentiles": 99, "crossings": 0, "minimum_gap": 0.01, "minimum_gap_age": 90}"#
}
