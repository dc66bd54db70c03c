import Numerics
import Psychometrics
import PsychometricsIO
import Testing

/// Seeded recovery: simulate from known parameters, calibrate, compare. Tolerances are RMSEs chosen about 1.5×
/// what these seeds give, so they catch a broken estimator without being fragile.
@Suite("EM calibration: parameter recovery")
struct EMRecoveryTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var model: IRTModel
        var items: Int
        var persons: Int
        var perSession: Int?
        var thetaSD = 1.0
        var maxRMSEa: Double
        var maxRMSEb: Double
        var maxRMSEc = 0.0
        var testDescription: String { "\(model) \(perSession == nil ? "dense" : "sparse") \(persons)×\(perSession ?? items) of \(items)" }
    }

    static let cases: [Case] = [
        Case(model: .rasch, items: 20, persons: 3000, thetaSD: 1.4, maxRMSEa: 0, maxRMSEb: 0.08),
        Case(model: .rasch, items: 60, persons: 8000, perSession: 15, thetaSD: 1.4, maxRMSEa: 0, maxRMSEb: 0.1),
        Case(model: .onePL, items: 20, persons: 3000, maxRMSEa: 0.05, maxRMSEb: 0.08),
        Case(model: .onePL, items: 60, persons: 8000, perSession: 15, maxRMSEa: 0.05, maxRMSEb: 0.1),
        Case(model: .twoPL, items: 20, persons: 3000, maxRMSEa: 0.1, maxRMSEb: 0.1),
        Case(model: .twoPL, items: 60, persons: 10000, perSession: 20, maxRMSEa: 0.12, maxRMSEb: 0.12),
        // 3PL difficulties of items with a high asymptote are weakly determined (their SEs reach 0.4 here), so
        // the RMSE bounds are wider; the SE calibration check below still applies.
        Case(model: .threePL, items: 30, persons: 8000, maxRMSEa: 0.25, maxRMSEb: 0.5, maxRMSEc: 0.1),
        Case(model: .threePL, items: 60, persons: 20000, perSession: 25, maxRMSEa: 0.25, maxRMSEb: 0.5, maxRMSEc: 0.1)
    ]

    @Test("recovers the generating parameters", arguments: cases)
    func recovery(_ c: Case) throws {
        let sim = Simulated(model: c.model, items: c.items, persons: c.persons, perSession: c.perSession, thetaSD: c.thetaSD, seed: 2024)
        var options = CalibrationOptions(model: c.model)
        options.eStep = c.perSession == nil ? .dense : .sparse
        let result = try EMCalibrator(options: options).calibrate(sim.data)
        #expect(result.converged)
        #expect(result.eStep == options.eStep)
        let b = result.items.map(\.parameters.difficulty), trueB = sim.truth.map(\.difficulty)
        if c.model == .rasch {
            // Rasch difficulties are on the θ scale, whose SD is estimated.
            #expect(result.latentSD.isApproximatelyEqual(to: c.thetaSD, absoluteTolerance: 0.06), "latent SD \(result.latentSD)")
        } else {
            let a = result.items.map(\.parameters.discrimination), trueA = sim.truth.map(\.discrimination)
            #expect(rmse(a, trueA) <= c.maxRMSEa, "RMSE(a) = \(rmse(a, trueA))")
        }
        #expect(rmse(b, trueB) <= c.maxRMSEb, "RMSE(b) = \(rmse(b, trueB))")
        if c.model == .threePL {
            let cc = result.items.map(\.parameters.guessing), trueC = sim.truth.map(\.guessing)
            #expect(rmse(cc, trueC) <= c.maxRMSEc, "RMSE(c) = \(rmse(cc, trueC))")
        }
        // Standard errors are of the right size: (estimate − truth)/SE has a root mean square near 1. The bound
        // only rules out SEs off by a factor of 2: the sample's own θ mean shifts every b together (with seed
        // 2024 the 2PL dense sample has mean −0.074), so the z's are correlated. The exact SE check is the
        // numerical-Hessian test in EMCalibratorTests.
        let z = zip(result.items, sim.truth).map { ($0.parameters.difficulty - $1.difficulty) / ($0.standardErrors.difficulty ?? .nan) }
        let rmsZ = (z.map { $0 * $0 }.reduce(0, +) / Double(z.count)).squareRoot()
        #expect(rmsZ > 0.5 && rmsZ < 2.0, "RMS of standardised b errors = \(rmsZ)")
        // Every reported number is finite, and SEs exist for the free parameters.
        #expect(result.logLikelihood.isFinite && result.aic.isFinite && result.bic.isFinite)
        for item in result.items {
            #expect(item.standardErrors.difficulty.map { $0 > 0 && $0.isFinite } == true)
            if c.model != .rasch { #expect(item.standardErrors.discrimination.map { $0 > 0 && $0.isFinite } == true) }
        }
    }

    @Test("dense (BLAS) and sparse E-steps give the same fit", arguments: [IRTModel.onePL, .twoPL, .threePL])
    func denseEqualsSparse(_ model: IRTModel) throws {
        // Data with some missing cells so the dense path uses its mask.
        let sim = Simulated(model: model, items: 12, persons: 1500, perSession: 10, seed: 11)
        var options = CalibrationOptions(model: model)
        options.eStep = .dense
        let dense = try EMCalibrator(options: options).calibrate(sim.data)
        options.eStep = .sparse
        let sparse = try EMCalibrator(options: options).calibrate(sim.data)
        #expect(dense.cycles == sparse.cycles)
        #expect(dense.logLikelihood.isApproximatelyEqual(to: sparse.logLikelihood, absoluteTolerance: 1e-6))
        for (x, y) in zip(dense.items, sparse.items) {
            #expect(x.parameters.discrimination.isApproximatelyEqual(to: y.parameters.discrimination, absoluteTolerance: 1e-8))
            #expect(x.parameters.difficulty.isApproximatelyEqual(to: y.parameters.difficulty, absoluteTolerance: 1e-8))
            #expect((x.standardErrors.difficulty ?? 0).isApproximatelyEqual(to: y.standardErrors.difficulty ?? 0, absoluteTolerance: 1e-8))
        }
    }

    @Test(
        "complete data: the moment-based (Rasch, 2PL) and per-node-matrix (3PL) Louis terms equal the stacked one",
        arguments: [IRTModel.rasch, .twoPL, .threePL])
    func completeDataStandardErrors(_ model: IRTModel) throws {
        // Dense + complete uses the O(N·J²) moment formulation (O(N·Q·J²) per-node matrices for 3PL); sparse
        // stacks every node's score.
        let sim = Simulated(model: model, items: 10, persons: 2000, seed: 21)
        var options = CalibrationOptions(model: model)
        options.eStep = .dense
        let fast = try EMCalibrator(options: options).calibrate(sim.data)
        options.eStep = .sparse
        let generic = try EMCalibrator(options: options).calibrate(sim.data)
        for (x, y) in zip(fast.items, generic.items) {
            let bx = try #require(x.standardErrors.difficulty), by = try #require(y.standardErrors.difficulty)
            #expect(bx.isApproximatelyEqual(to: by, relativeTolerance: 1e-7))
            if model != .rasch {
                let ax = try #require(x.standardErrors.discrimination), ay = try #require(y.standardErrors.discrimination)
                #expect(ax.isApproximatelyEqual(to: ay, relativeTolerance: 1e-7))
            }
            if model == .threePL {
                let cx = try #require(x.standardErrors.guessing), cy = try #require(y.standardErrors.guessing)
                #expect(cx.isApproximatelyEqual(to: cy, relativeTolerance: 1e-7))
            }
        }
        if model == .rasch {
            let sx = try #require(fast.latentSDStandardError), sy = try #require(generic.latentSDStandardError)
            #expect(sx.isApproximatelyEqual(to: sy, relativeTolerance: 1e-7))
        }
    }

    @Test("2PL with a slope prior: the moment-based Louis term still matches")
    func completeDataStandardErrorsLogSlope() throws {
        let sim = Simulated(model: .twoPL, items: 8, persons: 1500, seed: 22)
        var options = CalibrationOptions(model: .twoPL)
        options.slopePrior = try LogNormalPrior(meanLog: 0, sdLog: 0.5)
        options.eStep = .dense
        let fast = try EMCalibrator(options: options).calibrate(sim.data)
        options.eStep = .sparse
        let generic = try EMCalibrator(options: options).calibrate(sim.data)
        for (x, y) in zip(fast.items, generic.items) {
            #expect((x.standardErrors.discrimination ?? 0).isApproximatelyEqual(to: y.standardErrors.discrimination ?? 1, relativeTolerance: 1e-7))
            #expect((x.standardErrors.difficulty ?? 0).isApproximatelyEqual(to: y.standardErrors.difficulty ?? 1, relativeTolerance: 1e-7))
        }
    }

    @Test("automatic E-step: dense at ≥ 15% answered cells, sparse below")
    func automaticStrategy() throws {
        let denser = Simulated(model: .twoPL, items: 40, persons: 800, perSession: 8, seed: 8) // 20%
        let sparser = Simulated(model: .twoPL, items: 40, persons: 800, perSession: 4, seed: 8) // 10%
        #expect(try EMCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(denser.data).eStep == .dense)
        #expect(try EMCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(sparser.data).eStep == .sparse)
    }

    @Test("results do not depend on the number of worker threads")
    func workersDoNotChangeResults() throws {
        let sim = Simulated(model: .twoPL, items: 30, persons: 4000, perSession: 12, seed: 5)
        var options = CalibrationOptions(model: .twoPL)
        options.workers = 1
        let one = try EMCalibrator(options: options).calibrate(sim.data)
        options.workers = 4
        let four = try EMCalibrator(options: options).calibrate(sim.data)
        #expect(one.logLikelihood.isApproximatelyEqual(to: four.logLikelihood, absoluteTolerance: 1e-6))
        #expect(one.cycles == four.cycles)
    }

    @Test("the EM log-likelihood never decreases without priors")
    func monotoneLogLikelihood() throws {
        let sim = Simulated(model: .twoPL, items: 15, persons: 2000, seed: 3)
        let result = try EMCalibrator(options: CalibrationOptions(model: .twoPL)).calibrate(sim.data)
        for (x, y) in zip(result.logLikelihoodTrace, result.logLikelihoodTrace.dropFirst()) {
            #expect(y >= x - 1e-7)
        }
    }
}
