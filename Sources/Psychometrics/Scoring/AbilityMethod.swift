import Foundation

/// How an ability θ is estimated from one response pattern.
public enum AbilityMethod: String, Sendable, Hashable, Codable, CaseIterable {
    /// Expected a posteriori: posterior mean over the quadrature grid; SE = posterior SD (Bock & Mislevy 1982).
    case eap
    /// Maximum a posteriori: mode of log L(θ) + log φ((θ − μ)/σ); SE = (I(θ̂) + 1/σ²)^(−1/2).
    case map
    /// Maximum likelihood: root of the score Σ (u − P) P′/(P(1 − P)); SE = I(θ̂)^(−1/2). All-correct and
    /// all-wrong patterns have no finite ML estimate: θ̂ is set to the bound ±B and flagged `atBound`.
    case ml
    /// Weighted likelihood (Warm 1989): root of Σ (u − P) P′/(PQ) + J(θ)/(2 I(θ)), with
    /// J = Σ P′P″/(PQ); finite for perfect and zero scores; SE = I(θ̂)^(−1/2).
    case wle
}
