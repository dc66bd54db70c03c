import Foundation
@testable import Norming
import Numerics
import Psychometrics
import Testing

@Suite("IQ under age-specific norms (area and linear transformations)")
struct AgeNormScaleTests {
    static let settings = try! IQScale()
    /// Skewed, heavy-tailed continuous norms over ages 16–90.
    static let continuous = AgeNorms(
        name: "adults", version: "2026",
        model: .continuous(
            ContinuousNorms(
                ages: AgeStandardization(minimum: 16, maximum: 90), location: AgePolynomial(coefficients: [0.1, -0.4, -0.3]),
                logScale: AgePolynomial(coefficients: [0.05, 0.1]), skewness: AgePolynomial(coefficients: [-0.3, -0.2]),
                logTailWeight: .constant(-0.15))),
        extrapolation: 2)

    static func estimate(_ theta: Double, se: Double = 0.3, items: Int = 20, correct: Int = 10) -> AbilityEstimate {
        AbilityEstimate(theta: theta, standardError: se, method: .eap, itemCount: items, correctCount: correct, atBound: false)
    }

    @Test("the area transformation is exact at tabled percentiles: F = 0.02275 → 70, 0.1587 → 85, 0.5 → 100, 0.8413 → 115, 0.97725 → 130")
    func tabledPercentiles() {
        let scale = AgeNormScale(norms: Self.continuous, settings: Self.settings)
        for age in [16.0, 33.5, 61, 90] {
            for (p, iq) in [
                (StandardNormal.cdf(-2), 70.0), (StandardNormal.cdf(-1), 85), (0.5, 100), (StandardNormal.cdf(1), 115), (StandardNormal.cdf(2), 130)
            ] {
                let theta = Self.continuous.quantile(p, age: age)
                #expect(scale.rawIQ(theta: theta, age: age).isApproximatelyEqual(to: iq, absoluteTolerance: 1e-9), "age \(age), p \(p)")
                #expect(scale.percentile(theta: theta, age: age).isApproximatelyEqual(to: 100 * p, absoluteTolerance: 1e-9))
            }
        }
        // Table values to five digits: F = 0.02275 is z = −2.0000 to 4 decimals.
        let theta = Self.continuous.quantile(0.02275, age: 40)
        #expect(abs(scale.rawIQ(theta: theta, age: 40) - 70) < 0.001)
    }

    @Test("under linear norms both transformations give exactly what IQScale gives")
    func linearNormsMatchIQScale() throws {
        let norms = Norms(name: "n", version: "1", mean: 0.2, sd: 0.8)
        let old = try IQScale(norms: norms)
        for transformation in IQTransformation.allCases {
            let scale = AgeNormScale(norms: .linear(norms), transformation: transformation, settings: try IQScale(norms: norms))
            for k in -40...40 {
                let e = Self.estimate(Double(k) * 0.1, se: 0.25 + Double(k + 40) * 0.005)
                #expect(try scale.score(e, age: nil) == old.score(e))
                #expect(try scale.score(e, age: 130) == old.score(e))
            }
        }
    }

    @Test("linear z uses the norm's mean and SD at that age; for a normal model it equals the area transformation")
    func linearZ() {
        let normal = AgeNorms(
            name: "n", version: "1",
            model: .continuous(
                ContinuousNorms(
                    ages: AgeStandardization(minimum: 20, maximum: 60), location: AgePolynomial(coefficients: [0.2, -0.3]),
                    logScale: AgePolynomial(coefficients: [0, 0.2]))))
        let area = AgeNormScale(norms: normal, transformation: .area, settings: Self.settings)
        let linear = AgeNormScale(norms: normal, transformation: .linear, settings: Self.settings)
        for age in [20.0, 40, 60] {
            for theta in stride(from: -2.5, through: 2.5, by: 0.5) {
                #expect(area.rawIQ(theta: theta, age: age).isApproximatelyEqual(to: linear.rawIQ(theta: theta, age: age), absoluteTolerance: 1e-8))
            }
        }
        // A skewed model: linear z is 100 + 15(θ − mean)/SD with the SHASH moments.
        let skewed = AgeNormScale(norms: Self.continuous, transformation: .linear, settings: Self.settings)
        let (m, s) = Self.continuous.distribution(age: 50).meanAndSD
        #expect(skewed.rawIQ(theta: 1.1, age: 50).isApproximatelyEqual(to: 100 + 15 * (1.1 - m) / s, absoluteTolerance: 1e-12))
    }

    @Test("ages outside the covered range use the nearest covered age; beyond the extrapolation margin they are flagged")
    func outsideAges() throws {
        let scale = AgeNormScale(norms: Self.continuous, settings: Self.settings)
        let e = Self.estimate(0.4)
        let at90 = try scale.score(e, age: 90)
        let at91 = try scale.score(e, age: 91.5) // within 2 years: unflagged
        let at95 = try scale.score(e, age: 95) // beyond: flagged
        #expect(at91 == at90)
        #expect(at95.iq == at90.iq && at95.low == at90.low && at95.high == at90.high && at95.percentile == at90.percentile)
        #expect(at95.flags == [.ageOutsideNorms])
        #expect(try scale.score(e, age: 13).flags == [.ageOutsideNorms])
        #expect(Self.continuous.isOutside(age: 13.9) && !Self.continuous.isOutside(age: 14))
        // Flags stay in report order: age_outside_norms last.
        let extreme = try scale.score(
            AbilityEstimate(theta: 9, standardError: 0.9, method: .ml, itemCount: 5, correctCount: 5, atBound: true), age: 100)
        #expect(extreme.flags == [.clampedHigh, .lowPrecision, .perfectScore, .fewItems, .thetaAtBound, .ageOutsideNorms])
        #expect(extreme.iq == 160 && extreme.high == 160)
    }

    @Test("nothing infinite: F is clamped to [1e-12, 1 − 1e-12] before Φ⁻¹")
    func clampedCDF() {
        let scale = AgeNormScale(norms: Self.continuous, settings: Self.settings)
        for theta in [-10.0, 10] {
            let iq = scale.rawIQ(theta: theta, age: 50)
            #expect(iq.isFinite)
            #expect(abs(iq - 100) <= 15 * StandardNormal.quantile(1 - 1e-12) + 1e-9)
        }
    }

    @Test("a missing or impossible age is an error naming the norms and the range")
    func ageErrors() {
        let scale = AgeNormScale(norms: Self.continuous, settings: Self.settings)
        #expect(
            throws: PsychometricsError(
                .invalidOptions, "the norms adults@2026 are age-specific (ages 16.000–90.000): the score needs the person's age")
        ) {
            try scale.score(Self.estimate(0), age: nil)
        }
        #expect(throws: PsychometricsError(.invalidOptions, "age 131.0 is not a finite age in [0, 130] years")) {
            try scale.score(Self.estimate(0), age: 131)
        }
        #expect(throws: PsychometricsError(.invalidOptions, "age nan is not a finite age in [0, 130] years")) {
            try scale.score(Self.estimate(0), age: .nan)
        }
    }
}
