/// The recovery and exposure figures every simulation study reports, CAT (`CATSimulationReport`) or fixed forms
/// (`FormSimulationReport`), computed in one place (JSON keys in snake_case, in the report's own object).
///
/// Recovery over the simulees: RMSE = √mean (θ̂ − θ)², bias = mean (θ̂ − θ), mean SE(θ̂), Pearson r(θ, θ̂), and the
/// share of tests ending with SE ≤ the target (null without one). Exposure: an item's rate is the share of tests
/// it appears in; `maxExposure` is the largest over the bank, `meanExposure` the mean over the items a test may
/// use (the mean length over the eligible items); `overlapRate` is `RecoveryStatistics.overlapRate`.
package struct SimulationFigures: Sendable, Encodable {
    package var rmse: Double
    package var bias: Double
    package var meanSE: Double
    package var correlation: Double
    package var shareSEReached: Double?
    package var maxExposure: Double
    package var meanExposure: Double
    /// Eligible items no test used.
    package var itemsNeverAdministered: Int
    package var overlapRate: Double

    /// The figures of `recovery`, and of the items' administration counts (`administered[i]`, over `simulees`
    /// tests of `meanLength` items on average; `eligible[i]`: item i may be used).
    init(recovery: RecoveryStatistics, seTarget: Double?, administered: [Int], eligible: [Bool], simulees: Int, meanLength: Double) {
        let n = Double(simulees)
        let eligibleCount = eligible.reduce(0) { $0 + ($1 ? 1 : 0) }
        rmse = recovery.rmse
        bias = recovery.bias
        meanSE = recovery.meanSE
        correlation = recovery.correlation
        shareSEReached = seTarget == nil ? nil : recovery.shareSEReached
        maxExposure = Double(administered.max() ?? 0) / n
        meanExposure = meanLength / Double(max(eligibleCount, 1))
        itemsNeverAdministered = zip(eligible, administered).reduce(0) { $0 + ($1.0 && $1.1 == 0 ? 1 : 0) }
        overlapRate = RecoveryStatistics.overlapRate(administered: administered, simulees: simulees, meanLength: meanLength)
    }

    enum CodingKeys: String, CodingKey {
        case rmse, bias, meanSE = "mean_se", correlation, shareSEReached = "share_se_reached", maxExposure = "max_exposure"
        case meanExposure = "mean_exposure", itemsNeverAdministered = "items_never_administered", overlapRate = "overlap_rate"
    }

    /// Encodes the figures into the report's own keyed container (`share_se_reached` null without a target).
    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(rmse, forKey: .rmse)
        try c.encode(bias, forKey: .bias)
        try c.encode(meanSE, forKey: .meanSE)
        try c.encode(correlation, forKey: .correlation)
        try c.encode(shareSEReached, forKey: .shareSEReached)
        try c.encode(maxExposure, forKey: .maxExposure)
        try c.encode(meanExposure, forKey: .meanExposure)
        try c.encode(itemsNeverAdministered, forKey: .itemsNeverAdministered)
        try c.encode(overlapRate, forKey: .overlapRate)
    }
}
