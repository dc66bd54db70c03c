import Numerics
import Testing
@testable import Psychometrics

/// The standard-error pipeline's parallel parts: the tiled Cholesky inverse, and the person-score covariance
/// whose matrix rows are owned by threads (the result must not depend on the thread count).
@Suite("Parallel standard errors")
struct ParallelStandardErrorTests {
    /// A random symmetric positive-definite matrix B Bᵀ + n·I (row-major).
    func positiveDefinite(_ n: Int, seed: UInt64) -> [Double] {
        var rng = SeededGenerator(seed: seed)
        let b = (0..<(n * n)).map { _ in Double.random(in: -1...1, using: &rng) }
        var a = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0..<n {
                var sum = i == j ? Double(n) : 0
                for k in 0..<n { sum += b[i * n + k] * b[j * n + k] }
                a[i * n + j] = sum
            }
        }
        return a
    }

    @Test(
        "tiled Cholesky inverse equals a Gauss–Jordan inverse (tiles of 128 with ragged edges), for any thread count",
        arguments: [1, 3])
    func choleskyInverse(_ workers: Int) throws {
        let n = 300 // three tile rows, the last one 44 wide
        let a = positiveDefinite(n, seed: 5)
        let reference = invert((0..<n).map { Array(a[($0 * n)..<(($0 + 1) * n)]) })
        var copy = a
        // Only the upper triangle is read: spoil the lower one.
        for i in 0..<n { for j in 0..<i { copy[i * n + j] = .nan } }
        let inverse = try #require(CholeskyInverse(upperTriangleOf: &copy, n: n, workers: workers))
        var worst = 0.0
        for (x, y) in [(0, 0), (0, 299), (17, 130), (128, 128), (255, 256), (299, 299), (200, 5)] {
            worst = max(worst, abs(inverse.entry(x, y) - reference[x][y]) / abs(reference[x][x]))
        }
        #expect(worst < 1e-12, "largest relative difference \(worst)")
        var again = a
        let single = try #require(CholeskyInverse(upperTriangleOf: &again, n: n, workers: 1))
        #expect(single.entry(3, 250) == inverse.entry(3, 250))
    }

    @Test("a matrix that is not positive definite has no inverse")
    func notPositiveDefinite() {
        var a = positiveDefinite(140, seed: 6)
        a[139 * 140 + 139] = -1
        #expect(CholeskyInverse(upperTriangleOf: &a, n: 140, workers: 2) == nil)
    }

    /// The observed information of one engine state built with 1 and with 3 workers, from the same expected
    /// counts (the E-step's own sums are per worker, so they are shared here, not recomputed).
    func informationOnOneAndThreeWorkers(_ model: IRTModel, _ data: ResponseMatrix, fixed: [ItemParameters?] = []) -> ([Double], [Double]) {
        var options = CalibrationOptions(model: model)
        options.workers = 1
        let one = EMEngine(model: model, options: options, data: data, useDense: false, fixed: fixed)
        options.workers = 3
        let three = EMEngine(model: model, options: options, data: data, useDense: false, fixed: fixed)
        let e = one.eStep()
        return (one.observedInformation(e), three.observedInformation(e))
    }

    @Test(
        "the person-score covariance is the same to the bit on 1 and 3 threads (rows owned by threads)",
        arguments: [IRTModel.rasch, .onePL, .twoPL, .threePL])
    func threadCountInvariance(_ model: IRTModel) {
        let sim = Simulated(model: model, items: 120, persons: 3000, perSession: 15, seed: 31)
        let (one, three) = informationOnOneAndThreeWorkers(model, sim.data)
        let P = Int(Double(one.count).squareRoot())
        var differing = 0
        for x in 0..<P { for y in x..<P where one[x * P + y] != three[x * P + y] { differing += 1 } }
        #expect(differing == 0)
        #expect(one.allSatisfy { $0.isFinite })
    }

    @Test("with fixed items (μ, σ rows) the information does not depend on the thread count either")
    func fixedItemsInvariance() {
        let sim = Simulated(model: .twoPL, items: 60, persons: 2500, perSession: 12, seed: 32)
        let fixed: [ItemParameters?] = (0..<60).map { $0 < 10 ? sim.truth[$0] : nil }
        let (one, three) = informationOnOneAndThreeWorkers(.twoPL, sim.data, fixed: fixed)
        let P = Int(Double(one.count).squareRoot())
        #expect(P == 2 * 50 + 2)
        var differing = 0
        for x in 0..<P { for y in x..<P where one[x * P + y] != three[x * P + y] { differing += 1 } }
        #expect(differing == 0)
    }
}
