import Foundation
@testable import Norming
import Numerics
import Psychometrics
import Testing

@Suite("Continuous norms (SHASH in age)")
struct ContinuousNormsTests {
    static let scaleSettings = try! IQScale()

    @Test("a constant normal model fitted to weighted data is the weighted mean and SD (to 1e-9), and its IQ the linear one")
    func constantNormalKnownMoments() throws {
        var rng = SeededGenerator(seed: 3)
        let n = 500
        let ages = (0..<n).map { _ in 20 + 50 * RandomVariate.uniform(using: &rng) }
        let thetas = (0..<n).map { _ in RandomVariate.normal(mean: 0.3, sd: 1.2, using: &rng) }
        let weights = (0..<n).map { _ in 0.5 + RandomVariate.uniform(using: &rng) }
        var options = ContinuousNormsOptions()
        options.fixedDegrees = SHASHDegrees(location: 0, logScale: 0)
        let fit = try ContinuousNorms.fit(ages: ages, thetas: thetas, weights: weights, options: options)
        #expect(fit.converged)
        let sum = weights.reduce(0, +)
        let mean = zip(weights, thetas).reduce(0) { $0 + $1.0 * $1.1 } / sum
        let sd = (zip(weights, thetas).reduce(0) { $0 + $1.0 * ($1.1 - mean) * ($1.1 - mean) } / sum).squareRoot()
        let d = fit.norms.distribution(age: 33)
        #expect(d.location.isApproximatelyEqual(to: mean, absoluteTolerance: 1e-9))
        #expect(d.scale.isApproximatelyEqual(to: sd, absoluteTolerance: 1e-9))
        #expect(d.skewness == 0 && d.tailWeight == 1)
        let continuous = AgeNormScale(norms: AgeNorms(name: "c", version: "1", model: .continuous(fit.norms)), settings: Self.scaleSettings)
        let linear = try IQScale(norms: Norms(name: "l", version: "1", mean: mean, sd: sd))
        for theta in stride(from: -3.0, through: 3.0, by: 0.25) {
            #expect(
                continuous.rawIQ(theta: theta, age: 50).isApproximatelyEqual(to: linear.rawIQ(theta: theta), absoluteTolerance: 1e-6), "θ \(theta)")
        }
    }

    @Test("seeded: a normal, age-constant population (n = 20,000, weighted) gives the linear IQ within 0.5 points over IQ 55–145")
    func reducesToLinear() throws {
        var rng = SeededGenerator(seed: 11)
        let n = 20_000
        let ages = (0..<n).map { _ in 16 + 74 * RandomVariate.uniform(using: &rng) }
        let thetas = (0..<n).map { _ in RandomVariate.normal(mean: -0.2, sd: 0.9, using: &rng) }
        let weights = (0..<n).map { _ in 0.5 + RandomVariate.uniform(using: &rng) }
        var options = ContinuousNormsOptions()
        options.maximumDegrees = SHASHDegrees(location: 3, logScale: 2, skewness: 1, logTailWeight: 0)
        let fit = try ContinuousNorms.fit(ages: ages, thetas: thetas, weights: weights, options: options)
        #expect(fit.converged)
        #expect(fit.percentileCheck.passed)
        // BIC keeps the model small: no age terms for a constant population.
        #expect(fit.norms.degrees.parameterCount <= 4, "\(fit.norms.degrees)")
        let norms = AgeNorms(name: "c", version: "1", model: .continuous(fit.norms))
        let scale = AgeNormScale(norms: norms, settings: Self.scaleSettings)
        let linear = try IQScale(norms: Norms(name: "true", version: "1", mean: -0.2, sd: 0.9))
        var largest = 0.0
        for age in stride(from: 16.0, through: 90, by: 2) {
            for iq in stride(from: 55.0, through: 145, by: 5) {
                let theta = -0.2 + 0.9 * (iq - 100) / 15
                largest = max(largest, abs(scale.rawIQ(theta: theta, age: age) - linear.rawIQ(theta: theta)))
            }
        }
        #expect(largest < 0.5, "largest |IQ − linear IQ| \(largest)")
        // The criterion table lists every model fitted, the chosen one with the smallest BIC among the converged.
        let chosen = try #require(fit.table.first { $0.degrees == fit.norms.degrees })
        #expect(fit.table.filter(\.converged).allSatisfy { $0.value >= chosen.value })
    }

    @Test(
        "seeded recovery (small form): young and educated over-sampled; raking back to the margins brings the IQ within RMS 2.0 of the population's, and helps"
    )
    func recovery() throws {
        var rng = SeededGenerator(seed: 2024)
        let sample = NormingRecoveryPopulation.sample(count: 4000, selective: true, using: &rng)
        var options = NormsBuildOptions(name: "recovery", version: "1")
        options.continuous.maximumDegrees = SHASHDegrees(location: 4, logScale: 2, skewness: 1, logTailWeight: 0)
        let raked = try NormsBuilder.build(sample, margins: NormingRecoveryPopulation.margins, options: options)
        let unweighted = try NormsBuilder.build(sample, margins: nil, options: options)
        let withRaking = NormingRecoveryPopulation.errors(of: raked.norms)
        let without = NormingRecoveryPopulation.errors(of: unweighted.norms)
        #expect(raked.converged)
        #expect(raked.document.weighting.converged == true)
        #expect(raked.document.weighting.maximumMarginError! <= 1e-10)
        #expect(raked.document.percentileCheck.passed)
        #expect(withRaking.rms < 2.0, "RMS with raking \(withRaking.rms), largest \(withRaking.largest)")
        #expect(withRaking.rms < without.rms - 1, "raking must help: \(withRaking.rms) vs \(without.rms) without")
        // Reseeding reproduces the document exactly.
        var again = SeededGenerator(seed: 2024)
        let sample2 = NormingRecoveryPopulation.sample(count: 4000, selective: true, using: &again)
        #expect(try NormsBuilder.build(sample2, margins: NormingRecoveryPopulation.margins, options: options).document == raked.document)
    }

    @Test("the percentile check counts crossings of a broken model (σ underflowing to 0) and passes a fitted one")
    func percentileCheck() {
        let range = AgeStandardization(minimum: 16, maximum: 90)
        let good = ContinuousNorms(
            ages: range, location: AgePolynomial(coefficients: [0, -0.3, -0.2]), logScale: AgePolynomial(coefficients: [0, 0.1]),
            skewness: AgePolynomial(coefficients: [-0.2, 0.3]), logTailWeight: .constant(-0.1))
        let check = PercentileCurveCheck(norms: .continuous(good))
        #expect(check.passed)
        #expect(check.minimumGap > 0)
        // log σ = −350(1 + t): from the second of 11 ages on (σ ≤ e⁻⁷⁰), μ + σ·x rounds to μ = 1 for every
        // percentile, so each of those 10 ages has 98 ties.
        let broken = ContinuousNorms(ages: range, location: .constant(1), logScale: AgePolynomial(coefficients: [-350, -350]))
        let bad = PercentileCurveCheck(norms: .continuous(broken), ages: 11)
        #expect(!bad.passed)
        #expect(bad.crossings == 980, "\(bad.summary)")
    }

    @Test("non-convergence and degenerate fits are results with warnings, not errors")
    func nonConvergence() throws {
        var rng = SeededGenerator(seed: 13)
        let ages = (0..<200).map { _ in 20 + 40 * RandomVariate.uniform(using: &rng) }
        let thetas = ages.map { 0.02 * ($0 - 40) + RandomVariate.normal(using: &rng) }
        var options = ContinuousNormsOptions()
        options.fixedDegrees = SHASHDegrees(location: 3, logScale: 2, skewness: 1, logTailWeight: 1)
        options.maximumIterations = 1
        let fit = try ContinuousNorms.fit(ages: ages, thetas: thetas, options: options)
        #expect(!fit.converged)
        #expect(fit.iterations == 1)
        #expect(
            fit.warnings.contains { $0.hasPrefix("the chosen model (μ 3, log σ 2, ε 1, log δ 1) did not converge in 1 Newton iterations") },
            "\(fit.warnings)")
        // 200 persons for 11 parameters: 18.2 per parameter, below 20.
        #expect(
            fit.warnings.contains("only 18.182 effective persons per parameter (200.000 for 11 parameters): the norms rest on too few persons"),
            "\(fit.warnings)")
        // Degrees of log σ above those of μ (the basis must reach the largest of all four).
        var wide = ContinuousNormsOptions()
        wide.fixedDegrees = SHASHDegrees(location: 0, logScale: 4, skewness: 3, logTailWeight: 2)
        wide.maximumIterations = 3
        #expect(try ContinuousNorms.fit(ages: ages, thetas: thetas, options: wide).norms.degrees == wide.fixedDegrees)
        // The search chooses μ 1 for a straight line when 1 is its largest degree, and says so.
        var constant = ContinuousNormsOptions()
        constant.maximumDegrees = SHASHDegrees(location: 1, logScale: 0)
        let line = try ContinuousNorms.fit(ages: ages, thetas: ages.map { 0.05 * ($0 - 40) + 0.01 * sin($0) }, options: constant)
        #expect(line.norms.degrees.location == 1)
        #expect(
            line.warnings.contains("the criterion chose the largest degree allowed for μ 1; a higher degree might fit better"), "\(line.warnings)")
    }

    @Test("too little data is an error naming the numbers")
    func insufficient() {
        #expect(throws: PsychometricsError(.insufficientData, "continuous norms need at least 10 persons, got 3")) {
            try ContinuousNorms.fit(ages: [20, 30, 40], thetas: [0, 1, 2])
        }
        #expect(throws: PsychometricsError(.insufficientData, "continuous norms need persons of different ages; every age is 30.000")) {
            try ContinuousNorms.fit(ages: Array(repeating: 30, count: 12), thetas: (0..<12).map(Double.init))
        }
    }
}
