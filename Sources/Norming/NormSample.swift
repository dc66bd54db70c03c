import Foundation
import Psychometrics

/// A norm sample: per person an age, a θ (and optionally its SE), an optional weight, and categorical variables
/// (education, region, …) for raking to population margins.
///
/// A norm sample is a sample of the population the IQ refers to — every age the norms cover, drawn or weighted to
/// match the population on the variables that go with ability (education, region, sex, …). The θ are on the
/// scale of the calibrated bank.
package struct NormSample: Sendable, Hashable {
    package var ages: [Double]
    package var thetas: [Double]
    package var standardErrors: [Double]?
    package var weights: [Double]?
    /// Variable name → each person's category.
    package var variables: [String: [String]]

    /// The largest sample accepted: 10,000,000 persons (about 0.3 GB for ages, θ, SEs, weights and three short
    /// categorical variables; a fit's working arrays add about 0.5 GB at this size).
    package static let maximumCount = 10_000_000
    /// Ages allowed: finite, 0–130 years.
    package static let allowedAges = NumberRange.closed(0, 130)
    /// θ allowed: finite, −10 to 10 (SDs of the calibration population; IQ 100 ± 150).
    package static let allowedThetas = NumberRange.closed(-10, 10)
    /// Standard errors allowed: finite, > 0, at most 10.
    package static let allowedStandardErrors = NumberRange.aboveUpTo(0, 10)
    /// Weights allowed: finite, > 0, at most 1e12.
    package static let allowedWeights = NumberRange.aboveUpTo(0, 1e12)

    /// - Throws: `PsychometricsError.invalidOptions` naming the first person (1-based) with a value out of range,
    ///   or lengths that differ; `.resourceLimit` above `maximumCount`; `.insufficientData` when empty.
    package init(
        ages: [Double], thetas: [Double], standardErrors: [Double]? = nil, weights: [Double]? = nil,
        variables: [String: [String]] = [:]
    ) throws {
        let n = ages.count
        guard n > 0 else { throw PsychometricsError(.insufficientData, "the norm sample is empty") }
        guard n <= Self.maximumCount else {
            throw PsychometricsError(.resourceLimit, "the norm sample has \(n) persons; at most \(Self.maximumCount) are accepted")
        }
        var problems: [String] = []
        if thetas.count != n { problems.append("\(thetas.count) θ values for \(n) ages") }
        if let s = standardErrors, s.count != n { problems.append("\(s.count) standard errors for \(n) ages") }
        if let w = weights, w.count != n { problems.append("\(w.count) weights for \(n) ages") }
        for (name, values) in variables.sorted(by: { $0.key < $1.key }) where values.count != n {
            problems.append("variable '\(name)' has \(values.count) values for \(n) ages")
        }
        if problems.isEmpty {
            func first(_ values: [Double], _ range: NumberRange, _ what: String) {
                if let i = values.firstIndex(where: { !range.contains($0) }) {
                    problems.append("person \(i + 1): \(what) \(values[i]) is outside \(range.inequality(what))")
                }
            }
            first(ages, Self.allowedAges, "age")
            first(thetas, Self.allowedThetas, "θ")
            if let s = standardErrors { first(s, Self.allowedStandardErrors, "se") }
            if let w = weights { first(w, Self.allowedWeights, "weight") }
            for (name, values) in variables.sorted(by: { $0.key < $1.key }) {
                if let i = values.firstIndex(where: \.isEmpty) { problems.append("person \(i + 1): \(name) is empty") }
            }
        }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "norm sample: " + problems.joined(separator: "; ")) }
        self.ages = ages
        self.thetas = thetas
        self.standardErrors = standardErrors
        self.weights = weights
        self.variables = variables
    }

    package var count: Int { ages.count }
}
