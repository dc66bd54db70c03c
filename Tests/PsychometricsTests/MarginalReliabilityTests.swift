import Foundation
import Psychometrics
import Testing

@Suite("MarginalReliability: mirt's marginal_rxx, averaged over the persons' forms")
struct MarginalReliabilityTests {
    static let items = [ItemParameters(discrimination: 1.2, difficulty: -0.5, guessing: 0),
                        ItemParameters(discrimination: 0.8, difficulty: 0.4, guessing: 0.2),
                        ItemParameters(discrimination: 2.0, difficulty: 1.0, guessing: 0)]

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

    @Test("complete data: 1 / (1 + ∫ φ/I) to 1e-6 against a 200,001-point trapezoid")
    func complete() throws {
        let data = try ResponseMatrix(personIDs: ["p1", "p2"], itemIDs: ["a", "b", "c"], rows: [[1, 0, 1], [0, 0, 1]])
        let rho = try #require(MarginalReliability.compute(parameters: Self.items, data: data))
        #expect(abs(rho - 1 / (1 + Self.errorIntegral(Self.items))) < 1e-6)
    }

    @Test("missing by design: the error variance is averaged over the persons' forms")
    func forms() throws {
        // p1 and p2 took items a, b; p3 took b, c; p4 answered nothing (left out).
        let data = try ResponseMatrix(personIDs: ["p1", "p2", "p3", "p4"], itemIDs: ["a", "b", "c"],
                                  rows: [[1, 0, nil], [0, 1, nil], [nil, 1, 0], [nil, nil, nil]])
        let rho = try #require(MarginalReliability.compute(parameters: Self.items, data: data))
        let ab = Self.errorIntegral(Array(Self.items[0...1])), bc = Self.errorIntegral(Array(Self.items[1...2]))
        #expect(abs(rho - 1 / (1 + (2 * ab + bc) / 3)) < 1e-6)
        let empty = try ResponseMatrix(personIDs: ["p"], itemIDs: ["a"], rows: [[nil]])
        #expect(MarginalReliability.compute(parameters: [Self.items[0]], data: empty) == nil)
    }
}
