import Foundation

/// A fixed quadrature rule for a normal latent distribution: equally spaced points on [−bound, bound] with
/// weights proportional to the N(mean, sd²) density, normalised to sum to 1 (the rectangular rule used by
/// Bock & Aitkin 1981 and by mirt's default `quadpts`/`theta_lim`).
public struct QuadratureGrid: Sendable, Hashable {
    public let points: [Double]
    public let weights: [Double]
    public let logWeights: [Double]

    /// - Precondition: `count >= 2`, `bound > 0`, `sd > 0`.
    public init(count: Int = 61, bound: Double = 6, mean: Double = 0, sd: Double = 1) {
        precondition(count >= 2, "a quadrature grid needs at least 2 points, got \(count)")
        precondition(bound > 0 && bound.isFinite, "the grid bound must be positive and finite, got \(bound)")
        precondition(sd > 0 && sd.isFinite, "the latent SD must be positive and finite, got \(sd)")
        let step = 2 * bound / Double(count - 1)
        let pts = (0..<count).map { -bound + Double($0) * step }
        let logDensity = pts.map { -0.5 * (($0 - mean) / sd) * (($0 - mean) / sd) }
        let maxLog = logDensity.max()!
        let unnorm = logDensity.map { exp($0 - maxLog) }
        let total = unnorm.reduce(0, +)
        points = pts
        weights = unnorm.map { $0 / total }
        logWeights = weights.map { log($0) }
    }

    public var count: Int { points.count }
}
