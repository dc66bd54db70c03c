import Foundation
import Numerics
@testable import Psychometrics
import PsychometricsIO
import Testing
import TestSupport

/// SQUAREM against plain EM on the same data and settings: the same optimum in fewer E-steps, a log posterior
/// that never drops, fixed items that never move, and a sparse 3PL bank that plain EM does not finish.
@Suite("SQUAREM: accelerated EM reaches plain EM's optimum")
struct SQUAREMTests {
    static let icar16: ResponseMatrix = {
        let root = Repository.root
        return try! ResponseMatrix.load(csv: root.appendingPathComponent("Data/icar16.csv").path).matrix
    }()

    static func fit(_ data: ResponseMatrix, _ options: CalibrationOptions, _ acceleration: EMAcceleration) throws -> CalibrationResult {
        var options = options
        options.acceleration = acceleration
        options.standardErrors = false
        return try EMCalibrator(options: options).calibrate(data)
    }

    /// The objective EM increases may only drop by rounding: 10⁻¹¹ of its size (the safeguard allows 10⁻¹²,
    /// the M-step's step halving 10⁻¹² of each item's part).
    static func expectNonDecreasing(_ trace: [Double], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var worst = 0.0
        for (x, y) in zip(trace, trace.dropFirst()) { worst = max(worst, (x - y) / abs(x)) }
        #expect(worst <= 1e-11, "\(label): the log posterior dropped by \(worst) of its size", sourceLocation: sourceLocation)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var data: String
        var model: IRTModel
        /// Bound on SQUAREM's E-steps as a fraction of plain EM's; the measured counts are in the comment.
        var maxRatio: Double
        var testDescription: String { "\(data) \(model)" }
        var matrix: ResponseMatrix { data == "LSAT7" ? LSAT7.matrix : SQUAREMTests.icar16 }
    }

    // E-steps at tolerance 1e-6, plain → SQUAREM (measured): LSAT7 Rasch 17 → 8, 2PL 76 → 26, 3PL 62 → 23;
    // ICAR16 2PL 41 → 20, 3PL 85 → 30.
    static let cases = [
        Case(data: "LSAT7", model: .rasch, maxRatio: 0.6),
        Case(data: "LSAT7", model: .twoPL, maxRatio: 0.5),
        Case(data: "LSAT7", model: .threePL, maxRatio: 0.5),
        Case(data: "ICAR16", model: .twoPL, maxRatio: 0.6),
        Case(data: "ICAR16", model: .threePL, maxRatio: 0.5)
    ]

    /// Tolerances: both runs stop where one EM cycle changes no parameter by 1e-6, within about 1e-6/(1 − ρ) of
    /// the optimum (ρ the EM rate); the estimates measured agree to 6e-6, the log-likelihoods to 7e-6.
    @Test("at tolerance 1e-6: log-likelihood within 1e-3 of plain EM, parameters within 1e-4, in fewer E-steps", arguments: cases)
    func sameOptimumFewerESteps(_ c: Case) throws {
        var options = CalibrationOptions(model: c.model)
        options.tolerance = 1e-6
        let plain = try Self.fit(c.matrix, options, .none)
        let fast = try Self.fit(c.matrix, options, .squarem)
        #expect(plain.converged && fast.converged)
        #expect(plain.eSteps == plain.cycles && plain.extrapolations == 0 && plain.rejectedExtrapolations == 0)
        #expect(fast.eSteps == fast.cycles + fast.rejectedExtrapolations)
        #expect(fast.extrapolations > 0)
        #expect(
            fast.logLikelihood.isApproximatelyEqual(to: plain.logLikelihood, absoluteTolerance: 1e-3),
            "log-likelihood \(fast.logLikelihood) vs plain \(plain.logLikelihood)")
        for (x, y) in zip(fast.items, plain.items) {
            #expect(x.parameters.discrimination.isApproximatelyEqual(to: y.parameters.discrimination, absoluteTolerance: 1e-4), "\(x.itemID) a")
            #expect(x.parameters.difficulty.isApproximatelyEqual(to: y.parameters.difficulty, absoluteTolerance: 1e-4), "\(x.itemID) b")
            #expect(x.parameters.guessing.isApproximatelyEqual(to: y.parameters.guessing, absoluteTolerance: 1e-4), "\(x.itemID) c")
        }
        #expect(fast.latentSD.isApproximatelyEqual(to: plain.latentSD, absoluteTolerance: 1e-4))
        #expect(Double(fast.eSteps) <= c.maxRatio * Double(plain.eSteps), "E-steps: SQUAREM \(fast.eSteps), plain \(plain.eSteps)")
        // The objective never drops: plain EM (a generalised EM) and SQUAREM (its safeguard).
        #expect(fast.logPosteriorTrace.count == fast.cycles && fast.logLikelihoodTrace.count == fast.cycles)
        Self.expectNonDecreasing(plain.logPosteriorTrace, "plain")
        Self.expectNonDecreasing(fast.logPosteriorTrace, "SQUAREM")
        if c.model != .threePL { #expect(fast.logPosteriorTrace == fast.logLikelihoodTrace) }
        #expect((fast.logPosteriorTrace + fast.logLikelihoodTrace).allSatisfy { $0.isFinite })
    }

