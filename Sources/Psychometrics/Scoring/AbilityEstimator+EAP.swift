import Foundation

extension AbilityEstimator {
    /// Posterior over the grid: log prior + Σ_k log P or log(1 − P) of item k's row, four nodes per step;
    /// weights w_t = exp(ℓ_t − max ℓ) (`expShifted`); θ̂ = Σ w θ / Σ w and SE² = Σ w (θ − θ̂)² / Σ w.
    func eap(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int) -> AbilityEstimate {
        let v = blocks
        return withUnsafeTemporaryAllocation(of: SIMD4<Double>.self, capacity: v) { acc in
            let a = acc.baseAddress!
            var mean = 0.0, variance = 0.0
            logPrior.withUnsafeBufferPointer { prior in
            logPQ.withUnsafeBufferPointer { table in
            paddedPoints.withUnsafeBufferPointer { points in
                // Four blocks (16 nodes) at a time held in registers over all items: the table loads are
                // independent (no read-modify-write of the accumulator through memory), so the cache misses of
                // a session's rows overlap.
                let t = table.baseAddress!
                let n = items.count
                withUnsafeTemporaryAllocation(of: UnsafePointer<SIMD4<Double>>.self, capacity: n) { rows in
                    for k in 0..<n { rows[k] = t + (2 * items[k] + Int(responses[k])) * v }
                    var base = 0
                    while base < v {
                        if base + 4 <= v {
                            var r0 = prior[base], r1 = prior[base + 1], r2 = prior[base + 2], r3 = prior[base + 3]
                            for k in 0..<n {
                                let row = rows[k] + base
                                r0 += row[0]; r1 += row[1]; r2 += row[2]; r3 += row[3]
                            }
                            a[base] = r0; a[base + 1] = r1; a[base + 2] = r2; a[base + 3] = r3
                            base += 4
                        } else {
                            var r0 = prior[base]
                            for k in 0..<n { r0 += rows[k][base] }
                            a[base] = r0
                            base += 1
                        }
                    }
                }
                var m = a[0]
                for i in 1..<v { m = m.replacing(with: a[i], where: a[i] .> m) }
                let top = SIMD4<Double>(repeating: m.max())
                UnsafeMutableRawPointer(a).withMemoryRebound(to: Double.self, capacity: 4 * v) { lanes in
                    expShifted(UnsafeMutableBufferPointer(start: lanes, count: 4 * v), by: top[0])
                }
                var total = SIMD4<Double>(), first = SIMD4<Double>()
                for i in 0..<v {
                    let w = a[i]
                    total += w
                    first += w * points[i]
                }
                let sum = total.sum()
                mean = first.sum() / sum
                var second = SIMD4<Double>()
                let center = SIMD4<Double>(repeating: mean)
                for i in 0..<v {
                    let d = points[i] - center
                    second += a[i] * d * d
                }
                variance = second.sum() / sum
            }}}
            let spacing = 2 * options.thetaBound / Double(grid.count - 1)
            if variance < spacing * spacing {
                return refinedEAP(items, responses, correct, mean: mean, step: spacing)
            }
            return AbilityEstimate(theta: mean, standardError: variance.squareRoot(), method: .eap,
                                   itemCount: items.count, correctCount: correct, atBound: false)
        }
    }

    /// EAP for a posterior narrower than the grid's spacing (steep items, long tests): on the fixed grid such a
    /// posterior sits on one or two nodes, so θ snaps to a node and the SD (the SE) collapses towards 0. The
    /// posterior is integrated again on a local grid of 81 nodes, a tenth of the previous spacing apart, around
    /// the mean found so far (clipped to [−B, B]), and again while it is still narrower than that spacing
    /// (at most four times: spacing 0.2 → 0.00002).
    private func refinedEAP(_ items: UnsafeBufferPointer<Int>, _ responses: UnsafeBufferPointer<UInt8>, _ correct: Int,
                            mean start: Double, step coarse: Double) -> AbilityEstimate {
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
                for i in 0..<items.count {
                    let v = parameters[items[i]].logProbabilities(at: theta)
                    l += responses[i] == 1 ? v.logP : v.logQ
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
        return AbilityEstimate(theta: mean, standardError: variance.squareRoot(), method: .eap,
                               itemCount: items.count, correctCount: correct, atBound: false)
    }
}
