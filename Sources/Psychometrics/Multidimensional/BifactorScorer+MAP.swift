import Foundation

extension BifactorScorer {
    /// The factor scores as the posterior mode (MAP; Bock & Aitkin's modal estimates with the N(0, I) prior), the
    /// alternative to `eap`: θ̂ maximises
    /// ```
    /// ℓ(θ) = Σ_j log P(u_j | θ_g, θ_s(j)) − ½ θ_g² − ½ Σ_s θ_s²
    /// ```
    /// by Newton's method on its exact Hessian (`posteriorMode`; with z = a_g θ_g + a_s θ_s + d, each answer adds
    /// ∂ℓ/∂z · (a_g, a_s) to the gradient and ∂²ℓ/∂z² · (a_g, a_s)(a_g, a_s)ᵀ to the Hessian,
    /// `BifactorItem.logitDerivatives`), from the EAP. The covariance is the inverse of −∇²ℓ at the mode (the
    /// posterior's normal approximation, as mirt's `fscores(method = "MAP")` reports its SEs),
    /// a factor the session did not answer keeps mode 0 and variance 1. `logLikelihood` is log L(u | θ̂), the
    /// likelihood at the mode. Estimates stay within ±`grid`'s bound.
    /// - Throws: as `eap`.
    package func map(_ responses: [(item: Int, response: UInt8)]) throws(PsychometricsError) -> BifactorEstimate {
        let (items, answers) = try validatedAnswers(responses, itemCount: self.items.count)
        return items.withUnsafeBufferPointer { i in answers.withUnsafeBufferPointer { u in map(validated: i, u) } }
    }

    /// `map` of answers already checked.
    package func map(validated itemIndices: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>) -> BifactorEstimate {
        let dims = 1 + specificFactorCount, bound = grid.points.last!
        let theta = eap(validated: itemIndices, responses).means
        var answered = [Int](repeating: 0, count: specificFactorCount)
        for k in 0..<itemIndices.count { if let f = items[itemIndices[k]].specific { answered[f] += 1 } }
        // ℓ, its gradient and Hessian (dims × dims, row-major) at θ.
        func terms(_ theta: [Double], derivatives: Bool) -> LogPosteriorTerms {
            var likelihood = 0.0
            var gradient = derivatives ? theta.map { -$0 } : [], hessian = [Double](repeating: 0, count: derivatives ? dims * dims : 0)
            if derivatives { for x in 0..<dims { hessian[x * dims + x] = -1 } }
            for k in 0..<itemIndices.count {
                let item = items[itemIndices[k]], x = item.specific.map { $0 + 1 }
                let z = item.logit(general: theta[0], specific: x.map { theta[$0] } ?? 0)
                let lp = item.logProbabilities(logit: z), right = responses[k] == 1
                likelihood += right ? lp.right : lp.wrong
                guard derivatives else { continue }
                let (first, second) = item.logitDerivatives(logit: z, right: right)
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
            return LogPosteriorTerms(value: likelihood - prior, likelihood: likelihood, gradient: gradient, hessian: hessian)
        }
        let mode = posteriorMode(from: theta, bound: bound) { terms($0, derivatives: $1) }
        return BifactorEstimate(
            means: mode.theta, covariance: mode.covariance, standardErrors: (0..<dims).map { max(0, mode.covariance[$0 * dims + $0]).squareRoot() },
            answersPerFactor: answered, logLikelihood: mode.terms.likelihood)
    }
}
