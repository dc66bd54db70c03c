import Foundation
import Testing
@testable import Psychometrics

@Suite("Bifactor calibration")
struct BifactorCalibratorTests {
    /// Items of two specific factors (three items each) and two general-only items.
    static let items: [BifactorItem] = [
        BifactorItem(generalSlope: 1.2, specificSlope: 0.8, specific: 0, intercept: 0.3),
        BifactorItem(generalSlope: 0.9, specificSlope: 1.1, specific: 0, intercept: -0.5),
        BifactorItem(generalSlope: 1.5, specificSlope: 0.6, specific: 0, intercept: 1.0),
        BifactorItem(generalSlope: 1.0, specificSlope: 1.3, specific: 1, intercept: 0.0),
        BifactorItem(generalSlope: 1.4, specificSlope: 0.7, specific: 1, intercept: -1.1),
        BifactorItem(generalSlope: 0.8, specificSlope: 0.9, specific: 1, intercept: 0.6),
        BifactorItem(generalSlope: 1.1, intercept: 0.2),
        BifactorItem(generalSlope: 0.7, intercept: -0.4, guessing: 0.2, estimatesGuessing: true)
    ]

    /// The engine for `items` on `data` (items in the data's order, grouped as the calibrator groups them).
    static func engine(_ items: [BifactorItem], data: ResponseMatrix, points: Int, bound: Double = 5) -> BifactorEngine {
        let specifics = (items.compactMap(\.specific).max() ?? -1) + 1
        let (order, newIndex, groups, ranges) = BifactorEngine.grouping(items.map(\.specific), specificCount: specifics)
        let renumbered = data.renumberingItems(newIndex, itemIDs: order.map { data.itemIDs[$0] })
        return BifactorEngine(
            items: order.map { items[$0] }, data: renumbered, grid: QuadratureGrid(validatedCount: points, bound: bound),
            group: groups, groupItems: ranges, workers: 2, maximumSlope: 20, slopePrior: nil,
            guessingPrior: nil)
    }

    /// log L by brute force on the full product grid: Σ over (θ_g, θ_1, …, θ_S) of Π weights × Π_j P(u_j).
    static func bruteForceLogLikelihood(_ items: [BifactorItem], data: ResponseMatrix, grid: QuadratureGrid) -> Double {
        let specifics = (items.compactMap(\.specific).max() ?? -1) + 1, q = grid.count
        var total = 0.0
        for i in 0..<data.personCount {
            var terms: [Double] = []
            var index = [Int](repeating: 0, count: specifics + 1)
            repeat {
                var logTerm = 0.0
                for d in index { logTerm += grid.logWeights[d] }
                for k in data.cells(ofPerson: i) {
                    let item = items[Int(data.itemIndices[k])]
                    let z = item.logit(general: grid.points[index[0]], specific: item.specific.map { grid.points[index[$0 + 1]] } ?? 0)
                    let lp = item.logProbabilities(logit: z)
                    logTerm += data.responses[k] == 1 ? lp.right : lp.wrong
                }
                terms.append(logTerm)
                var d = 0
                while d <= specifics {
                    index[d] += 1
                    if index[d] < q { break }
                    index[d] = 0
                    d += 1
                }
                if d > specifics { break }
            } while true
            let m = terms.max()!
            total += m + log(terms.reduce(0) { $0 + exp($1 - m) })
        }
        return total
    }

