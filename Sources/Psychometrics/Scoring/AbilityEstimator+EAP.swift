import Foundation

extension AbilityEstimator {
    /// The posterior over the grid (`GridPosterior`): log prior + Σ_k the row of item k's response, over whole
    /// blocks of four nodes (the prior's padding −1e300 gives weight 0); weights w_t = exp(ℓ_t − max ℓ)
    /// (`expShifted`); θ̂ = Σ w θ / Σ w and SE² = Σ w (θ − θ̂)² / Σ w.
    func eap(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int) -> AbilityEstimate {
        logPrior.withUnsafeBufferPointer { eap(items, responses, correct, logPrior: $0, priorMean: priorMean, priorSD: priorSD) }
    }

    /// EAP under the prior N(`mean`, `sd`²) instead of the estimator's: the log prior is laid out on the stack, so
    /// a session's own prior (`TimedSessionScorer`'s collateral information) costs no allocation.
    func eap(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int, priorMean mean: Double, priorSD sd: Double)
        -> AbilityEstimate
    {
        withUnsafeTemporaryAllocation(of: SIMD4<Double>.self, capacity: blocks) { prior in
            paddedPoints.withUnsafeBufferPointer { points in
                let scale = SIMD4<Double>(repeating: 1 / sd), center = SIMD4<Double>(repeating: mean)
                for b in 0..<blocks {
                    let z = (points[b] - center) * scale
                    prior[b] = -0.5 * z * z
                }
            }
            // The padding nodes (beyond the grid) get weight 0, as in `logPrior`.
            for t in grid.count..<(4 * blocks) { prior[t / 4][t % 4] = -1e300 }
            return eap(items, responses, correct, logPrior: UnsafeBufferPointer(prior), priorMean: mean, priorSD: sd)
        }
    }

    private func eap(
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int,
        logPrior prior: UnsafeBufferPointer<SIMD4<Double>>, priorMean: Double, priorSD: Double
    ) -> AbilityEstimate {
        let v = blocks, n = items.count
        return withUnsafeTemporaryAllocation(of: SIMD4<Double>.self, capacity: v) { acc in
            let a = acc.baseAddress!
            var mean = 0.0, variance = 0.0
            paddedPoints.withUnsafeBufferPointer { points in
                table.rowStart.withUnsafeBufferPointer { rowStart in
                    withUnsafeTemporaryAllocation(of: Int32.self, capacity: n) { rows in
                        for k in 0..<n { rows[k] = Int32(truncatingIfNeeded: items[k]) }
                        UnsafeMutableRawPointer(a).withMemoryRebound(to: Double.self, capacity: 4 * v) { lanes in
                            UnsafeRawPointer(prior.baseAddress!).withMemoryRebound(to: Double.self, capacity: 4 * v) { prior in
                                GridPosterior.accumulate(
                                    into: lanes, prior: prior, items: rows.baseAddress, responses: responses.baseAddress,
                                    count: n, table: table, rowStart: rowStart.baseAddress!, nodes: 4 * v)
                            }
                        }
                    }
                    var m = a[0]
                    for i in 1..<v { m = m.replacing(with: a[i], where: a[i] .> m) }
                    let top = SIMD4<Double>(repeating: m.max())
                    UnsafeMutableRawPointer(a).withMemoryRebound(to: Double.self, capacity: 4 * v) { lanes in
                        expShifted(UnsafeMutableBufferPointer(start: lanes, count: 4 * v), by: top[0])
                    }
                    (mean, variance) = GridPosterior.moments(weights: a, points: points.baseAddress!, blocks: v)
                }
            }
            let spacing = 2 * options.thetaBound / Double(grid.count - 1)
            if variance < spacing * spacing {
                return refinedEAP(items, responses, correct, mean: mean, step: spacing, priorMean: priorMean, priorSD: priorSD)
            }
            return AbilityEstimate(
                theta: mean, standardError: variance.squareRoot(), method: .eap,
                itemCount: items.count, correctCount: correct, atBound: false)
        }
    }

    /// EAP for a posterior narrower than the grid's spacing (steep items, long tests): on the fixed grid such a
    /// posterior sits on one or two nodes, so θ snaps to a node and the SD (the SE) collapses towards 0. The
    /// posterior is integrated again on a local grid of 81 nodes, a tenth of the previous spacing apart, around
    /// the mean found so far (clipped to [−B, B]), and again while it is still narrower than that spacing
    /// (at most four times: spacing 0.2 → 0.00002).
    private func refinedEAP(
        _ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int,
        mean start: Double, step coarse: Double, priorMean: Double, priorSD: Double
    ) -> AbilityEstimate {
        let bound = options.thetaBound, half = 40
        var mean = start, variance = 0.0, step = coarse
        for _ in 0..<4 {
            step /= 10
            var nodes: [Double] = [], logPost: [Double] = []
            for k in -half...half {
                let theta = mean + Double(k) * step
                if theta < -bound || theta > bound { continue }
                let z = (theta - priorMean) / priorSD
                var l = -0.5 * z * z
                if dichotomous {
                    for i in 0..<items.count {
                        let v = parameters[items[i]].logProbabilities(at: theta)
                        l += responses[i] == 1 ? v.logP : v.logQ
                    }
                } else {
                    withUnsafeTemporaryAllocation(of: Double.self, capacity: 256) { logP in
                        for i in 0..<items.count {
                            self.items[items[i]].logCategoryProbabilities(at: theta, into: logP)
                            l += logP[Int(responses[i])]
                        }
                    }
                }
                nodes.append(theta)
                logPost.append(l)
            }
            let top = logPost.max() ?? 0
            var total = 0.0, first = 0.0
            for k in nodes.indices { let w = exp(logPost[k] - top); logPost[k] = w; total += w; first += w * nodes[k] }
            mean = first / total
            var second = 0.0
            for k in nodes.indices { second += logPost[k] * (nodes[k] - mean) * (nodes[k] - mean) }
            variance = second / total
            if variance >= step * step { break }
        }
        return AbilityEstimate(
            theta: mean, standardError: variance.squareRoot(), method: .eap,
            itemCount: items.count, correctCount: correct, atBound: false)
    }
}
