import Foundation

extension EMEngine {
    /// Rasch/1PL M-step: one slope shared by all items plus an intercept per item, by Fisher scoring on the
    /// arrow-shaped information matrix (solved through the Schur complement of the intercept block).
    mutating func mStepCommonSlope(_ e: Expectation) {
        let nq = q, J = itemCount
        func objective(_ a: Double, _ ds: [Double]) -> Double {
            var f = 0.0
            for j in 0..<J {
                for t in 0..<nq {
                    let v = ItemResponseFunction.logProbabilities(
                        logit: ItemResponseFunction.logit(slope: a, intercept: ds[j], at: grid.points[t]), guessing: 0)
                    f += e.r[j * nq + t] * v.logP + (e.n[j * nq + t] - e.r[j * nq + t]) * v.logQ
                }
            }
            return f
        }
        var a = s[0], ds = d
        var f = objective(a, ds)
        for _ in 0..<50 {
            var gA = 0.0, iAA = 0.0
            var gD = [Double](repeating: 0, count: J), iAD = gD, iDD = gD
            for j in 0..<J {
                for t in 0..<nq {
                    let theta = grid.points[t]
                    let prob = ItemResponseFunction.probability(logit: ItemResponseFunction.logit(slope: a, intercept: ds[j], at: theta))
                    let n = e.n[j * nq + t]
                    let resid = e.r[j * nq + t] - n * prob, weight = n * prob * (1 - prob)
                    gA += resid * theta
                    iAA += weight * theta * theta
                    gD[j] += resid
                    iAD[j] += weight * theta
                    iDD[j] += weight
                }
            }
            var schur = iAA, rhs = gA
            for j in 0..<J where iDD[j] > 0 {
                schur -= iAD[j] * iAD[j] / iDD[j]
                rhs -= iAD[j] * gD[j] / iDD[j]
            }
            let stepA = schur > 1e-12 ? rhs / schur : 0
            let stepD = (0..<J).map { j in iDD[j] > 0 ? (gD[j] - iAD[j] * stepA) / iDD[j] : 0 }
            var scale = 1.0, accepted = false
            for _ in 0..<40 {
                let ta = clampedCommonSlope(a + scale * stepA)
                let td = (0..<J).map { clampedIntercept(ds[$0] + scale * stepD[$0]) }
                let ft = objective(ta, td)
                if ft >= f - 1e-12 * abs(f) {
                    let change = max(abs(ta - a), zip(td, ds).map { abs($0 - $1) }.max() ?? 0)
                    a = ta; ds = td; f = ft
                    accepted = true
                    if change < 1e-10 { s = [Double](repeating: a, count: J); d = ds; return }
                    break
                }
                scale *= 0.5
            }
            if !accepted { break }
        }
        s = [Double](repeating: a, count: J)
        d = ds
    }
}
