import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("Empirical item curves: grouping, rest-of-pattern posterior, misfit")
struct EmpiricalItemCurveTests {
    @Test("quantile groups: sizes, means, ranges and z from their definitions")
    func grouping() throws {
        // 95 distinct θ, groups ≤ 10 with ≥ 20 persons → 4 groups cut at 23, 47, 71.
        let thetas = (0..<95).map { Double($0) / 10 }
        let responses = (0..<95).map { UInt8($0 % 3 == 0 ? 1 : 0) }
        let expected = [Double](repeating: 0.25, count: 95)
        let curve = EmpiricalItemCurve(thetas: thetas.reversed(), responses: responses.reversed(), expected: expected)
        #expect(curve.responseCount == 95)
        #expect(curve.groups.map(\.count) == [23, 24, 24, 24])
        let first = curve.groups[0]
        #expect(first.meanTheta.isApproximatelyEqual(to: 1.1, absoluteTolerance: 1e-12)) // mean of 0.0 … 2.2
        #expect(first.lowestTheta == 0 && first.highestTheta == 2.2)
        #expect(first.correct == 8) // 0, 3, …, 21
        #expect(first.observed == 8.0 / 23)
        #expect(first.expected == 0.25)
        let z = try #require(first.standardizedResidual)
        #expect(z.isApproximatelyEqual(to: (8 - 23 * 0.25) / (23 * 0.25 * 0.75).squareRoot(), absoluteTolerance: 1e-12))
        #expect(first.interval == BinomialInterval.wilson(successes: 8, trials: 23))
        // Fewer persons than one group: no groups.
        #expect(EmpiricalItemCurve(thetas: [0, 1], responses: [0, 1], expected: [0.5, 0.5]).groups.isEmpty)
    }

    @Test("a run of equal θ is never split; a short group joins its neighbour")
    func ties() {
        // n = 40, 4 groups of ≥ 10: the cut at 10 moves past the tie run 8…13 to 14, leaving 14..<20 (6 persons),
        // which joins the group before: sizes 20, 10, 10.
        var thetas = (0..<40).map(Double.init)
        for k in 8...13 { thetas[k] = 8 }
        var options = EmpiricalItemCurve.Options()
        options.groups = 4
        options.minimumGroupSize = 10
        let curve = EmpiricalItemCurve(
            thetas: thetas, responses: [UInt8](repeating: 1, count: 40), expected: [Double](repeating: 1, count: 40), options: options)
        #expect(curve.groups.map(\.count) == [20, 10, 10])
        #expect(curve.groups[0].highestTheta == 19 && curve.groups[1].lowestTheta == 20)
        // All correct and E = 1: the interval reaches 1 and the residual has no variance.
        #expect(curve.groups.allSatisfy { $0.interval.upper == 1 && $0.standardizedResidual == nil })
        #expect(curve.groupsMissingExpectation == 0)
    }

    @Test("θ̂ and E are the rest-of-pattern posterior mean and predictive P, integrated by hand")
    func restPosterior() throws {
        let items = [
            ItemParameters(discrimination: 1.4, difficulty: -0.3), ItemParameters(discrimination: 0.8, difficulty: 0.9, guessing: 0.2),
            ItemParameters(discrimination: 2.0, difficulty: 0.5)
        ]
        let data = try ResponseMatrix(itemIDs: ["i1", "i2", "i3"], rows: [[1, 0, 1]])
        var options = EmpiricalItemCurve.Options()
        options.groups = 1
        options.minimumGroupSize = 1
        let curves = EmpiricalItemCurve.curves(data: data, parameters: items, options: options)
        // Item 2 (u = 0): posterior ∝ φ(θ) P₁(θ) P₃(θ) on the 81-point grid on ±6.
        let grid = try QuadratureGrid(count: 81, bound: 6)
        var total = 0.0, first = 0.0, predicted = 0.0
        for (q, theta) in grid.points.enumerated() {
            let w = grid.weights[q] * items[0].probability(at: theta) * items[2].probability(at: theta)
            total += w
            first += w * theta
            predicted += w * items[1].probability(at: theta)
        }
        let group = try #require(curves[1].groups.first)
        #expect(group.meanTheta.isApproximatelyEqual(to: first / total, absoluteTolerance: 1e-12))
        #expect(group.expected.isApproximatelyEqual(to: predicted / total, absoluteTolerance: 1e-12))
        #expect(group.correct == 0 && group.count == 1)
    }

    @Test("an item answered at random against a = 1.5, b = 0 misses the model in both tails; fitting items do not")
    func misfit() throws {
        // 20-item 2PL, 3,000 persons; item 1's responses are replaced by coin flips (P = 0.5 at every θ) while its
        // parameters say a = 1.5, b = 0, so E_g runs from ≈ 0.1 to ≈ 0.9 across the groups and O_g stays near 0.5.
        let sim = Simulated(model: .twoPL, items: 20, persons: 3000, seed: 19)
        var rng = SeededGenerator(seed: 20)
        var values = sim.data.responses
        for k in values.indices where sim.data.itemIndices[k] == 0 { values[k] = UInt8.random(in: 0...1, using: &rng) }
        let data = try ResponseMatrix(
            personIDs: sim.data.personIDs, itemIDs: sim.data.itemIDs, rowOffsets: sim.data.rowOffsets,
            itemIndices: sim.data.itemIndices, responses: values)
        var parameters = sim.truth
        parameters[0] = ItemParameters(discrimination: 1.5, difficulty: 0)
        let curves = EmpiricalItemCurve.curves(data: data, parameters: parameters)
        let bad = curves[0]
        #expect(bad.groups.count == 10 && bad.responseCount == 3000)
        #expect(zip(bad.groups, bad.groups.dropFirst()).allSatisfy { $0.meanTheta < $1.meanTheta })
        for g in [bad.groups.first!, bad.groups.last!] {
            #expect(
                !g.interval.contains(g.expected), "θ̄ \(g.meanTheta): O \(g.observed) [\(g.interval.lower), \(g.interval.upper)] vs E \(g.expected)")
            #expect(abs(try #require(g.standardizedResidual)) > 5)
            #expect(abs(g.observed - 0.5) < 0.1)
        }
        #expect(bad.groups.first!.observed > bad.groups.first!.expected && bad.groups.last!.observed < bad.groups.last!.expected)
        #expect(bad.groupsMissingExpectation >= 6)
        // The 19 fitting items: about 5% of their 190 groups miss E_g (95% intervals); allow up to 10%, and no
        // |z| above 4 (P ≈ 0.012 over 190 N(0, 1) draws).
        let good = curves.dropFirst()
        let missing = good.map(\.groupsMissingExpectation).reduce(0, +), groups = good.map(\.groups.count).reduce(0, +)
        #expect(groups == 190)
        #expect(Double(missing) <= 0.10 * Double(groups), "\(missing) of \(groups) groups miss E_g")
        #expect(good.allSatisfy { abs($0.largestResidual?.standardizedResidual ?? 0) < 4 })
    }
}
