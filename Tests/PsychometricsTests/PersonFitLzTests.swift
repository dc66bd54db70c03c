import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("Person fit l_z and l_z*")
struct PersonFitLzTests {
    @Test("l_z and l_z* equal the published formulas with numerical derivatives (2PL and 3PL items)")
    func formulas() throws {
        let items = [
            ItemParameters(discrimination: 1.3, difficulty: -0.8), ItemParameters(discrimination: 0.7, difficulty: 0.4),
            ItemParameters(discrimination: 2.1, difficulty: 0.9, guessing: 0.2), ItemParameters(discrimination: 1.0, difficulty: 1.6),
            ItemParameters(discrimination: 1.6, difficulty: -1.9, guessing: 0.1), ItemParameters(discrimination: 0.9, difficulty: 0.1)
        ]
        let u: [UInt8] = [1, 0, 1, 0, 1, 1]
        let theta = 0.37
        // Snijders (2001): W = Σ (u − P) w, w = logit P; r = P′/(P Q); c = Σ P′w / Σ P′r; r₀ = J/(2I) (Warm).
        var w0 = 0.0, v = 0.0, pw = 0.0, pr = 0.0, info = 0.0, jt = 0.0
        var terms: [(p: Double, d1: Double, w: Double)] = []
        for (item, x) in zip(items, u) {
            let h = 1e-4
            let p = item.probability(at: theta)
            let d1 = (item.probability(at: theta + h) - item.probability(at: theta - h)) / (2 * h)
            let d2 = (item.probability(at: theta + h) - 2 * p + item.probability(at: theta - h)) / (h * h)
            let w = log(p / (1 - p)), q = p * (1 - p)
            w0 += (Double(x) - p) * w; v += q * w * w
            pw += d1 * w; pr += d1 * d1 / q; info += d1 * d1 / q; jt += d1 * d2 / q
            terms.append((p, d1, w))
        }
        let c = pw / pr, r0 = jt / (2 * info)
        let vStar = terms.reduce(0) { $0 + $1.p * (1 - $1.p) * pow($1.w - c * $1.d1 / ($1.p * (1 - $1.p)), 2) }
        let result = Array(0..<6).withUnsafeBufferPointer { i in
            u.withUnsafeBufferPointer { PersonFitLz.statistics(parameters: items, items: i, responses: $0, theta: theta) }
        }
        #expect(try #require(result.lz).isApproximatelyEqual(to: w0 / v.squareRoot(), relativeTolerance: 1e-12))
        #expect(try #require(result.lzStar).isApproximatelyEqual(to: (w0 + c * r0) / vStar.squareRoot(), relativeTolerance: 1e-6))
    }

    @Test("at the WLE on 30-item tests from the model, l_z* has SD ≈ 1 and l_z less (seeded, 1,500 persons)")
    func standardised() throws {
        // Snijders' correction is first order: on 25–30-item forms the mean is ≈ 0.1 (0.086 on 100,000 sparse
        // sessions, README), hence 0.15 on the mean; the SD is the point of the correction.
        let sim = Simulated(model: .twoPL, items: 30, persons: 1500, seed: 77)
        let fit = try ModelFit(data: sim.data, parameters: sim.truth, freeParameters: 2)
        func moments(_ v: [Double]) -> (mean: Double, sd: Double) {
            let m = v.reduce(0, +) / Double(v.count)
            return (m, (v.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(v.count - 1)).squareRoot())
        }
        let lz = moments(fit.persons.compactMap(\.lz)), star = moments(fit.persons.compactMap(\.lzStar))
        #expect(abs(star.mean) < 0.15 && abs(star.sd - 1) < 0.06, "l_z*: mean \(star.mean), SD \(star.sd)")
        #expect(lz.sd < star.sd - 0.05, "l_z SD \(lz.sd) vs l_z* \(star.sd)")
    }

    @Test("for items in any number of categories: on 0/1 items (2PL, 3PL) the general formula equals the 0/1 one to 1e-9")
    func generalEqualsDichotomous() throws {
        let items = [
            ItemParameters(discrimination: 1.3, difficulty: -0.8), ItemParameters(discrimination: 0.7, difficulty: 0.4),
            ItemParameters(discrimination: 2.1, difficulty: 0.9, guessing: 0.2), ItemParameters(discrimination: 1.0, difficulty: 1.6),
            ItemParameters(discrimination: 1.6, difficulty: -1.9, guessing: 0.1), ItemParameters(discrimination: 0.9, difficulty: 0.1)
        ]
        for (u, theta) in [([1, 0, 1, 0, 1, 1] as [UInt8], 0.37), ([0, 0, 0, 1, 1, 0], -1.2), ([1, 1, 1, 1, 0, 1], 1.9)] {
            let (a, b) = Array(0..<6).withUnsafeBufferPointer { i in
                u.withUnsafeBufferPointer { r in
                    (
                        PersonFitLz.statistics(parameters: items, items: i, responses: r, theta: theta),
                        PersonFitLz.statistics(models: items, items: i, responses: r, theta: theta)
                    )
                }
            }
            #expect(try #require(b.lz).isApproximatelyEqual(to: try #require(a.lz), absoluteTolerance: 1e-9))
            #expect(try #require(b.lzStar).isApproximatelyEqual(to: try #require(a.lzStar), absoluteTolerance: 1e-9))
        }
    }

    @Test("at the WLE on 20 graded items in 4 categories from the model, l_z* has mean ≈ 0 and SD ≈ 1, l_z a smaller SD (seeded, 1,500 persons)")
    func standardisedOnGradedItems() throws {
        var rng = SeededGenerator(seed: 2_026_112_702)
        let items: [any ItemResponseModel] = (0..<20).map { j in
            let shift = Double(j % 5) * 0.4 - 0.8
            return GradedResponseItem(discrimination: 0.9 + 0.1 * Double(j % 6), thresholds: [-1.1 + shift, 0 + shift, 1.0 + shift])
        }
        let (data, _) = CategoryResponseSimulator.matrix(items: items, itemIDs: (1...20).map { "g\($0)" }, persons: 1_500, using: &rng)
        let estimator = try AbilityEstimator(items: items, options: AbilityOptions(method: .wle))
        var lz: [Double] = [], star: [Double] = []
        for i in 0..<data.personCount {
            let cells = data.cells(ofPerson: i)
            let index = cells.map { Int(data.itemIndices[$0]) }, answers = cells.map { data.responses[$0] }
            let theta = try estimator.estimate(items: index, responses: answers).theta
            let fit = index.withUnsafeBufferPointer { i in
                answers.withUnsafeBufferPointer { PersonFitLz.statistics(models: items, items: i, responses: $0, theta: theta) }
            }
            if let v = fit.lz { lz.append(v) }
            if let v = fit.lzStar { star.append(v) }
        }
        func moments(_ v: [Double]) -> (mean: Double, sd: Double) {
            let m = v.reduce(0, +) / Double(v.count)
            return (m, (v.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(v.count - 1)).squareRoot())
        }
        let a = moments(lz), b = moments(star)
        #expect(star.count > 1_450, "\(star.count) persons with l_z*")
        #expect(abs(b.mean) < 0.12 && abs(b.sd - 1) < 0.07, "l_z*: mean \(b.mean), SD \(b.sd)")
        #expect(a.sd < b.sd, "l_z SD \(a.sd) vs l_z* \(b.sd)")
    }
}
