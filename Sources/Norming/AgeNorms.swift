import Foundation
import Psychometrics

/// Norms for IQ, possibly age-specific: the linear norms of `IQScale` (one mean and SD of θ, any age),
/// continuous norms (`ContinuousNorms`) or age-banded norms (`BandNorms`), with the age range they cover and how
/// far outside it they may be used.
///
/// ```
/// F_age(θ) = Φ((θ − μ)/σ)                  linear
///          = ContinuousNorms.cdf(θ, age)    continuous
///          = BandNorms.cdf(θ, age)          bands
/// ```
/// Outside the covered range the norms are evaluated at the nearest covered age (a polynomial is never
/// extrapolated). Within `extrapolation` years of the range that is the norms' stated use; beyond it
/// `isOutside(age:)` is true and a score is flagged `age_outside_norms`.
public struct AgeNorms: Sendable, Hashable {
    package enum Model: Sendable, Hashable {
        case linear(Norms)
        case continuous(ContinuousNorms)
        case bands(BandNorms)
    }

    public var name: String
    public var version: String
    package var model: Model
    /// Years beyond the covered range within which the norms may be used without a flag (≥ 0).
    public var extrapolation: Double

    package init(name: String, version: String, model: Model, extrapolation: Double = 0) {
        precondition(extrapolation >= 0 && extrapolation.isFinite, "the extrapolation margin must be finite and ≥ 0, got \(extrapolation)")
        self.name = name
        self.version = version
        self.model = model
        self.extrapolation = extrapolation
    }

    /// Linear norms (any age, never flagged).
    public static func linear(_ norms: Norms) -> AgeNorms { AgeNorms(name: norms.name, version: norms.version, model: .linear(norms)) }

    /// Whether F depends on age (continuous or banded norms): a score then needs an age.
    public var isAgeSpecific: Bool {
        if case .linear = model { return false }
        return true
    }

    /// The ages the norm sample covered; nil for linear norms (any age).
    public var coveredAges: ClosedRange<Double>? {
        switch model {
        case .linear: nil
        case .continuous(let c): c.ages.minimum...c.ages.maximum
        case .bands(let b): b.coveredAges
        }
    }

    /// Whether `age` lies more than `extrapolation` years outside the covered range (never for linear norms).
    public func isOutside(age: Double) -> Bool {
        guard let range = coveredAges else { return false }
        return age < range.lowerBound - extrapolation || age > range.upperBound + extrapolation
    }

    /// The covered age nearest to `age` (the age the norms are evaluated at).
    package func clampedAge(_ age: Double) -> Double {
        guard let range = coveredAges else { return age }
        return min(max(age, range.lowerBound), range.upperBound)
    }

    /// F_age(θ) ∈ [0, 1], at the nearest covered age.
    public func cdf(theta: Double, age: Double) -> Double {
        switch model {
        case .linear(let n): StandardNormal.cdf((theta - n.mean) / n.sd)
        case .continuous(let c): c.cdf(theta: theta, age: clampedAge(age))
        case .bands(let b): b.cdf(theta: theta, age: clampedAge(age))
        }
    }

    /// The distribution of θ at `age` (a normal for linear norms), at the nearest covered age.
    package func distribution(age: Double) -> SinhArcsinh {
        switch model {
        case .linear(let n): SinhArcsinh(location: n.mean, scale: n.sd)
        case .continuous(let c): c.distribution(age: clampedAge(age))
        case .bands(let b): b.band(age: clampedAge(age)).distribution
        }
    }

    /// Q(p | age): the θ at percentile 100p.
    public func quantile(_ p: Double, age: Double) -> Double { distribution(age: age).quantile(p) }

    /// Mean and SD of θ at `age` (for the linear-z transformation).
    public func meanAndSD(age: Double) -> (mean: Double, sd: Double) {
        if case .linear(let n) = model { return (n.mean, n.sd) }
        return distribution(age: age).meanAndSD
    }

    /// "name@version", as score files name norms.
    public var label: String { "\(name)@\(version)" }
}
