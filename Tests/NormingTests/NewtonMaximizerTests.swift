import Foundation
@testable import Norming
import Numerics
import Testing

@Suite("Newton maximiser")
struct NewtonMaximizerTests {
    /// f(x, y) = −(1 − x)² − 10(y − x²)²: a curved valley (Rosenbrock's, scaled) with its maximum 0 at (1, 1),
    /// where the Hessian is not negative definite far from the optimum.
    static func valley(_ v: [Double]) -> (value: Double, gradient: [Double], hessian: [Double]) {
        let x = v[0], y = v[1]
        let value = -(1 - x) * (1 - x) - 10 * (y - x * x) * (y - x * x)
        let gradient = [2 * (1 - x) + 40 * x * (y - x * x), -20 * (y - x * x)]
        let hxx = -2 + 40 * (y - x * x) - 80 * x * x, hxy = 40 * x, hyy = -20.0
        return (value, gradient, [hxx, hxy, hxy, hyy])
    }

    @Test("finds the maximum of a curved valley from a start where −H is indefinite, to 1e-10")
    func valleyMaximum() {
        let result = NewtonMaximizer().maximize(from: [-1.2, 1.0], Self.valley)
        #expect(result.converged && result.hessianDefinite)
        #expect(result.parameters[0].isApproximatelyEqual(to: 1, absoluteTolerance: 1e-10))
        #expect(result.parameters[1].isApproximatelyEqual(to: 1, absoluteTolerance: 1e-10))
    }

    @Test("an iteration limit reached is a result with converged = false")
    func limit() {
        let result = NewtonMaximizer(maximumIterations: 2).maximize(from: [-1.2, 1.0], Self.valley)
        #expect(!result.converged)
        #expect(result.iterations == 2)
        #expect(result.value.isFinite)
    }

    @Test("Cholesky solve: a known 2×2 system, and nil for an indefinite matrix")
    func cholesky() throws {
        // [[4, 2], [2, 3]] x = [2, 1] → x = [0.5, 0].
        let x = try #require(choleskySolve([4, 2, 2, 3], [2, 1], n: 2))
        #expect(x[0].isApproximatelyEqual(to: 0.5, absoluteTolerance: 1e-15) && x[1].isApproximatelyEqual(to: 0, absoluteTolerance: 1e-15))
        #expect(choleskySolve([1, 2, 2, 1], [1, 1], n: 2) == nil)
    }
}
