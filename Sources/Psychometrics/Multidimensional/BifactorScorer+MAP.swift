import Foundation

extension BifactorScorer {
    /// The factor scores as the posterior mode (MAP; Bock & Aitkin's modal estimates with the N(0, I) prior), the
    /// alternative to `eap`: θ̂ maximises
    /// ```
    /// ℓ(θ) = Σ_j log P(u_j | θ_g, θ_s(j)) − ½ θ_g² − ½ Σ_s θ_s²
    /// ```
    /// by Newton's method on its exact Hessian (negative definite: with z = a_g θ_g + a_s θ_s + d, ψ = σ(z),
    /// P = c + (1 − c)ψ and D = (1 − c)ψ(1 − ψ), each answer adds ∂ℓ/∂z · (a_g, a_s) to the gradient and
    /// ∂²ℓ/∂z² · (a_g, a_s)(a_g, a_s)ᵀ to the Hessian, where for u = 1 ∂ℓ/∂z = D/P,
    /// ∂²ℓ/∂z² = [D(1 − 2ψ)P − D²]/P², and for u = 0 ∂ℓ/∂z = −D/(1 − P), ∂²ℓ/∂z² = [−D(1 − 2ψ)(1 − P) − D²]/(1 − P)²;
    /// for the 2PL both are −ψ(1 − ψ)), the step halved until ℓ rises, from the EAP. The covariance is the inverse of
    /// −∇²ℓ at the mode (the posterior's normal approximation, as mirt's `fscores(method = "MAP")` reports its SEs),
    /// a factor the session did not answer keeps mode 0 and variance 1. `logLikelihood` is log L(u | θ̂), the
    /// likelihood at the mode. Estimates stay within ±`grid`'s bound.
    /// - Throws: as `eap`.
    public func map(_ responses: [(item: Int, response: UInt8)]) throws(PsychometricsError) -> BifactorEstimate {
        let (items, answers) = try validated(responses)
        return items.withUnsafeBufferPointer { i in answers.withUnsafeBufferPointer { u in map(validated: i, u) } }
    }

    /// `map` of answers already checked.
    package func map(validated itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> BifactorEstimate {
        let dims = 1 + specificFactorCount, bound = grid.points.last!
        var theta = eap(validated: itemIndices, responses).means
        var answered = [Int](repeating: 0, count: specificFactorCount)
        for k in 0..<itemIndices.count { if let f = items[itemIndices[k]].specific { answered[f] += 1 } }
        // ℓ, its gradient and Hessian (dims × dims, row-major) at θ.
        func terms(_ theta: [Double], derivatives: Bool) -> (value: Double, likelihood: Double, gradient: [Double], hessian: [Double]) {
            var likelihood = 0.0
            var gradient = derivatives ? theta.map { -$0 } : [], hessian = [Double](repeating: 0, count: derivatives ? dims * dims : 0)
            if derivatives { for x in 0..<dims { hessian[x * dims + x] = -1 } }
            for k in 0..<itemIndices.count {
                let item = items[itemIndices[k]], x = item.specific.map { $0 + 1 }
                let z = item.logit(general: theta[0], specific: x.map { theta[$0] } ?? 0)
                let lp = item.logProbabilities(logit: z), right = responses[k] == 1
                likelihood += right ? lp.right : lp.wrong
                guard derivatives else { continue }
                let psi = Logistic.sigmoid(z), c = item.guessing, p = c + (1 - c) * psi, d = (1 - c) * psi * (1 - psi)
                let first: Double, second: Double
                if c == 0 {
                    first = right ? 1 - psi : -psi
                    second = -psi * (1 - psi)
                } else if right {
                    first = d / p
                    second = (d * (1 - 2 * psi) * p - d * d) / (p * p)
                } else {
                    first = -d / (1 - p)
                    second = (-d * (1 - 2 * psi) * (1 - p) - d * d) / ((1 - p) * (1 - p))
                }
                gradient[0] += first * item.generalSlope
                hessian[0] += second * item.generalSlope * item.generalSlope
                if let x {
                    gradient[x] += first * item.specificSlope
                    hessian[x * dims + x] += second * item.specificSlope * item.specificSlope
                    hessian[x] += second * item.generalSlope * item.specificSlope
                    hessian[x * dims] = hessian[x]
                }
            }
            let prior = theta.reduce(0) { $0 + $1 * $1 } / 2
            return (likelihood - prior, likelihood, gradient, hessian)
        }
        var current = terms(theta, derivatives: true)
        for _ in 0..<100 {
            // Newton: solve (−H) δ = ∇ℓ (−H is positive definite for 2PL items; `solveSmallSPD` ridges it otherwise).
            let step = solveSmallSPD(current.hessian.map { -$0 }, current.gradient, n: dims)
            var t = 1.0, moved = false
            for _ in 0..<30 {
                let next = zip(theta, step).map { min(max($0 + t * $1, -bound), bound) }
                let value = terms(next, derivatives: false).value
                if value >= current.value - 1e-12 * abs(current.value) {
                    theta = next
                    moved = true
                    break
                }
                t /= 2
            }
            current = terms(theta, derivatives: true)
            if !moved || step.reduce(0, { max($0, abs($1)) }) * t < 1e-10 { break }
        }
        // Covariance: (−H)⁻¹, by Cholesky of the small matrix.
        let information = current.hessian.map { -$0 }
        var covariance = [Double](repeating: 0, count: dims * dims)
        for x in 0..<dims {
            var unit = [Double](repeating: 0, count: dims)
            unit[x] = 1
            let column = solveSmallSPD(information, unit, n: dims)
            for y in 0..<dims { covariance[y * dims + x] = column[y] }
        }
        for x in 0..<dims { for y in 0..<x { let v = (covariance[x * dims + y] + covariance[y * dims + x]) / 2; covariance[x * dims + y] = v; covariance[y * dims + x] = v } }
        return BifactorEstimate(means: theta, covariance: covariance, standardErrors: (0..<dims).map { max(0, covariance[$0 * dims + $0]).squareRoot() },
                                answersPerFactor: answered, logLikelihood: current.likelihood)
    }
}
