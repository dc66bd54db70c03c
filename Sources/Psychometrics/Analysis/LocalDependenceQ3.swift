import Foundation

/// Local dependence between item pairs: Yen's (1984) Q3, its deviation from the average Q3 (Christensen,
/// Makransky & Horton 2017), and a model-based z for each pair whose null moments are exact under the model.
///
/// With residuals r_ij = u_ij − P_j(θ̂_i) at each person's WLE θ̂, over the n_jk persons who answered both items:
/// ```
/// Q3_jk  = corr(r_j, r_k)                 Q3*_jk = Q3_jk − mean Q3 (over the pairs compared)
/// ```
/// Q3 is biased below 0 (≈ −1/(items per person − 1), Yen 1993), hence Q3*. But Q3 at θ̂ also carries
/// pair-specific bias: θ̂'s error moves P_j(θ̂) and P_k(θ̂) together for items of similar difficulty, so on
/// 25-item forms (SE(θ̂) ≈ 0.45) such pairs correlate positively under the model, and Fisher's z of Q3 has
/// tails ten times the normal's (measured on 1,500 items × 100,000 sessions simulated from the model: 368
/// of 150,000 pairs beyond z = 3.09). The significance test therefore uses, for each person, the posterior
/// of θ given their *other* responses (π₋ⱼₖ, N(0, 1) prior), under which the pair's two responses have known
/// joint probabilities:
/// ```
/// e_j = ∫P_j π₋ⱼₖ,  e_k = ∫P_k π₋ⱼₖ,  e_jk = ∫P_j P_k π₋ⱼₖ,   d_i = (u_j − e_j)(u_k − e_k)
/// E[d_i] = e_jk − e_j e_k,  Var(d_i) = Σ_cells p_cell d_cell² − E[d_i]²
/// z_jk = Σ_i (d_i − E[d_i]) / √Σ_i Var(d_i)                   (persons independent given their other items)
/// ```
/// a standardised residual covariance in the spirit of Haberman & Sinharay's (2013) generalized residuals,
/// with E = 0 and Var = 1 exactly when the item parameters are the true ones. A pair is flagged when
/// ```
/// Q3*_jk > threshold (0.2, Christensen et al.'s rule)  and  z_jk > Φ⁻¹(1 − α/m)   (m pairs compared: Bonferroni)
/// ```
/// The threshold alone flags noise when n_jk is small (the SD of Q3 is ≈ 1/√n: 0.18 at 30 persons), which it
/// did on sparse banks where most pairs share a few dozen persons; the z condition keeps falsely flagged pairs
/// near α over all m pairs; on large samples the threshold decides. Pairs are compared only with at least
/// `minimumPairCount` common persons and `minimumResponseCount` correct and incorrect answers to each item
/// among them. In a sparse bank only the pairs that co-occur are visited (each person's n(n − 1)/2 pairs, 4
/// dot products over the quadrature grid each), in a triangular table of 80 bytes per item pair (90 MB for
/// 1,500 items).
public struct LocalDependenceQ3: Sendable {
    public struct Options: Sendable, Hashable {
        /// Pairs answered together by fewer persons are not compared (≥ 10).
        public var minimumPairCount = 30
        /// Pairs are compared only when, among the persons who answered both, each item has at least this many
        /// correct and this many incorrect responses (a residual correlation of an item nobody failed is noise).
        public var minimumResponseCount = 3
        /// Q3* above which a pair may be flagged.
        public var threshold = 0.2
        /// Family-wise significance level over the pairs compared (for z).
        public var significance = 0.01
        public init() {}
    }

    public struct Pair: Sendable, Hashable {
        public var first: Int
        public var second: Int
        public var q3: Double
        public var persons: Int
        /// Q3 − mean Q3.
        public var q3Star: Double
        /// The model-based z of the pair's residual covariance (see the type's documentation).
        public var z: Double
    }

    public var options: Options
    /// Every compared pair (j < k, in item order).
    public private(set) var pairs: [Pair] = []
    /// Pairs answered together by at least one person but fewer than `minimumPairCount`.
    public private(set) var pairsBelowMinimum = 0
    /// Pairs nobody answered together.
    public private(set) var pairsNeverTogether = 0
    public private(set) var mean: Double?
    public private(set) var maxAbs: Double?
    /// Φ⁻¹(1 − α/m): the z a pair must exceed.
    public private(set) var criticalZ: Double?
    /// Indices into `pairs` of the flagged pairs, largest Q3 first.
    public private(set) var flagged: [Int] = []

