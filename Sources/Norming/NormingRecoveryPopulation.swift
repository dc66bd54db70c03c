import Foundation
import Psychometrics

/// A known population for recovery studies of norming (`NormingTests`, `Benchmarks/norms_recovery.sh`): θ whose
/// mean rises and falls over ages 16–90, whose SD and skew change with age, and in which education shifts θ,
/// with a non-representative way of sampling it (young and educated persons over-sampled).
///
/// ```
/// age ~ U(16, 90),  u = (age − 16)/74
/// education: P(high) = 0.35 − 0.15u, P(mid) = 0.40, P(low) = 0.25 + 0.15u
/// θ | age, edu = m(age) + shift(edu) + σ(age)·sinh((asinh Z + ε(age))/δ),   Z ~ N(0, 1)
/// m(age) = 0.25 − 0.5·((age − 32)/40)² − 0.35·exp(−(age − 16)/5)       (−0.18 at 16, 0.24 at 32, −0.80 at 90)
/// shift = −0.35 (low), 0 (mid), +0.40 (high);  σ(age) = 0.85 + 0.25u;  ε(age) = −0.35u;  δ = 1
/// true F_age(θ) = Σ_edu P(edu | age) · F_SHASH(θ | m(age) + shift(edu), σ(age), ε(age), δ)
/// selection: P(in sample) ∝ s(age group) · s(edu), s = 1, 0.55, 0.35, 0.25 for 16–29, 30–49, 50–69, 70–90
///            and 0.3, 0.6, 1 for low, mid, high
/// ```
/// Selection is multiplicative in the two raking variables, so raking on the age-group and education margins
/// removes it exactly in expectation; without raking, the educated are over-represented at every age.
package struct NormingRecoveryPopulation: Sendable {
    package static let ageRange = 16.0...90.0
    package static let ageGroups = ["16-29", "30-49", "50-69", "70-90"]
    package static let ageGroupEdges = [16.0, 30, 50, 70, 90]
    package static let educations = ["low", "mid", "high"]
    static let shifts = [-0.35, 0, 0.40]
    static let ageSelection = [1.0, 0.55, 0.35, 0.25]
    static let educationSelection = [0.3, 0.6, 1.0]

    package init() {}

    static func u(_ age: Double) -> Double { (age - 16) / 74 }
    package static func educationShares(age: Double) -> [Double] {
        let u = u(age)
        return [0.25 + 0.15 * u, 0.40, 0.35 - 0.15 * u]
    }
    static func mean(_ age: Double) -> Double {
        let a = (age - 32) / 40
        return 0.25 - 0.5 * a * a - 0.35 * exp(-(age - 16) / 5)
    }
    static func component(_ age: Double, education e: Int) -> SinhArcsinh {
        SinhArcsinh(location: mean(age) + shifts[e], scale: 0.85 + 0.25 * u(age), skewness: -0.35 * u(age), tailWeight: 1)
    }

    /// The population's F_age(θ).
    package static func cdf(theta: Double, age: Double) -> Double {
        let shares = educationShares(age: age)
        return (0..<3).reduce(0) { $0 + shares[$1] * component(age, education: $1).cdf(theta) }
    }

    /// The population's θ at percentile 100p and `age` (bisection on `cdf` to 1e-12).
    package static func quantile(_ p: Double, age: Double) -> Double {
        var lo = -12.0, hi = 12.0
        for _ in 0..<100 {
            let mid = (lo + hi) / 2
            if cdf(theta: mid, age: age) < p { lo = mid } else { hi = mid }
            if hi - lo < 1e-12 { break }
        }
        return (lo + hi) / 2
    }

    /// The population margins of the raking variables `age_group` and `education` (ages uniform, so the age
    /// groups' shares are their lengths over 74 years, and education's the shares at the mean u = ½).
    package static var margins: RakingTargets {
        var margins: [RakingMargin] = []
        for g in 0..<4 {
            margins.append(RakingMargin(variable: "age_group", category: ageGroups[g], share: (ageGroupEdges[g + 1] - ageGroupEdges[g]) / 74))
        }
        for (e, share) in educationShares(age: 53).enumerated() {
            margins.append(RakingMargin(variable: "education", category: educations[e], share: share))
        }
        return try! RakingTargets(margins)
    }

    static func group(_ age: Double) -> Int { age < 30 ? 0 : age < 50 ? 1 : age < 70 ? 2 : 3 }

    /// One person of the population: age, education index, θ.
    static func person(using rng: inout some RandomNumberGenerator) -> (age: Double, education: Int, theta: Double) {
        let age = 16 + 74 * RandomVariate.uniform(using: &rng)
        let shares = educationShares(age: age)
        let v = RandomVariate.uniform(using: &rng)
        let e = v < shares[0] ? 0 : v < shares[0] + shares[1] ? 1 : 2
        let d = component(age, education: e)
        let z = RandomVariate.normal(using: &rng)
        let theta = d.location + d.scale * sinh((asinh(z) + d.skewness) / d.tailWeight)
        return (age, e, min(max(theta, -10), 10))
    }

    /// A sample of `n` persons: representative (`selective` false) or drawn with the selection above.
    package static func sample(count n: Int, selective: Bool, using rng: inout some RandomNumberGenerator) -> NormSample {
        var ages: [Double] = [], thetas: [Double] = [], groups: [String] = [], educations: [String] = []
        ages.reserveCapacity(n); thetas.reserveCapacity(n)
        while ages.count < n {
            let p = person(using: &rng)
            let g = group(p.age)
            if selective, RandomVariate.uniform(using: &rng) >= ageSelection[g] * educationSelection[p.education] { continue }
            ages.append(p.age); thetas.append(p.theta)
            groups.append(ageGroups[g]); educations.append(Self.educations[p.education])
        }
        return try! NormSample(ages: ages, thetas: thetas, variables: ["age_group": groups, "education": educations])
    }

    /// IQ errors of `norms` (area transformation, unrounded) against the population's IQ over the grid: ages
    /// 17, 19, …, 89 and true IQ 60, 65, …, 140 (θ = the population's quantile of Φ((IQ − 100)/15) at that age).
    package static func errors(of norms: AgeNorms) -> (rms: Double, largest: Double, points: Int) {
        let scale = AgeNormScale(norms: norms, transformation: .area, settings: try! IQScale())
        var sum = 0.0, largest = 0.0, count = 0
        for age in stride(from: 17.0, through: 89, by: 2) {
            for iq in stride(from: 60.0, through: 140, by: 5) {
                let theta = quantile(StandardNormal.cdf((iq - 100) / 15), age: age)
                let error = scale.rawIQ(theta: theta, age: age) - iq
                sum += error * error
                largest = max(largest, abs(error))
                count += 1
            }
        }
        return ((sum / Double(count)).squareRoot(), largest, count)
    }
}
