import Foundation
import Psychometrics

/// The sinh–arcsinh (SHASH) distribution of Jones & Pewsey (2009), with location μ, scale σ > 0, skewness ε and
/// tail weight δ > 0.
///
/// ```
/// x = (y − μ) / σ
/// S(x) = sinh(δ · asinh(x) − ε),   C(x) = cosh(δ · asinh(x) − ε) = √(1 + S²)
/// F(y) = Φ(S(x))
/// Q(p) = μ + σ · sinh((asinh(Φ⁻¹(p)) + ε) / δ)
/// log f(y) = log δ − log σ + log C(x) − ½ log(2π) − ½ log(1 + x²) − ½ S(x)²
/// ```
/// S(Y) is standard normal, so F and Q are exact closed forms of Φ and Φ⁻¹. ε = 0, δ = 1 is the normal N(μ, σ²);
/// ε > 0 skews to the right, ε < 0 to the left; δ < 1 gives heavier tails than the normal, δ > 1 lighter ones.
/// The parameters are those of Jones, M. C. & Pewsey, A. (2009), "Sinh-arcsinh distributions", Biometrika 96(4),
/// 761–780, eq. (2), with a location and a scale; gamlss writes the same family as `SHASHo`.
package struct SinhArcsinh: Sendable, Hashable, Codable {
    package var location: Double
    package var scale: Double
    package var skewness: Double
    package var tailWeight: Double

    /// - Precondition: σ > 0 and δ > 0, all four finite.
    package init(location: Double, scale: Double, skewness: Double = 0, tailWeight: Double = 1) {
        precondition(location.isFinite && skewness.isFinite, "SHASH location and skewness must be finite, got \(location), \(skewness)")
        precondition(scale > 0 && scale.isFinite, "SHASH scale must be positive and finite, got \(scale)")
        precondition(tailWeight > 0 && tailWeight.isFinite, "SHASH tail weight must be positive and finite, got \(tailWeight)")
        self.location = location
        self.scale = scale
        self.skewness = skewness
        self.tailWeight = tailWeight
    }

    /// The standard normal deviate S(x) of y: F(y) = Φ(S).
    @inlinable package func normalDeviate(_ y: Double) -> Double {
        let x = (y - location) / scale
        return sinh(tailWeight * asinh(x) - skewness)
    }

    /// F(y) = Φ(sinh(δ·asinh((y − μ)/σ) − ε)); in [0, 1] for every y, continuous and strictly increasing.
    package func cdf(_ y: Double) -> Double { StandardNormal.cdf(normalDeviate(y)) }

    /// Q(p) = μ + σ·sinh((asinh(Φ⁻¹(p)) + ε)/δ) for 0 < p < 1.
    /// - Precondition: 0 < p < 1.
    package func quantile(_ p: Double) -> Double {
        precondition(p > 0 && p < 1, "SHASH quantile needs 0 < p < 1, got \(p)")
        return location + scale * sinh((asinh(StandardNormal.quantile(p)) + skewness) / tailWeight)
    }

    /// log f(y); −∞ only where the density underflows (far in the tails).
    package func logDensity(_ y: Double) -> Double {
        let x = (y - location) / scale
        let u = tailWeight * asinh(x) - skewness
        let s = sinh(u)
        return log(tailWeight) - log(scale) + logCosh(u) - 0.5 * log(2 * Double.pi) - 0.5 * log1p(x * x) - 0.5 * s * s
    }

    /// Mean and SD, by the trapezoidal rule over z ∈ [−9, 9] (step 0.025) of Y = Q(Φ(z)) against φ(z): for a
    /// Gaussian weight the rule converges geometrically in the step, and the truncation leaves less than 1e-12
    /// for δ ≥ 0.2. (Jones & Pewsey give the moments through Bessel functions K_ν(¼), which Foundation lacks.)
    package var meanAndSD: (mean: Double, sd: Double) {
        var m1 = 0.0, m2 = 0.0, total = 0.0
        let h = 0.025, count = 720
        for k in 0...count {
            let z = -9 + Double(k) * h
            let weight = exp(-0.5 * z * z) * (k == 0 || k == count ? 0.5 : 1)
            let x = sinh((asinh(z) + skewness) / tailWeight)
            m1 += weight * x
            m2 += weight * x * x
            total += weight
        }
        m1 /= total
        m2 /= total
        return (location + scale * m1, scale * max(m2 - m1 * m1, 0).squareRoot())
    }
}

/// log cosh(u) without overflow: |u| + log1p(e^(−2|u|)) − log 2.
@inlinable func logCosh(_ u: Double) -> Double {
    let a = abs(u)
    return a + log1p(exp(-2 * a)) - M_LN2
}
