import Foundation
import Numerics
import Psychometrics
import PsychometricsIO
import Testing

@Suite("Person fit l_z and l_z*")
struct PersonFitLzTests {
    @Test("l_z and l_z* equal the published formulas with numerical derivatives (2PL and 3PL items)")
    func formulas() throws {
        let items = [ItemParameters(discrimination: 1.3, difficulty: -0.8), ItemParameters(discrimination: 0.7, difficulty: 0.4),
                     ItemParameters(discrimination: 2.1, difficulty: 0.9, guessing: 0.2), ItemParameters(discrimination: 1.0, difficulty: 1.6),
                     ItemParameters(discrimination: 1.6, difficulty: -1.9, guessing: 0.1), ItemParameters(discrimination: 0.9, difficulty: 0.1)]
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
        let result = Array(0..<6).withUnsafeBufferPointer { i in u.withUnsafeBufferPointer { PersonFitLz.statistics(parameters: items, items: i, responses: $0, theta: theta) } }
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
}
