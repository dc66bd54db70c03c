import Foundation

extension EMEngine {
    /// Observed information of the working parameters by Louis' (1982) formula, summed over persons:
    /// ```
    /// I = −Σᵢ E[∇² log f(uᵢ | θ)] − Σᵢ Cov[∇ log f(uᵢ | θ)] − ∇² log prior
    /// ```
    /// with expectations over each person's posterior on the quadrature grid. The first term is item-block
    /// diagonal and comes from the expected counts (r, n); the covariance term couples the items a person
    /// answered. For complete data the per-person score matrices are stacked so that one `dsyrk` serves
    /// many persons. Returns the P×P matrix (row-major). Its upper triangle is complete and is all that
    /// `CholeskyInverse` reads; the lower triangle is filled only for complete data.
    ///
    /// With fixed items the parameters are the free items' and (μ, σ), whose complete-data score per person is
    /// that of log N(θ; μ, σ²): ((θ − μ)/σ², −1/σ + (θ − μ)²/σ³). The fixed items' parameters are treated as
    /// known, so the free items' SEs leave out the bank's own estimation error (they are slightly too small).
    func observedInformation(_ e: Expectation) -> [Double] {
        let P = freeParameterCount, p = perItem, nq = q, J = itemCount
        let theta = nodes
        // Per item and node: P and h = ∇P / (P(1 − P)) (`ItemResponseFunction.workingGradientRatio`).
        var prob = [Double](repeating: 0, count: J * nq)
        var h = [Double](repeating: 0, count: J * nq * p)
        var info = [Double](repeating: 0, count: P * P)
        for j in 0..<J where !isFixed(j) {
            let a = slope(j), aS = logSlope ? a : 1, aSS = logSlope ? a : 0, c = asymptote(j)
            var block = [Double](repeating: 0, count: p * p)
            for t in 0..<nq {
                let trace = ItemResponseFunction.trace(logit: ItemResponseFunction.logit(slope: a, intercept: d[j], at: theta[t]), guessing: c)
                let pr = trace.p, qr = trace.q
                let gradient = ItemResponseFunction.workingGradientRatio(theta: theta[t], slopeDerivative: aS, trace: trace, guessing: c)
                // h_s as θ aₛ h_d (the same value; the order the standard errors were validated with).
                var hv = [gradient.intercept * theta[t] * aS, gradient.intercept, gradient.guessing]
                prob[j * nq + t] = pr
                for k in 0..<p { h[(j * nq + t) * p + k] = hv[k] }
                // K = ∇²P / (P(1 − P)).
                let k = ItemResponseFunction.workingCurvatureRatio(
                    theta: theta[t], slopeDerivative: aS, slopeSecondDerivative: aSS,
                    trace: trace, guessing: c)
                let kk = [k.ss, k.sd, k.sg, k.sd, k.dd, k.dg, k.sg, k.dg, k.gg]
                let r = e.r[j * nq + t], n = e.n[j * nq + t]
                let curvature = r * qr * qr + (n - r) * pr * pr
                let resid = r - n * pr
                hv = Array(hv[0..<p])
                for x in 0..<p {
                    for y in 0..<p {
                        // −H_xy = [r(1−P)² + (n−r)P²] h_x h_y − (r − nP) K_xy
                        block[x * p + y] += curvature * hv[x] * hv[y] - resid * kk[x * 3 + y]
                    }
                }
            }
            let pd = priors.derivatives(s: s[j], g: g[j], item: j)
            if model.hasItemSlopes { block[0] -= pd.dss }
            if p == 3 { block[8] -= pd.dgg }
            for x in 0..<p {
                let gx = globalIndex(item: j, parameter: x)
                if gx < 0 { continue }
                for y in 0..<p {
                    let gy = globalIndex(item: j, parameter: y)
                    if gy < 0 { continue }
                    info[gx * P + gy] += block[x * p + y]
                }
            }
        }
        if estimatesLatent {
            let (imm, ims, iss) = NormalLatentDistribution.completeInformation(mass: e.mass!, nodes: theta, mean: latentMean, sd: latentSD)
            let m = latentMeanIndex, v = latentSDIndex
            info[m * P + m] += imm
            info[m * P + v] += ims
            info[v * P + m] += ims
            info[v * P + v] += iss
        }

        // − Σᵢ Cov_post(Sᵢ), Sᵢ(θ_q) = Σⱼ (uᵢⱼ − Pⱼ(θ_q)) hⱼ(θ_q) placed at item j's parameters.
        if let dense, dense.mask == nil, !estimatesLatent, !model.hasGuessing || nodeCovarianceFits {
            let width = model.hasGuessing ? p : 2
            let covariance =
                model.hasGuessing
                ? completeDataScoreCovarianceByNode(dense, e, prob: prob, h: h)
                : completeDataScoreCovariance(dense, e, prob: prob)
            for x in 0..<(width * J) {
                for y in 0..<(width * J) {
                    let gx = globalIndex(item: x / width, parameter: x % width), gy = globalIndex(item: y / width, parameter: y % width)
                    info[gx * P + gy] -= covariance[x * width * J + y]
                }
            }
            return info
        }
        info.withUnsafeMutableBufferPointer { subtractPersonScoreCovariances(from: $0.baseAddress!, prob: prob, h: h) }
        return info
    }
}
