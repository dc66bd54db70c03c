import Foundation
@testable import Psychometrics
import Testing

/// Item analysis for items in more than two categories (`CategoryItemFit`): on 0/1 items it is the dichotomous
/// analysis (`ModelFit`'s S-X² and conditional mean squares, which agree with mirt), and on data from a graded
/// model its statistics behave as the model says.
@Suite("Item fit and classical statistics for items in more than two categories")
struct CategoryItemFitTests {
    @Test("on 0/1 items (missing by design) S-X², its df and p, infit and outfit equal ModelFit's to 1e-9")
    func dichotomousCase() throws {
        let sim = Simulated(model: .twoPL, items: 10, persons: 800, perSession: 7, seed: 5)
        let fit = try ModelFit(data: sim.data, parameters: sim.truth, freeParameters: 2)
        let general = try CategoryItemFit(data: sim.data, items: sim.truth, freeParameters: [Int](repeating: 2, count: 10))
        for (a, b) in zip(fit.items, general.items) {
            #expect(a.sx2DegreesOfFreedom == b.sx2DegreesOfFreedom, "\(a.itemID)")
            for (x, y) in [(a.sx2, b.sx2), (a.sx2P, b.sx2P), (a.infit, b.infit), (a.outfit, b.outfit), (a.infitZ, b.infitZ), (a.outfitZ, b.outfitZ)] {
                #expect(abs(x! - y!) <= 1e-9 * max(1, abs(x!)), "\(a.itemID): \(x!) vs \(y!)")
            }
        }
    }

    @Test("a hand-computed form: three 0/1/2 items, one person; P(k | s) from the score distribution by enumeration")
    func enumeration() throws {
        let items: [any ItemResponseModel] = [
            GradedResponseItem(discrimination: 1.2, thresholds: [-0.5, 0.8]),
            GeneralizedPartialCreditItem(discrimination: 0.9, steps: [0.2, -0.3]),
            GradedResponseItem(discrimination: 1.6, thresholds: [-1.0, 0.4])
        ]
        let data = try ResponseMatrix(itemIDs: ["a", "b", "c"], rows: [[2, 1, 0]], categoryCounts: [3, 3, 3])
        // No parameters estimated and no minimum cell, so that one person's three cells stay as they are.
        let fit = try CategoryItemFit(data: data, items: items, freeParameters: [0, 0, 0], minimumExpected: 0)
        // Enumerate the 27 patterns on the grid: P(item 0 = k | s = 3).
        let grid = QuadratureGrid(validatedCount: 61, bound: 6)
        var joint = [Double](repeating: 0, count: 3), marginal = 0.0
        for q in 0..<grid.count {
            let p = items.map { $0.categoryProbabilities(at: grid.points[q]) }
            for x in 0..<3 {
                for y in 0..<3 {
                    for z in 0..<3 where x + y + z == 3 {
                        let w = p[0][x] * p[1][y] * p[2][z] * grid.weights[q]
                        joint[x] += w; marginal += w
                    }
                }
            }
        }
        let conditional = joint.map { $0 / marginal }
        // One person: the S-X² of item 0 is Σ_k (O_k − E_k)²/E_k with O = (0, 0, 1).
        let expected = (0..<3).reduce(0.0) { total, k in
            let o = k == 2 ? 1.0 : 0.0
            return total + (o - conditional[k]) * (o - conditional[k]) / conditional[k]
        }
        #expect(abs(fit.items[0].sx2! - expected) < 1e-12, "\(fit.items[0].sx2!) vs \(expected)")
        // Outfit: (u − E)²/W with E = Σ k P(k | s), W = Σ (k − E)² P(k | s).
        let e = conditional[1] + 2 * conditional[2], w = (0..<3).reduce(0.0) { $0 + (Double($1) - e) * (Double($1) - e) * conditional[$1] }
        #expect(abs(fit.items[0].outfit! - (2 - e) * (2 - e) / w) < 1e-12)
        #expect(fit.items[0].categoryMeanRestScore == [nil, nil, 1] && fit.items[0].categoryCounts == [0, 0, 1])
    }

