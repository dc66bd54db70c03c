import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("Ability estimation: known values")
struct AbilityEstimatorKnownValueTests {
    /// n Rasch items all at b = 0: ML θ = logit(r/n), SE = 1/√(n p(1 − p)); WLE θ = log((r + ½)/(n − r + ½))
    /// (Warm's correction J/(2I) = (1 − 2p)/2 in closed form).
    static let flat = [ItemParameters](repeating: ItemParameters(difficulty: 0), count: 10)

    @Test("ML on equal Rasch items is logit(r/n) with SE 1/√(np(1−p))", arguments: [1, 3, 5, 8, 9])
    func mlClosedForm(correct r: Int) throws {
        let estimator = try AbilityEstimator(parameters: Self.flat, options: AbilityOptions(method: .ml))
        let responses = (0..<10).map { UInt8($0 < r ? 1 : 0) }
        let e = try estimator.estimate(items: Array(0..<10), responses: responses)
        let p = Double(r) / 10
        #expect(e.theta.isApproximatelyEqual(to: log(p / (1 - p)), absoluteTolerance: 1e-8))
        #expect(e.standardError.isApproximatelyEqual(to: 1 / (10 * p * (1 - p)).squareRoot(), absoluteTolerance: 1e-8))
        #expect(!e.atBound)
    }

    @Test("ML for all-correct / all-wrong patterns sits at the bound, flagged")
    func mlPerfectScore() throws {
        let estimator = try AbilityEstimator(parameters: Self.flat, options: AbilityOptions(method: .ml))
        let top = try estimator.estimate(items: Array(0..<10), responses: [UInt8](repeating: 1, count: 10))
        #expect(top.theta == 6 && top.atBound && top.isPerfect)
        let bottom = try estimator.estimate(items: Array(0..<10), responses: [UInt8](repeating: 0, count: 10))
        #expect(bottom.theta == -6 && bottom.atBound && bottom.isZero)
        // SE from the information at the bound: 1/√(10 σ(6)(1 − σ(6))) ≈ 6.36.
        let p = 1 / (1 + exp(-6.0))
        #expect(top.standardError.isApproximatelyEqual(to: 1 / (10 * p * (1 - p)).squareRoot(), relativeTolerance: 1e-9))
    }

    @Test("WLE on equal Rasch items is log((r + ½)/(n − r + ½)), finite for perfect scores", arguments: [0, 2, 5, 7, 10])
    func wleClosedForm(correct r: Int) throws {
        let estimator = try AbilityEstimator(parameters: Self.flat, options: AbilityOptions(method: .wle))
        let responses = (0..<10).map { UInt8($0 < r ? 1 : 0) }
        let e = try estimator.estimate(items: Array(0..<10), responses: responses)
        let expected = log((Double(r) + 0.5) / (10 - Double(r) + 0.5))
        #expect(e.theta.isApproximatelyEqual(to: expected, absoluteTolerance: 1e-8))
        let p = 1 / (1 + exp(-expected))
        #expect(e.standardError.isApproximatelyEqual(to: 1 / (10 * p * (1 - p)).squareRoot(), absoluteTolerance: 1e-7))
        #expect(!e.atBound)
    }

    /// A 2PL/3PL pattern for EAP and MAP checks.
    static let mixed = [
        ItemParameters(discrimination: 1.2, difficulty: -1.0),
        ItemParameters(discrimination: 0.8, difficulty: -0.3, guessing: 0.2),
        ItemParameters(discrimination: 1.7, difficulty: 0.4),
        ItemParameters(discrimination: 1.0, difficulty: 1.1, guessing: 0.25),
        ItemParameters(discrimination: 2.1, difficulty: 0.0),
        ItemParameters(discrimination: 0.6, difficulty: 2.0)
    ]
    static let pattern: [UInt8] = [1, 1, 0, 1, 1, 0]

    func likelihood(_ theta: Double) -> Double {
        zip(Self.mixed, Self.pattern).reduce(1.0) { l, pair in
            let p = pair.0.probability(at: theta)
            return l * (pair.1 == 1 ? p : 1 - p)
        }
    }

