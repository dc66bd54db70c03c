import Foundation

/// A confidence interval for a binomial proportion.
package struct BinomialInterval: Sendable, Hashable {
    package var lower: Double
    package var upper: Double
    /// The coverage asked for, e.g. 0.95.
    package var confidenceLevel: Double

    package init(lower: Double, upper: Double, confidenceLevel: Double) {
        self.lower = lower
        self.upper = upper
        self.confidenceLevel = confidenceLevel
    }

    /// The Wilson score interval for `successes` out of `trials` (Wilson 1927; recommended over the Wald interval
    /// by Brown, Cai & DasGupta 2001, Statistical Science 16, 101–133): the set of p whose score test does not
    /// reject, in closed form
    /// ```
    /// p̂ = k/n,  z = Φ⁻¹(1 − α/2)
    /// centre = (p̂ + z²/(2n)) / (1 + z²/n)
    /// half   = z / (1 + z²/n) · √(p̂(1 − p̂)/n + z²/(4n²))
    /// [centre − half, centre + half]
    /// ```
    /// It stays inside [0, 1] and is never empty, also at k = 0 (lower bound 0) and k = n (upper bound 1).
    /// Example: 7/20 at 95% gives [0.181192, 0.567146].
    /// - Precondition: `trials > 0`, `0 ≤ successes ≤ trials`, `0 < confidenceLevel < 1`.
    package static func wilson(successes k: Int, trials n: Int, confidenceLevel: Double = 0.95) -> BinomialInterval {
        precondition(n > 0, "a binomial interval needs at least one trial, got \(n)")
        precondition(k >= 0 && k <= n, "successes must be in 0…\(n), got \(k)")
        precondition(confidenceLevel > 0 && confidenceLevel < 1, "the confidence level must be in (0, 1), got \(confidenceLevel)")
        let z = StandardNormal.quantile(1 - (1 - confidenceLevel) / 2)
        let nn = Double(n), p = Double(k) / nn, z2 = z * z
        let denominator = 1 + z2 / nn
        let centre = (p + z2 / (2 * nn)) / denominator
        let half = z / denominator * (p * (1 - p) / nn + z2 / (4 * nn * nn)).squareRoot()
        // At k = 0 and k = n the bound is 0 or 1 exactly; rounding could otherwise leave −1e-17.
        let lower = k == 0 ? 0 : max(0, centre - half)
        let upper = k == n ? 1 : min(1, centre + half)
        return BinomialInterval(lower: lower, upper: upper, confidenceLevel: confidenceLevel)
    }

    package func contains(_ p: Double) -> Bool { p >= lower && p <= upper }
}
