import Foundation

/// What one session's response times say about its speed τ, and through the population's θ–τ correlation about
/// its ability θ: the sufficient statistics of the lognormal model (`LognormalTimeItem`) and the closed forms the
/// calibrator's E-step and the scorer share.
///
/// With zᵢⱼ = βⱼ − log tᵢⱼ over the session's timed items, the times' likelihood in τ is Gaussian:
/// ```
/// Πⱼ N(log tⱼ; βⱼ − τ, 1/αⱼ²) ∝ N(m; τ, 1/P),   P = Σⱼ αⱼ²,   m = Σⱼ αⱼ² zⱼ / P
/// ```
/// so τ integrates out against τ | θ ~ N(κθ, s²) (`SpeedAccuracyPopulation`) in closed form:
/// ```
/// log f(t | θ) = Σⱼ (log αⱼ − log tⱼ) − (n/2) log 2π − ½ Σⱼ αⱼ²(zⱼ − m)² − ½ log(1 + P s²) − (m − κθ)² / (2v),
/// v = 1/P + s²
/// τ | θ, t ~ N(A + Bθ, V),   V = 1/(P + 1/s²),   A = V P m,   B = V κ / s²
/// ```
/// The first is a quadratic in θ, `linear`·θ + `quadratic`·θ² + `constant`, added to the log posterior of θ at
/// each node: the response times' collateral information about ability (van der Linden 2007, sec. 5; van der
/// Linden, Klein Entink & Fox 2010, *Applied Psychological Measurement* 34, 327–347). A session without times has
/// P = 0: no term, and τ | θ is the population's.
package struct SessionTimeEvidence: Sendable {
    /// Timed responses used.
    package var count = 0
    /// P = Σ αⱼ².
    package var precision = 0.0
    /// Σ αⱼ² zⱼ and Σ αⱼ² zⱼ².
    package var weightedSum = 0.0
    package var weightedSquares = 0.0
    /// Σ (log αⱼ − log tⱼ).
    package var logJacobian = 0.0

    package init() {}

    /// Adds one timed response: the item's parameters and log t.
    @inline(__always)
    package mutating func add(_ item: LognormalTimeItem, logSeconds y: Double) {
        let a2 = item.timeDiscrimination * item.timeDiscrimination, z = item.timeIntensity - y
        count += 1
        precision += a2
        weightedSum += a2 * z
        weightedSquares += a2 * z * z
        logJacobian += log(item.timeDiscrimination) - y
    }

    /// m = Σ αⱼ² zⱼ / P, the times' estimate of τ (0 without times).
    package var mean: Double { precision > 0 ? weightedSum / precision : 0 }

    /// log f(t | θ) = `constant` + `linear` θ + `quadratic` θ² under `population`.
    package func thetaTerms(_ population: SpeedAccuracyPopulation) -> (constant: Double, linear: Double, quadratic: Double) {
        guard count > 0 else { return (0, 0, 0) }
        let s2 = population.residualVariance, kappa = population.slope, m = mean
        let v = 1 / precision + s2
        let within = weightedSquares - precision * m * m   // Σ αⱼ² (zⱼ − m)²
        let constant = logJacobian - Double(count) / 2 * log(2 * Double.pi) - 0.5 * max(within, 0) - 0.5 * log1p(precision * s2) - m * m / (2 * v)
        return (constant, kappa * m / v, -kappa * kappa / (2 * v))
    }

    /// τ | θ, t ~ N(A + Bθ, V) under `population`.
    package func speedGivenTheta(_ population: SpeedAccuracyPopulation) -> (a: Double, b: Double, variance: Double) {
        let s2 = population.residualVariance
        let v = 1 / (precision + 1 / s2)
        return (v * weightedSum, v * population.slope / s2, v)
    }

    /// The posterior mean and variance of τ given the times and θ's posterior mean and variance:
    /// E τ = A + B E θ, Var τ = V + B² Var θ.
    package func speed(_ population: SpeedAccuracyPopulation, thetaMean: Double, thetaVariance: Double) -> (mean: Double, variance: Double) {
        let (a, b, v) = speedGivenTheta(population)
        return (a + b * thetaMean, v + b * b * thetaVariance)
    }
}
