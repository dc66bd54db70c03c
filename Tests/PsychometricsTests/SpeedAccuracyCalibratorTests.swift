import Foundation
import Testing
@testable import Psychometrics

/// The hierarchical speed–accuracy model (`SpeedAccuracyCalibrator`, `SpeedAccuracyEngine`, `SessionTimeEvidence`):
/// its closed-form integration over speed against brute-force quadrature, its EM fixed point against the
/// likelihood's gradient, and recovery of simulated parameters.
@Suite("Speed–accuracy model")
struct SpeedAccuracyCalibratorTests {
    /// A 2PL bank with time items, and `n` persons answering `perSession` of its items (all when nil).
    static func simulate(items: Int, persons n: Int, perSession: Int? = nil, correlation: Double, speedSD: Double, seed: UInt64)
        throws -> (
            data: ResponseMatrix, times: ResponseTimes, truth: [ItemParameters], timeTruth: [LognormalTimeItem], thetas: [Double], speeds: [Double]
        )
    {
        var rng = SeededGenerator(seed: seed)
        let bank = BankSpecification(model: .twoPL, itemCount: items).draw(using: &rng)
        let timeItems = ResponseTimeSimulator.drawItems(count: items, using: &rng)
        let population = try SpeedAccuracyPopulation(speedSD: speedSD, correlation: correlation)
        let sim = ResponseSimulator(bank: bank, itemsPerSession: perSession)
        let out = sim.timedMatrix(
            count: n, itemIDs: bank.items.map(\.itemID), times: ResponseTimeSimulator(items: timeItems, population: population), using: &rng)
        return (out.matrix, out.times, bank.items.map(\.parameters), timeItems, out.thetas, out.speeds)
    }

    static func options(_ model: IRTModel = .twoPL) -> CalibrationOptions {
        var o = CalibrationOptions(model: model)
        o.standardErrors = false
        o.workers = 2
        return o
    }

    /// The engine's log-likelihood integrates τ in closed form; here τ is integrated by brute force (a 1,201-point
    /// trapezoid over κθ ± 12 s at every θ node) at parameters that are not an optimum, some times missing.
    /// Tolerance 10⁻⁷ relative: the trapezoid on a Gaussian integrand is exact to far below that.
    @Test func closedFormSpeedIntegralMatchesQuadrature() throws {
        var (data, times, _, _, _, _) = try Self.simulate(items: 6, persons: 16, perSession: 5, correlation: 0.5, speedSD: 0.4, seed: 11)
        // Drop every seventh time.
        times = ResponseTimes(validatedSeconds: times.seconds.enumerated().map { $0.offset % 7 == 3 ? .nan : $0.element })
        var irt = EMEngine(model: .twoPL, options: Self.options(), data: data, useDense: false)
        irt.s = irt.s.enumerated().map { 0.8 + 0.1 * Double($0.offset) }
        var engine = SpeedAccuracyEngine(irt: irt, logTimes: times.seconds.map { $0.isNaN ? .nan : log(Double($0)) })
        engine.beta = engine.beta.map { $0 + 0.1 }
        engine.logAlpha = engine.logAlpha.enumerated().map { 0.3 + 0.05 * Double($0.offset) }
        engine.kappa = 0.25
        engine.logS = log(0.35)
        let closedForm = engine.eStep().logLikelihood

        let population = engine.population, kappa = population.slope, s = population.residualVariance.squareRoot()
        let table = engine.irt.logTable(), nodes = engine.irt.nodes, logWeights = engine.irt.grid.logWeights
        var brute = 0.0
        for i in 0..<data.personCount {
            var terms: [Double] = []
            for (t, theta) in nodes.enumerated() {
                var logP = logWeights[t]
                for k in data.cells(ofPerson: i) { logP += table.row(item: Int(data.itemIndices[k]), category: Int(data.responses[k]))[t] }
                // ∫ Πⱼ f(tⱼ | τ) N(τ; κθ, s²) dτ
                let m = 1201, lo = kappa * theta - 12 * s, h = 24 * s / Double(m - 1)
                var integral = 0.0
                for r in 0..<m {
                    let tau = lo + h * Double(r)
                    var logf = -0.5 * log(2 * Double.pi) - log(s) - 0.5 * pow((tau - kappa * theta) / s, 2)
                    for k in data.cells(ofPerson: i) where !times.seconds[k].isNaN {
                        logf += engine.timeItem(Int(data.itemIndices[k]))!.logDensity(seconds: Double(times.seconds[k]), speed: tau)
                    }
                    integral += (r == 0 || r == m - 1 ? 0.5 : 1) * exp(logf) * h
                }
                terms.append(logP + log(integral))
            }
            let top = terms.max()!
            brute += top + log(terms.reduce(0) { $0 + exp($1 - top) })
        }
        #expect(abs(closedForm - brute) <= 1e-7 * abs(brute), "closed form \(closedForm), quadrature \(brute)")
    }