    @Test("EAP equals the posterior mean and SD by independent quadrature")
    func eapAgainstQuadrature() throws {
        let estimator = try AbilityEstimator(parameters: Self.mixed)
        let e = try estimator.estimate(items: Array(0..<6), responses: Self.pattern)
        // Composite Simpson on [−10, 10] with 20,000 intervals: the continuous integral to ~1e-12.
        let n = 20000, lo = -10.0, h = 20.0 / Double(n)
        var m0 = 0.0, m1 = 0.0, m2 = 0.0
        for i in 0...n {
            let t = lo + Double(i) * h
            let w = (i == 0 || i == n) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0)
            let f = likelihood(t) * exp(-0.5 * t * t)
            m0 += w * f; m1 += w * f * t; m2 += w * f * t * t
        }
        let mean = m1 / m0, sd = (m2 / m0 - mean * mean).squareRoot()
        // Tolerance 1e-6: the 61-point rectangle rule on [−6, 6] against the continuous integral.
        #expect(e.theta.isApproximatelyEqual(to: mean, absoluteTolerance: 1e-6), "EAP \(e.theta) vs \(mean)")
        #expect(e.standardError.isApproximatelyEqual(to: sd, absoluteTolerance: 1e-6), "SE \(e.standardError) vs \(sd)")
    }

    @Test("MAP and ML maximise the (posterior) likelihood found by brute-force search")
    func modesAgainstGridSearch() throws {
        for method in [AbilityMethod.map, .ml] {
            let estimator = try AbilityEstimator(parameters: Self.mixed, options: AbilityOptions(method: method))
            let e = try estimator.estimate(items: Array(0..<6), responses: Self.pattern)
            // Golden-section search on the log objective over [−6, 6], independent of the estimator.
            func f(_ t: Double) -> Double { log(likelihood(t)) - (method == .map ? 0.5 * t * t : 0) }
            var a = -6.0, b = 6.0
            let g = (5.0.squareRoot() - 1) / 2
            for _ in 0..<200 {
                let c = b - g * (b - a), d = a + g * (b - a)
                if f(c) > f(d) { b = d } else { a = c }
            }
            #expect(e.theta.isApproximatelyEqual(to: (a + b) / 2, absoluteTolerance: 1e-6), "\(method): \(e.theta) vs \((a + b) / 2)")
            // SE from the test information at θ̂ (plus the prior's 1/σ² for MAP).
            let info = Self.mixed.reduce(0) { $0 + $1.information(at: e.theta) } + (method == .map ? 1 : 0)
            #expect(e.standardError.isApproximatelyEqual(to: 1 / info.squareRoot(), relativeTolerance: 1e-9))
        }
    }

    @Test("the estimator is order-free and subset-aware")
    func subsetAndOrder() throws {
        let estimator = try AbilityEstimator(parameters: Self.mixed)
        let a = try estimator.estimate(items: [4, 0, 2], responses: [1, 1, 0])
        let b = try estimator.estimate(items: [0, 2, 4], responses: [1, 0, 1])
        #expect(a.theta.isApproximatelyEqual(to: b.theta, absoluteTolerance: 1e-12))
        #expect(a.itemCount == 3 && a.correctCount == 2)
    }

    @Test("invalid options and parameters are rejected")
    func invalid() {
        var options = AbilityOptions()
        options.priorSD = 0
        #expect(throws: PsychometricsError.self) { try AbilityEstimator(parameters: Self.mixed, options: options) }
        #expect(throws: PsychometricsError.self) { try AbilityEstimator(parameters: [ItemParameters(difficulty: .nan)]) }
    }
}

@Suite("Ability estimation: recovery")
struct AbilityEstimatorRecoveryTests {
    @Test("estimates track the true θ with SEs of the right size", arguments: AbilityMethod.allCases)
    func recovery(_ method: AbilityMethod) throws {
        var rng = SeededGenerator(seed: 77)
        var spec = BankSpecification(model: .twoPL, itemCount: 30)
        spec.slopeSDLog = 0.2
        let bank = spec.draw(using: &rng).items.map(\.parameters)
        let estimator = try AbilityEstimator(parameters: bank, options: AbilityOptions(method: method))
        var errors: [Double] = [], ses: [Double] = []
        ResponseSimulator(parameters: bank).generate(count: 2000, using: &rng) { session in
            // Central abilities only, so ML's boundary cases do not dominate.
            guard abs(session.theta) < 2 else { return }
            let e = try! estimator.estimate(items: session.responses.map(\.item), responses: session.responses.map(\.response))
            errors.append(e.theta - session.theta)
            ses.append(e.standardError)
        }
        let rmse = (errors.map { $0 * $0 }.reduce(0, +) / Double(errors.count)).squareRoot()
        let meanSE = ses.reduce(0, +) / Double(ses.count)
        // 30 items of a ≈ 1: SE ≈ 0.35–0.4. RMSE within 20% of the mean SE; bias small.
        #expect(rmse < 0.45, "RMSE \(rmse)")
        #expect(abs(rmse / meanSE - 1) < 0.2, "RMSE \(rmse) vs mean SE \(meanSE)")
        #expect(abs(errors.reduce(0, +) / Double(errors.count)) < 0.05)
    }
}

