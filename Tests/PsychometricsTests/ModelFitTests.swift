import Foundation
import Numerics
@testable import Psychometrics
import PsychometricsIO
import Testing

@Suite("Model fit for incomplete designs: RMSD, conditional mean squares, false flags")
struct ModelFitTests {
    @Test("RMSD, conditional infit/outfit and their ZSTD equal direct computations (incomplete data)")
    func direct() throws {
        let sim = Simulated(model: .twoPL, items: 10, persons: 500, perSession: 7, seed: 5)
        let data = sim.data, truth = sim.truth
        let fit = try ModelFit(data: data, parameters: truth, freeParameters: 2)
        let grid = try QuadratureGrid(count: 61, bound: 6)
        let expectation = SummedScoreExpectation(parameters: truth, grid: grid)
        let item = 4
        var correct = [Double](repeating: 0, count: grid.count), weight = correct
        var z2 = 0.0, r2 = 0.0, w = 0.0, n = 0.0, outVar = 0.0, inVar = 0.0
        for i in 0..<data.personCount {
            let cells = data.cells(ofPerson: i).map { (Int(data.itemIndices[$0]), data.responses[$0]) }
            guard let k = cells.firstIndex(where: { $0.0 == item }) else { continue }
            // Posterior on the grid from all the person's items.
            var post = grid.points.indices.map { q in
                cells.reduce(grid.weights[q]) { l, c in
                    let p = truth[c.0].probability(at: grid.points[q])
                    return l * (c.1 == 1 ? p : 1 - p)
                }
            }
            let total = post.reduce(0, +)
            post = post.map { $0 / total }
            for q in 0..<grid.count { weight[q] += post[q]; if cells[k].1 == 1 { correct[q] += post[q] } }
            // Expected score given the summed score (checked against enumeration in SummedScoreExpectationTests).
            let s = cells.reduce(0) { $0 + Int($1.1) }
            guard s > 0, s < cells.count else { continue }
            let table = cells.map(\.0).withUnsafeBufferPointer { expectation.table(items: $0) }
            let e = table[k * (cells.count + 1) + s], u = Double(cells[k].1), v = e * (1 - e)
            let c4 = v * (pow(1 - e, 3) + pow(e, 3))
            z2 += (u - e) * (u - e) / v; r2 += (u - e) * (u - e); w += v; n += 1
            outVar += c4 / (v * v) - 1; inVar += c4 - v * v
        }
        let totalWeight = weight.reduce(0, +)
        var rmsd = 0.0
        for q in 0..<grid.count where weight[q] > 0 {
            rmsd += weight[q] / totalWeight * pow(correct[q] / weight[q] - truth[item].probability(at: grid.points[q]), 2)
        }
        let f = fit.items[item]
        #expect(try #require(f.rmsd).isApproximatelyEqual(to: rmsd.squareRoot(), absoluteTolerance: 1e-12))
        let outfit = z2 / n, infit = r2 / w
        #expect(try #require(f.outfit).isApproximatelyEqual(to: outfit, relativeTolerance: 1e-10))
        #expect(try #require(f.infit).isApproximatelyEqual(to: infit, relativeTolerance: 1e-10))
        let qOut = (outVar / (n * n)).squareRoot(), qIn = (inVar / (w * w)).squareRoot()
        #expect(try #require(f.outfitZ).isApproximatelyEqual(to: (cbrt(outfit) - 1) * 3 / qOut + qOut / 3, relativeTolerance: 1e-9))
        #expect(try #require(f.infitZ).isApproximatelyEqual(to: (cbrt(infit) - 1) * 3 / qIn + qIn / 3, relativeTolerance: 1e-9))
    }

    @Test("Wilson–Hilferty: the 99th percentile of χ²(50)/50 standardises to Φ⁻¹(0.99) = 2.3263 (to 0.005)")
    func wilsonHilferty() throws {
        // χ²(50) 99th percentile 76.15389 (tables); q = √(2/50).
        #expect(ChiSquare.upperTail(76.15389, degreesOfFreedom: 50).isApproximatelyEqual(to: 0.01, absoluteTolerance: 1e-6))
        let z = try #require(ConditionalMeanSquares.standardized(76.15389 / 50, sd: (2.0 / 50).squareRoot()))
        #expect(z.isApproximatelyEqual(to: 2.326348, absoluteTolerance: 0.005))
        #expect(ConditionalMeanSquares.standardized(1, sd: 0) == nil)
    }

    /// The flags `iqscore analyze` raises at its defaults, counted per statistic.
    struct FlagCounts {
        var sx2 = 0, meanSquare = 0, rmsd = 0, q3 = 0, items = 0, lzStar = 0, persons = 0
        var infitZ: [Double] = []
        mutating func add(_ fit: ModelFit) {
            for f in fit.items {
                items += 1
                if let p = f.sx2P, p < 0.01 { sx2 += 1 }
                func out(_ ms: Double?, _ z: Double?) -> Bool { (ms.map { $0 < 0.7 || $0 > 1.3 } ?? false) && abs(z ?? 0) > 2.5758 }
                if out(f.infit, f.infitZ) || out(f.outfit, f.outfitZ) { meanSquare += 1 }
                if let r = f.rmsd, r > 0.1 { rmsd += 1 }
                if let z = f.infitZ { infitZ.append(z) }
            }
            q3 += fit.q3Flagged.count
            persons += fit.persons.count
            lzStar += fit.persons.filter { ($0.lzStar ?? 0) < -1.96 }.count
        }
    }

