import CKernels
import Foundation

extension ItemModelEngine {
    /// Where item j's free working parameters sit in the vector the standard errors are computed for: the shared
    /// parameters (σ, then the rating-scale thresholds; `ItemModelEngine.shared`) first, then each item's own
    /// parameters in order, then μ and σ of the latent distribution when they are estimated (fixed items). With
    /// fixed items the common slope (global 0, when items share parameters) is held at 1: `held` lists it, and
    /// the calibrator leaves its row and column out before inverting.
    struct ParameterLayout {
        /// Per item: the global index of its working parameter `first[j]`.
        let offset: [Int]
        /// Per item: its first own working parameter (the number it shares).
        let first: [Int]
        let count: Int
        /// The number of shared parameters, at global indices 0 ..< sharedCount.
        let sharedCount: Int
        var hasShared: Bool { sharedCount > 0 }
        /// The global index of μ (σ follows), or nil when the latent distribution is N(0, 1).
        let latentMean: Int?
        /// Global indices in the layout that are not estimated (the held common slope).
        let held: [Int]

        /// The global index of item j's working parameter a.
        func global(_ j: Int, _ a: Int) -> Int {
            a < first[j] ? a : offset[j] + a - first[j]
        }
    }

    func parameterLayout() -> ParameterLayout {
        var offset: [Int] = [], first: [Int] = []
        var next = sharedCount
        for (j, item) in items.enumerated() {
            let f = shared[j]
            offset.append(next)
            first.append(f)
            next += item.workingParameters.count - f
        }
        return ParameterLayout(
            offset: offset, first: first, count: next + (estimatesLatent ? 2 : 0), sharedCount: sharedCount,
            latentMean: estimatesLatent ? next : nil, held: estimatesLatent && sharedCount > 0 ? [0] : [])
    }

