import Foundation

extension CorrelatedFactorsCalibrator {
    /// The marginal log-likelihood of 0/1 responses under fixed correlated-factors parameters, integrated as a
    /// default calibration integrates it (`resolvedIntegration`: the product grid of `defaultPoints(factors:)` up
    /// to 3 factors, adaptive quasi–Monte Carlo with `defaultMonteCarloPoints` nodes beyond; θ bound 6): one
    /// E-step of `CorrelatedFactorsEngine`, so it equals the log-likelihood `calibrate` reports for its own
    /// estimates on the same responses.
    /// - Parameters:
    ///   - items: per data item, a general-only `BifactorItem` (its slope on its factor).
    ///   - factor: per data item, its factor (0…K − 1; every factor with an item).
    ///   - correlations: R, K × K row-major, positive definite.
    /// - Throws: `PsychometricsError(.invalidParameters)` for an R that is not positive definite, `.invalidOptions`
    ///   for more factors than the integration takes.
    package static func logLikelihood(
        _ data: ResponseMatrix, items: [BifactorItem], factor: [Int], correlations r: [Double],
        workers: Int
    ) throws(PsychometricsError) -> Double {
        let k = Int(Double(r.count).squareRoot().rounded())
        precondition(items.count == data.itemCount && factor.count == items.count && k * k == r.count, "one item and factor per data item")
        let model = FactorCorrelation(k: k)
        guard let x = model.parameters(of: r) else {
            throw PsychometricsError(.invalidParameters, "the factor correlation matrix is not positive definite")
        }
        let calibrator = CorrelatedFactorsCalibrator()
        let method = calibrator.resolvedIntegration(factors: k)
        guard k <= (method == .productGrid ? maximumFactors : maximumAdaptiveFactors) else {
            throw PsychometricsError(.invalidOptions, "\(k) factors; the correlated-factors integration takes at most \(maximumAdaptiveFactors)")
        }
        let grid = QuadratureGrid(validatedCount: method == .productGrid ? defaultPoints(factors: k) : adaptiveTablePoints, bound: 6)
        let nodes = method == .productGrid ? nil : SobolSequence.balancedNormalPoints(count: defaultMonteCarloPoints, dimensions: k)
        let (order, engineIndex, groupOf, groups) = BifactorEngine.grouping(factor.map { Optional($0) }, specificCount: k)
        let engine = CorrelatedFactorsEngine(
            items: order.map { items[$0] }, correlation: x,
            data: data.renumberingItems(engineIndex, itemIDs: order.map { data.itemIDs[$0] }), grid: grid,
            factor: groupOf.map { $0 - 1 }, factorItems: Array(groups.dropFirst()), workers: workers,
            maximumSlope: .infinity, slopePrior: nil, guessingPrior: nil, nodes: nodes)
        return engine.eStep().logLikelihood
    }
}
