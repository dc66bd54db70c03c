import Foundation

/// A fixed quadrature rule for a normal latent distribution: equally spaced points on [−bound, bound] with
/// weights proportional to the N(mean, sd²) density, normalised to sum to 1 (the rectangular rule used by
/// Bock & Aitkin 1981 and by mirt's default `quadpts`/`theta_lim`).
package struct QuadratureGrid: Sendable, Hashable {
    package let points: [Double]
    package let weights: [Double]
    package let logWeights: [Double]

    /// Point counts the initialiser accepts: 2…100,000 (settings allow `allowedPointCounts`; the tables built on
    /// a grid grow with its count).
    package static let constructiblePointCounts = 2...100_000

    /// - Throws: `PsychometricsError.invalidOptions` for a count outside `constructiblePointCounts`, a bound that
    ///   is not positive and finite, a mean that is not finite or an SD that is not positive and finite.
    package init(count: Int = 61, bound: Double = 6, mean: Double = 0, sd: Double = 1) throws(PsychometricsError) {
        var problems: [String] = []
        if let p = Self.constructiblePointCounts.problem(count, "the quadrature point count") { problems.append(p) }
        if !(bound > 0 && bound.isFinite) { problems.append("the grid bound must be positive and finite, got \(bound)") }
        if !mean.isFinite { problems.append("the latent mean must be finite, got \(mean)") }
        if !(sd > 0 && sd.isFinite) { problems.append("the latent SD must be positive and finite, got \(sd)") }
        guard problems.isEmpty else { throw PsychometricsError(.invalidOptions, "invalid quadrature grid: " + problems.joined(separator: "; ")) }
        self.init(validatedCount: count, bound: bound, mean: mean, sd: sd)
    }

    /// The grid of settings already checked (`AbilityOptions`, `CalibrationOptions`, `LatentScale`).
    package init(validatedCount count: Int, bound: Double, mean: Double = 0, sd: Double = 1) {
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

    package var count: Int { points.count }
}

extension QuadratureGrid {
    /// Quadrature points a setting may ask for: 5…401. Fewer than 5 points cannot integrate a normal prior or
    /// posterior; 401 points on [−20, 20] are 0.1 apart, finer than any estimate's precision, and the tables
    /// built per item grow with the count.
    package static let allowedPointCounts = 5...401

    /// θ grid bounds B of [−B, B] a setting may ask for: [1, 20]. θ is in standard deviations of the
    /// calibration population, so ±20 is far beyond any examinee (IQ 100 ± 300), and a grid narrower than ±1
    /// cuts off a third of it (a bound of 1e-320 once made every EAP standard error 0).
    package static let allowedBounds = NumberRange.closed(1, 20)

    /// Problems with a grid's point count and bound (nil: not set by the caller).
    package static func validationProblems(points: Int?, bound: Double?, naming: SettingNaming = .words) -> [String] {
        var problems: [String] = []
        if let points, let p = allowedPointCounts.problem(points, naming.name("quadrature_points")) { problems.append(p) }
        if let bound, let p = allowedBounds.problem(bound, naming.name("theta_bound")) { problems.append(p) }
        return problems
    }
}
