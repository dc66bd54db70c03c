import Foundation
@testable import Norming
import Numerics
import Psychometrics
import Testing

@Suite("Age-banded norms")
struct BandNormsTests {
    @Test("known values: two given bands of normal data, each the weighted mean and SD of its persons (normal chosen)")
    func knownBands() throws {
        // Ages 20–29 with θ symmetric around 0 (±1, ±0.5) and ages 30–39 around 1; weights 1 and 3.
        var ages: [Double] = [], thetas: [Double] = [], weights: [Double] = []
        for k in 0..<40 {
            ages.append(20 + Double(k % 10)); thetas.append([-1.0, -0.5, 0.5, 1][k % 4]); weights.append(k % 2 == 0 ? 1 : 3)
            ages.append(30 + Double(k % 10)); thetas.append(1 + [-1.0, -0.5, 0.5, 1][k % 4]); weights.append(k % 2 == 0 ? 1 : 3)
        }
        var options = BandNormsOptions()
        options.edges = [30]
        options.minimumEffectiveN = 20
        let (bands, warnings) = try BandNorms.fit(ages: ages, thetas: thetas, weights: weights, options: options)
        #expect(bands.bands.count == 2)
        #expect(warnings.isEmpty)
        // Weighted: θ −1 and 0.5 have weight 1, −0.5 and 1 weight 3 → mean (−1 + 0.5 − 1.5 + 3)/8 = 0.125.
        let mean = 0.125
        let variance = (1 * pow(-1 - mean, 2) + 3 * pow(-0.5 - mean, 2) + 1 * pow(0.5 - mean, 2) + 3 * pow(1 - mean, 2)) / 8
        let young = bands.band(age: 25), old = bands.band(age: 35)
        #expect(young.lowerAge == 20 && young.upperAge == 30 && old.lowerAge == 30 && old.upperAge == 39)
        #expect(young.count == 40 && old.count == 40)
        #expect(young.degrees == SHASHDegrees(location: 0, logScale: 0), "\(young.degrees)")
        #expect(young.distribution.location.isApproximatelyEqual(to: mean, absoluteTolerance: 1e-9))
        #expect(young.distribution.scale.isApproximatelyEqual(to: variance.squareRoot(), absoluteTolerance: 1e-9))
        #expect(old.distribution.location.isApproximatelyEqual(to: 1 + mean, absoluteTolerance: 1e-9))
        // Ages outside clamp to the end bands; the band edge belongs to the older band.
        #expect(bands.cdf(theta: 0.3, age: 5) == young.distribution.cdf(0.3))
        #expect(bands.cdf(theta: 0.3, age: 30) == old.distribution.cdf(0.3))
        #expect(bands.cdf(theta: 0.3, age: 200) == old.distribution.cdf(0.3))
    }

    @Test("automatic bands hold at least the minimum effective n, never split an age, and cover the range")
    func automaticBands() throws {
        var rng = SeededGenerator(seed: 5)
        let n = 3000
        let ages = (0..<n).map { _ in (16 + 74 * RandomVariate.uniform(using: &rng)).rounded(.down) }
        let thetas = ages.map { -0.01 * ($0 - 40) + RandomVariate.normal(using: &rng) }
        let weights = (0..<n).map { _ in 0.5 + 2 * RandomVariate.uniform(using: &rng) }
        var options = BandNormsOptions()
        options.minimumEffectiveN = 250
        let (bands, _) = try BandNorms.fit(ages: ages, thetas: thetas, weights: weights, options: options)
        let kish = KishDesignEffect(weights: weights)
        #expect(bands.bands.count >= 2 && bands.bands.count <= Int(kish.effectiveN / 250))
        #expect(bands.bands.first!.lowerAge == 16 && bands.bands.last!.upperAge == 89)
        for (a, b) in zip(bands.bands, bands.bands.dropFirst()) { #expect(a.upperAge == b.lowerAge) }
        for band in bands.bands {
            #expect(band.effectiveN >= 250, "\(band.lowerAge)–\(band.upperAge): n_eff \(band.effectiveN)")
            #expect(band.lowerAge == band.lowerAge.rounded(), "edges fall on ages present in the sample")
        }
        #expect(bands.bands.map(\.count).reduce(0, +) == n)
        #expect(PercentileCurveCheck(norms: .bands(bands)).passed)
    }

    @Test("seeded recovery: banded norms recover a population whose mean steps with age, IQ within 1.5 RMS inside the bands")
    func recovery() throws {
        var rng = SeededGenerator(seed: 9)
        var ages: [Double] = [], thetas: [Double] = []
        for _ in 0..<6000 {
            let age = 20 + 40 * RandomVariate.uniform(using: &rng)
            ages.append(age)
            thetas.append((age < 40 ? 0.3 : -0.4) + (age < 40 ? 1 : 1.2) * RandomVariate.normal(using: &rng))
        }
        var options = BandNormsOptions()
        options.edges = [40]
        let (bands, _) = try BandNorms.fit(ages: ages, thetas: thetas, options: options)
        let norms = AgeNorms(name: "b", version: "1", model: .bands(bands))
        let scale = AgeNormScale(norms: norms, settings: try IQScale())
        var sum = 0.0, count = 0
        for age in [22.0, 30, 38, 42, 50, 58] {
            for iq in stride(from: 60.0, through: 140, by: 10) {
                let theta = (age < 40 ? 0.3 : -0.4) + (age < 40 ? 1 : 1.2) * (iq - 100) / 15
                let e = scale.rawIQ(theta: theta, age: age) - iq
                sum += e * e; count += 1
            }
        }
        #expect((sum / Double(count)).squareRoot() < 1.5)
    }

    @Test("a band with fewer than 10 persons is an error naming it")
    func tooSmall() {
        var options = BandNormsOptions()
        options.edges = [30]
        let ages = (0..<30).map { Double($0 < 25 ? 20 : 35) }, thetas = (0..<30).map { Double($0 % 7) }
        #expect(throws: PsychometricsError(.insufficientData, "band 30.000–35.000 has 5 persons; a band needs at least 10 (choose wider bands)")) {
            try BandNorms.fit(ages: ages, thetas: thetas, options: options)
        }
    }
}
