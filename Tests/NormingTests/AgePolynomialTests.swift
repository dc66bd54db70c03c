import Foundation
@testable import Norming
import Numerics
import Testing

@Suite("Age polynomials (Legendre basis)")
struct AgePolynomialTests {
    @Test("Legendre values by hand: P2(t) = (3t² − 1)/2, P3(t) = (5t³ − 3t)/2, P4(t) = (35t⁴ − 30t² + 3)/8")
    func knownValues() {
        for t in [-1.0, -0.3, 0, 0.5, 1] {
            let p = AgePolynomial(coefficients: [0.5, -1, 2, 0.25, -0.75])
            let expected = 0.5 - t + 2 * (3 * t * t - 1) / 2 + 0.25 * (5 * t * t * t - 3 * t) / 2 - 0.75 * (35 * pow(t, 4) - 30 * t * t + 3) / 8
            #expect(p.value(at: t).isApproximatelyEqual(to: expected, absoluteTolerance: 1e-14), "t \(t)")
            var basis = [Double](repeating: 0, count: 5)
            AgePolynomial.legendre(t, degree: 4, into: &basis)
            #expect(zip(basis, p.coefficients).reduce(0) { $0 + $1.0 * $1.1 }.isApproximatelyEqual(to: expected, absoluteTolerance: 1e-14))
        }
        #expect(AgePolynomial.constant(3).value(at: 0.7) == 3)
    }

    @Test("ages map to [−1, 1] over the range and are clamped outside it")
    func standardization() {
        let s = AgeStandardization(minimum: 16, maximum: 90)
        #expect(s.standardized(16) == -1 && s.standardized(90) == 1 && s.standardized(53) == 0)
        #expect(s.standardized(5) == -1 && s.standardized(120) == 1)
    }
}
