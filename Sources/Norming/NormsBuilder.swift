import Foundation
import Psychometrics

/// What `NormsBuilder.build` makes and how.
package struct NormsBuildOptions: Sendable, Hashable {
    package var name: String
    package var version: String
    package var method = NormingMethod.continuous
    /// Years beyond the covered ages within which the norms may be used unflagged (default 0).
    package var extrapolation = 0.0
    package var raking = RakingOptions()
    package var continuous = ContinuousNormsOptions()
    package var bands = BandNormsOptions()
    /// Recorded as `created_by`.
    package var createdBy = "iqscore \(iqscoreVersion)"

    package init(name: String, version: String) {
        self.name = name
        self.version = version
    }

    /// Extrapolation margins allowed: 0–130 years.
    package static let allowedExtrapolation = NumberRange.closed(0, 130)

    package func validationProblems() -> [String] {
        var problems: [String] = []
        if name.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("norms need a name") }
        if version.trimmingCharacters(in: .whitespaces).isEmpty { problems.append("norms need a version") }
        if let p = Self.allowedExtrapolation.problem(extrapolation, "the extrapolation margin") { problems.append(p) }
        return problems + raking.validationProblems() + continuous.validationProblems() + bands.validationProblems()
    }
}

/// A built norm: the document, the final weights, and what a report shows beside it.
package struct NormsBuild: Sendable {
    package var document: NormsDocument
    package var norms: AgeNorms
    /// Each person's final weight (raked, given, or 1), summing to n (raking and given weights are rescaled).
    package var weights: [Double]
    package var raking: RakingResult?
    /// Whether raking and the fit converged (a build that did not is still written, with warnings).
    package var converged: Bool
}

/// Builds norms from a norm sample: weights (raked to margins, given, or equal), then continuous or banded norms,
/// the checks, and the NORMS.json document.
package enum NormsBuilder {
    /// - Parameters: margins: population margins to rake to (on top of the sample's weights, if any).
    /// - Throws: `PsychometricsError` for invalid options, margins that do not fit the sample, or a sample that
    ///   cannot support a fit.
    package static func build(_ sample: NormSample, margins: RakingTargets?, options: NormsBuildOptions) throws -> NormsBuild {
        let problems = options.validationProblems()
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, problems.joined(separator: "; ")) }
        let n = sample.count
        var weights = sample.weights ?? [Double](repeating: 1, count: n)
        var raking: RakingResult?
        var warnings: [String] = []
        var converged = true
        if let margins {
            let result = try Raking.rake(values: sample.variables, targets: margins, baseWeights: sample.weights, options: options.raking)
            weights = result.weights
            warnings += result.warnings
            converged = converged && result.converged
            raking = result
        }
        // Weights summing to n: the document's numbers do not depend on the scale of given weights.
        let sum = weights.reduce(0, +)
        weights = weights.map { $0 * Double(n) / sum }
        let kish = KishDesignEffect(weights: weights)
        let ageRange = (sample.ages.min()!, sample.ages.max()!)
        guard ageRange.1 > ageRange.0 else {
            throw PsychometricsError(.insufficientData, "every person in the norm sample is aged \(ageRange.0); norms need a range of ages")
        }

        var model: NormsDocument.ContinuousModel?
        var bandEntries: [NormsDocument.BandEntry]?
        var table: [NormsDocument.CriterionRow] = []
        let check: PercentileCurveCheck
        let criterion: InformationCriterion
        switch options.method {
        case .continuous:
            let fit = try ContinuousNorms.fit(ages: sample.ages, thetas: sample.thetas, weights: weights, options: options.continuous)
            warnings += fit.warnings
            converged = converged && fit.converged
            let c = fit.norms
            model = NormsDocument.ContinuousModel(
                family: "shash", basis: "legendre",
                degrees: NormsDocument.Degrees(
                    mu: c.location.degree, logSigma: c.logScale.degree, epsilon: c.skewness?.degree, logDelta: c.logTailWeight?.degree),
                coefficients: NormsDocument.Coefficients(
                    mu: c.location.coefficients, logSigma: c.logScale.coefficients,
                    epsilon: c.skewness?.coefficients, logDelta: c.logTailWeight?.coefficients),
                logLikelihood: fit.logLikelihood, converged: fit.converged, iterations: fit.iterations)
            table = fit.table.filter { $0.logLikelihood.isFinite && $0.value.isFinite }.map {
                NormsDocument.CriterionRow(
                    mu: $0.degrees.location, logSigma: $0.degrees.logScale, epsilon: $0.degrees.skewness, logDelta: $0.degrees.logTailWeight,
                    parameters: $0.parameterCount, logLikelihood: $0.logLikelihood, value: $0.value, converged: $0.converged)
            }
            check = fit.percentileCheck
            criterion = fit.criterion
        case .bands:
            let (bandNorms, bandWarnings) = try BandNorms.fit(ages: sample.ages, thetas: sample.thetas, weights: weights, options: options.bands)
            warnings += bandWarnings
            bandEntries = bandNorms.bands.map { b in
                NormsDocument.BandEntry(
                    ageMinimum: b.lowerAge, ageMaximum: b.upperAge, n: b.count, effectiveN: b.effectiveN,
                    family: b.degrees.logTailWeight != nil ? "shash" : b.degrees.skewness != nil ? "skewed" : "normal",
                    mu: b.distribution.location, sigma: b.distribution.scale, epsilon: b.distribution.skewness, delta: b.distribution.tailWeight)
            }
            check = PercentileCurveCheck(norms: .bands(bandNorms))
            if !check.passed { warnings.append("percentile curves cross: \(check.summary)") }
            criterion = options.bands.criterion
        }
        let meanSE = sample.standardErrors.map { $0.reduce(0, +) / Double(n) }
        let weighting: NormsDocument.WeightingSummary
        if let r = raking {
            weighting = NormsDocument.WeightingSummary(
                method: "raking", converged: r.converged, iterations: r.totalIterations, maximumMarginError: r.maximumMarginError,
                tolerance: options.raking.tolerance, trimFactor: r.trimFactor, trimmed: r.trimmedCount, trimRounds: r.trimRounds,
                largestWeightRatio: r.largestWeightRatio, designEffect: kish.designEffect, effectiveN: kish.effectiveN, margins: r.margins)
        } else {
            weighting = NormsDocument.WeightingSummary(
                method: sample.weights == nil ? "none" : "given", converged: nil, iterations: nil, maximumMarginError: nil, tolerance: nil,
                trimFactor: nil, trimmed: 0, trimRounds: 0, largestWeightRatio: weights.max()!, designEffect: kish.designEffect,
                effectiveN: kish.effectiveN, margins: [])
        }
        let document = NormsDocument(
            format: NormsDocument.currentFormat, name: options.name, version: options.version, method: options.method, createdBy: options.createdBy,
            ages: .init(minimum: ageRange.0, maximum: ageRange.1, extrapolation: options.extrapolation),
            sample: .init(n: n, effectiveN: kish.effectiveN, sumOfWeights: sum, designEffect: kish.designEffect, meanStandardError: meanSE),
            weighting: weighting, model: model, bands: bandEntries, criterion: criterion, criterionTable: table, percentileCheck: check,
            warnings: warnings)
        let norms: AgeNorms
        do {
            norms = try document.ageNorms()
        } catch let error as PsychometricsError {
            throw PsychometricsError(.numericalFailure, "the fitted norms are unusable: \(error.message)")
        }
        return NormsBuild(document: document, norms: norms, weights: weights, raking: raking, converged: converged)
    }
}
