import Foundation
import Testing
@testable import Psychometrics

// Issue 28: the correlated-factors model (simple structure, factor correlations estimated, PD by construction).

@Suite("Correlated factors")
struct CorrelatedFactorsTests {
    /// Three factors of three items (item slopes on their factor as general slopes), R with 0.6, 0.3, 0.5.
    static let items: [BifactorItem] = [
        BifactorItem(generalSlope: 1.2, intercept: 0.3), BifactorItem(generalSlope: 0.9, intercept: -0.5),
        BifactorItem(generalSlope: 1.5, intercept: 1.0),
        BifactorItem(generalSlope: 1.0, intercept: 0.0), BifactorItem(generalSlope: 1.4, intercept: -1.1),
        BifactorItem(generalSlope: 0.8, intercept: 0.6),
        BifactorItem(generalSlope: 1.1, intercept: 0.2), BifactorItem(generalSlope: 1.7, intercept: -0.4),
        BifactorItem(generalSlope: 0.7, intercept: 0.9)
    ]
    static let factors = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    static let correlations: [Double] = [1, 0.6, 0.3, 0.6, 1, 0.5, 0.3, 0.5, 1]

    @Test("the parametrisation: R has unit diagonal and is PD for any x, round-trips, and its gradient is F's")
    func parametrisation() throws {
        let model = FactorCorrelation(k: 3, grid: QuadratureGrid(validatedCount: 11, bound: 5))
        let x = try #require(model.parameters(of: Self.correlations))
        let r = model.matrix(x)
        for (a, b) in zip(r, Self.correlations) { #expect(abs(a - b) < 1e-14) }
        // Any x, even far out, is a correlation matrix with a positive Cholesky diagonal.
        for y in [[40.0, -3, 7], [-1e3, 1e3, 0.5], [0, 0, 0]] {
            let l = model.cholesky(y).l, ry = model.matrix(y)
            #expect((0..<3).allSatisfy { l[$0 * 3 + $0] > 0 && abs(ry[$0 * 3 + $0] - 1) < 1e-15 })
        }
        #expect(model.parameters(of: [1, 1, 0, 1, 1, 0, 0, 0, 1]) == nil)
        // ∂F/∂x against central differences of F.
        let s: [Double] = [410, 190, 75, 190, 380, 140, 75, 140, 395], n = 400.0
        let (_, gradient) = model.logDensity(x, persons: n, secondMoments: s)
        for c in 0..<3 {
            var up = x, down = x
            up[c] += 1e-6; down[c] -= 1e-6
            let numeric =
                (model.logDensity(up, persons: n, secondMoments: s).value - model.logDensity(down, persons: n, secondMoments: s).value) / 2e-6
            #expect(abs(gradient[c] - numeric) < 1e-5 * max(1, abs(numeric)), "x\(c): \(gradient[c]) against \(numeric)")
        }
        // K = 2 on a fine grid (the normal density's): the maximiser of −½[N log(1 − ρ²) + (s11 + s22 − 2ρ s12)/(1 − ρ²)]
        // solves the cubic N ρ (1 − ρ²) + s12 (1 + ρ²) − ρ (s11 + s22) = 0; bisection on it.
        let s2: [Double] = [380, 150, 150, 420], two = FactorCorrelation(k: 2, grid: QuadratureGrid(validatedCount: 81, bound: 8))
        let rho = two.matrix(two.maximize(from: [0], persons: n, secondMoments: s2))[1]
        func cubic(_ p: Double) -> Double { n * p * (1 - p * p) + s2[1] * (1 + p * p) - p * (s2[0] + s2[3]) }
        var lo = 0.0, hi = 0.99
        for _ in 0..<200 { let mid = (lo + hi) / 2; if cubic(lo) * cubic(mid) <= 0 { hi = mid } else { lo = mid } }
        #expect(abs(rho - lo) < 1e-6, "ρ \(rho) against \(lo)")
    }

    /// The engine for `items` on `data`, R from `correlations`, items grouped by factor.
    static func engine(_ data: ResponseMatrix, points: Int, correlations: [Double] = correlations) -> CorrelatedFactorsEngine {
        let (order, newIndex, groups, ranges) = BifactorEngine.grouping(factors.map { Optional($0) }, specificCount: 3)
        let renumbered = data.renumberingItems(newIndex, itemIDs: order.map { data.itemIDs[$0] })
        return CorrelatedFactorsEngine(
            items: order.map { items[$0] }, correlation: FactorCorrelation(k: 3).parameters(of: correlations)!, data: renumbered,
            grid: QuadratureGrid(validatedCount: points, bound: 5), factor: groups.map { $0 - 1 },
            factorItems: Array(ranges.dropFirst()), workers: 2, maximumSlope: 20, slopePrior: nil, guessingPrior: nil)
    }

    @Test("E-step: log-likelihood equal to brute force over the Q³ grid; every posterior sums to 1; the gradient is log L's")
    func eStepKnownValue() throws {
        var rng = SeededGenerator(seed: 5)
        let simulator = try CorrelatedFactorsSimulator(items: Self.items, factors: Self.factors, correlations: Self.correlations, itemsPerSession: 6)
        let (data, _) = simulator.matrix(count: 600, itemIDs: (0..<9).map { "i\($0)" }, using: &rng)
        var engine = Self.engine(data, points: 9)
        let e = engine.eStep()
        // Brute force: Σ_nodes prior(node) Π_j P(u_ij | θ_f(j)) per person, the prior normalised on the grid.
        let grid = engine.grid, r = FactorCorrelation(k: 3).matrix(engine.correlation)
        let det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6]) + r[2] * (r[3] * r[7] - r[4] * r[6])
        _ = det
        let inverse: [Double] = {
            var m = [Double](repeating: 0, count: 9)
            let c = [(4, 8, 5, 7), (2, 7, 1, 8), (1, 5, 2, 4), (5, 6, 3, 8), (0, 8, 2, 6), (2, 3, 0, 5), (3, 7, 4, 6), (1, 6, 0, 7), (0, 4, 1, 3)]
            for (k, (a, b, x, y)) in c.enumerated() { m[k] = (r[a] * r[b] - r[x] * r[y]) / det }
            return m
        }()
        var prior = [Double](), nodes = [[Double]]()
        for a in 0..<9 {
            for b in 0..<9 {
                for c in 0..<9 {
                    let t = [grid.points[a], grid.points[b], grid.points[c]]
                    var quad = 0.0
                    for i in 0..<3 { for j in 0..<3 { quad += t[i] * inverse[i * 3 + j] * t[j] } }
                    prior.append(exp(-0.5 * quad)); nodes.append(t)
                }
            }
        }
        let mass = prior.reduce(0, +)
        var total = 0.0
        for i in 0..<data.personCount {
            var sum = 0.0
            for (n, t) in nodes.enumerated() {
                var v = prior[n] / mass
                for k in engine.data.cells(ofPerson: i) {
                    let j = Int(engine.data.itemIndices[k]), p = engine.items[j].probability(general: t[Int(engine.factor[j])], specific: 0)
                    v *= engine.data.responses[k] == 1 ? p : 1 - p
                }
                sum += v
            }
            total += log(sum)
        }
        #expect(abs(e.logLikelihood - total) < 1e-9 * abs(total), "\(e.logLikelihood) against \(total)")
        // Each answer adds a posterior summing to 1: the counts total the answers; S's diagonal is below N.
        let answers = Double(engine.data.responses.count), counted = e.counts.reduce(0) { $0 + $1.reduce(0, +) }
        #expect(abs(counted - answers) < 1e-8 * answers)
        // Fisher's identity: the gradient equals central differences of log L.
        let x = engine.workingParameters(), g = engine.gradient(e)
        for c in [0, 1, 4, 9, x.count - 3, x.count - 2, x.count - 1] {
            var up = engine, down = engine
            var xu = x, xd = x
            xu[c] += 1e-5; xd[c] -= 1e-5
            up.setWorkingParameters(xu); down.setWorkingParameters(xd)
            let numeric = (up.eStep().logLikelihood - down.eStep().logLikelihood) / 2e-5
            #expect(abs(g[c] - numeric) < 1e-4 * max(1, abs(numeric)), "parameter \(c): \(g[c]) against \(numeric)")
        }
        // The log path (taken when a person's products underflow) gives the same log-likelihood as the products:
        // person 0's factor log-likelihoods on the nodes, through it.
        var h = [Double](repeating: 0, count: 27)
        for k in engine.data.cells(ofPerson: 0) {
            let j = Int(engine.data.itemIndices[k]), f = Int(engine.factor[j])
            for a in 0..<9 {
                let p = engine.items[j].probability(general: grid.points[a], specific: 0)
                h[f * 9 + a] += log(engine.data.responses[k] == 1 ? p : 1 - p)
            }
        }
        var marginal = [Double](repeating: 0, count: 27), moments = [Double](repeating: 0, count: 9)
        let logPrior = FactorCorrelation(k: 3, grid: grid).gridPrior(engine.correlation).logWeights
        let (sum, offset) = engine.correlationModel.logSums(h: h, logPrior: logPrior, marginal: &marginal, moments: &moments)
        var person0 = 0.0
        for (n, t) in nodes.enumerated() {
            var v = prior[n] / mass
            for k in engine.data.cells(ofPerson: 0) {
                let j = Int(engine.data.itemIndices[k]), p = engine.items[j].probability(general: t[Int(engine.factor[j])], specific: 0)
                v *= engine.data.responses[k] == 1 ? p : 1 - p
            }
            person0 += v
        }
        #expect(abs(log(sum) + offset - log(person0)) < 1e-12)
        #expect(abs(marginal[0..<9].reduce(0, +) - sum) < 1e-12 * sum && abs(marginal[18..<27].reduce(0, +) - sum) < 1e-12 * sum)
    }

    @Test("recovery: 3 correlated factors, dense and missing by design, within their standard errors")
    func recovery() throws {
        var rng = SeededGenerator(seed: 28)
        let simulator = try CorrelatedFactorsSimulator(
            items: Self.items + Self.items, factors: Self.factors + Self.factors, correlations: Self.correlations)
        let ids = (0..<18).map { "i\($0)" }
        let (data, _) = simulator.matrix(count: 3000, itemIDs: ids, using: &rng)
        let structure = try FactorStructure(items: ids.enumerated().map { ($1, ["a", "b", "c"][(Self.factors + Self.factors)[$0]]) })
        var options = CalibrationOptions(model: .twoPL)
        options.tolerance = 1e-5
        let result = try CorrelatedFactorsCalibrator(options: options, quadraturePoints: 15).calibrate(data, structure: structure)
        #expect(result.converged && result.factors == ["a", "b", "c"] && result.nodes == 3375 && result.quadraturePoints == 15)
        let se = try #require(result.correlationStandardErrors)
        var zs: [Double] = []
        for (f, g) in [(1, 0), (2, 0), (2, 1)] {
            let z = (result.correlations[f * 3 + g] - Self.correlations[f * 3 + g]) / se[f * 3 + g]
            #expect(abs(z) < 3.5 && se[f * 3 + g] > 0.01 && se[f * 3 + g] < 0.06, "ρ\(f)\(g) \(result.correlations[f * 3 + g]) SE \(se[f * 3 + g])")
            zs.append(z)
        }
        for (j, item) in result.items.enumerated() {
            let truth = (Self.items + Self.items)[j]
            zs.append((item.slope - truth.generalSlope) / item.slopeStandardError!)
            zs.append((item.intercept - truth.intercept) / item.interceptStandardError!)
        }
        let rms = (zs.reduce(0) { $0 + $1 * $1 } / Double(zs.count)).squareRoot()
        #expect(rms > 0.6 && rms < 1.4, "RMS z \(rms)")
        // Missing by design (8 of 18 items each): the correlations still recovered.
        let sparse = try CorrelatedFactorsSimulator(
            items: Self.items + Self.items, factors: Self.factors + Self.factors, correlations: Self.correlations, itemsPerSession: 8)
        let (missing, _) = sparse.matrix(count: 3000, itemIDs: ids, using: &rng)
        options.standardErrors = false
        let fit = try CorrelatedFactorsCalibrator(options: options, quadraturePoints: 15).calibrate(missing, structure: structure)
        for (f, g) in [(1, 0), (2, 0), (2, 1)] { #expect(abs(fit.correlations[f * 3 + g] - Self.correlations[f * 3 + g]) < 0.12) }
    }

    @Test("multiple starts: start 0 is the single-start fit to the bit, every run recorded, the kept one the best; the bifactor and testlet fits too")
    func multipleStarts() throws {
        var rng = SeededGenerator(seed: 77)
        let simulator = try CorrelatedFactorsSimulator(items: Self.items, factors: Self.factors, correlations: Self.correlations)
        let ids = (0..<9).map { "i\($0)" }
        let (data, _) = simulator.matrix(count: 800, itemIDs: ids, using: &rng)
        let structure = try FactorStructure(items: ids.enumerated().map { ($1, ["a", "b", "c"][Self.factors[$0]]) })
        var options = CalibrationOptions(model: .twoPL)
        options.standardErrors = false
        options.maxCycles = 30
        let single = try CorrelatedFactorsCalibrator(options: options, quadraturePoints: 9).calibrate(data, structure: structure)
        let several = try CorrelatedFactorsCalibrator(options: options, quadraturePoints: 9, starts: 4).calibrate(data, structure: structure)
        #expect(single.starts.count == 1 && single.starts[0].kept && single.starts[0].start == 0)
        #expect(several.starts.map(\.start) == [0, 1, 2, 3] && several.starts.filter(\.kept).count == 1)
        #expect(several.starts[0].logLikelihood == single.starts[0].logLikelihood && several.starts[0].cycles == single.cycles)
        // The kept run has the highest log-posterior (ties within 1e-9 go to the earliest); 30 cycles each, so the
        // runs stop at different points.
        let objectives = several.starts.compactMap(\.logPosterior)
        let kept = try #require(several.starts.first { $0.kept })
        #expect(objectives.count == 4 && kept.logPosterior! >= objectives.max()! - 1e-9 && abs(several.logLikelihood - kept.logLikelihood!) < 1e-6)
        // The perturbed starts take different paths to about the same place.
        let lls = several.starts.compactMap(\.logLikelihood)
        #expect(Set(lls).count == 4 && lls.allSatisfy { abs($0 - kept.logLikelihood!) < 1 }, "\(lls)")
        #expect(throws: PsychometricsError.self) {
            try CorrelatedFactorsCalibrator(options: options, starts: 0).calibrate(data, structure: structure)
        }
        // Bifactor and testlet: the same rule.
        let bifactorStructure = try FactorStructure(items: ids.enumerated().map { ($1, ["a", "b", "c"][Self.factors[$0]]) })
        var bifactorOptions = BifactorCalibrator.defaultOptions
        bifactorOptions.quadraturePoints = 11
        bifactorOptions.standardErrors = false
        bifactorOptions.maxCycles = 30
        for testlet in [false, true] {
            let one = try BifactorCalibrator(options: bifactorOptions, testlet: testlet).calibrate(data, structure: bifactorStructure)
            let three = try BifactorCalibrator(options: bifactorOptions, testlet: testlet, starts: 3).calibrate(data, structure: bifactorStructure)
            #expect(three.starts.count == 3 && three.starts[0].logLikelihood == one.starts[0].logLikelihood)
            let best = three.starts.compactMap(\.logPosterior).max()!
            let kept = try #require(three.starts.first { $0.kept })
            #expect(
                kept.logPosterior! >= best - 1e-9 && abs(three.logLikelihood - kept.logLikelihood!) < 1e-6
                    && kept.logPosterior! >= three.starts[0].logPosterior!)
        }
    }

    @Test("refusals: an item without a factor, one factor, a grid beyond the node limit")
    func refusals() throws {
        var rng = SeededGenerator(seed: 1)
        let simulator = try CorrelatedFactorsSimulator(items: Self.items, factors: Self.factors, correlations: Self.correlations)
        let ids = (0..<9).map { "i\($0)" }
        let (data, _) = simulator.matrix(count: 200, itemIDs: ids, using: &rng)
        let partial = try FactorStructure(items: ids.prefix(8).map { ($0, "a") })
        #expect { try CorrelatedFactorsCalibrator().calibrate(data, structure: partial) } throws: { "\($0)".contains("1 item has no factor (i8)") }
        let one = try FactorStructure(items: ids.map { ($0, "a") })
        #expect { try CorrelatedFactorsCalibrator().calibrate(data, structure: one) } throws: { "\($0)".contains("needs at least 2") }
        let three = try FactorStructure(items: ids.enumerated().map { ($1, ["a", "b", "c"][Self.factors[$0]]) })
        #expect { try CorrelatedFactorsCalibrator(quadraturePoints: 101).calibrate(data, structure: three) } throws: {
            "\($0)".contains("1030301 nodes")
        }
        #expect(throws: PsychometricsError.self) {
            try CorrelatedFactorsSimulator(items: Self.items, factors: Self.factors, correlations: [1, 2, 2, 1])
        }
    }
}
