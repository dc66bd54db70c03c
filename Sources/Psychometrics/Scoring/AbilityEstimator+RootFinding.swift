import Foundation

/// The root-finding estimators: ML (score = 0), MAP (score − (θ − μ)/σ² = 0) and Warm's (1989) WLE
/// (score + J/(2I) = 0, J = Σ P′P″/(PQ)).
///
/// Standard errors: ML SE = I(θ̂)^−½, MAP SE = (I(θ̂) + 1/σ²)^−½, and WLE SE = I(θ̂)^−½ — the asymptotic SE of
/// the ML estimator evaluated at the WLE, as Warm (1989) gives it. mirt's
/// `fscores(method = "WLE")` instead uses the curvature of the weighted (penalised) log-likelihood at θ̂, which
/// differs by O(1/n); on short tests mirt's WLE SEs are somewhat different from these by definition, not by error.
extension AbilityEstimator {
    /// Score-type quantities at θ: the estimating function g(θ), the test information I(θ), and the objective
    /// whose maximiser is the root (used to choose among several roots).
    @inline(__always)
    private func evaluate(_ theta: Double, _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>)
        -> (g: Double, info: Double, objective: Double)
    {
        var score = 0.0, info = 0.0, warm = 0.0, loglik = 0.0
        if !dichotomous {
            (score, info, warm, loglik) = categorySums(theta, items, responses)
        } else {
            for k in 0..<items.count {
                let p = parameters[items[k]]
                // P, Q, P′, P″ and h = P′/(PQ) = a ψ / P (stable for c = 0 and c > 0).
                let (prob, qrob, dP, d2P, h) = ItemResponseFunction.thetaDerivatives(
                    slope: p.discrimination, logit: p.logit(at: theta),
                    guessing: p.guessing)
                let u = Double(responses[k])
                // (u − P) P′ / (P Q)
                score += (u - prob) * h
                info += dP * h // P′² / (P Q)
                warm += d2P * h // P′ P″ / (P Q)
                loglik += responses[k] == 1 ? log(prob) : log(qrob)
            }
        }
        switch options.method {
        case .ml:
            return (score, info, loglik)
        case .map:
            let z = (theta - priorMean) / priorSD
            return (score - z / priorSD, info + 1 / (priorSD * priorSD), loglik - 0.5 * z * z)
        case .wle:
            return (score + (info > 0 ? warm / (2 * info) : 0), info, loglik + 0.5 * log(max(info, 1e-300)))
        case .eap:
            preconditionFailure("EAP has no estimating equation")
        }
    }

