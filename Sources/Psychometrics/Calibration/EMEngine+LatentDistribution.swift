import Foundation

extension EMEngine {
    /// The latent distribution's M-step (Bock & Aitkin 1981; Mislevy 1984): with m_q = Σᵢ wᵢ(q) the posterior
    /// mass at node θ_q and N = Σ_q m_q,
    /// ```
    /// μ = Σ_q m_q θ_q / N              (mean of the posterior means)
    /// σ² = Σ_q m_q θ_q² / N − μ²       (mean of the posterior second moments − μ²)
    /// ```
    /// then the nodes move: θ_q = μ + σ z_q.
    mutating func updateLatentDistribution(_ mass: [Double]) {
        var total = 0.0, m1 = 0.0, m2 = 0.0
        for t in 0..<q {
            total += mass[t]
            m1 += mass[t] * nodes[t]
            m2 += mass[t] * nodes[t] * nodes[t]
        }
        guard total > 0 else { return }
        let mean = m1 / total
        let variance = max(m2 / total - mean * mean, 1e-6)
        setLatentDistribution(mean: mean, sd: variance.squareRoot())
    }

    /// Sets μ and σ and moves the nodes with them: θ_q = μ + σ z_q.
    mutating func setLatentDistribution(mean: Double, sd: Double) {
        latentMean = mean
        latentSD = sd
        nodes = grid.points.map { mean + sd * $0 }
    }
}
