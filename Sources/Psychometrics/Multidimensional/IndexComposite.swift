import Foundation

/// A domain's index on a bifactor battery: the general-plus-specific composite the domain's items measure,
/// ```
/// τ_s = w_g θ_g + w_s θ_s,   (w_g, w_s) the unit principal eigenvector of  M = Σ_{j ∈ s} (a_gj, a_sj)ᵀ (a_gj, a_sj)
/// ```
/// — the domain's *reference composite* (Wang 1985; Reckase 2009, *Multidimensional Item Response Theory*,
/// §5.3): the direction in the (θ_g, θ_s) plane along which the domain's items, taken together, discriminate
/// best, the direction its number-correct score measures. It is the index DeMars (2013, "A tutorial on
/// interpreting bifactor model scores", *International Journal of Testing* 13) recommends reporting for a
/// domain instead of the specific factor alone: the specific factor is what is left of the domain once the
/// general factor is taken out, not the domain's ability. With ‖w‖ = 1 and the factors independent N(0, 1), τ_s is
/// N(0, 1) in the calibration population, so its IQ is 100 + 15 τ_s as the full-scale one's is 100 + 15 θ_g.
/// The sign makes w_g ≥ 0 (the index rises with the general factor). For a testlet domain (a_s = λ a_g) the
/// composite is (θ_g + λ θ_s)/√(1 + λ²).
///
/// Its estimate is the posterior mean wᵀE[θ | u] with SD √(wᵀ Cov[θ | u] w) (`BifactorEstimate.combination`).
public struct IndexComposite: Sendable, Hashable, Codable {
    /// The specific factor's index in the structure.
    public var factor: Int
    public var generalWeight: Double
    public var specificWeight: Double

    package init(factor: Int, generalWeight: Double, specificWeight: Double) {
        self.factor = factor
        self.generalWeight = generalWeight
        self.specificWeight = specificWeight
    }

    /// The reference composite of the items on specific factor `factor` (nil when none has a nonzero slope).
    public init?(factor: Int, items: [BifactorItem]) {
        var gg = 0.0, gs = 0.0, ss = 0.0
        for item in items where item.specific == factor {
            gg += item.generalSlope * item.generalSlope
            gs += item.generalSlope * item.specificSlope
            ss += item.specificSlope * item.specificSlope
        }
        guard gg + ss > 0 else { return nil }
        // The larger eigenvalue of [[gg, gs], [gs, ss]] and its eigenvector, from the better-conditioned row.
        let half = (gg - ss) / 2, lambda = (gg + ss) / 2 + (half * half + gs * gs).squareRoot()
        var w: (Double, Double)
        if gs == 0 {
            w = gg >= ss ? (1, 0) : (0, 1)
        } else if abs(lambda - gg) > abs(lambda - ss) {
            w = (gs, lambda - gg)
        } else {
            w = (lambda - ss, gs)
        }
        let norm = (w.0 * w.0 + w.1 * w.1).squareRoot()
        w = (w.0 / norm, w.1 / norm)
        if w.0 < 0 || (w.0 == 0 && w.1 < 0) { w = (-w.0, -w.1) }
        self.init(factor: factor, generalWeight: w.0, specificWeight: w.1)
    }

    /// The index's posterior mean and SD from a session's factor scores.
    package func estimate(_ e: BifactorEstimate) -> (mean: Double, sd: Double) {
        e.combination(general: generalWeight, specific: specificWeight, factor: factor)
    }
}
