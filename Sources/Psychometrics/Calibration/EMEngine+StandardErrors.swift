import Foundation

extension EMEngine {
    /// Number of free working parameters: Rasch/1PL: 1 + J (shared slope first); 2PL: 2J; 3PL: 3J.
    var freeParameterCount: Int {
        switch model {
        case .rasch, .onePL: return 1 + itemCount
        case .twoPL: return 2 * itemCount
        case .threePL: return 3 * itemCount
        }
    }

    /// Working parameters per item as seen by the derivative code (slope, intercept[, γ]).
    var perItem: Int { model == .threePL ? 3 : 2 }

    /// Global index of item j's working parameter t (0 = slope, 1 = intercept, 2 = γ).
    @inline(__always) func globalIndex(item j: Int, parameter t: Int) -> Int {
        switch model {
        case .rasch, .onePL: return t == 0 ? 0 : 1 + j
        case .twoPL, .threePL: return perItem * j + t
        }
    }

    /// Observed information of the working parameters by Louis' (1982) formula, summed over persons:
    /// ```
    /// I = −Σᵢ E[∇² log f(uᵢ | θ)] − Σᵢ Cov[∇ log f(uᵢ | θ)] − ∇² log prior
    /// ```
    /// with expectations over each person's posterior on the quadrature grid. The first term is item-block
    /// diagonal and comes from the expected counts (r, n); the covariance term couples the items a person
    /// answered. For complete data the per-person score matrices are stacked so that one `dsyrk` serves
    /// many persons. Returns the P×P matrix (row-major, symmetric).
    func observedInformation(_ e: Expectation) -> [Double] {
        let P = freeParameterCount, p = perItem, nq = q, J = itemCount
        let theta = grid.points
        // Per item and node: P and h = ∇P / (P(1 − P)) (closed forms in ItemKernel's notation).
        var prob = [Double](repeating: 0, count: J * nq)
        var h = [Double](repeating: 0, count: J * nq * p)
        var info = [Double](repeating: 0, count: P * P)
        for j in 0..<J {
            let a = slope(j), aS = kernel.logSlope ? a : 1, aSS = kernel.logSlope ? a : 0, c = asymptote(j)
            var block = [Double](repeating: 0, count: p * p)
            for t in 0..<nq {
                let z = a * theta[t] + d[j]
                let psi = Logistic.sigmoid(z), psiBar = Logistic.sigmoid(-z)
                let pr = c + (1 - c) * psi, qr = (1 - c) * psiBar
                let rho = psi / pr
                var hv = [rho * theta[t] * aS, rho, c / pr]
                prob[j * nq + t] = pr
                for k in 0..<p { h[(j * nq + t) * p + k] = hv[k] }
                // K = ∇²P / (P(1 − P)).
                let k00 = rho * ((psiBar - psi) * theta[t] * theta[t] * aS * aS + theta[t] * aSS)
                let k01 = rho * (psiBar - psi) * theta[t] * aS
                let k11 = rho * (psiBar - psi)
                let k02 = -c * rho * theta[t] * aS, k12 = -c * rho, k22 = c * (1 - 2 * c) / pr
                let kk = [k00, k01, k02, k01, k11, k12, k02, k12, k22]
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
                for y in 0..<p {
                    info[globalIndex(item: j, parameter: x) * P + globalIndex(item: j, parameter: y)] += block[x * p + y]
                }
            }
        }

        // − Σᵢ Cov_post(Sᵢ), Sᵢ(θ_q) = Σⱼ (uᵢⱼ − Pⱼ(θ_q)) hⱼ(θ_q) placed at item j's parameters.
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
                let stackPersons = complete ? max(1, 2048 / nq) : 1
                let maxLocal = complete ? P : (model == .rasch || model == .onePL ? 1 + J : p * J)
                let width = stackPersons * nq
                let gBig = UnsafeMutablePointer<Double>.allocate(capacity: maxLocal * width)
                let sBig = UnsafeMutablePointer<Double>.allocate(capacity: maxLocal * stackPersons)
                let local = UnsafeMutablePointer<Double>.allocate(capacity: maxLocal * maxLocal)
                var globalOf = [Int](repeating: 0, count: maxLocal)
                defer { post.deallocate(); gBig.deallocate(); sBig.deallocate(); local.deallocate() }
                var stacked = 0

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
                    // Local parameter layout of this person.
                    let shared = model == .rasch || model == .onePL
                    let m = cells.count
                    let nLocal = shared ? 1 + m : p * m
                    let ld = complete ? width : nq
                    let gBase = complete ? gBig + stacked * nq : gBig
                    let sStride = complete ? stackPersons : 1
                    let sBase = complete ? sBig + stacked : sBig
                    for x in 0..<nLocal {
                        for t in 0..<nq { gBase[x * ld + t] = 0 }
                        sBase[x * sStride] = 0
                    }
                    for (position, k) in cells.enumerated() {
                        let j = Int(data.itemIndices[k])
                        let u = Double(data.responses[k])
                        for x in 0..<p {
                            let lx = shared ? (x == 0 ? 0 : 1 + position) : p * position + x
                            globalOf[lx] = globalIndex(item: j, parameter: x)
                            let grow = gBase + lx * ld
                            var sum = 0.0
                            for t in 0..<nq {
                                let score = (u - prob[j * nq + t]) * h[(j * nq + t) * p + x]
                                grow[t] += score * post[t].squareRoot()
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
                    for x in 0..<nLocal {
                        for y in x..<nLocal {
                            let value = local[x * nLocal + y] - sBig[x] * sBig[y]
                            let gx = globalOf[x], gy = globalOf[y]
                            let (lo2, hi2) = gx <= gy ? (gx, gy) : (gy, gx)
                            target[lo2 * P + hi2] -= value
                            if gx == gy && x != y { target[lo2 * P + hi2] -= value }
                        }
                    }
                }
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
