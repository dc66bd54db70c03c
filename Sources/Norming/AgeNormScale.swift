import Foundation
import Psychometrics

/// How θ becomes an IQ under age-specific norms.
public enum IQTransformation: String, Sendable, Hashable, Codable, CaseIterable {
    /// Normalised (area) transformation: IQ = 100 + 15·Φ⁻¹(F_age(θ)). The percentile and the IQ agree exactly
    /// whatever the shape of the norm distribution (e.g. F = 0.02275 ↔ IQ 70).
    case area
    /// Linear z: IQ = 100 + 15·(θ − m(age))/s(age) with the norm distribution's mean and SD at that age.
    case linear
}

/// Maps (θ, SE, age) to an IQ, its confidence interval, a percentile and flags under `AgeNorms` — the one call
/// a scorer makes.
///
/// ```
/// area:    IQ(θ) = 100 + 15 · Φ⁻¹(clamp(F_age(θ), 10⁻¹², 1 − 10⁻¹²))
/// linear:  IQ(θ) = 100 + 15 · (θ − m(age)) / s(age)
/// CI:      [IQ(θ − z·SE), IQ(θ + z·SE)],   z = Φ⁻¹((1 + level)/2)
/// percentile = 100 · F_age(θ)   (one decimal)
/// ```
/// Under linear norms both transformations are IQ = 100 + 15(θ − μ)/σ and the scale gives exactly what
/// `IQScale` gives. Rounding (half away from zero), clamping to [minimumIQ, maximumIQ] with `clamped_low` /
/// `clamped_high`, and the other flags are `IQScale.report`'s, the one implementation both scales call. An age more than the norms' extrapolation margin outside
/// the covered range is scored at the nearest covered age and flagged `age_outside_norms`. The clamp of F keeps
/// Φ⁻¹ finite: the raw IQ lies within 100 ± 105.5.
public struct AgeNormScale: Sendable, Hashable {
    public let norms: AgeNorms
    public let transformation: IQTransformation
    /// Confidence level, IQ range, low-precision SE and minimum items; its own (linear) norms are not used.
    public let settings: IQScale

    /// The smallest and largest F passed to Φ⁻¹.
    public static let cdfClamp = 1e-12

    public init(norms: AgeNorms, transformation: IQTransformation = .area, settings: IQScale) {
        self.norms = norms
        self.transformation = transformation
        self.settings = settings
    }

    /// Ages allowed: finite, 0–130 years.
    package static let allowedAges = NumberRange.closed(0, 130)

    /// The unrounded IQ of θ at `age` (nil: allowed only for linear norms).
    public func rawIQ(theta: Double, age: Double?) -> Double {
        switch norms.model {
        case .linear(let n):
            return 100 + 15 * (theta - n.mean) / n.sd
        case .continuous, .bands:
            let a = age ?? .nan
            switch transformation {
            case .area:
                let f = min(max(norms.cdf(theta: theta, age: a), Self.cdfClamp), 1 - Self.cdfClamp)
                return 100 + 15 * StandardNormal.quantile(f)
            case .linear:
                let (m, s) = norms.meanAndSD(age: a)
                return 100 + 15 * (theta - m) / s
            }
        }
    }

    /// 100·F_age(θ), unrounded.
    public func percentile(theta: Double, age: Double?) -> Double { 100 * norms.cdf(theta: theta, age: age ?? .nan) }

    /// Reports an ability estimate on the IQ scale of these norms at `age` (years; nil only for linear norms).
    /// - Throws: `PsychometricsError` when θ or its SE is not finite or SE ≤ 0 (`.unscorable`), when the norms are
    ///   age-specific and no age is given, or the age is not finite in [0, 130] (`.invalidOptions`).
    public func score(_ estimate: AbilityEstimate, age: Double?) throws -> IQScore {
        var outside = false
        if norms.isAgeSpecific {
            guard let age else {
                let range = norms.coveredAges.map { " (ages \(fixedText($0.lowerBound))–\(fixedText($0.upperBound)))" } ?? ""
                throw PsychometricsError(.invalidOptions, "the norms \(norms.label) are age-specific\(range): the score needs the person's age")
            }
            guard Self.allowedAges.contains(age) else {
                throw PsychometricsError(.invalidOptions, "age \(age) is not a finite age in [0, 130] years")
            }
            outside = norms.isOutside(age: age)
        }
        return try settings.report(
            estimate, rawIQ: { rawIQ(theta: $0, age: age) }, cdf: { norms.cdf(theta: $0, age: age ?? .nan) },
            ageOutside: outside)
    }
}