    @Test(
        "data from a graded model (1,000 persons × 8 items, 4 categories): S-X² p < 0.01 for at most 1 item, mean squares' ZSTD within ±3, well-filled categories' rest scores increasing"
    )
    func fromTheModel() throws {
        var rng = SeededGenerator(seed: 41)
        var spec = BankSpecification(model: .twoPL, itemCount: 8)
        spec.categoryModel = .graded
        spec.categories = 4
        spec.slopeMeanLog = 0.3
        let bank = spec.draw(using: &rng)
        let items = bank.items.map(\.responseModel)
        let (data, _) = CategoryResponseSimulator.matrix(items: items, itemIDs: bank.items.map(\.itemID), persons: 1000, using: &rng)
        let fit = try CategoryItemFit(data: data, items: items, freeParameters: [Int](repeating: 4, count: 8))
        #expect(fit.items.filter { $0.sx2P! < 0.01 }.count <= 1, "\(fit.items.map { $0.sx2P! })")
        for item in fit.items {
            // The mean squares' standardisations (their spread depends on n and the item): within ±3.
            #expect(
                abs(item.infitZ!) < 3 && abs(item.outfitZ!) < 3 && abs(item.infit! - 1) < 0.2,
                "\(item.infit!) \(item.outfit!) \(item.infitZ!) \(item.outfitZ!)")
            // Categories chosen by at least 100 persons: the mean rest score rises with the category.
            let means = zip(item.categoryMeanRestScore, item.categoryCounts).filter { $0.1 >= 100 }.map { $0.0! }
            #expect(zip(means, means.dropFirst()).allSatisfy { $0 < $1 }, "\(means) \(item.categoryCounts)")
            #expect(item.itemRestCorrelation! > 0.1 && item.maximumScore == 3, "\(item)")
        }
    }

    @Test("sparse cells collapse within a score group as mirt's collapseCells: the smallest below 1 joins its smaller neighbour until two are left")
    func collapsedCells() {
        // Science's Comfort item at s = 5 (mirt's E table): category 0 joins 1, then category 3 joins 2.
        #expect(CategoryItemFit.collapsedCells(expected: [0.873, 7.02, 23.15, 0.957], minimum: 1) == [[0, 1], [2, 3]])
        // Ties: the last of equal smallest cells; in the middle it joins the smaller neighbour, the left on a tie.
        #expect(CategoryItemFit.collapsedCells(expected: [5, 0.5, 0.5, 5], minimum: 1) == [[0], [1, 2], [3]])
        // 0.1 (end) joins 0.2, then 0.3 (end) joins 3, then 0.4 joins the smaller of 5 and 3.3.
        #expect(CategoryItemFit.collapsedCells(expected: [5, 0.4, 3, 0.2, 0.1], minimum: 1) == [[0], [1, 2, 3, 4]])
        // Never below two cells, and nothing to do when every cell is filled.
        #expect(CategoryItemFit.collapsedCells(expected: [0.1, 0.2, 0.3], minimum: 1) == [[0, 1], [2]])
        #expect(CategoryItemFit.collapsedCells(expected: [0.1, 0.2], minimum: 1) == [[0], [1]])
        #expect(CategoryItemFit.collapsedCells(expected: [2, 3, 4], minimum: 1) == [[0], [1], [2]])
    }

    @Test(
        "Science (392 × 4, 4 categories) under gpcm: every item's S-X² has positive df once sparse cells collapse within score groups (whole groups pooled gave df −1)"
    )
    func shortTestDegreesOfFreedom() throws {
        let data = try PolytomousCalibratorTests.science()
        var options = CalibrationOptions(model: .twoPL)
        options.standardErrors = false
        let fit = try PolytomousCalibrator(options: options).calibrate(data, model: .generalizedPartialCredit)
        let items = try CategoryItemFit(data: data, items: fit.items.map(\.item), freeParameters: [Int](repeating: 4, count: 4))
        // mirt 1.47 reports df 6, 10, 8, 11: it also merges the score groups where a category is impossible
        // (s = 1, 2 into 3; 10, 11 into 9) before collapsing, which these cells keep.
        #expect(items.items.map(\.sx2DegreesOfFreedom) == [8, 12, 10, 13])
        for item in items.items {
            let p = try #require(item.sx2P)
            #expect(p > 0.01, "\(item.sx2!) on \(item.sx2DegreesOfFreedom!) df")
        }
    }
}

@Suite("Empirical category curves")
struct EmpiricalCategoryCurveTests {
    @Test(
        "on 0/1 items category 1's curve is the dichotomous curve (groups exact, θ̄ and E to 1e-12); per group the categories' observed and expected shares sum to 1"
    )
    func consistent() throws {
        let sim = Simulated(model: .twoPL, items: 8, persons: 600, perSession: 6, seed: 9)
        let binary = EmpiricalItemCurve.curves(data: sim.data, parameters: sim.truth)
        let general = EmpiricalItemCurve.categoryCurves(data: sim.data, items: sim.truth)
        // The same groups and counts; θ̄ and E to rounding (the general path takes P from the log tables).
        for (a, b) in zip(binary, general) {
            #expect(a.groups.map(\.count) == b[1].groups.map(\.count) && a.groups.map(\.correct) == b[1].groups.map(\.correct))
            for (x, y) in zip(a.groups, b[1].groups) {
                #expect(abs(x.meanTheta - y.meanTheta) < 1e-12 && abs(x.expected - y.expected) < 1e-12 && x.interval == y.interval)
            }
        }
        var rng = SeededGenerator(seed: 12)
        var spec = BankSpecification(model: .twoPL, itemCount: 6)
        spec.categoryModel = .generalizedPartialCredit
        spec.categories = 3
        let items = spec.draw(using: &rng).items.map(\.responseModel)
        let (data, _) = CategoryResponseSimulator.matrix(items: items, itemIDs: (1...6).map { "i\($0)" }, persons: 800, using: &rng)
        for curves in EmpiricalItemCurve.categoryCurves(data: data, items: items) {
            #expect(curves.count == 3)
            for g in curves[0].groups.indices {
                #expect(abs(curves.reduce(0) { $0 + $1.groups[g].observed } - 1) < 1e-12)
                #expect(abs(curves.reduce(0) { $0 + $1.groups[g].expected } - 1) < 1e-12)
            }
        }
    }
}