    /// At the fitted values the joint log-likelihood's derivative in every time parameter and in σ_τ, ρ is zero
    /// (central differences, h = 10⁻⁴): the closed-form M-step is the likelihood's maximum, not a nearby point.
    /// Tolerance: |∂ℓ/∂x| ≤ 0.05 on a log-likelihood of ~−20,000 whose curvature in these parameters is 10³–10⁵
    /// (a step of 0.05/curvature ≤ 5·10⁻⁵ from the optimum, inside the EM tolerance).
    @Test func emFixedPointIsTheMaximum() throws {
        let (data, times, _, _, _, _) = try Self.simulate(items: 8, persons: 800, correlation: 0.4, speedSD: 0.35, seed: 21)
        var o = Self.options()
        o.tolerance = 1e-7
        let fit = try SpeedAccuracyCalibrator(options: o).calibrate(data, times: times)
        #expect(fit.converged)
        var irt = EMEngine(model: .twoPL, options: o, data: data, useDense: false)
        var x = irt.workingParameters()
        for (j, item) in fit.irt.items.enumerated() {
            x[irt.globalIndex(item: j, parameter: 0)] = item.parameters.discrimination
            x[irt.globalIndex(item: j, parameter: 1)] = -item.parameters.discrimination * item.parameters.difficulty
        }
        irt.setWorkingParameters(x)
        var engine = SpeedAccuracyEngine(irt: irt, logTimes: times.seconds.map { ResponseTimes.logSeconds($0) })
        engine.beta = fit.timeItems.map { $0.parameters!.timeIntensity }
        engine.logAlpha = fit.timeItems.map { log($0.parameters!.timeDiscrimination) }
        engine.kappa = fit.population.slope
        engine.logS = 0.5 * log(fit.population.residualVariance)
        #expect(abs(engine.eStep().logLikelihood - fit.logLikelihood) < 1e-6)
        let h = 1e-4
        func derivative(_ change: (inout SpeedAccuracyEngine, Double) -> Void) -> Double {
            var up = engine, down = engine
            change(&up, h)
            change(&down, -h)
            return (up.eStep().logLikelihood - down.eStep().logLikelihood) / (2 * h)
        }
        for j in [0, 3, 7] {
            #expect(abs(derivative { $0.beta[j] += $1 }) < 0.05, "β\(j)")
            #expect(abs(derivative { $0.logAlpha[j] += $1 }) < 0.05, "log α\(j)")
        }
        #expect(abs(derivative { $0.kappa += $1 }) < 0.05, "κ")
        #expect(abs(derivative { $0.logS += $1 }) < 0.05, "log s")
        #expect(abs(derivative { $0.irt.d[2] += $1 }) < 0.05, "d₂")
    }

