import Foundation

/// The item-parameter priors' log densities and derivatives in the working coordinates, one implementation for
/// both EM engines (`WorkingPriors` for the 0/1 engine, `ItemModelEngine` for item models). Each is maximised
/// in the natural parameter (no Jacobian), as BILOG-MG and mirt do for MAP item estimates.
extension LogNormalPrior {
    /// The log-normal density of a slope a as a function of s = log a (up to a constant):
    /// ```
    /// log p(a) = −s − (s − μ)²/(2σ²)
    /// ```
    @inline(__always)
    func logDensity(logSlope s: Double) -> Double {
        let z = (s - meanLog) / sdLog
        return -s - 0.5 * z * z
    }

    /// ∂/∂s and ∂²/∂s² of `logDensity(logSlope:)`: −1 − (s − μ)/σ² and −1/σ².
    @inline(__always)
    func logDensityDerivatives(logSlope s: Double) -> (first: Double, second: Double) {
        (-1 - (s - meanLog) / (sdLog * sdLog), -1 / (sdLog * sdLog))
    }

    /// The same density in a itself, by the chain rule (s = log a, ds/da = 1/a):
    /// ```
    /// d/da log p = p_s / a        d²/da² log p = (p_ss − p_s) / a² = (1 − 1/σ² + (log a − μ)/σ²) / a²
    /// ```
    /// (0, 0, 0) for a ≤ 0, where the item models' M-step never goes.
    func logDensityTerms(slope a: Double) -> (logDensity: Double, gradient: Double, curvature: Double) {
        guard a > 0 else { return (0, 0, 0) }
        let s = log(a), d = logDensityDerivatives(logSlope: s)
        return (logDensity(logSlope: s), d.first / a, (d.second - d.first) / (a * a))
    }
}

extension BetaPrior {
    /// The Beta density of a lower asymptote c = σ(γ) as a function of γ = logit c (up to a constant):
    /// ```
    /// log p(c) = (α − 1) log c + (β − 1) log(1 − c)
    /// ```
    @inline(__always)
    func logDensity(logitGuessing g: Double) -> Double {
        let c = Logistic.sigmoid(g)
        return (alpha - 1) * log(c) + (beta - 1) * log1p(-c)
    }

    /// ∂/∂γ and ∂²/∂γ² of `logDensity(logitGuessing:)`: (α − 1)(1 − c) − (β − 1)c and −(α + β − 2) c (1 − c).
    @inline(__always)
    func logDensityDerivatives(logitGuessing g: Double) -> (first: Double, second: Double) {
        let c = Logistic.sigmoid(g)
        return ((alpha - 1) * (1 - c) - (beta - 1) * c, -(alpha + beta - 2) * c * (1 - c))
    }
}
