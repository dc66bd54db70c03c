import Foundation

/// mirt's marginal reliability, `marginal_rxx(mod)` (Chalmers 2012, mirt 1.47 `R/marginal_rxx.R`): the
/// conditional reliability of the whole test averaged over the latent distribution,
/// ```
/// ρ = ∫ I(θ) / (I(θ) + 1/σ²) · g(θ) dθ,   g = N(0, σ²),   I(θ) = Σⱼ Iⱼ(θ) over every item
/// ```
/// which with σ = 1 is mirt's `∫ TI/(TI + 1) · dnorm(θ) dθ`. As in mirt, every item counts, whatever each person
/// answered: for a missing-by-design bank it describes the bank taken whole, not the forms people took
/// (`MeanErrorVarianceReliability` averages over those).
///
/// For a bank with a latent scale other than N(0, 1) (a Rasch bank, `LatentScale`), pass the parameters on the
/// N(0, 1) metric (`LatentScale.standardized`, as `analyze` does) or σ as `latentSD`: ρ does not depend on the
/// metric. mirt's `marginal_rxx` on a Rasch model computes ∫ I/(I + σ²) φ(θ) dθ instead (σ² where 1/σ² belongs,
/// N(0, 1) where N(0, σ²) belongs): 0.591 on ICAR16, where this gives 0.820, the equivalent 1PL's.
///
/// The integral: the trapezoid rule on 801 points of [−10σ, 10σ] with the normal density (the integrand is
/// smooth and under the density; the error is below 1e-9, where mirt's `integrate` promises about 1e-4).
package enum MarginalRXX {
    /// ρ for `parameters` under N(0, σ²) with σ = `latentSD`; nil without items.
    package static func compute(parameters: [ItemParameters], latentSD: Double = 1) -> Double? {
        guard !parameters.isEmpty else { return nil }
        let sd = latentSD > 0 && latentSD.isFinite ? latentSD : 1
        let points = 801
        let step = 20 * sd / Double(points - 1)
        let precision = 1 / (sd * sd)
        var sum = 0.0
        for k in 0..<points {
            let theta = -10 * sd + Double(k) * step
            let information = parameters.reduce(0) { $0 + $1.information(at: theta) }
            let z = theta / sd
            let density = exp(-0.5 * z * z) / (sd * (2 * Double.pi).squareRoot())
            let weight = k == 0 || k == points - 1 ? 0.5 : 1
            sum += weight * information / (information + precision) * density
        }
        return sum * step
    }
}
