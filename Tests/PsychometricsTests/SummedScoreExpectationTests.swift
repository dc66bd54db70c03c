import Foundation
import Numerics
@testable import Psychometrics
import PsychometricsIO
import Testing

@Suite("Summed-score expectations E_j(s) on a person's form")
struct SummedScoreExpectationTests {
    /// A bank whose items span steep, flat, easy, hard and guessing items (the deconvolution's hard cases).
    static let bank = [
        ItemParameters(discrimination: 0.6, difficulty: -2.5), ItemParameters(discrimination: 2.8, difficulty: 1.9),
        ItemParameters(discrimination: 1.2, difficulty: 0), ItemParameters(discrimination: 3.5, difficulty: -1, guessing: 0.2),
        ItemParameters(discrimination: 0.9, difficulty: 3.2), ItemParameters(discrimination: 1.7, difficulty: -0.4),
        ItemParameters(discrimination: 2.2, difficulty: 0.7, guessing: 0.15), ItemParameters(discrimination: 1.0, difficulty: -3.5),
        ItemParameters(discrimination: 0.4, difficulty: 0.3), ItemParameters(discrimination: 4.5, difficulty: 2.6),
        ItemParameters(discrimination: 1.4, difficulty: -1.8)
    ]

    @Test("equal P(u_j = 1 | s) from enumerating every response pattern of the form (10 of 11 items, every s)")
    func bruteForce() throws {
        let grid = try QuadratureGrid(count: 61, bound: 6)
        let expectation = SummedScoreExpectation(parameters: Self.bank, grid: grid)
        let form = [0, 1, 2, 3, 4, 6, 7, 8, 9, 10] // item 5 not answered
        let n = form.count
        // Σ over patterns with score s of ∫ Π L φ, with and without u_k = 1.
        var numerator = [[Double]](repeating: [Double](repeating: 0, count: n + 1), count: n), denominator = [Double](repeating: 0, count: n + 1)
        for pattern in 0..<(1 << n) {
            var s = 0, marginal = 0.0
            for k in 0..<n where (pattern >> k) & 1 == 1 { s += 1 }
            for q in 0..<grid.count {
                var l = grid.weights[q]
                for k in 0..<n {
                    let p = Self.bank[form[k]].probability(at: grid.points[q])
                    l *= (pattern >> k) & 1 == 1 ? p : 1 - p
                }
                marginal += l
            }
            denominator[s] += marginal
            for k in 0..<n where (pattern >> k) & 1 == 1 { numerator[k][s] += marginal }
        }
        let table = form.withUnsafeBufferPointer { expectation.table(items: $0) }
        var scratch: [Double] = [], out = [Double](repeating: 0, count: n)
        for s in 0...n {
            form.withUnsafeBufferPointer { items in
                out.withUnsafeMutableBufferPointer { expectation.expectations(items: items, score: s, into: $0, scratch: &scratch) }
            }
            for k in 0..<n {
                let exact = numerator[k][s] / denominator[s]
                #expect(table[k * (n + 1) + s].isApproximatelyEqual(to: exact, absoluteTolerance: 1e-12), "table item \(k) score \(s)")
                #expect(out[k].isApproximatelyEqual(to: exact, absoluteTolerance: 1e-12), "single score item \(k) score \(s)")
            }
            // Given s the expected item scores add up to s.
            #expect(out.reduce(0, +).isApproximatelyEqual(to: Double(s), absoluteTolerance: 1e-10))
        }
    }

    @Test("a 60-item form: the deconvolution agrees with a leave-one-out Lord–Wingersky recursion to 1e-10")
    func longForm() throws {
        var rng = SeededGenerator(seed: 11)
        let bank = (0..<60).map { _ in
            ItemParameters(discrimination: exp(RandomVariate.normal(sd: 0.5, using: &rng)), difficulty: RandomVariate.normal(sd: 1.5, using: &rng))
        }
        let grid = try QuadratureGrid(count: 61, bound: 6)
        let expectation = SummedScoreExpectation(parameters: bank, grid: grid)
        let form = Array(0..<60)
        let table = form.withUnsafeBufferPointer { expectation.table(items: $0) }
        func likelihood(excluding skip: Int?) -> [[Double]] {
            var f = [[Double]](repeating: [Double](repeating: 1, count: grid.count), count: 1)
            for j in form where j != skip {
                var next = [[Double]](repeating: [Double](repeating: 0, count: grid.count), count: f.count + 1)
                for s in 0..<f.count {
                    for q in 0..<grid.count {
                        let p = bank[j].probability(at: grid.points[q])
                        next[s][q] += f[s][q] * (1 - p); next[s + 1][q] += f[s][q] * p
                    }
                }
                f = next
            }
            return f
        }
        let full = likelihood(excluding: nil)
        for k in [0, 17, 42, 59] {
            let without = likelihood(excluding: k)
            for s in [1, 5, 30, 55, 59] {
                var num = 0.0, den = 0.0
                for q in 0..<grid.count {
                    num += grid.weights[q] * bank[k].probability(at: grid.points[q]) * without[s - 1][q]
                    den += grid.weights[q] * full[s][q]
                }
                #expect(table[k * 61 + s].isApproximatelyEqual(to: num / den, absoluteTolerance: 1e-10), "item \(k) score \(s)")
            }
        }
    }
}