    /// Recovery on 3,000 simulated persons (30 items, dense and missing by design: 12 of 30 each): β and α within
    /// the stated RMSE, σ_τ and ρ within 3 standard errors, the IRT slopes as the responses-only fit recovers them.
    @Test(arguments: [nil, 12] as [Int?])
    func recovery(perSession: Int?) throws {
        let (data, times, truth, timeTruth, thetas, speeds) = try Self.simulate(
            items: 30, persons: 3000, perSession: perSession, correlation: 0.4,
            speedSD: 0.35, seed: 31)
        var o = Self.options()
        o.standardErrors = true
        let fit = try SpeedAccuracyCalibrator(options: o).calibrate(data, times: times)
        #expect(fit.converged)
        func rmse(_ a: [Double], _ b: [Double]) -> Double {
            (zip(a, b).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) } / Double(a.count)).squareRoot()
        }
        let beta = fit.timeItems.map { $0.parameters!.timeIntensity }, alpha = fit.timeItems.map { $0.parameters!.timeDiscrimination }
        #expect(rmse(beta, timeTruth.map(\.timeIntensity)) < 0.03)
        #expect(rmse(alpha, timeTruth.map(\.timeDiscrimination)) < (perSession == nil ? 0.06 : 0.09))
        #expect(rmse(fit.irt.items.map(\.parameters.discrimination), truth.map(\.discrimination)) < 0.15)
        let sdSE = try #require(fit.speedSDStandardError), rhoSE = try #require(fit.correlationStandardError)
        #expect(abs(fit.population.speedSD - 0.35) < 3 * sdSE, "σ_τ \(fit.population.speedSD) ± \(sdSE)")
        #expect(abs(fit.population.correlation - 0.4) < 3 * rhoSE, "ρ \(fit.population.correlation) ± \(rhoSE)")
        // The SEs of β are about the Monte Carlo spread: z-scores' RMS in [0.6, 1.6].
        let z = (0..<30).map { (beta[$0] - timeTruth[$0].timeIntensity) / fit.timeItems[$0].timeIntensityStandardError! }
        let rms = (z.reduce(0) { $0 + $1 * $1 } / 30).squareRoot()
        #expect(rms > 0.6 && rms < 1.6, "RMS z of β \(rms)")
        // Persons: speed estimates correlate with the truth, and times shrink θ's posterior SD (ρ = 0.4).
        let estimates = fit.persons.map(\.speed)
        // (Expected: with 30 timed items of α ≈ 1.5 τ's reliability is ≈ 0.93, with 12 ≈ 0.77; θ's about 0.85 and 0.7.)
        #expect(Self.correlation(estimates, speeds) > (perSession == nil ? 0.95 : 0.85))
        #expect(Self.correlation(fit.persons.map(\.theta), thetas) > (perSession == nil ? 0.88 : 0.78))
        #expect(fit.collateralSDRatio < 0.995)
    }

    /// With ρ = 0 the times say nothing about ability: θ's posterior SD is the responses-only one (ratio ≈ 1), and
    /// the joint fit's IRT items equal the responses-only fit's to the EM tolerance.
    @Test func noCorrelationNoCollateral() throws {
        let (data, times, _, _, _, _) = try Self.simulate(items: 10, persons: 1500, correlation: 0, speedSD: 0.3, seed: 41)
        let fit = try SpeedAccuracyCalibrator(options: Self.options()).calibrate(data, times: times)
        #expect(abs(fit.population.correlation) < 0.08)
        #expect(abs(fit.collateralSDRatio - 1) < 0.003)
        let alone = try EMCalibrator(options: Self.options()).calibrate(data)
        for (a, b) in zip(fit.irt.items, alone.items) {
            #expect(abs(a.parameters.discrimination - b.parameters.discrimination) < 0.03)
        }
    }

    @Test func refusals() throws {
        let (data, times, _, _, _, _) = try Self.simulate(items: 4, persons: 30, correlation: 0, speedSD: 0.3, seed: 5)
        #expect(throws: PsychometricsError.self) { try SpeedAccuracyCalibrator(options: Self.options(.rasch)).calibrate(data, times: times) }
        #expect(throws: PsychometricsError.self) {
            try SpeedAccuracyCalibrator(options: Self.options()).calibrate(data, times: ResponseTimes(validatedSeconds: [1, 2]))
        }
        let noTimes = ResponseTimes(validatedSeconds: [Float](repeating: .nan, count: data.cellCount))
        #expect(throws: PsychometricsError.self) { try SpeedAccuracyCalibrator(options: Self.options()).calibrate(data, times: noTimes) }
        let small = try ResponseMatrix(itemIDs: ["a", "b"], rows: [[1, 0]])
        #expect(throws: PsychometricsError.self) { try ResponseTimes(seconds: [0, 3], for: small) }
        #expect(throws: PsychometricsError.self) { try ResponseTimes(seconds: [-1, 3], for: small) }
        #expect(throws: PsychometricsError.self) { try ResponseTimes(seconds: [.infinity, 3], for: small) }
        #expect(try ResponseTimes(seconds: [.nan, 3], for: small).recordedCount == 1)
        #expect(throws: PsychometricsError.self) { try LognormalTimeItem(timeIntensity: 3, timeDiscrimination: 0) }
        #expect(throws: PsychometricsError.self) { try SpeedAccuracyPopulation(speedSD: 0.3, correlation: 1) }
    }

    static func correlation(_ a: [Double], _ b: [Double]) -> Double {
        let ma = a.reduce(0, +) / Double(a.count), mb = b.reduce(0, +) / Double(b.count)
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for (x, y) in zip(a, b) { sab += (x - ma) * (y - mb); saa += (x - ma) * (x - ma); sbb += (y - mb) * (y - mb) }
        return sab / (saa * sbb).squareRoot()
    }
}
