import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("Local dependence: Q3, Q3* and the model-based z")
struct LocalDependenceQ3Tests {
    @Test("Q3 and z of a pair equal direct computations (leave-two-out posteriors written out, incomplete data)")
    func direct() throws {
        let sim = Simulated(model: .twoPL, items: 12, persons: 600, perSession: 8, seed: 23)
        let data = sim.data, truth = sim.truth
        var options = ModelFit.Options()
        options.q3.zForEveryPair = true
        let fit = try ModelFit(data: data, parameters: truth, freeParameters: 2, options: options)
        let q3 = try #require(fit.localDependence)
        let (j, k) = (2, 7)
        let pair = try #require(q3.pairs.first { $0.first == j && $0.second == k })
        let grid = try QuadratureGrid(count: 61, bound: 6)
        var a: [Double] = [], b: [Double] = [], deviation = 0.0, variance = 0.0
        for i in 0..<data.personCount {
            let cells = data.cells(ofPerson: i).map { (Int(data.itemIndices[$0]), Double(data.responses[$0])) }
            guard let uj = cells.first(where: { $0.0 == j })?.1, let uk = cells.first(where: { $0.0 == k })?.1 else { continue }
            let theta = fit.persons[i].theta
            a.append(uj - truth[j].probability(at: theta)); b.append(uk - truth[k].probability(at: theta))
            // Posterior given the other items, in log space.
            var logPost = grid.points.indices.map { q in
                cells.filter { $0.0 != j && $0.0 != k }.reduce(grid.logWeights[q]) { l, c in
                    let p = truth[c.0].probability(at: grid.points[q])
                    return l + (c.1 == 1 ? log(p) : log(1 - p))
                }
            }
            let top = logPost.max()!
            logPost = logPost.map { exp($0 - top) }
            let total = logPost.reduce(0, +)
            var ej = 0.0, ek = 0.0, ejk = 0.0
            for q in 0..<grid.count {
                let pj = truth[j].probability(at: grid.points[q]), pk = truth[k].probability(at: grid.points[q])
                ej += logPost[q] / total * pj; ek += logPost[q] / total * pk; ejk += logPost[q] / total * pj * pk
            }
            let cov = ejk - ej * ek
            var second = 0.0
            for (x, y, p) in [(1.0, 1.0, ejk), (1, 0, ej - ejk), (0, 1, ek - ejk), (0, 0, 1 - ej - ek + ejk)] {
                second += p * pow((x - ej) * (y - ek), 2)
            }
            deviation += (uj - ej) * (uk - ek) - cov
            variance += second - cov * cov
        }
        #expect(pair.persons == a.count)
        #expect(pair.q3.isApproximatelyEqual(to: pearson(a, b), absoluteTolerance: 1e-12))
        #expect(try #require(pair.z).isApproximatelyEqual(to: deviation / variance.squareRoot(), absoluteTolerance: 1e-8))
        // By default z is computed only where Q3* exceeds the threshold (the pairs it can flag).
        let quick = try #require(try ModelFit(data: data, parameters: truth, freeParameters: 2).localDependence)
        #expect(quick.pairs.map(\.q3) == q3.pairs.map(\.q3))
        #expect(quick.pairs.allSatisfy { ($0.z != nil) == ($0.q3Star > 0.2) })
        #expect(pair.q3Star.isApproximatelyEqual(to: pair.q3 - q3.mean!, absoluteTolerance: 1e-15))
        #expect(fit.q3(k, j) == pair.q3)
    }

    @Test("on data from the model z has mean ≈ 0 and SD ≈ 1; a pair answered alike by design is flagged")
    func nullAndPower() throws {
        var sim = Simulated(model: .twoPL, items: 20, persons: 3000, seed: 41)
        var options = ModelFit.Options()
        options.q3.zForEveryPair = true
        let fit = try ModelFit(data: sim.data, parameters: sim.truth, freeParameters: 2, options: options)
        let z = try #require(fit.localDependence).pairs.compactMap(\.z)
        #expect(z.count == 190)
        let mean = z.reduce(0, +) / Double(z.count)
        let sd = (z.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(z.count - 1)).squareRoot()
        #expect(abs(mean) < 0.15 && abs(sd - 1) < 0.15, "z over \(z.count) pairs: mean \(mean), SD \(sd)")
        #expect(fit.q3Flagged.isEmpty)
        // Item 4 copies item 3's response for 40% of the persons (a testlet-like dependence).
        var rng = SeededGenerator(seed: 9)
        var rows = (0..<sim.data.personCount).map { i in
            var row = [UInt8?](repeating: nil, count: 20)
            for c in sim.data.cells(ofPerson: i) { row[Int(sim.data.itemIndices[c])] = sim.data.responses[c] }
            return row
        }
        for i in rows.indices where RandomVariate.uniform(using: &rng) < 0.4 { rows[i][4] = rows[i][3] }
        sim.data = try ResponseMatrix(itemIDs: sim.data.itemIDs, rows: rows)
        let dependent = try ModelFit(data: sim.data, parameters: sim.truth, freeParameters: 2)
        #expect(dependent.q3Flagged.map { [$0.first, $0.second] } == [[sim.data.itemIDs[3], sim.data.itemIDs[4]]])
    }
}