@Suite("IQ scale")
struct IQScaleTests {
    func estimate(_ theta: Double, se: Double = 0.3, items: Int = 25, correct: Int = 12, atBound: Bool = false) -> AbilityEstimate {
        AbilityEstimate(theta: theta, standardError: se, method: .eap, itemCount: items, correctCount: correct, atBound: atBound)
    }

    @Test("IQ = 100 + 15(θ − μ)/σ with percentile from Φ")
    func mapping() throws {
        let scale = try IQScale()
        let s = try scale.score(estimate(1, se: 0.2))
        #expect(s.iq == 115)
        #expect(s.percentile == 84.1) // Φ(1) = 0.841345
        // 95% CI: θ ± 1.959964 · 0.2 → 115 ∓ 5.88 → [109, 121]
        #expect(s.low == 109 && s.high == 121)
        #expect(s.flags.isEmpty)
        #expect(try scale.score(estimate(0)).percentile == 50.0)
        let normed = try IQScale(norms: Norms(name: "adults", version: "2026", mean: 0.5, sd: 0.8))
        #expect(try normed.score(estimate(0.9)).iq == 108) // 100 + 15 · 0.4/0.8 = 107.5 → 108 (half away from zero)
    }

    @Test("rounding is half away from zero")
    func rounding() throws {
        // With σ = 7.5 the IQ is 100 + 2θ exactly (σ = 15, which made it 100 + θ, is outside the norms' SD range
        // now: it is the IQ-scale SD entered as a θ-scale one).
        let scale = try IQScale(norms: Norms(name: "unit", version: "1", mean: 0, sd: 7.5))
        #expect(try scale.score(estimate(0.25)).iq == 101) // 100.5
        #expect(try scale.score(estimate(-0.25)).iq == 100) // 99.5
        #expect(try scale.score(estimate(-0.245)).iq == 100) // 99.51
        #expect(try scale.score(estimate(-0.75)).iq == 99) // 98.5
    }

    @Test("clamping to 40–160 is flagged, the interval is clamped too")
    func clamping() throws {
        let scale = try IQScale()
        let high = try scale.score(estimate(4.5, se: 0.6, items: 25, correct: 25))
        #expect(high.iq == 160 && high.high == 160 && high.low == 150) // 167.5 − 17.6 = 149.9 → 150
        #expect(high.flags == [.clampedHigh, .lowPrecision, .perfectScore])
        let low = try scale.score(estimate(-5, se: 0.3, items: 5, correct: 0, atBound: true))
        #expect(low.iq == 40 && low.low == 40 && low.high == 40)
        #expect(low.flags == [.clampedLow, .zeroScore, .fewItems, .thetaAtBound])
        #expect(low.percentile == 0.0)
    }

    @Test("invalid input is an error, never a number")
    func invalidInput() throws {
        let scale = try IQScale()
        #expect(throws: PsychometricsError.self) { try scale.score(estimate(.nan)) }
        #expect(throws: PsychometricsError.self) { try scale.score(estimate(0, se: 0)) }
        #expect(throws: PsychometricsError.self) { try scale.score(estimate(0, se: .infinity)) }
        #expect(throws: PsychometricsError.self) { try IQScale(norms: Norms(name: "x", version: "1", mean: 0, sd: 0)) }
        #expect(throws: PsychometricsError.self) { try IQScale(confidenceLevel: 1) }
    }

    @Test("normal quantile matches reference values")
    func quantile() {
        #expect(StandardNormal.quantile(0.975).isApproximatelyEqual(to: 1.959963984540054, absoluteTolerance: 1e-14))
        #expect(StandardNormal.quantile(0.5).isApproximatelyEqual(to: 0, absoluteTolerance: 1e-15))
        #expect(StandardNormal.quantile(1e-10).isApproximatelyEqual(to: -6.361340902404056, absoluteTolerance: 1e-11))
        #expect(StandardNormal.cdf(-1.959963984540054).isApproximatelyEqual(to: 0.025, absoluteTolerance: 1e-15))
    }
}

