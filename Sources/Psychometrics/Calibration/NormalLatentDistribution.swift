import Foundation

/// The normal latent distribution θ ~ N(μ, σ²) that a calibration with fixed items estimates (the fixed items
/// set the scale; Bock & Aitkin 1981, Mislevy 1984), on the moving nodes θ_q = μ + σ z_q of the standard grid.
/// One implementation for both EM engines (`EMEngine`, `ItemModelEngine`).
enum NormalLatentDistribution {
    /// The latent distribution's M-step: with m_q = Σᵢ wᵢ(q) the posterior mass at node θ_q and N = Σ_q m_q,
    /// ```
    /// μ = Σ_q m_q θ_q / N              (mean of the posterior means)
    /// σ² = Σ_q m_q θ_q² / N − μ²       (mean of the posterior second moments − μ², at least 10⁻⁶)
    /// ```
    /// nil when there is no mass.
    static func moments(mass: [Double], nodes: [Double]) -> (mean: Double, sd: Double)? {
        var total = 0.0, m1 = 0.0, m2 = 0.0
        for t in nodes.indices {
            total += mass[t]
            m1 += mass[t] * nodes[t]
            m2 += mass[t] * nodes[t] * nodes[t]
        }
        guard total > 0 else { return nil }
        let mean = m1 / total
        let variance = max(m2 / total - mean * mean, 1e-6)
        return (mean, variance.squareRoot())
    }

    /// The complete-data score of (μ, σ) at θ: ∂/∂μ log N(θ; μ, σ²) = (θ − μ)/σ², ∂/∂σ = −1/σ + (θ − μ)²/σ³.
    @inline(__always)
    static func score(at theta: Double, mean mu: Double, sd sigma: Double) -> (mean: Double, sd: Double) {
        let s2 = sigma * sigma, dev = theta - mu
        return (dev / s2, -1 / sigma + dev * dev / (s2 * sigma))
    }

    /// The complete-data information of (μ, σ), −E[∇² log N(θ; μ, σ²)] summed over persons at the posterior
    /// mass: (1/σ², 2(θ − μ)/σ³, −1/σ² + 3(θ − μ)²/σ⁴) weighted by m_q.
    static func completeInformation(mass: [Double], nodes: [Double], mean mu: Double, sd sigma: Double)
        -> (meanMean: Double, meanSD: Double, sdSD: Double)
    {
        let s2 = sigma * sigma
        var imm = 0.0, ims = 0.0, iss = 0.0
        for t in nodes.indices {
            let dev = nodes[t] - mu
            imm += mass[t] / s2
            ims += mass[t] * 2 * dev / (s2 * sigma)
            iss += mass[t] * (-1 / s2 + 3 * dev * dev / (s2 * s2))
        }
        return (imm, ims, iss)
    }

    /// The moving nodes θ_q = μ + σ z_q of the standard grid.
    static func nodes(_ grid: QuadratureGrid, mean: Double, sd: Double) -> [Double] { grid.points.map { mean + sd * $0 } }

    /// |μ| ≤ 100 and σ in [10⁻³, 10³]: the ranges an extrapolated (SQUAREM) latent distribution is projected into.
    static let meanBound = 100.0
    static let sdRange = 1e-3...1e3

    /// Working values (μ, log σ), as SQUAREM extrapolates them, projected into `meanBound` and `sdRange`.
    static func projected(mean: Double, logSD: Double) -> (mean: Double, sd: Double) {
        (min(max(mean, -meanBound), meanBound), min(max(exp(logSD), sdRange.lowerBound), sdRange.upperBound))
    }
}

/// The fixed items of an online calibration that no person answered, sorted: those not in the data and those in
/// it without responses (`unanswered`).
/// - Throws: `PsychometricsError.insufficientData` when that is every fixed item (nothing would set the scale).
func fixedItemsNobodyAnswered(_ fixed: some Collection<String>, dataItems: [String], unanswered: [String]) throws(PsychometricsError) -> [String] {
    guard !fixed.isEmpty else { return [] }
    let present = Set(dataItems)
    let missing = (fixed.filter { !present.contains($0) } + unanswered).sorted()
    if missing.count == fixed.count {
        let listed = missing.prefix(5).joined(separator: ", ") + (missing.count > 5 ? ", …" : "")
        throw PsychometricsError(
            .insufficientData,
            "none of the \(fixed.count) fixed item\(fixed.count == 1 ? " is" : "s is") answered in the data (\(listed)); fixed-parameter calibration needs responses to at least one fixed item to put the other items on the bank's scale"
        )
    }
    return missing
}
