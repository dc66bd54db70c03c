import Foundation

/// Options for ability estimation. Defaults: EAP with the bank's latent distribution as the prior (N(0, 1) on
/// most banks; see `LatentScale`), 61 points on [−6, 6].
public struct AbilityOptions: Sendable, Hashable, Codable {
    public var method: AbilityMethod = .eap
    /// Prior mean and SD of θ (EAP, MAP); nil: the bank's latent mean and SD (`ItemBank.latentScale`, given to
    /// `AbilityEstimator` as `latentScale`), which is 0 and 1 on a bank on the N(0, 1) metric.
    public var priorMean: Double?
    public var priorSD: Double?
    /// EAP quadrature: points equally spaced on [−thetaBound, thetaBound].
    public var quadraturePoints = 61
    /// ML, MAP and WLE estimates are confined to [−thetaBound, thetaBound] (and flagged when they reach it).
    public var thetaBound = 6.0
    /// Root-finding stops when the step is below this.
    public var tolerance = 1e-9

    public init(method: AbilityMethod = .eap) { self.method = method }

    /// The prior N(mean, sd²) these options ask for on a bank with latent scale `latent`.
    public func prior(on latent: LatentScale) -> (mean: Double, sd: Double) {
        (priorMean ?? latent.mean, priorSD ?? latent.sd)
    }

    /// Prior means a setting may ask for: [−10, 10]. θ is in SDs of the calibration population; a prior
    /// centred 10 SDs away (IQ 250) is a unit error, e.g. an IQ-scale mean entered as θ.
    package static let allowedPriorMeans = NumberRange.closed(-10, 10)

    /// Prior SDs a setting may ask for: [0.01, 100]. Below 0.01 the prior alone fixes θ whatever the answers;
    /// above 100 it is flat to double precision on any allowed grid (|θ| ≤ 20), so nothing is gained.
    package static let allowedPriorSDs = NumberRange.closed(0.01, 100)

    /// Root-finding tolerances: (0, 0.01).
    package static let allowedTolerances = NumberRange.open(0, 0.01)

    /// Problems with the options, each naming the setting as `naming` says (`--prior-sd`, `prior_sd`, "prior
    /// SD") with its allowed range.
    /// `latent` is the bank's latent scale, which stands in for a prior not given.
    package func validationProblems(naming: SettingNaming = .words, latent: LatentScale = .standard) -> [String] {
        var problems: [String] = []
        if let priorSD, let p = Self.allowedPriorSDs.problem(priorSD, naming.name("prior_sd", words: "prior SD")) { problems.append(p) }
        if let priorMean, let p = Self.allowedPriorMeans.problem(priorMean, naming.name("prior_mean")) { problems.append(p) }
        let priorSD = prior(on: latent).sd
        problems += QuadratureGrid.validationProblems(points: quadraturePoints, bound: thetaBound, naming: naming)
        // EAP integrates over the grid: a prior narrower than the grid's spacing falls between two points, the
        // posterior sits on one node, and its SD (the SE) is 0 — no score could be reported.
        // (Only once the ranges hold: the point count may be anything before that, Int.min included.)
        if problems.isEmpty && method == .eap, case let spacing = 2 * thetaBound / Double(quadraturePoints - 1), spacing > priorSD {
            problems.append(
                "the θ grid's spacing 2·\(naming.name("theta_bound"))/(\(naming.name("quadrature_points")) − 1) = \(spacing.formatted6) is wider than the \(naming.name("prior_sd", words: "prior SD")) \(priorSD.formatted6), so EAP cannot resolve the prior: narrow the bound or add points"
            )
        }
        if let p = Self.allowedTolerances.problem(tolerance, naming.name("tolerance")) { problems.append(p) }
        return problems
    }
}