    @Test("the dimension-reduced E-step equals the full-grid integral, and every answer's posterior sums to 1")
    func eStepKnownValue() throws {
        var rng = SeededGenerator(seed: 7)
        // Missing by design: 6 of the 8 items per person.
        let (data, _) = BifactorSimulator(items: Self.items, specificFactorCount: 2, itemsPerSession: 6)
            .matrix(count: 40, itemIDs: (1...8).map { "i\($0)" }, using: &rng)
        let engine = Self.engine(Self.items, data: data, points: 9)
        let e = engine.eStep()
        let brute = Self.bruteForceLogLikelihood(Self.items, data: data, grid: engine.grid)
        #expect(abs(e.logLikelihood - brute) < 1e-10 * abs(brute), "E-step \(e.logLikelihood), full grid \(brute)")
        // Σ_nodes (r_0 + r_1) = the item's responses.
        let answered = engine.data.itemTotals().responses
        for j in 0..<engine.items.count {
            let c = engine.itemCounts(e, item: j)
            let sum = (0..<c.nodes).reduce(0.0) { $0 + c.counts[c.wrongOffset + $1] + c.counts[c.rightOffset + $1] }
            #expect(abs(sum - Double(answered[j])) < 1e-9, "item \(j): counts sum to \(sum), \(answered[j]) responses")
        }
    }

    @Test("a specific factor too long for products is integrated in logs, to the same value")
    func logPathKnownValue() throws {
        // 800 items of one specific factor answered at random: the best node's product is below 2^-700.
        var items = (0..<800).map {
            BifactorItem(generalSlope: 1 + Double($0 % 5) * 0.2, specificSlope: 0.8, specific: 0, intercept: Double($0 % 7) - 3)
        }
        items.append(BifactorItem(generalSlope: 1, intercept: 0))
        var rng = SeededGenerator(seed: 11)
        let rows: [[UInt8?]] = (0..<3).map { _ in (0..<801).map { _ in UInt8(rng.next() & 1) } }
        let data = try ResponseMatrix(itemIDs: (0..<801).map { "i\($0)" }, rows: rows)
        let engine = Self.engine(items, data: data, points: 7)
        let e = engine.eStep(), brute = Self.bruteForceLogLikelihood(items, data: data, grid: engine.grid)
        #expect(e.logLikelihood / 3 < -700 * log(2.0))
        #expect(abs(e.logLikelihood - brute) < 1e-10 * abs(brute), "E-step \(e.logLikelihood), full grid \(brute)")
    }

    @Test("the gradient (Fisher's identity) equals the log-likelihood's central differences (bifactor, testlet)", arguments: [false, true])
    func gradientMatchesFiniteDifferences(testlet: Bool) throws {
        var rng = SeededGenerator(seed: 3)
        // The testlet model: factor 0's λ 0.7, factor 1's λ 1.2 (a_s = λ a_g).
        let items = testlet ? Self.items.map { item in item.specific.map { item.withTestletRatio($0 == 0 ? 0.7 : 1.2) } ?? item } : Self.items
        let (data, _) = BifactorSimulator(items: items, specificFactorCount: 2).matrix(count: 200, itemIDs: (1...8).map { "i\($0)" }, using: &rng)
        let engine = Self.engine(items, data: data, points: 11)
        #expect(engine.workingParameters().count == (testlet ? 19 : 23))
        let g = engine.gradient(engine.eStep()), x = engine.workingParameters()
        let differences = Self.logLikelihoodDifferences(engine)
        for k in x.indices {
            let numeric = differences[k]
            #expect(abs(g[k] - numeric) < 2e-4 * max(1, abs(numeric)), "parameter \(k): gradient \(g[k]), differences \(numeric)")
        }
    }

    /// Central differences (step 10⁻⁵) of an engine's log-likelihood in each working parameter.
    static func logLikelihoodDifferences<Engine: EMIterable>(_ engine: Engine) -> [Double] {
        let x = engine.workingParameters(), h = 1e-5
        return x.indices.map { k in
            var up = engine, down = engine
            var xu = x, xd = x
            xu[k] += h
            xd[k] -= h
            up.setWorkingParameters(xu)
            down.setWorkingParameters(xd)
            return (up.eStep().logLikelihood - down.eStep().logLikelihood) / (2 * h)
        }
    }