    @Test("the default tolerance: the same stopping rule, plain EM's estimates to its own precision")
    func defaultTolerance() throws {
        // ICAR16 3PL with the default priors: plain EM 51 cycles, SQUAREM 21 E-steps. At tolerance 1e-4 plain EM
        // stops further from the optimum (its log posterior is 0.002 lower than SQUAREM's here).
        let options = CalibrationOptions(model: .threePL)
        let plain = try Self.fit(Self.icar16, options, .none)
        let fast = try Self.fit(Self.icar16, options, .squarem)
        #expect(plain.converged && fast.converged)
        #expect(fast.lastChange < options.tolerance)
        #expect(fast.eSteps <= 30, "E-steps: SQUAREM \(fast.eSteps), plain \(plain.eSteps)")
        #expect(fast.logPosteriorTrace.last! >= plain.logPosteriorTrace.last! - 1e-3)
        for (x, y) in zip(fast.items, plain.items) {
            #expect(x.parameters.difficulty.isApproximatelyEqual(to: y.parameters.difficulty, absoluteTolerance: 2e-3), "\(x.itemID) b")
        }
    }

    @Test("fixed items never move; μ and σ reach plain EM's values", arguments: [IRTModel.rasch, .twoPL, .threePL])
    func fixedItems(_ model: IRTModel) throws {
        let study = PretestStudy(persons: 2000, seed: 31)
        var options = CalibrationOptions(model: model)
        options.fixedItems = study.fixedItems
        // 1e-5: with fixed items the 3PL EM map is itself only that exact (plain EM's largest change stalls at
        // 1.6e-6 and it does not converge at 1e-6 in 500 cycles; measured, this seed).
        options.tolerance = 1e-5
        let plain = try Self.fit(study.data, options, .none)
        let fast = try Self.fit(study.data, options, .squarem)
        #expect(plain.converged && fast.converged)
        #expect(fast.eSteps < plain.eSteps, "E-steps: SQUAREM \(fast.eSteps), plain \(plain.eSteps)")
        #expect(fast.logLikelihood.isApproximatelyEqual(to: plain.logLikelihood, absoluteTolerance: 1e-3))
        #expect(fast.latentMean.isApproximatelyEqual(to: plain.latentMean, absoluteTolerance: 1e-4))
        #expect(fast.latentSD.isApproximatelyEqual(to: plain.latentSD, absoluteTolerance: 1e-4))
        for (item, truth) in zip(fast.items.prefix(40), study.operational) {
            #expect(item.isFixed && item.parameters == truth)
        }
        for (x, y) in zip(fast.items.suffix(10), plain.items.suffix(10)) {
            #expect(x.parameters.difficulty.isApproximatelyEqual(to: y.parameters.difficulty, absoluteTolerance: 1e-4), "\(x.itemID) b")
        }
        Self.expectNonDecreasing(fast.logPosteriorTrace, "SQUAREM with fixed items")
    }