    /// The observed information of the marginal log-likelihood in the working parameters (Louis 1982), P × P
    /// row-major (P = `parameterLayout().count`), at the current parameters:
    /// ```
    /// I = Σ_j Σ_q Σ_k r_jkq (−∇² log P_jk(θ_q))  −  Σ_i Cov_{θ | uᵢ}(sᵢ(θ))
    /// sᵢ(θ) = Σ_{j answered} ∇ log P_{j uᵢⱼ}(θ)
    /// ```
    /// the complete-data information from the E-step's counts, less each person's posterior covariance of the
    /// complete-data score over the grid (the person's own parameters only); with an estimated latent distribution
    /// (μ, σ) join as `NormalLatentDistribution`'s complete-data score and information on the moving nodes, for
    /// every person. ∇² log P_jk is the central difference
    /// of the analytic gradient (`workingLogGradient`, step 10⁻⁵·max(1, |x|): error ≈ 10⁻¹⁰ relative). Cost:
    /// Σᵢ mᵢ² × (support nodes) for mᵢ parameters of person i's items.
    func observedInformation(_ e: Expectation) -> [Double] {
        let layout = parameterLayout(), P = layout.count, nq = q, J = items.count
        var info = [Double](repeating: 0, count: P * P)
        // Per item, category and node: ∇ log P (the score rows) — item j's block at gradientOffset[j], K × Q × m.
        var gradientOffset = [0]
        for item in items { gradientOffset.append(gradientOffset.last! + item.categoryCount * nq * item.workingParameters.count) }
        var gradients = [Double](repeating: 0, count: gradientOffset.last!)
        for j in 0..<J {
            let item = items[j], k = item.categoryCount, x = item.workingParameters, m = x.count
            let base = rowStart[j] * nq
            var g = [Double](repeating: 0, count: k * m), up = g, down = g
            for t in 0..<nq {
                let theta = nodes[t]
                g.withUnsafeMutableBufferPointer { item.workingLogGradient(at: theta, into: $0) }
                for c in 0..<k { for a in 0..<m { gradients[gradientOffset[j] + (c * nq + t) * m + a] = g[c * m + a] } }
                // Complete-data information: −Σ_k r_kq ∇² log P_k, column b from the difference of gradients (a
                // shared slope's rows and columns collect into the common slope's).
                for b in 0..<m {
                    let h = 1e-5 * max(1, abs(x[b]))
                    var xp = x, xm = x
                    xp[b] += h; xm[b] -= h
                    guard let ip = item.withWorkingParameters(xp), let im = item.withWorkingParameters(xm) else { continue }
                    up.withUnsafeMutableBufferPointer { ip.workingLogGradient(at: theta, into: $0) }
                    down.withUnsafeMutableBufferPointer { im.workingLogGradient(at: theta, into: $0) }
                    for c in 0..<k {
                        let r = e.counts[base + c * nq + t]
                        guard r != 0 else { continue }
                        for a in 0..<m {
                            info[layout.global(j, a) * P + layout.global(j, b)] -= r * (up[c * m + a] - down[c * m + a]) / (2 * h)
                        }
                    }
                }
            }
        }
        // The slope priors' curvature (the information of the log posterior).
        for j in 0..<J {
            for (a, curvature) in priorCurvature(item: j) {
                let g = layout.global(j, a)
                info[g * P + g] -= curvature
            }
        }
        // Less the persons' posterior score covariances, per worker into its own matrix: Gᵢ[x, q] = sᵢₓ(θ_q) √wᵢ(q)
        // over the posterior's support, centred (`iqscore_centre_rows`: Gᵢ − sᵢ √wᵢᵀ) so that Gᵢ Gᵢᵀ is the
        // covariance, whose upper triangle `gramUpperPacked` forms (the dichotomous engine's kernels).
        if let mu = layout.latentMean, let mass = e.mass {
            let c = NormalLatentDistribution.completeInformation(mass: mass, nodes: nodes, mean: latentMean, sd: latentSD)
            info[mu * P + mu] += c.meanMean
            info[mu * P + mu + 1] += c.meanSD
            info[(mu + 1) * P + mu] += c.meanSD
            info[(mu + 1) * P + mu + 1] += c.sdSD
        }
        let table = LogCategoryTable(items: items, nodes: nodes)
        let w = workers, persons = data.personCount, latentRows = layout.latentMean == nil ? 0 : 2
        var largest = 0
        for i in 0..<persons {
            var m = layout.sharedCount + latentRows
            for cell in data.cells(ofPerson: i) { let j = Int(data.itemIndices[cell]); m += items[j].workingParameters.count - layout.first[j] }
            largest = max(largest, m)
        }
        let maxLocal = largest
        var partial = [Double](repeating: 0, count: w * P * P)
        partial.withUnsafeMutableBufferPointer { partialAll in
            gradients.withUnsafeBufferPointer { gradients in
                grid.logWeights.withUnsafeBufferPointer { prior in
                    table.rowStart.withUnsafeBufferPointer { rowStarts in
                        data.itemIndices.withUnsafeBufferPointer { itemIndices in
                            data.responses.withUnsafeBufferPointer { responses in
                                let box = UncheckedSendableBox(partialAll.baseAddress!)
                                parallelFor(w) { worker in
                                    let own = box.value + worker * P * P
                                    let post = UnsafeMutablePointer<Double>.allocate(capacity: nq),
                                        root = UnsafeMutablePointer<Double>.allocate(capacity: nq)
                                    let g = UnsafeMutablePointer<Double>.allocate(capacity: max(1, maxLocal * nq))
                                    let packed = UnsafeMutablePointer<Double>.allocate(capacity: max(1, maxLocal * (maxLocal + 1) / 2))
                                    let scratch = UnsafeMutablePointer<Double>.allocate(
                                        capacity: max(1, gramScratchCount(rows: maxLocal, columns: nq)))
                                    let local = UnsafeMutablePointer<Int>.allocate(capacity: max(1, maxLocal))
                                    defer {
                                        post.deallocate(); root.deallocate(); g.deallocate(); packed.deallocate(); scratch.deallocate();
                                        local.deallocate()
                                    }
                                    for i in (persons * worker / w)..<(persons * (worker + 1) / w) {
                                        let cells = data.cells(ofPerson: i)
                                        let support = GridPosterior.posterior(
                                            into: post, prior: prior.baseAddress!, items: itemIndices.baseAddress! + cells.lowerBound,
                                            responses: responses.baseAddress! + cells.lowerBound, count: cells.count,
                                            table: table, rowStart: rowStarts.baseAddress!
                                        ).support
                                        let t0 = support.lowerBound, width = support.count
                                        for t in support { root[t] = post[t].squareRoot() }
                                        // The person's parameters: the shared ones (when one of their items shares any), then their items'.
                                        var m = 0
                                        let sharedRows =
                                            layout.hasShared && cells.contains { shared[Int(itemIndices[$0])] > 0 } ? layout.sharedCount : 0
                                        while m < sharedRows { local[m] = m; m += 1 }
                                        for cell in cells {
                                            let j = Int(itemIndices[cell]), mj = items[j].workingParameters.count
                                            for a in layout.first[j]..<mj { local[m] = layout.global(j, a); m += 1 }
                                        }
                                        g.initialize(repeating: 0, count: m * width)
                                        var row = sharedRows
                                        for cell in cells {
                                            let j = Int(itemIndices[cell]), u = Int(responses[cell]), mj = items[j].workingParameters.count,
                                                f = layout.first[j]
                                            let block = gradients.baseAddress! + gradientOffset[j] + u * nq * mj
                                            for s in 0..<width {
                                                let rootT = root[t0 + s], gq = block + (t0 + s) * mj
                                                for a in 0..<f { g[a * width + s] += gq[a] * rootT }
                                                for a in f..<mj { g[(row + a - f) * width + s] += gq[a] * rootT }
                                            }
                                            row += mj - f
                                        }
                                        if let mu = layout.latentMean {
                                            local[m] = mu
                                            local[m + 1] = mu + 1
                                            let meanRow = g + m * width, sdRow = g + (m + 1) * width
                                            for s in 0..<width {
                                                let score = NormalLatentDistribution.score(at: nodes[t0 + s], mean: latentMean, sd: latentSD)
                                                meanRow[s] = score.mean * root[t0 + s]
                                                sdRow[s] = score.sd * root[t0 + s]
                                            }
                                            m += 2
                                        }
                                        iqscore_centre_rows(g, m, width, root + t0)
                                        gramUpperPacked(g, rows: m, columns: width, rowStride: width, scratch: scratch, into: packed)
                                        var index = 0
                                        for x in 0..<m {
                                            let gx = local[x]
                                            for y in x..<m {
                                                let gy = local[y], c = packed[index]
                                                index += 1
                                                own[gx * P + gy] += c
                                                if gx != gy { own[gy * P + gx] += c }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        for worker in 0..<w { for t in 0..<(P * P) { info[t] -= partial[worker * P * P + t] } }
        // Symmetrise the complete-data part's difference quotients.
        for a in 0..<P { for b in (a + 1)..<P { let v = (info[a * P + b] + info[b * P + a]) / 2; info[a * P + b] = v; info[b * P + a] = v } }
        return info
    }
}
