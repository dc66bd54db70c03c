import Foundation

extension BifactorItem {
    /// The item as a unidimensional 2PL/3PL item on the general factor alone, with the specific factor
    /// integrated out over its N(0, 1) population:
    /// ```
    /// P(θ_g) = c + (1 − c) ∫ σ(a_g θ_g + a_s θ_s + d) φ(θ_s) dθ_s ≈ c + (1 − c) σ((a_g θ_g + d) / √(1 + (a_s/D)²)),  D = 1.702
    /// ```
    /// by the normal-ogive identity ∫ Φ(k(x + a z)) φ(z) dz = Φ(k x / √(1 + k² a²)) with σ(x) ≈ Φ(x/D) (Lord & Novick
    /// 1968, §16.9; its probabilities are within 0.012 of the integral for |a_s| ≤ 3, measured on a grid of logits). The marginal item is what
    /// a test of the general factor alone sees of the item when the person's specific factor is unknown: the
    /// adaptive engine selects items on its information, and a bifactor bank is shown to unidimensional tools
    /// (assembly, form information) through it. Scores are not computed from it: `BifactorScorer` integrates
    /// exactly.
    package var generalMarginal: ItemParameters {
        let scale = (1 + (specificSlope / BifactorReliability.normalOgiveScale) * (specificSlope / BifactorReliability.normalOgiveScale)).squareRoot()
        let a = generalSlope / scale, d = intercept / scale
        return ItemParameters(discrimination: a, difficulty: a == 0 ? 0 : -d / a, guessing: guessing)
    }
}
