import Foundation

extension EMEngine {
    /// The latent distribution's M-step (`NormalLatentDistribution.moments`: the posterior mass's mean and SD),
    /// then the nodes move: θ_q = μ + σ z_q.
    mutating func updateLatentDistribution(_ mass: [Double]) {
        guard let (mean, sd) = NormalLatentDistribution.moments(mass: mass, nodes: nodes) else { return }
        setLatentDistribution(mean: mean, sd: sd)
    }

    /// Sets μ and σ and moves the nodes with them: θ_q = μ + σ z_q.
    mutating func setLatentDistribution(mean: Double, sd: Double) {
        latentMean = mean
        latentSD = sd
        nodes = NormalLatentDistribution.nodes(grid, mean: mean, sd: sd)
    }
}