    /// Triangular index of j < k among `itemCount` items.
    @inline(__always) static func index(_ j: Int, _ k: Int, _ itemCount: Int) -> Int { j * (2 * itemCount - j - 1) / 2 + (k - j - 1) }

    /// The bytes the pairwise table needs.
    public static func tableBytes(itemCount: Int) -> Int { itemCount * (itemCount - 1) / 2 * 80 }

    /// - Parameters:
    ///   - rowOffsets, items, responses, residuals: per person (rows of `rowOffsets`), the answered items in
    ///     increasing order, the responses and their residuals at the WLE.
    ///   - probabilities: P_j(θ_q), item-major, on the grid whose log weights (the prior) are `logWeights`.
    package init(itemCount J: Int, rowOffsets: [Int], items: [Int32], responses: [UInt8], residuals: [Double],
                 probabilities: [Double], logWeights: [Double], options: Options, workers: Int) {
        self.options = options
        let pairCount = J * (J - 1) / 2, Q = logWeights.count
        var n = [Int32](repeating: 0, count: pairCount), cx = n, cy = n
        var sx = [Double](repeating: 0, count: pairCount), sy = sx, sxx = sx, syy = sx, sxy = sx, dev = sx, variance = sx
        // log P, log(1 − P) and 1/L for either response, clamped to [1e-15, 1 − 1e-15] so that the leave-two-out
        // weights a_q / (L_j L_k) stay finite.
        var logP = [Double](repeating: 0, count: J * Q), logQ = logP, inverseP = logP, inverseQ = logP, odds = logP
        for t in 0..<(J * Q) {
            let p = min(max(probabilities[t], 1e-15), 1 - 1e-15)
            logP[t] = log(p); logQ[t] = log1p(-p)
            inverseP[t] = 1 / p; inverseQ[t] = 1 / (1 - p); odds[t] = p / (1 - p)
        }
        let persons = rowOffsets.count - 1
        let workers = max(1, workers)
        // Worker w owns the rows j ≡ w (mod workers) of the triangle, so no two workers write the same pair.
        withUnsafeMutableBufferPointers(&n, &cx, &cy) { n, cx, cy in
        withUnsafeMutableBufferPointers(&sx, &sy, &sxx) { sx, sy, sxx in
        withUnsafeMutableBufferPointers(&syy, &sxy, &dev) { syy, sxy, dev in
        variance.withUnsafeMutableBufferPointer { variance in
            let box = UncheckedSendableBox((n, cx, cy, sx, sy, sxx, syy, sxy, dev, variance))
            parallelFor(workers) { w in
                let (n, cx, cy, sx, sy, sxx, syy, sxy, dev, variance) = box.value
                var posterior = [Double](repeating: 0, count: Q)
                var inverse: [Double] = [], weighted: [Double] = [], b = posterior, c = posterior
                for i in 0..<persons {
                    let lo = rowOffsets[i], hi = rowOffsets[i + 1], m = hi - lo
                    guard m >= 2, (lo..<(hi - 1)).contains(where: { Int(items[$0]) % workers == w }) else { continue }
                    // Full posterior (unnormalised, max 1) and, per item, 1/L(θ_q) and P/L(θ_q).
                    var top = -Double.infinity
                    for q in 0..<Q {
                        var l = logWeights[q]
                        for a in lo..<hi { let t = Int(items[a]) * Q + q; l += responses[a] == 1 ? logP[t] : logQ[t] }
                        posterior[q] = l
                        top = max(top, l)
                    }
                    for q in 0..<Q { posterior[q] = exp(posterior[q] - top) }
                    inverse.removeAll(keepingCapacity: true); weighted.removeAll(keepingCapacity: true)
                    for a in lo..<hi {
                        let row = Int(items[a]) * Q
                        if responses[a] == 1 {
                            inverse.append(contentsOf: inverseP[row..<(row + Q)])
                            weighted.append(contentsOf: repeatElement(1, count: Q))
                        } else {
                            inverse.append(contentsOf: inverseQ[row..<(row + Q)])
                            weighted.append(contentsOf: odds[row..<(row + Q)])
                        }
                    }
                    for a in lo..<(hi - 1) {
                        let j = Int(items[a])
                        guard j % workers == w else { continue }
                        let x = residuals[a], ux = Int32(responses[a]), uj = Double(responses[a])
                        let base = j * (2 * J - j - 1) / 2 - j - 1, ka = (a - lo) * Q
                        for q in 0..<Q { b[q] = posterior[q] * inverse[ka + q]; c[q] = posterior[q] * weighted[ka + q] }
                        for bIndex in (a + 1)..<hi {
                            let k = Int(items[bIndex]), t = base + k, y = residuals[bIndex], kb = (bIndex - lo) * Q
                            n[t] += 1; cx[t] += ux; cy[t] += Int32(responses[bIndex])
                            sx[t] += x; sy[t] += y; sxx[t] += x * x; syy[t] += y * y; sxy[t] += x * y
                            // Leave-two-out posterior predictive of (u_j, u_k).
                            var s0 = 0.0, s1 = 0.0, s2 = 0.0, s12 = 0.0
                            for q in 0..<Q {
                                s0 += b[q] * inverse[kb + q]; s1 += c[q] * inverse[kb + q]
                                s2 += b[q] * weighted[kb + q]; s12 += c[q] * weighted[kb + q]
                            }
                            guard s0 > 0 else { continue }
                            let ej = s1 / s0, ek = s2 / s0, ejk = s12 / s0, uk = Double(responses[bIndex])
                            let mean = ejk - ej * ek
                            let p11 = ejk, p10 = max(0, ej - ejk), p01 = max(0, ek - ejk), p00 = max(0, 1 - ej - ek + ejk)
                            let second = p11 * (1 - ej) * (1 - ej) * (1 - ek) * (1 - ek) + p10 * (1 - ej) * (1 - ej) * ek * ek
                                + p01 * ej * ej * (1 - ek) * (1 - ek) + p00 * ej * ej * ek * ek
                            dev[t] += (uj - ej) * (uk - ek) - mean
                            variance[t] += max(0, second - mean * mean)
                        }
                    }
                }
            }
        } } } }
        var compared: [Pair] = []
        for j in 0..<J {
            for k in (j + 1)..<max(j + 1, J) {
                let t = Self.index(j, k, J), m = Double(n[t])
                if n[t] == 0 { pairsNeverTogether += 1; continue }
                let rarest = min(cx[t], n[t] - cx[t], cy[t], n[t] - cy[t])
                if Int(n[t]) < options.minimumPairCount || Int(rarest) < options.minimumResponseCount { pairsBelowMinimum += 1; continue }
                let cxy = sxy[t] - sx[t] * sy[t] / m, cxx = sxx[t] - sx[t] * sx[t] / m, cyy = syy[t] - sy[t] * sy[t] / m
                guard cxx > 0, cyy > 0, variance[t] > 0 else { pairsBelowMinimum += 1; continue }
                let r = min(1, max(-1, cxy / (cxx * cyy).squareRoot()))
                compared.append(Pair(first: j, second: k, q3: r, persons: Int(n[t]), q3Star: 0, z: dev[t] / variance[t].squareRoot()))
            }
        }
        guard !compared.isEmpty else { return }
        let mean = compared.reduce(0) { $0 + $1.q3 } / Double(compared.count)
        self.mean = mean
        maxAbs = compared.map { abs($0.q3) }.max()
        let tail = options.significance / Double(compared.count)
        let critical = tail <= 0 ? Double.infinity : tail >= 1 ? -Double.infinity : StandardNormal.quantile(1 - tail)
        criticalZ = critical
        for i in compared.indices { compared[i].q3Star = compared[i].q3 - mean }
        pairs = compared
        flagged = compared.indices.filter { compared[$0].q3Star > options.threshold && compared[$0].z > critical }
            .sorted { compared[$0].q3 > compared[$1].q3 }
    }

    /// Q3 of items j and k (either order) when the pair was compared.
    public func q3(_ j: Int, _ k: Int) -> Double? {
        let (a, b) = j < k ? (j, k) : (k, j)
        var lo = 0, hi = pairs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if (pairs[mid].first, pairs[mid].second) < (a, b) { lo = mid + 1 } else { hi = mid }
        }
        return lo < pairs.count && pairs[lo].first == a && pairs[lo].second == b ? pairs[lo].q3 : nil
    }
}

/// Runs `body` with mutable buffer pointers to three arrays.
private func withUnsafeMutableBufferPointers<A, B, C>(_ a: inout [A], _ b: inout [B], _ c: inout [C],
                                                      _ body: (UnsafeMutableBufferPointer<A>, UnsafeMutableBufferPointer<B>, UnsafeMutableBufferPointer<C>) -> Void) {
    a.withUnsafeMutableBufferPointer { a in b.withUnsafeMutableBufferPointer { b in c.withUnsafeMutableBufferPointer { c in body(a, b, c) } } }
}
