import Foundation

extension EMEngine {
    /// Fisher scoring with step halving on one intercept d at a fixed slope a (c = 0): maximises
    /// Σ_q r_q log σ(aθ_q + d) + (n_q − r_q) log σ(−aθ_q − d).
    func optimizeIntercept(r: [Double], n: [Double], a: Double, d start: Double) -> Double {
        func objective(_ d: Double) -> Double {
            var f = 0.0
            for t in 0..<q {
                let v = ItemResponseFunction.logProbabilities(logit: ItemResponseFunction.logit(slope: a, intercept: d, at: nodes[t]), guessing: 0)
                f += r[t] * v.logP + (n[t] - r[t]) * v.logQ
            }
            return f
        }
        var d = start, f = objective(d)
        for _ in 0..<50 {
            var grad = 0.0, info = 0.0
            for t in 0..<q {
                let prob = ItemResponseFunction.probability(logit: ItemResponseFunction.logit(slope: a, intercept: d, at: nodes[t]))
                grad += r[t] - n[t] * prob
                info += n[t] * prob * (1 - prob)
            }
            guard info > 1e-12 else { return d }
            let step = grad / info
            var scale = 1.0, accepted = false
            for _ in 0..<40 {
                let trial = clampedIntercept(d + scale * step)
                let ft = objective(trial)
                if ft >= f - 1e-12 * abs(f) {
                    let change = abs(trial - d)
                    d = trial; f = ft; accepted = true
                    if change < 1e-10 { return d }
                    break
                }
                scale *= 0.5
            }
            if !accepted { return d }
        }
        return d
    }

    /// Expected complete-data log-likelihood of one item (+ log priors), over `nodes` (the engine's own, or a
    /// multiple-group fit's groups' nodes one after another) with r and n given at each.
    func itemObjective(r: [Double], n: [Double], nodes: [Double], s: Double, d: Double, g: Double, item j: Int) -> Double {
        let a = slope(working: s), c = asymptote(working: g)
        var f = 0.0
        for t in nodes.indices {
            let v = ItemResponseFunction.logProbabilities(logit: ItemResponseFunction.logit(slope: a, intercept: d, at: nodes[t]), guessing: c)
            f += r[t] * v.logP + (n[t] - r[t]) * v.logQ
        }
        return f + priors.logDensity(s: s, g: g, item: j)
    }

    /// The largest step in any working parameter a concave (2PL) M-step takes without checking the objective.
    static let newtonStepBound = 0.5

    /// Fisher scoring with step halving for one 2PL/3PL item. The expected information
    /// Σ_q n_q ∇P ∇Pᵀ / (P(1 − P)) (minus the prior Hessian) is positive definite, so every step ascends.
    /// `nodes` as in `itemObjective`; `item` names the item's own guessing prior.
    ///
    /// The 2PL without a slope prior is a logistic regression of the expected counts on (θ, 1): its objective is
    /// concave and Fisher scoring is Newton's method, so a step of at most `newtonStepBound` in every parameter is
    /// taken without evaluating the objective (the warm M-steps of EM take only such steps); larger ones are
    /// halved until the objective does not fall, as for the other models.
    func optimizeItem(r: [Double], n: [Double], nodes: [Double], x: inout [Double], item j: Int) {
        let p = perItem
        let concave = model == .twoPL && !logSlope
        var known: Double? = concave ? nil : itemObjective(r: r, n: n, nodes: nodes, s: x[0], d: x[1], g: x[2], item: j)
        for _ in 0..<50 {
            var grad = [Double](repeating: 0, count: p)
            var info = [Double](repeating: 0, count: p * p)
            let a = slope(working: x[0]), aS = logSlope ? a : 1, c = asymptote(working: x[2])
            for t in nodes.indices {
                let theta = nodes[t]
                let trace = ItemResponseFunction.trace(logit: ItemResponseFunction.logit(slope: a, intercept: x[1], at: theta), guessing: c)
                let prob = trace.p
                // h = ∇P / (P(1 − P)) = (ψθaₛ, ψ, c) / P (`ItemResponseFunction.workingGradientRatio`).
                let (h0, h1, h2) = ItemResponseFunction.workingGradientRatio(theta: theta, slopeDerivative: aS, trace: trace, guessing: c)
                let resid = r[t] - n[t] * prob
                // n ∇P∇Pᵀ/(P(1−P)) = n P (1 − P) h hᵀ, with 1 − P = (1 − c)(1 − ψ).
                let weight = n[t] * prob * (1 - c) * trace.psiBar
                grad[0] += resid * h0
                grad[1] += resid * h1
                info[0] += weight * h0 * h0
                info[1] += weight * h0 * h1
                info[p + 1] += weight * h1 * h1
                if p == 3 {
                    grad[2] += resid * h2
                    info[2] += weight * h0 * h2
                    info[p + 2] += weight * h1 * h2
                    info[2 * p + 2] += weight * h2 * h2
                }
            }
            let pd = priors.derivatives(s: x[0], g: x[2], item: j)
            grad[0] += pd.ds
            info[0] -= pd.dss
            if p == 3 { grad[2] += pd.dg; info[2 * p + 2] -= pd.dgg }
            info[p] = info[1]
            if p == 3 { info[2 * p] = info[2]; info[2 * p + 1] = info[p + 2] }
            let step = solveSmallSPD(info, grad, n: p)
            if concave && step.allSatisfy({ abs($0) <= Self.newtonStepBound }) {
                let s0 = clampedSlope(working: x[0] + step[0]), d0 = clampedIntercept(x[1] + step[1])
                let change = max(abs(s0 - x[0]), abs(d0 - x[1]))
                x[0] = s0
                x[1] = d0
                known = nil
                if change < 1e-10 { return }
                continue
            }
            let f = known ?? itemObjective(r: r, n: n, nodes: nodes, s: x[0], d: x[1], g: x[2], item: j)
            var scale = 1.0
            var accepted = false
            for _ in 0..<40 {
                var trial = x
                for k in 0..<p { trial[k] += scale * step[k] }
                trial[0] = clampedSlope(working: trial[0])
                trial[1] = clampedIntercept(trial[1])
                if model.hasGuessing { trial[2] = clampedGuessingLogit(trial[2]) }
                let ft = itemObjective(r: r, n: n, nodes: nodes, s: trial[0], d: trial[1], g: trial[2], item: j)
                if ft >= f - 1e-12 * abs(f) {
                    let change = (0..<p).map { abs(trial[$0] - x[$0]) }.max() ?? 0
                    x = trial
                    known = ft
                    accepted = true
                    if change < 1e-10 { return }
                    break
                }
                scale *= 0.5
            }
            if !accepted { return }
        }
    }
}
