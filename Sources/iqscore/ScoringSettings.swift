import ArgumentParser
import Psychometrics

/// The scoring settings `score` and `serve` share: the estimator's grid and prior and the IQ scale's interval
/// and flags. Every range is the library's (`AbilityOptions`, `IQScale`), named as options here.
struct ScoringSettings: ParsableArguments {
    @Option(
        name: .customLong("quadrature-points"),
        help:
            "EAP quadrature points, \(QuadratureGrid.allowedPointCounts.text) (default 61; on a bifactor bank, points per factor, \(BifactorScorer.allowedPointCounts.text), default 31)."
    )
    var quadraturePoints: Int?

    @Option(name: .customLong("theta-bound"), help: "θ grid and estimates on [-B, B]; B in \(QuadratureGrid.allowedBounds).")
    var thetaBound = 6.0

    @Option(
        name: .customLong("prior-mean"),
        help: "Prior mean of θ (EAP, MAP), in \(AbilityOptions.allowedPriorMeans) (default: the bank's latent_mean, 0 on most banks).")
    var priorMean: Double?

    @Option(
        name: .customLong("prior-sd"),
        help:
            "Prior SD of θ (EAP, MAP), in \(AbilityOptions.allowedPriorSDs) (default: the bank's latent_sd, 1 on most banks; a Rasch bank's estimated SD)."
    )
    var priorSD: Double?

    @Option(help: "Confidence level of the IQ interval, in \(IQScale.allowedConfidenceLevels).")
    var confidence = 0.95

    @Option(name: .customLong("min-items"), help: "Sessions with fewer answered items are flagged few_items (\(IQScale.allowedMinimumItems.text)).")
    var minItems = 10

    @Option(
        name: .customLong("low-precision-se"),
        help:
            "SE of θ above which a score is flagged low_precision, in \(IQScale.allowedLowPrecisionSEs), in SDs of the calibration population (θ units unless the bank has a latent_sd)."
    )
    var lowPrecisionSE = 0.5

    /// The estimator's options for `method`.
    func ability(_ method: AbilityMethod) -> AbilityOptions {
        var ability = AbilityOptions(method: method)
        ability.quadraturePoints = quadraturePoints ?? 61
        ability.thetaBound = thetaBound
        ability.priorMean = priorMean
        ability.priorSD = priorSD
        return ability
    }

    /// The IQ scale on `norms`.
    func scale(_ norms: Norms) throws -> IQScale {
        try IQScale(norms: norms, confidenceLevel: confidence, lowPrecisionSE: lowPrecisionSE, minimumItems: minItems)
    }

    /// Problems with the settings, named as options.
    func validationProblems(_ method: AbilityMethod) -> [String] {
        ability(method).validationProblems(naming: .option)
            + IQScale.validationProblems(confidenceLevel: confidence, lowPrecisionSE: lowPrecisionSE, minimumItems: minItems, naming: .option)
    }
}
