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
    /// Whether `logJacobian` holds every timed response's term (false after the scorer's bulk `add`, which leaves
    /// it out): `thetaTerms`' constant is NaN otherwise.
    package var hasConstant = true

    package init() {}

    /// Adds one timed response: the item's parameters and log t.
    @inline(__always)
    package mutating func add(_ item: LognormalTimeItem, logSeconds y: Double) {
        add(
            intensity: item.timeIntensity, squaredDiscrimination: item.timeDiscrimination * item.timeDiscrimination,
            logDiscrimination: log(item.timeDiscrimination), logSeconds: y)
    }

    /// Adds a session's timed responses (`seconds[k]` NaN: none) to items with time terms `terms[item]` = (β, α²),
    /// β NaN for an item without a time model; returns how many were timed and how many fell below their item's
    /// `thresholds` (the scorer's rapid guesses). One logarithm per timed response, and Σ log α left out: the
    /// scorer needs θ's linear and quadratic terms and the speed, not the likelihood's constant, which
    /// `thetaTerms` then gives as NaN (`hasConstant`).
    package mutating func add(
        _ items: UnsafeBufferPointer<Int>, _ seconds: UnsafeBufferPointer<Float>,
        terms: UnsafeBufferPointer<SIMD2<Double>>, thresholds: UnsafeBufferPointer<Float>
    ) -> (timed: Int, belowThreshold: Int) {
        var timed = 0, below = 0
        var count = 0, precision = 0.0, sum = 0.0, squares = 0.0
        for k in 0..<items.count where !seconds[k].isNaN {
            let j = items[k], t = seconds[k]
            timed += 1
            if t < thresholds[j] { below += 1 }
            let term = terms[j]
            if term[0].isNaN { continue }
            let a2 = term[1], z = term[0] - ResponseTimes.logSeconds(t)
            count += 1
            precision += a2
            sum += a2 * z
            squares += a2 * z * z
        }
        self.count += count
        self.precision += precision
        weightedSum += sum
        weightedSquares += squares
        if count > 0 { hasConstant = false }
        return (timed, below)
    }

    /// Adds one timed response from the item's β, α² and log α (kept per item by a caller that adds many
    /// sessions: one logarithm per response instead of two).
    @inline(__always)
    package mutating func add(intensity beta: Double, squaredDiscrimination a2: Double, logDiscrimination logAlpha: Double, logSeconds y: Double) {
        let z = beta - y
        count += 1
        precision += a2
        weightedSum += a2 * z
        weightedSquares += a2 * z * z
        logJacobian += logAlpha - y
    }

    /// Σ αⱼ² (zⱼ − m)² = Σ αⱼ² zⱼ² − P m², the squared standardised residuals at the times' own speed m (the
    /// lognormal person fit l_t), ≥ 0.
    package var residualSquares: Double { max(weightedSquares - precision * mean * mean, 0) }

    /// m = Σ αⱼ² zⱼ / P, the times' estimate of τ (0 without times).
    package var mean: Double { precision > 0 ? weightedSum / precision : 0 }

    /// log f(t | θ) = `constant` + `linear` θ + `quadratic` θ² under `population`.
    package func thetaTerms(_ population: SpeedAccuracyPopulation) -> (constant: Double, linear: Double, quadratic: Double) {
        guard count > 0 else { return (0, 0, 0) }
        let s2 = population.residualVariance, kappa = population.slope, m = mean
        let v = 1 / precision + s2
        let constant =
            hasConstant
            ? logJacobian - Double(count) / 2 * log(2 * Double.pi) - 0.5 * residualSquares - 0.5 * log1p(precision * s2) - m * m / (2 * v) : .nan
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