    /// A battery of 3 specific factors × `perFactor` items plus 2 general-only items, slopes and intercepts drawn.
    static func battery(perFactor: Int, seed: UInt64) -> [BifactorItem] {
        var rng = SeededGenerator(seed: seed)
        func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * RandomVariate.uniform(using: &rng) }
        var items: [BifactorItem] = []
        for f in 0..<3 {
            for _ in 0..<perFactor {
                items.append(
                    BifactorItem(generalSlope: uniform(0.8, 2.0), specificSlope: uniform(0.5, 1.5), specific: f, intercept: uniform(-1.5, 1.5)))
            }
        }
        items.append(BifactorItem(generalSlope: uniform(0.8, 2.0), intercept: uniform(-1, 1)))
        items.append(BifactorItem(generalSlope: uniform(0.8, 2.0), intercept: uniform(-1, 1)))
        return items
    }

    static func structure(_ items: [BifactorItem]) throws -> FactorStructure {
        try FactorStructure(items: items.enumerated().map { ("i\($0.offset)", $0.element.specific.map { ["pattern", "verbal", "spatial"][$0] }) })
    }

    @Test("seeded recovery, dense: slopes and intercepts within their standard errors of the truth", arguments: [false, true])
    func recovery(missingByDesign: Bool) throws {
        let truth = Self.battery(perFactor: missingByDesign ? 8 : 4, seed: 21)
        var rng = SeededGenerator(seed: missingByDesign ? 5 : 4)
        let simulator = BifactorSimulator(items: truth, specificFactorCount: 3, itemsPerSession: missingByDesign ? 16 : nil)
        let (data, _) = simulator.matrix(count: 4000, itemIDs: truth.indices.map { "i\($0)" }, using: &rng)
        var options = BifactorCalibrator.defaultOptions
        options.quadraturePoints = 15
        options.tolerance = 1e-5
        let result = try BifactorCalibrator(options: options).calibrate(data, structure: try Self.structure(truth))
        #expect(result.converged)
        #expect(result.items.map(\.itemID) == truth.indices.map { "i\($0)" })
        var z: [Double] = [], errors: (g: [Double], s: [Double], d: [Double]) = ([], [], [])
        for (fit, true_) in zip(result.items, truth) {
            #expect(fit.item.specific == true_.specific)
            errors.g.append(fit.item.generalSlope - true_.generalSlope)
            errors.d.append(fit.item.intercept - true_.intercept)
            z.append((fit.item.generalSlope - true_.generalSlope) / fit.generalSlopeStandardError!)
            z.append((fit.item.intercept - true_.intercept) / fit.interceptStandardError!)
            if true_.specific != nil {
                errors.s.append(fit.item.specificSlope - true_.specificSlope)
                z.append((fit.item.specificSlope - true_.specificSlope) / fit.specificSlopeStandardError!)
            }
        }
        func rms(_ v: [Double]) -> Double { (v.reduce(0) { $0 + $1 * $1 } / Double(v.count)).squareRoot() }
        // 4,000 persons: the slopes' SEs are about 0.06–0.12, the intercepts' 0.04–0.08.
        #expect(
            rms(errors.g) < 0.15 && rms(errors.s) < 0.2 && rms(errors.d) < 0.12, "RMSE a_g \(rms(errors.g)), a_s \(rms(errors.s)), d \(rms(errors.d))"
        )
        // The standard errors are right in size: |z| mostly below 2, none beyond 4, and the z's RMS near 1.
        #expect(z.allSatisfy { abs($0) < 4 }, "z \(z.map { ($0 * 100).rounded() / 100 })")
        #expect(rms(z) > 0.6 && rms(z) < 1.4, "RMS of z \(rms(z))")
    }

    @Test("seeded recovery of the testlet model: λ per factor and the slopes within their standard errors; nested in the bifactor")
    func testletRecovery() throws {
        let ratios = [0.6, 1.0, 0.8]
        let truth = Self.battery(perFactor: 4, seed: 22).map { item in item.specific.map { item.withTestletRatio(ratios[$0]) } ?? item }
        var rng = SeededGenerator(seed: 9)
        let (data, _) = BifactorSimulator(items: truth, specificFactorCount: 3).matrix(
            count: 4000, itemIDs: truth.indices.map { "i\($0)" }, using: &rng)
        var options = BifactorCalibrator.defaultOptions
        options.quadraturePoints = 15
        options.tolerance = 1e-5
        let structure = try Self.structure(truth)
        let testlet = try BifactorCalibrator(options: options, testlet: true).calibrate(data, structure: structure)
        #expect(testlet.converged && testlet.testlet)
        #expect(testlet.parameterCount == 14 * 2 + 3)
        for f in 0..<3 {
            let ratio = try #require(testlet.testletRatios[f]), se = try #require(testlet.testletRatioStandardErrors[f])
            #expect(abs(ratio - ratios[f]) < 3.5 * se, "factor \(f): λ \(ratio) (SE \(se)), truth \(ratios[f])")
            #expect(se > 0.01 && se < 0.2)
        }
        for (fit, true_) in zip(testlet.items, truth) {
            #expect(abs(fit.item.generalSlope - true_.generalSlope) < 3.5 * fit.generalSlopeStandardError!)
            #expect(abs(fit.item.intercept - true_.intercept) < 3.5 * fit.interceptStandardError!)
            if let f = true_.specific {
                #expect(abs(fit.item.specificSlope - testlet.testletRatios[f]! * fit.item.generalSlope) < 1e-12)
                #expect(fit.specificSlopeStandardError != nil)
            }
        }
        // The bifactor model nests it: its maximum is not lower, and by less than the 11 extra parameters' χ² would
        // allow at 0.001 (data from the testlet model).
        let bifactor = try BifactorCalibrator(options: options).calibrate(data, structure: structure)
        let difference = 2 * (bifactor.logLikelihood - testlet.logLikelihood)
        #expect(difference > -1e-3 && difference < 31.3, "2ΔlogL \(difference)")
    }

    @Test("EAP scores: means and posterior covariance equal the full-grid integral; an unanswered factor keeps its prior")
    func eapKnownValue() throws {
        // Three specific factors; the session answers items of factors 0 and 1 and a general-only item, none of factor 2.
        let items = Self.items + [BifactorItem(generalSlope: 1.3, specificSlope: 0.9, specific: 2, intercept: 0.1)]
        let scorer = try BifactorScorer(items: items, specificFactorCount: 3, quadraturePoints: 9, bound: 5)
        let answers: [(item: Int, response: UInt8)] = [(0, 1), (1, 0), (2, 1), (3, 1), (5, 0), (6, 1)]
        let estimate = try scorer.eap(answers)
        // Brute force over (θ_g, θ_1, θ_2) (factor 2 unanswered integrates out).
        let grid = scorer.grid, q = grid.count
        var total = 0.0, m = [Double](repeating: 0, count: 3), mm = [Double](repeating: 0, count: 9)
        for a in 0..<q {
            for b in 0..<q {
                for c in 0..<q {
                    let theta = [grid.points[a], grid.points[b], grid.points[c]]
                    var w = grid.weights[a] * grid.weights[b] * grid.weights[c]
                    for (j, u) in answers {
                        let item = items[j], p = item.probability(general: theta[0], specific: item.specific.map { theta[$0 + 1] } ?? 0)
                        w *= u == 1 ? p : 1 - p
                    }
                    total += w
                    for x in 0..<3 { m[x] += w * theta[x]; for y in 0..<3 { mm[x * 3 + y] += w * theta[x] * theta[y] } }
                }
            }
        }
        for x in 0..<3 {
            #expect(abs(estimate.means[x] - m[x] / total) < 1e-10, "mean \(x): \(estimate.means[x]) against \(m[x] / total)")
            for y in 0..<3 {
                let cov = mm[x * 3 + y] / total - m[x] * m[y] / (total * total)
                #expect(abs(estimate.covariance[x * 4 + y] - cov) < 1e-10, "cov \(x),\(y)")
            }
        }
        #expect(abs(estimate.logLikelihood - log(total)) < 1e-10)
        #expect(estimate.answersPerFactor == [3, 2, 0])
        // Factor 2: the prior on the grid, uncorrelated with the rest.
        #expect(abs(estimate.means[3]) < 1e-12 && abs(estimate.standardErrors[3] - 1) < 0.01 && abs(estimate.covariance[3]) < 1e-12)
        #expect(estimate.standardErrors[0] < 1 && estimate.covariance[1] != 0)
        #expect(throws: PsychometricsError.self) { try scorer.eap([(0, 2)]) }
        #expect(throws: PsychometricsError.self) { try scorer.eap([(9, 1)]) }
        #expect(throws: PsychometricsError.self) { try scorer.eap([(0, 1), (0, 0)]) }
    }

    @Test("ω, ω_H, ECV and H from standardized loadings: a battery worked by hand")
    func reliabilityKnownValue() throws {
        // Two domains of four items, every item λ_g = 0.6, λ_s = 0.4 (u = 0.48): a_k = 1.702 λ_k / √u.
        let u = 1 - 0.36 - 0.16, scale = 1.702 / u.squareRoot()
        let items = (0..<8).map { BifactorItem(generalSlope: 0.6 * scale, specificSlope: 0.4 * scale, specific: $0 / 4, intercept: 0) }
        let structure = try FactorStructure(items: (0..<8).map { ("i\($0)", $0 < 4 ? "a" : "b") })
        let r = BifactorReliability(items: items, structure: structure)
        // (Σλ_g)² = 4.8² = 23.04, Σ_s (Σλ_s)² = 2 · 1.6² = 5.12, Σu = 3.84: ω = 28.16/32, ω_H = 23.04/32.
        #expect(abs(r.omega - 0.88) < 1e-12 && abs(r.omegaHierarchical - 0.72) < 1e-12)
        #expect(abs(r.explainedCommonVariance - 2.88 / 4.16) < 1e-12)
        #expect(abs(r.construct - 4.5 / 5.5) < 1e-12) // Σ λ²/(1 − λ²) = 8 · 0.36/0.64 = 4.5
        #expect(r.domains.map(\.factor) == ["a", "b"] && r.domains.allSatisfy { $0.items == 4 })
        for domain in r.domains {
            // (2.4² + 1.6²)/(5.76 + 2.56 + 1.92) and 2.56/10.24; H: Σ = 4 · 0.16/0.84.
            #expect(abs(domain.omega - 8.32 / 10.24) < 1e-12 && abs(domain.omegaHierarchical - 0.25) < 1e-12)
            #expect(abs(domain.construct - (0.64 / 0.84) / (1 + 0.64 / 0.84)) < 1e-12)
        }
    }

    @Test("standardized loadings as mirt 1.47's summary() gives them (ICAR16 by domain, mirt's own estimates)")
    func loadingsAsMirt() {
        // mirt: bfactor(icar16, domains, TOL = 1e-6); coef a1, a2 and summary()$rotF G, S.
        let cases: [(a: (Double, Double), loadings: (Double, Double))] = [
            ((1.66242406544898, 0.827858095731245), (0.65993079430129, 0.328633988185875)), // reason.4
            ((1.75651143239776, 2.10193806421305), (0.544663740345118, 0.651774549776349)) // rotate.3
        ]
        for (a, expected) in cases {
            let l = BifactorReliability.loadings(BifactorItem(generalSlope: a.0, specificSlope: a.1, specific: 0, intercept: 0))
            #expect(abs(l.general - expected.0) < 1e-9 && abs(l.specific - expected.1) < 1e-9, "\(l) against \(expected)")
        }
    }
}
