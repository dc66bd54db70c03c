import Foundation
import Psychometrics
import Testing

@Suite("Reliabilities: mirt's marginal_rxx, and the mean error variance over the persons' forms")
struct ReliabilityTests {
    static let items = [
        ItemParameters(discrimination: 1.2, difficulty: -0.5, guessing: 0),
        ItemParameters(discrimination: 0.8, difficulty: 0.4, guessing: 0.2),
        ItemParameters(discrimination: 2.0, difficulty: 1.0, guessing: 0)
    ]

    /// ∫ f(I(θ)) φ(θ) dθ by the trapezoid rule on 200,001 points of [−10, 10] with the exact normal density.
    static func integral(_ items: [ItemParameters], _ f: (Double) -> Double) -> Double {
        let n = 200_000, h = 20.0 / Double(n)
        var sum = 0.0
        for k in 0...n {
            let theta = -10 + Double(k) * h
            let info = items.reduce(0) { $0 + $1.information(at: theta) }
            sum += (k == 0 || k == n ? 0.5 : 1) * f(info) * exp(-0.5 * theta * theta) / (2 * Double.pi).squareRoot()
        }
        return sum * h
    }

    @Test("marginal_rxx: mirt's ∫ I/(I + 1) φ to 1e-8 against a 200,001-point trapezoid; not the mean error variance's")
    func mirtMarginalRXX() throws {
        let rxx = try #require(MarginalRXX.compute(parameters: Self.items))
        #expect(abs(rxx - Self.integral(Self.items) { $0 / ($0 + 1) }) < 1e-8)
        let data = try ResponseMatrix(personIDs: ["p1"], itemIDs: ["a", "b", "c"], rows: [[1, 0, 1]])
        let other = try #require(MeanErrorVarianceReliability.compute(parameters: Self.items, data: data))
        #expect(abs(rxx - other) > 0.01, "the two definitions differ on a short test: \(rxx) vs \(other)")
        // No items: nil; 400 informative items: close to 1.
        #expect(MarginalRXX.compute(parameters: []) == nil)
        let many = Array(repeating: ItemParameters(discrimination: 1.5, difficulty: 0, guessing: 0), count: 400)
        #expect(try #require(MarginalRXX.compute(parameters: many)) > 0.99)
        // A latent SD σ: ∫ I/(I + 1/σ²) over N(0, σ²), which is the σ = 1 value of the items rescaled (a·σ, b/σ).
        let sigma = 1.3816
        let rescaled = Self.items.map {
            ItemParameters(discrimination: $0.discrimination * sigma, difficulty: $0.difficulty / sigma, guessing: $0.guessing)
        }
        let scaled = try #require(MarginalRXX.compute(parameters: Self.items, latentSD: sigma))
        #expect(abs(scaled - (try #require(MarginalRXX.compute(parameters: rescaled)))) < 1e-8)
    }

    @Test("marginal_rxx of mirt's LSAT7 2PL: mirt 1.47 gives 0.4417618253 (to 1e-6)")
    func mirtLSAT7() throws {
        // mirt(expand.table(LSAT7), 1) in mirt 1.47: logLik −2658.805128, coef() to 10 digits, marginal_rxx(mod).
        let a = [0.9879253997, 1.0808847044, 1.7058006087, 0.7651852993, 0.7357979673]
        let d = [1.8560604586, 0.8079786421, 1.8042187472, 0.4859966026, 1.8545127300]
        let items = zip(a, d).map { ItemParameters(discrimination: $0, difficulty: -$1 / $0, guessing: 0) }
        let rxx = try #require(MarginalRXX.compute(parameters: items))
        #expect(abs(rxx - 0.4417618253) < 1e-6, "\(rxx)")
    }

    /// ∫ φ(θ) / I(θ) dθ by the trapezoid rule on 200,001 points of [−10, 10] with the exact normal density.
    static func errorIntegral(_ items: [ItemParameters]) -> Double {
        let n = 200_000, h = 20.0 / Double(n)
        var sum = 0.0
        for k in 0...n {
            let theta = -10 + Double(k) * h
            let info = items.reduce(0) { $0 + $1.information(at: theta) }
            let f = exp(-0.5 * theta * theta) / (2 * Double.pi).squareRoot() / max(info, 1e-8)
            sum += (k == 0 || k == n ? 0.5 : 1) * f
        }
        return sum * h
    }

    @Test("mean error variance, complete data: 1 / (1 + ∫ φ/I) to 1e-6 against a 200,001-point trapezoid")
    func complete() throws {
        let data = try ResponseMatrix(personIDs: ["p1", "p2"], itemIDs: ["a", "b", "c"], rows: [[1, 0, 1], [0, 0, 1]])
        let rho = try #require(MeanErrorVarianceReliability.compute(parameters: Self.items, data: data))
        #expect(abs(rho - 1 / (1 + Self.errorIntegral(Self.items))) < 1e-6)
    }

    @Test("mean error variance, missing by design: the error variance is averaged over the persons' forms")
    func forms() throws {
        // p1 and p2 took items a, b; p3 took b, c; p4 answered nothing (left out).
        let data = try ResponseMatrix(
            personIDs: ["p1", "p2", "p3", "p4"], itemIDs: ["a", "b", "c"],
            rows: [[1, 0, nil], [0, 1, nil], [nil, 1, 0], [nil, nil, nil]])
        let rho = try #require(MeanErrorVarianceReliability.compute(parameters: Self.items, data: data))
        let ab = Self.errorIntegral(Array(Self.items[0...1])), bc = Self.errorIntegral(Array(Self.items[1...2]))
        #expect(abs(rho - 1 / (1 + (2 * ab + bc) / 3)) < 1e-6)
        let empty = try ResponseMatrix(personIDs: ["p"], itemIDs: ["a"], rows: [[nil]])
        #expect(MeanErrorVarianceReliability.compute(parameters: [Self.items[0]], data: empty) == nil)
    }
}