    @Test("false flags on data from the model stay at or below the nominal levels (seeded dense and sparse designs)")
    func falseFlags() throws {
        var counts = FlagCounts()
        for seed in 1...3 {
            let dense = Simulated(model: .twoPL, items: 16, persons: 1500, seed: 100 + UInt64(seed))
            counts.add(try ModelFit(data: dense.data, parameters: dense.truth, freeParameters: 2))
        }
        let sparse = Simulated(model: .twoPL, items: 200, persons: 4000, perSession: 15, seed: 200)
        counts.add(try ModelFit(data: sparse.data, parameters: sparse.truth, freeParameters: 2))
        // 248 items: S-X² at p < 0.01 expects 2.5 flags; infit/outfit (range and ZSTD) at most as many; RMSD none;
        // Q3 0.01 pairs per analysis; l_z* < −1.96 2.5% of persons (measured 3.2% on 25-item forms, README).
        #expect(counts.items == 248)
        #expect(counts.sx2 <= 7, "S-X² flags \(counts.sx2) of \(counts.items)")
        #expect(counts.meanSquare <= 5, "infit/outfit flags \(counts.meanSquare)")
        #expect(counts.rmsd == 0)
        #expect(counts.q3 <= 1)
        let lzRate = Double(counts.lzStar) / Double(counts.persons)
        #expect(lzRate > 0.015 && lzRate < 0.045, "l_z* < −1.96 for \(lzRate)")
        // With the true parameters the infit ZSTD is N(0, 1) (calibrated parameters make it narrower, README).
        let z = counts.infitZ, mean = z.reduce(0, +) / Double(z.count)
        let sd = (z.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(z.count - 1)).squareRoot()
        #expect(abs(mean) < 0.2 && abs(sd - 1) < 0.2, "infit ZSTD mean \(mean), SD \(sd)")
    }

    @Test("an item answered at random (P = ½ whatever θ) is flagged by S-X², infit/outfit and RMSD")
    func power() throws {
        var sim = Simulated(model: .twoPL, items: 16, persons: 1500, seed: 8)
        var rng = SeededGenerator(seed: 3)
        var rows = (0..<sim.data.personCount).map { i in
            var row = [UInt8?](repeating: nil, count: 16)
            for c in sim.data.cells(ofPerson: i) { row[Int(sim.data.itemIndices[c])] = sim.data.responses[c] }
            return row
        }
        for i in rows.indices { rows[i][6] = RandomVariate.uniform(using: &rng) < 0.5 ? 1 : 0 }
        sim.data = try ResponseMatrix(itemIDs: sim.data.itemIDs, rows: rows)
        // The bank keeps the item's own curve, as if it had been calibrated on data where it worked.
        var truth = sim.truth
        truth[6] = ItemParameters(discrimination: 1.5, difficulty: 0)
        let fit = try ModelFit(data: sim.data, parameters: truth, freeParameters: 2)
        let f = fit.items[6]
        #expect(try #require(f.sx2P) < 1e-6)
        #expect(try #require(f.rmsd) > 0.1)
        #expect(try #require(f.infit) > 1.3 && (try #require(f.infitZ)) > 2.5758)
        for (j, other) in fit.items.enumerated() where j != 6 { #expect((other.rmsd ?? 1) < 0.1) }
    }
}

@Suite("S-X² pooling rules: forward (default) and mirt's collapseCells")
struct SX2PoolingTests {
    typealias G = OrlandoThissenSX2.Group
    /// Groups given as (persons, expected correct).
    static func groups(_ list: [(Double, Double)]) -> [G] { list.map { G(persons: $0.0, observed: 0, expected: $0.1, variance: 0) } }
    static func shape(_ pooled: [G]) -> [[Double]] { pooled.map { [$0.persons, ($0.expected * 100).rounded() / 100] } }

    @Test("by hand: the two rules pool the same groups differently")
    func byHand() {
        // persons/expected: a one-person group, a sparse low group, a sparse middle group, a sparse top group.
        let g = Self.groups([(1, 0.2), (3, 0.5), (10, 4), (2, 1.5), (12, 9), (4, 3.6)])
        // Forward: (1,.2)+(3,.5)+(10,4) → 14 persons, E 4.7; (2,1.5) pending → +(12,9): 14, 10.5; (4,3.6): N−E 0.4 < 1 → joins the last.
        #expect(Self.shape(OrlandoThissenSX2.pool(g, minimumExpected: 1, rule: .forward)) == [[14, 4.7], [18, 14.1]])
        // mirt: the one-person group joins the next → (4, 0.7); first sparse group (E 0.7) is the first row → joins row 2 → (14, 4.7);
        // then (2, 1.5): N−E 0.5 < 1, a middle row: neighbours have 14 and 12 persons → joins the smaller, (12, 9) → (14, 10.5);
        // then (4, 3.6): N−E 0.4, the last row → joins the one before → (18, 14.1).
        #expect(Self.shape(OrlandoThissenSX2.pool(g, minimumExpected: 1, rule: .mirt)) == [[14, 4.7], [18, 14.1]])
        // A table where they differ: forward pools the sparse middle group upward only; mirt pools toward the smaller side.
        let h = Self.groups([(20, 8), (2, 1.8), (6, 5), (30, 20)])
        #expect(Self.shape(OrlandoThissenSX2.pool(h, minimumExpected: 1, rule: .forward)) == [[20, 8], [8, 6.8], [30, 20]])
        #expect(Self.shape(OrlandoThissenSX2.pool(h, minimumExpected: 1, rule: .mirt)) == [[20, 8], [8, 6.8], [30, 20]])
        let k = Self.groups([(20, 8), (2, 1.8), (30, 20)])
        #expect(Self.shape(OrlandoThissenSX2.pool(k, minimumExpected: 1, rule: .forward)) == [[20, 8], [32, 21.8]])
        #expect(Self.shape(OrlandoThissenSX2.pool(k, minimumExpected: 1, rule: .mirt)) == [[22, 9.8], [30, 20]])
    }
}