    /// `iqscore simulate --model 3pl --items 300 --items-per-session 25 --persons 4000 --seed 54`: about 330
    /// responses per item, as in the app's bank. Two items are answered at about their guessing rate, so their
    /// b drifts to +∞ by ever smaller steps: plain EM is still moving after the default 500 cycles (measured:
    /// largest change 8.4e-4), SQUAREM stops in 37 E-steps (release build), switching to one step length per
    /// item after its first rejected step.
    @Test("a sparse 3PL bank with items at chance converges with the default priors")
    func sparseBankConverges() throws {
        var rng = SeededGenerator(seed: 54)
        let bank = BankSpecification(model: .threePL, itemCount: 300).draw(using: &rng)
        let simulator = ResponseSimulator(parameters: bank.items.map(\.parameters), itemsPerSession: 25)
        let data = simulator.matrix(count: 4000, itemIDs: bank.items.map(\.itemID), using: &rng).0
        var options = CalibrationOptions(model: .threePL)
        let fast = try Self.fit(data, options, .squarem)
        #expect(fast.converged, "\(fast.warnings.first ?? "")")
        #expect(fast.eSteps <= 60, "E-steps \(fast.eSteps)")
        #expect(fast.rejectedExtrapolations >= 1)
        Self.expectNonDecreasing(fast.logPosteriorTrace, "SQUAREM")
        #expect(
            fast.items.allSatisfy { $0.parameters.difficulty.isFinite && $0.parameters.discrimination.isFinite && $0.parameters.guessing.isFinite })
        // Plain EM, given twice SQUAREM's cycles and more, has not converged, and is no higher.
        options.maxCycles = 100
        let plain = try Self.fit(data, options, .none)
        #expect(!plain.converged)
        #expect(fast.logPosteriorTrace.last! >= plain.logPosteriorTrace.last! - 1e-3)
    }

    @Test("the step: α = −‖r‖/‖v‖ within [−αmax, −1], x′ = x₀ − 2αr + α²v; αmax grows ×4 and shrinks ÷4")
    func extrapolationStep() throws {
        // Two blocks converging linearly to 0, at rates 0.9 and 0.5: x₁ = ρx₀, x₂ = ρ²x₀. For one block r = (ρ − 1)x₀,
        // v = (ρ − 1)²x₀, so α = −1/(1 − ρ) and x′ = x₀(1 + 2(ρ − 1)/(1 − ρ) + (ρ − 1)²/(1 − ρ)²) = 0.
        let x0 = [1.0, 2.0], x1 = [0.9, 1.0], x2 = [0.81, 0.5]
        var step = SQUAREM(blocks: [0..<1, 1..<2])
        // αmax = 1 at first: plain EM (nil), and a kept step at the bound raises it to 4, then 16.
        #expect(step.extrapolate(x0, x1, x2) == nil)
        step.record(alpha: -1, kept: true)
        #expect(step.stepBound == 4)
        // One α for the vector: ‖r‖/‖v‖ = √(0.01 + 1)/√(0.0001 + 0.25) = 2.0094…, inside [1, 4].
        let one = try #require(step.extrapolate(x0, x1, x2))
        let alpha = -((0.01 + 1) / (0.0001 + 0.25)).squareRoot()
        #expect(one.alpha.isApproximatelyEqual(to: alpha, relativeTolerance: 1e-14))
        let expected = (0..<2).map { k in x0[k] - 2 * alpha * (x1[k] - x0[k]) + alpha * alpha * (x2[k] - 2 * x1[k] + x0[k]) }
        #expect(zip(one.point, expected).allSatisfy { $0.isApproximatelyEqual(to: $1, absoluteTolerance: 1e-14) })
        step.record(alpha: one.alpha, kept: true)
        #expect(step.stepBound == 4 && !step.perBlock)
        // The same data with x₂ − x₁ = 0.9(x₁ − x₀) in the first block only asks for α = −10: clamped to −4.
        let clamped = try #require(step.extrapolate([1], [0.9], [0.81]))
        #expect(clamped.alpha == -4)
        step.record(alpha: clamped.alpha, kept: true)
        #expect(step.stepBound == 16)
        // A rejected step at the bound: αmax ÷ 4, and the next step takes one α per block, each exact here.
        step.record(alpha: -16, kept: false)
        #expect(step.stepBound == 4 && step.perBlock)
        step.record(alpha: -4, kept: true)
        let blocks = try #require(step.extrapolate(x0, x1, x2))
        #expect(blocks.alpha.isApproximatelyEqual(to: -10, relativeTolerance: 1e-12))
        #expect(blocks.point.allSatisfy { abs($0) < 1e-12 }, "\(blocks.point)")
        // Another rejection switches back to one α.
        step.record(alpha: -2, kept: false)
        #expect(!step.perBlock && step.stepBound == 16)
    }
}