    /// The same sums for items of any model (Samejima 1969; Warm's J for polytomous items, Samejima 1998):
    /// ```
    /// score = Σ_j P′_u/P_u    I = Σ_j Σ_k P′_k²/P_k    J = Σ_j Σ_k P′_k P″_k/P_k    log L = Σ_j log P_u
    /// ```
    /// which are the dichotomous sums when K = 2 (P′_0 = −P′_1).
    private func categorySums(_ theta: Double, _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>)
        -> (score: Double, info: Double, warm: Double, loglik: Double)
    {
        var score = 0.0, info = 0.0, warm = 0.0, loglik = 0.0
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 3 * 256) { buffer in
            let p = UnsafeMutableBufferPointer(rebasing: buffer[0..<256]), d1 = UnsafeMutableBufferPointer(rebasing: buffer[256..<512])
            let d2 = UnsafeMutableBufferPointer(rebasing: buffer[512...])
            for i in 0..<items.count {
                let item = self.items[items[i]], u = Int(responses[i])
                item.categoryThetaDerivatives(at: theta, probability: p, first: d1, second: d2)
                for k in 0..<item.categoryCount where p[k] > 0 {
                    info += d1[k] * d1[k] / p[k]
                    warm += d1[k] * d2[k] / p[k]
                }
                score += d1[u] / p[u]
                loglik += log(p[u])
            }
        }
        return (score, info, warm, loglik)
    }

    /// Finds the root of g on [−B, B]: a coarse scan picks the bracket around the largest objective (so a 3PL
    /// pattern with several roots gets the global maximiser), then safeguarded Newton (bisection when a Newton
    /// step leaves the bracket) refines it.
    func root(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int) -> AbilityEstimate {
        let bound = options.thetaBound
        func result(_ theta: Double, atBound: Bool) -> AbilityEstimate {
            let info = evaluate(theta, items, responses).info
            let se = info > 0 ? 1 / info.squareRoot() : .infinity
            return AbilityEstimate(
                theta: theta, standardError: se, method: options.method, itemCount: items.count,
                correctCount: correct, atBound: atBound)
        }
        if items.isEmpty {
            return result(options.method == .map ? priorMean : 0, atBound: false)
        }
        // Without a lower asymptote the ML/MAP/WLE estimating function is decreasing in θ (the log-likelihood
        // is concave), so it has one root: bracket [−B, B] directly.
        var hasGuessing = false
        for k in 0..<items.count where hasLowerAsymptote[items[k]] { hasGuessing = true; break }
        if !hasGuessing {
            let gHigh = evaluate(bound, items, responses).g, gLow = evaluate(-bound, items, responses).g
            if gHigh >= 0 { return result(bound, atBound: true) }
            if gLow <= 0 { return result(-bound, atBound: true) }
            return refine(
                lo: -bound, hi: bound, start: options.method == .map ? min(max(priorMean, -bound), bound) : 0,
                items, responses, result)
        }
        // 3PL: a coarse scan finds the bracket of the global maximum.
        let steps = 24
        let h = 2 * bound / Double(steps)
        var best = 0, bestValue = -Double.infinity
        var values = [(g: Double, objective: Double)]()
        values.reserveCapacity(steps + 1)
        for s in 0...steps {
            let v = evaluate(-bound + Double(s) * h, items, responses)
            values.append((v.g, v.objective))
            if v.objective > bestValue { bestValue = v.objective; best = s }
        }
        // Monotone-in-the-limit checks: the maximiser at an end with g still pointing outwards is a boundary
        // estimate (ML for all-correct / all-wrong patterns).
        if best == steps && values[steps].g >= 0 { return result(bound, atBound: true) }
        if best == 0 && values[0].g <= 0 { return result(-bound, atBound: true) }
        // Bracket [lo, hi] with g(lo) > 0 > g(hi) around the best scan point.
        var lo = -bound + Double(max(best - 1, 0)) * h, hi = -bound + Double(min(best + 1, steps)) * h
        var gLo = values[max(best - 1, 0)].g, gHi = values[min(best + 1, steps)].g
        if !(gLo >= 0 && gHi <= 0) {
            // Fall back to the first sign change from + to − anywhere.
            guard let s = (0..<steps).first(where: { values[$0].g >= 0 && values[$0 + 1].g <= 0 }) else {
                let theta = -bound + Double(best) * h
                return result(theta, atBound: best == 0 || best == steps)
            }
            lo = -bound + Double(s) * h; hi = lo + h
            gLo = values[s].g; gHi = values[s + 1].g
        }
        return refine(lo: lo, hi: hi, start: 0.5 * (lo + hi), items, responses, result)
    }

    /// Safeguarded Newton on g within [lo, hi] where g(lo) > 0 > g(hi): a Newton step that leaves the bracket is
    /// replaced by bisection.
    private func refine(
        lo: Double, hi: Double, start: Double, _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>,
        _ result: (Double, Bool) -> AbilityEstimate
    ) -> AbilityEstimate {
        let bound = options.thetaBound
        var lo = lo, hi = hi
        var theta = start
        for _ in 0..<100 {
            let v = evaluate(theta, items, responses)
            if v.g > 0 { lo = theta } else { hi = theta }
            // Newton with the (expected) information as the slope of g.
            var next = v.info > 0 ? theta + v.g / v.info : .nan
            if !(next > lo && next < hi) { next = 0.5 * (lo + hi) }
            if abs(next - theta) < options.tolerance || hi - lo < options.tolerance { theta = next; break }
            theta = next
        }
        let atBound = abs(theta) >= bound - 1e-6
        return result(theta, atBound)
    }
}
