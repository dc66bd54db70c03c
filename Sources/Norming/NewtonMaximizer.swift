import Foundation
import Psychometrics

/// Maximises a smooth function of a few dozen parameters by Newton's method with a Levenberg–Marquardt shift and
/// a backtracking line search (Nocedal & Wright 2006, §3.1 and §3.4).
///
/// ```
/// step:   (−H + λ·I) d = g,  λ = 0 when −H is positive definite, else increased ×10 from 1e-6·max|H_ii|
/// search: x ← x + α d with α = 1, ½, ¼, … until f(x + α d) ≥ f(x) + 10⁻⁴ α gᵀd
/// stop:   gᵀ(−H)⁻¹g / 2 < tolerance·(1 + |f|)   (the predicted gain: Newton's decrement; the last full step is
///         then taken), or no step gains
/// ```
/// Non-convergence (iteration limit, a line search that finds no gain while the decrement is large) is a
/// result, `converged = false`, never a crash.
package struct NewtonMaximizer {
    /// Value, gradient and Hessian (row-major, n×n) at a point; a non-finite value means "outside the domain".
    package typealias Objective = ([Double]) -> (value: Double, gradient: [Double], hessian: [Double])

    package var maximumIterations = 200
    package var tolerance = 1e-10

    package init(maximumIterations: Int = 200, tolerance: Double = 1e-10) {
        self.maximumIterations = maximumIterations
        self.tolerance = tolerance
    }

    package struct Result {
        package var parameters: [Double]
        package var value: Double
        package var gradient: [Double]
        package var hessian: [Double]
        package var iterations: Int
        package var converged: Bool
        /// Whether −H at the end is positive definite (a proper maximum, not a saddle or a flat direction).
        package var hessianDefinite: Bool
    }

    package func maximize(from start: [Double], _ objective: Objective) -> Result {
        let n = start.count
        var x = start
        var (f, g, h) = objective(x)
        guard f.isFinite else {
            return Result(parameters: x, value: f, gradient: g, hessian: h, iterations: 0, converged: false, hessianDefinite: false)
        }
        var iterations = 0
        var converged = false
        while iterations < maximumIterations {
            iterations += 1
            let negative = h.map { -$0 }
            // Newton's decrement with the unshifted Hessian when it is definite.
            var shift = 0.0
            var step: [Double]?
            let scale = max((0..<n).map { abs(h[$0 * n + $0]) }.max() ?? 1, 1e-12)
            while step == nil {
                var a = negative
                for i in 0..<n { a[i * n + i] += shift }
                step = choleskySolve(a, g, n: n)
                if step == nil { shift = shift == 0 ? 1e-6 * scale : shift * 10 }
                if shift > 1e12 * scale { break }
            }
            guard let d = step else { break }
            let slope = zip(g, d).reduce(0) { $0 + $1.0 * $1.1 }
            if shift == 0 && slope / 2 < tolerance * (1 + abs(f)) {
                // Converged: take the last full Newton step when it does not lose (quadratic convergence makes the
                // parameters' error about the square of this step's).
                let trial = zip(x, d).map { $0 + $1 }
                let (ft, gt, ht) = objective(trial)
                if ft.isFinite && ft >= f { x = trial; f = ft; g = gt; h = ht }
                converged = true
                break
            }
            var alpha = 1.0
            var accepted = false
            while alpha > 1e-12 {
                let trial = zip(x, d).map { $0 + alpha * $1 }
                let (ft, gt, ht) = objective(trial)
                if ft.isFinite && ft >= f + 1e-4 * alpha * slope {
                    x = trial; f = ft; g = gt; h = ht
                    accepted = true
                    break
                }
                alpha /= 2
            }
            if !accepted {
                // No step gains: at the maximum up to rounding if the decrement is tiny, else stuck.
                converged = shift == 0 && slope / 2 < 1e-6 * (1 + abs(f))
                break
            }
        }
        let definite = choleskySolve(h.map { -$0 }, g, n: n) != nil
        if converged && !definite { converged = false }
        return Result(parameters: x, value: f, gradient: g, hessian: h, iterations: iterations, converged: converged, hessianDefinite: definite)
    }
}

/// Solves A x = b for a symmetric positive definite A (row-major n×n) by Cholesky; nil when A is not positive
/// definite (a pivot ≤ 1e-14 times the largest diagonal entry) or not finite.
package func choleskySolve(_ a: [Double], _ b: [Double], n: Int) -> [Double]? {
    let largest = (0..<n).map { abs(a[$0 * n + $0]) }.max() ?? 0
    guard largest.isFinite, largest > 0 else { return nil }
    var l = a
    guard choleskyInPlace(&l, n: n, minimumPivot: 1e-14 * largest) else { return nil }
    var work = b, y = b
    solveCholesky(l, b, n: n, work: &work, into: &y)
    return y.allSatisfy(\.isFinite) ? y : nil
}