@Suite("expShifted: the vectorised exp of the EAP and E-step weights")
struct VectorExpTests {
    /// exp(x − shift) of each value through the kernel.
    func kernelExp(_ x: [Double], shift: Double = 0) -> [Double] {
        var y = x
        y.withUnsafeMutableBufferPointer { expShifted($0, by: shift) }
        return y
    }

    @Test("within 4 ulp-scale (4.5e-16 relative) of libm exp on [-708, 709]; 0 below -708; exact at 0")
    func matchesLibm() {
        var rng = SeededGenerator(seed: 99)
        var worst = 0.0
        // 7 values a call: the vector body and the scalar tail of every instruction set's version.
        for _ in 0..<30_000 {
            let x = (0..<7).map { _ in -708 + Double(rng.next() % 1_000_000_000) / 1e9 * 1417 }
            let y = kernelExp(x)
            for l in 0..<7 { worst = max(worst, abs(y[l] - exp(x[l])) / exp(x[l])) }
        }
        // Where posterior weights live: differences of log-posteriors, mostly in [-40, 0].
        let grid = (0...40_000).map { -Double($0) / 1000 }
        for (x, e) in zip(grid, kernelExp(grid)) { worst = max(worst, abs(e - exp(x)) / exp(x)) }
        // The shift is subtracted first (exactly here: quarters).
        for (x, e) in zip([2.0, 0, -1.5, -30.25], kernelExp([2.5, 0.5, -1, -29.75], shift: 0.5)) {
            worst = max(worst, abs(e - exp(x)) / exp(x))
        }
        #expect(worst < 4.5e-16, "worst relative error \(worst)")
        #expect(kernelExp([0, -709, -1e300, -745, -.infinity]) == [1, 0, 0, 0, 0])
    }
}

@Suite("EAP: posteriors narrower than the grid")
struct EAPRefinementTests {
    @Test("25 items with a = 50: θ and SE match a 200,001-point integration to 1e-4 (the 61-point grid alone gave θ −0.6001, SE 0.0043)")
    func steepItems() throws {
        let parameters = (0..<25).map { ItemParameters(discrimination: 50, difficulty: -1 + 0.08 * Double($0), guessing: 0) }
        let estimator = try AbilityEstimator(parameters: parameters, options: AbilityOptions(method: .eap))
        // Reference: posterior mean and SD by the rectangle rule on 200,001 points over [−6, 6] (numpy-free
        // Python, prior N(0, 1)); the likelihood is flat between b = −0.68 and −0.60, so θ sits at their middle.
        let first5 = try estimator.estimate(items: Array(0..<25), responses: (0..<25).map { $0 < 5 ? 1 : 0 })
        #expect(abs(first5.theta - -0.6389766) < 1e-4 && abs(first5.standardError - 0.0399885) < 1e-4, "\(first5)")
        let middle = try estimator.estimate(items: Array(0..<25), responses: (0..<25).map { $0 < 13 ? 1 : 0 })
        #expect(abs(middle.theta) < 1e-4 && abs(middle.standardError - 0.0399886) < 1e-4, "\(middle)")
    }
}

@Suite("gramUpperPacked: the standard errors' per-person Gram product")
struct GramUpperPackedTests {
    @Test("equals Σ_t G[x][t]·G[y][t] summed in node order, to the bit, packed by rows; every block shape and tail")
    func matchesTheSum() {
        var rng = SeededGenerator(seed: 17)
        for m in 1...70 {
            for w in [1, 7, 38, 61] {
                let stride = w + 3 // rows strided as a caller's buffer may be
                let g = (0..<(m * stride)).map { _ in Double(rng.next() % 2_000_001) / 1e6 - 1 }
                var packed = [Double](repeating: .nan, count: m * (m + 1) / 2)
                var scratch = [Double](repeating: .nan, count: gramScratchCount(rows: m, columns: w))
                g.withUnsafeBufferPointer { g in
                    scratch.withUnsafeMutableBufferPointer { scratch in
                        packed.withUnsafeMutableBufferPointer { packed in
                            gramUpperPacked(
                                g.baseAddress!, rows: m, columns: w, rowStride: stride, scratch: scratch.baseAddress!,
                                into: packed.baseAddress!)
                        }
                    }
                }
                var expected: [Double] = []
                for x in 0..<m {
                    for y in x..<m {
                        var sum = 0.0
                        for t in 0..<w { sum += g[x * stride + t] * g[y * stride + t] }
                        expected.append(sum)
                    }
                }
                #expect(packed == expected, "m \(m), w \(w)")
            }
        }
    }
}
