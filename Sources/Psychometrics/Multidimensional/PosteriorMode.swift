import Foundation

/// The log posterior of a factor-score vector and its derivatives: ℓ(θ) = log L(u | θ) + log prior(θ), its
/// gradient and Hessian (n × n, row-major; empty when not asked for), and log L(u | θ) alone.
struct LogPosteriorTerms {
    var value: Double
    var likelihood: Double
    var gradient: [Double]
    var hessian: [Double]
}

/// The posterior mode (MAP) of a multidimensional score by Newton's method on the exact Hessian, shared by the
/// bifactor (`BifactorScorer.map`) and correlated-factors (`CorrelatedFactorsScorer.map`) scorers: from `start`,
/// the step δ solves (−H) δ = ∇ℓ (`solveSmallSPD`, ridged when −H is not positive definite), halved until ℓ does
/// not fall (up to 30 times), each coordinate kept within ±`bound`; at most 100 steps, stopping when no halving
/// helps or the step is below 10⁻¹⁰. Returns the mode, the terms there, and the covariance (−H)⁻¹ (symmetrised):
/// the posterior's normal approximation, as mirt's `fscores(method = "MAP")` reports its SEs.
func posteriorMode(
    from start: [Double], bound: Double,
    terms: ([Double], _ derivatives: Bool) -> LogPosteriorTerms
) -> (theta: [Double], terms: LogPosteriorTerms, covariance: [Double]) {
    let dims = start.count
    var theta = start, current = terms(theta, true)
    for _ in 0..<100 {
        let step = solveSmallSPD(current.hessian.map { -$0 }, current.gradient, n: dims)
        var t = 1.0, moved = false
        for _ in 0..<30 {
            let next = zip(theta, step).map { min(max($0 + t * $1, -bound), bound) }
            if terms(next, false).value >= current.value - 1e-12 * abs(current.value) {
                theta = next
                moved = true
                break
            }
            t /= 2
        }
        current = terms(theta, true)
        if !moved || step.reduce(0, { max($0, abs($1)) }) * t < 1e-10 { break }
    }
    let information = current.hessian.map { -$0 }
    var covariance = [Double](repeating: 0, count: dims * dims)
    for x in 0..<dims {
        var unit = [Double](repeating: 0, count: dims)
        unit[x] = 1
        let column = solveSmallSPD(information, unit, n: dims)
        for y in 0..<dims { covariance[y * dims + x] = column[y] }
    }
    for x in 0..<dims {
        for y in 0..<x {
            let v = (covariance[x * dims + y] + covariance[y * dims + x]) / 2; covariance[x * dims + y] = v; covariance[y * dims + x] = v
        }
    }
    return (theta, current, covariance)
}
