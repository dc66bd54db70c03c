import Foundation

extension EMEngine {
    /// Observed information of the working parameters by Louis' (1982) formula, summed over persons:
    /// ```
    /// I = −Σᵢ E[∇² log f(uᵢ | θ)] − Σᵢ Cov[∇ log f(uᵢ | θ)] − ∇² log prior
    /// ```
    /// with expectations over each person's posterior on the quadrature grid. The first term is item-block
    /// diagonal and comes from the expected counts (r, n); the covariance term couples the items a person
    /// answered. For complete data the per-person score matrices are stacked so that one `dsyrk` serves
    /// many persons. Returns the P×P matrix (row-major, symmetric).
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
                let k = ItemResponseFunction.workingCurvatureRatio(theta: theta[t], slopeDerivative: aS, slopeSecondDerivative: aSS,
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
            let pd = priors.derivatives(s: s[j], g: g[j])
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
            // −E[∇² log N(θ; μ, σ²)] summed over persons: (1/σ², 2(θ−μ)/σ³, −1/σ² + 3(θ−μ)²/σ⁴) at the mass.
            let mass = e.mass!, mu = latentMean, sigma = latentSD, s2 = sigma * sigma
            var imm = 0.0, ims = 0.0, iss = 0.0
            for t in 0..<nq {
                let dev = theta[t] - mu
                imm += mass[t] / s2
                ims += mass[t] * 2 * dev / (s2 * sigma)
                iss += mass[t] * (-1 / s2 + 3 * dev * dev / (s2 * s2))
            }
            let m = latentMeanIndex, v = latentSDIndex
            info[m * P + m] += imm
            info[m * P + v] += ims
            info[v * P + m] += ims
            info[v * P + v] += iss
        }

