import Foundation

/// The population of van der Linden's (2007) hierarchical speed–accuracy model: ability θ and speed τ are
/// bivariate normal,
/// ```
/// (θ, τ) ~ N((0, 0), [[1, ρ σ_τ], [ρ σ_τ, σ_τ²]])
/// ```
/// identified by θ's N(0, 1) (the IRT scale) and τ's mean 0 (the time intensities absorb it). Written as a
/// regression of speed on ability, τ | θ ~ N(κθ, s²) with κ = ρσ_τ and s² = σ_τ²(1 − ρ²): the form the EM
/// estimates and the scorer conditions on. Source: van der Linden, W. J. (2007), A hierarchical framework for
/// modeling speed and accuracy on test items, *Psychometrika* 72, 287–308.
public struct SpeedAccuracyPopulation: Sendable, Hashable, Codable {
    /// σ_τ > 0, the SD of speed.
    public var speedSD: Double
    /// ρ, the correlation of ability and speed, in (−1, 1).
    public var correlation: Double

    /// Speed SDs: (0, 10] log-seconds (10: one person 20,000 times faster than another at ±1 SD).
    package static let allowedSpeedSDs = NumberRange.aboveUpTo(0, 10)
    /// Correlations: [−0.999, 0.999] (at ±1 speed would be a function of ability).
    package static let allowedCorrelations = NumberRange.closed(-0.999, 0.999)

    /// - Throws: `PsychometricsError.invalidParameters` for a value outside `allowedSpeedSDs` or
    ///   `allowedCorrelations`.
    public init(speedSD: Double, correlation: Double) throws(PsychometricsError) {
        if let problem = Self.allowedSpeedSDs.problem(speedSD, "the speed SD σ_τ")
            ?? Self.allowedCorrelations.problem(correlation, "the correlation ρ of ability and speed")
        {
            throw PsychometricsError(.invalidParameters, problem)
        }
        self.speedSD = speedSD
        self.correlation = correlation
    }

    /// From the regression form τ | θ ~ N(κθ, s²), projected into the allowed ranges.
    package init(slope kappa: Double, residualSD s: Double) {
        let sd = min(max((kappa * kappa + s * s).squareRoot(), 1e-6), Self.allowedSpeedSDs.upper)
        speedSD = sd
        correlation = min(max(kappa / sd, Self.allowedCorrelations.lower), Self.allowedCorrelations.upper)
    }

    /// κ = ρ σ_τ, the regression slope of speed on ability.
    public var slope: Double { correlation * speedSD }
    /// s² = σ_τ² (1 − ρ²), the variance of speed at a given ability.
    public var residualVariance: Double { speedSD * speedSD * (1 - correlation * correlation) }
}