        // − Σᵢ Cov_post(Sᵢ), Sᵢ(θ_q) = Σⱼ (uᵢⱼ − Pⱼ(θ_q)) hⱼ(θ_q) placed at item j's parameters.
        if let dense, dense.mask == nil, !estimatesLatent, !model.hasGuessing || nodeCovarianceFits {
            let width = model.hasGuessing ? p : 2
            let covariance = model.hasGuessing ? completeDataScoreCovarianceByNode(dense, e, prob: prob, h: h)
                                               : completeDataScoreCovariance(dense, e, prob: prob)
            for x in 0..<(width * J) {
                for y in 0..<(width * J) {
                    let gx = globalIndex(item: x / width, parameter: x % width), gy = globalIndex(item: y / width, parameter: y % width)
                    info[gx * P + gy] -= covariance[x * width * J + y]
                }
            }
            return info
        }
        let tables = logTables()
        let persons = data.personCount
        let complete = data.isComplete
        let workers = max(1, min(self.workers, P * P * 8 * self.workers > 1 << 30 ? 1 : self.workers))
        var partial = [Double](repeating: 0, count: workers * P * P)
        partial.withUnsafeMutableBufferPointer { partialAll in
            parallelFor(workers) { worker in
                let target = partialAll.baseAddress! + worker * P * P
                let lo = persons * worker / workers, hi = persons * (worker + 1) / workers
                let post = UnsafeMutablePointer<Double>.allocate(capacity: nq)
                let root = UnsafeMutablePointer<Double>.allocate(capacity: nq)
                defer { root.deallocate() }
                let stackPersons = complete ? max(1, 2048 / nq) : 1
                let maxLocal = P   // a person's local parameters are a subset of the global ones
                let width = stackPersons * nq
                let gBig = UnsafeMutablePointer<Double>.allocate(capacity: maxLocal * width)
                let sBig = UnsafeMutablePointer<Double>.allocate(capacity: maxLocal * stackPersons)
                let local = UnsafeMutablePointer<Double>.allocate(capacity: maxLocal * maxLocal)
                var globalOf = [Int](repeating: 0, count: maxLocal)
                defer { post.deallocate(); gBig.deallocate(); sBig.deallocate(); local.deallocate() }
                var stacked = 0
                // Incomplete data: each person's block lands at scattered places of the P × P matrix (72 MB for
                // 3,000 parameters), where nearly every update missed the caches. Updates are buffered, put in
                // order of 2 MB bands of the matrix by a stable counting sort, and applied band by band, so each
                // matrix entry still receives its terms in person order (the same sums to the bit).
                let bandShift = 18
                let bands = (P * P) >> bandShift + 1
                let pendingCapacity = complete ? 0 : 1 << 20
                let pendingIndex = UnsafeMutablePointer<Int>.allocate(capacity: max(pendingCapacity, 1))
                let pendingValue = UnsafeMutablePointer<Double>.allocate(capacity: max(pendingCapacity, 1))
                let sortedIndex = UnsafeMutablePointer<Int>.allocate(capacity: max(pendingCapacity, 1))
                let sortedValue = UnsafeMutablePointer<Double>.allocate(capacity: max(pendingCapacity, 1))
                var bandStart = [Int](repeating: 0, count: bands + 1)
                defer { pendingIndex.deallocate(); pendingValue.deallocate(); sortedIndex.deallocate(); sortedValue.deallocate() }
                var pending = 0
                func flushPending() {
                    guard pending > 0 else { return }
                    bandStart.withUnsafeMutableBufferPointer { start in
                        for b in 0...bands { start[b] = 0 }
                        for e in 0..<pending { start[(pendingIndex[e] >> bandShift) + 1] += 1 }
                        for b in 0..<bands { start[b + 1] += start[b] }
                        for e in 0..<pending {
                            let b = pendingIndex[e] >> bandShift
                            let d = start[b]
                            sortedIndex[d] = pendingIndex[e]
                            sortedValue[d] = pendingValue[e]
                            start[b] = d + 1
                        }
                    }
                    for e in 0..<pending { target[sortedIndex[e]] -= sortedValue[e] }
                    pending = 0
                }

                func flushStack() {
                    guard stacked > 0 else { return }
                    // Columns beyond `stacked` persons are zero, so the full-width product is exact.
                    BLAS.syrkUpper(n: P, k: stacked * nq, alpha: -1, a: gBig, lda: width, beta: 1, c: target, ldc: P)
                    BLAS.syrkUpper(n: P, k: stacked, alpha: 1, a: sBig, lda: stackPersons, beta: 1, c: target, ldc: P)
                    stacked = 0
                }

                for i in lo..<hi {
                    let cells = data.cells(ofPerson: i)
                    for t in 0..<nq { post[t] = grid.logWeights[t] }
                    for k in cells {
                        let j = Int(data.itemIndices[k])
                        let row = data.responses[k] == 1 ? tables.logP : tables.logQ
                        for t in 0..<nq { post[t] += row[j * nq + t] }
                    }
                    _ = normalizeLogPosterior(post, nq)
                    for t in 0..<nq { root[t] = post[t].squareRoot() }   // once per person, not per parameter
                    // Local parameter layout of this person: the shared slope (Rasch/1PL without fixed items),
                    // the free items' parameters in answer order, then μ and σ (with fixed items). For complete
                    // data the local index equals the global one.
                    let sharedModel = model == .rasch || model == .onePL
                    let shared = sharedModel && !estimatesLatent
                    let slopeFixed = sharedModel && estimatesLatent
                    var m = cells.count
                    if estimatesLatent { m = 0; for k in cells where !isFixed(Int(data.itemIndices[k])) { m += 1 } }
                    let itemLocals = shared ? 1 + m : (slopeFixed ? m : p * m)
                    let nLocal = itemLocals + (estimatesLatent ? 2 : 0)
                    let ld = complete ? width : nq
                    let gBase = complete ? gBig + stacked * nq : gBig
                    let sStride = complete ? stackPersons : 1
                    let sBase = complete ? sBig + stacked : sBig
                    for x in 0..<nLocal {
                        for t in 0..<nq { gBase[x * ld + t] = 0 }
                        sBase[x * sStride] = 0
                    }
                    var position = 0
                    for k in cells {
                        let j = Int(data.itemIndices[k])
                        if isFixed(j) { continue }
                        defer { position += 1 }
                        let u = Double(data.responses[k])
                        for x in 0..<p {
                            if slopeFixed && x == 0 { continue }
                            let lx = shared ? (x == 0 ? 0 : 1 + position) : (slopeFixed ? position : p * position + x)
                            globalOf[lx] = globalIndex(item: j, parameter: x)
                            let grow = gBase + lx * ld
                            var sum = 0.0
                            for t in 0..<nq {
                                let score = (u - prob[j * nq + t]) * h[(j * nq + t) * p + x]
                                grow[t] += score * root[t]
                                sum += score * post[t]
                            }
                            sBase[lx * sStride] += sum
                        }
                    }
                    if estimatesLatent {
                        let mu = latentMean, sigma = latentSD, s2 = sigma * sigma
                        for r in 0..<2 {
                            let lx = itemLocals + r
                            globalOf[lx] = r == 0 ? latentMeanIndex : latentSDIndex
                            let grow = gBase + lx * ld
                            var sum = 0.0
                            for t in 0..<nq {
                                let dev = theta[t] - mu
                                let score = r == 0 ? dev / s2 : -1 / sigma + dev * dev / (s2 * sigma)
                                grow[t] += score * root[t]
                                sum += score * post[t]
                            }
                            sBase[lx * sStride] += sum
                        }
                    }
                    if complete {
                        stacked += 1
                        if stacked == stackPersons { flushStack() }
                        continue
                    }
                    // C = G Gᵀ − s sᵀ on the local parameters, scattered into the global matrix.
                    BLAS.syrkUpper(n: nLocal, k: nq, a: gBig, lda: nq, beta: 0, c: local, ldc: nLocal)
                    if pending + nLocal * (nLocal + 1) > pendingCapacity { flushPending() }
                    if nLocal * (nLocal + 1) > pendingCapacity {
                        // A person with more parameters than the buffer holds (not for test-sized sessions).
                        for x in 0..<nLocal {
                            for y in x..<nLocal {
                                let value = local[x * nLocal + y] - sBig[x] * sBig[y]
                                let gx = globalOf[x], gy = globalOf[y]
                                let (lo2, hi2) = gx <= gy ? (gx, gy) : (gy, gx)
                                target[lo2 * P + hi2] -= value
                                if gx == gy && x != y { target[lo2 * P + hi2] -= value }
                            }
                        }
                        continue
                    }
                    for x in 0..<nLocal {
                        for y in x..<nLocal {
                            let value = local[x * nLocal + y] - sBig[x] * sBig[y]
                            let gx = globalOf[x], gy = globalOf[y]
                            let index = gx <= gy ? gx * P + gy : gy * P + gx
                            pendingIndex[pending] = index
                            pendingValue[pending] = value
                            pending += 1
                            if gx == gy && x != y {
                                pendingIndex[pending] = index
                                pendingValue[pending] = value
                                pending += 1
                            }
                        }
                    }
                }
                flushPending()
                if complete {
                    // Zero the unused stacked columns before the last flush.
                    for x in 0..<P {
                        for t in (stacked * nq)..<width { gBig[x * width + t] = 0 }
                        for t in stacked..<stackPersons { sBig[x * stackPersons + t] = 0 }
                    }
                    flushStack()
                }
            }
        }
        // Symmetric sum: the covariance parts filled the upper triangle only.
        for worker in 0..<workers {
            for x in 0..<P {
                for y in x..<P {
                    let v = partial[worker * P * P + x * P + y]
                    info[x * P + y] += v
                    if x != y { info[y * P + x] += v }
                }
            }
        }
        return info
    }
}
