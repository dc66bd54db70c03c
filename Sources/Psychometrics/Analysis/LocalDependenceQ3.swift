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
/// among them. Two passes visit only the pairs that co-occur (each person's n(n − 1)/2 pairs): the first sums
/// Q3's moments into a triangular table of 64 bytes (one cache line) per item pair, 72 MB for 1,500 items;
/// the second computes z (4 dot products over the quadrature grid per person and pair) for the pairs whose
/// Q3* exceeds the threshold, the only ones it can flag (or for all, `zForEveryPair`).
package struct LocalDependenceQ3: Sendable {
    package struct Options: Sendable, Hashable {
        /// Pairs answered together by fewer persons are not compared (≥ 10).
        package var minimumPairCount = 30
        /// Pairs are compared only when, among the persons who answered both, each item has at least this many
        /// correct and this many incorrect responses (a residual correlation of an item nobody failed is noise).
        package var minimumResponseCount = 3
        /// Q3* above which a pair may be flagged.
        package var threshold = 0.2
        /// Family-wise significance level over the pairs compared (for z).
        package var significance = 0.01
        /// Compute z for every compared pair, not only for those whose Q3* exceeds the threshold (the only ones
        /// it can flag): four dot products over the grid per person and pair, which on dense data (100 items:
        /// 4,950 pairs per person) costs far more than Q3 itself.
        package var zForEveryPair = false
        package init() {}
    }

    package struct Pair: Sendable, Hashable {
        package var first: Int
        package var second: Int
        package var q3: Double
        package var persons: Int
        /// Q3 − mean Q3.
        package var q3Star: Double
        /// The model-based z of the pair's residual covariance (see the type's documentation); nil when not
        /// computed (Q3* at or below the threshold, unless `zForEveryPair`).
        package var z: Double?
    }

    package var options: Options
    /// Every compared pair (j < k, in item order).
    package private(set) var pairs: [Pair] = []
    /// Pairs answered together by at least one person but fewer than `minimumPairCount`.
    package private(set) var pairsBelowMinimum = 0
    /// Pairs nobody answered together.
    package private(set) var pairsNeverTogether = 0
    package private(set) var mean: Double?
    package private(set) var maxAbs: Double?
    /// Φ⁻¹(1 − α/m): the z a pair must exceed.
    package private(set) var criticalZ: Double?
    /// Indices into `pairs` of the flagged pairs, largest Q3 first.
    package private(set) var flagged: [Int] = []

    /// Triangular index of j < k among `itemCount` items.
    @inline(__always) static func index(_ j: Int, _ k: Int, _ itemCount: Int) -> Int { j * (2 * itemCount - j - 1) / 2 + (k - j - 1) }

    /// The bytes the pairwise table needs.
    package static func tableBytes(itemCount: Int) -> Int { itemCount * (itemCount - 1) / 2 * 64 }

    /// The unidimensional model the pairs' z is computed under (`LocalDependenceQ3`'s documentation).
    package struct PredictiveModel {
        /// P_j(θ_q), item-major, on the grid whose log weights (the prior) are `logWeights`.
        package var probabilities: [Double]
        /// log P(u | θ_q) on the same grid (`LogCategoryTable`), for each person's posterior.
        package var logTable: LogCategoryTable
        package var logWeights: [Double]
        package init(probabilities: [Double], logTable: LogCategoryTable, logWeights: [Double]) {
            self.probabilities = probabilities
            self.logTable = logTable
            self.logWeights = logWeights
        }
    }

    /// - Parameters:
    ///   - rowOffsets, items, responses, residuals: per person (rows of `rowOffsets`), the answered items in
    ///     increasing order, the responses and their residuals at the person's θ estimate (the WLE for `analyze`;
    ///     the EAPs of every factor for a multidimensional model).
    ///   - model: the unidimensional model under which each candidate pair's z is computed; nil computes Q3 and
    ///     Q3* only (no z, so no pair is flagged): for residuals of a model the z's leave-two-out posterior does
    ///     not describe.
    package init(
        itemCount J: Int, rowOffsets: [Int], items: [Int32], responses: [UInt8], residuals: [Double],
        model: PredictiveModel?, options: Options, workers: Int
    ) {
        self.options = options
        let pairCount = J * (J - 1) / 2
        precondition(options.minimumResponseCount <= 255, "the response counts per pair saturate at 255, got \(options.minimumResponseCount)")
        // One cache line per pair, so that a person's pair updates touch one line each.
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(1, pairCount) * MemoryLayout<PairSums>.stride, alignment: 64)
        defer { raw.deallocate() }
        let table = UncheckedSendableBox(raw.initializeMemory(as: PairSums.self, repeating: PairSums(), count: pairCount))
        let persons = rowOffsets.count - 1
        let workers = max(1, workers)
        // Worker w owns the rows j ≡ w (mod workers) of the triangle, so no two workers write the same pair.
        // Pass 1: the sums of Q3.
        parallelFor(workers) { w in
            for i in 0..<persons {
                let lo = rowOffsets[i], hi = rowOffsets[i + 1]
                for a in lo..<max(lo, hi - 1) {
                    let j = Int(items[a])
                    guard j % workers == w else { continue }
                    let base = j * (2 * J - j - 1) / 2 - j - 1, x = residuals[a], correctX = responses[a] == 1
                    for b in (a + 1)..<hi {
                        table.value[base + Int(items[b])].add(x: x, y: residuals[b], correctX: correctX, correctY: responses[b] == 1)
                    }
                }
            }
        }
        var compared: [Pair] = []
        var index: [Int] = []
        for j in 0..<J {
            for k in (j + 1)..<max(j + 1, J) {
                let t = Self.index(j, k, J), sums = table.value[t], m = Double(sums.n)
                if sums.n == 0 { pairsNeverTogether += 1; continue }
                if Int(sums.n) < options.minimumPairCount || Int(sums.rarest) < options.minimumResponseCount { pairsBelowMinimum += 1; continue }
                let cxy = sums.sxy - sums.sx * sums.sy / m, cxx = sums.sxx - sums.sx * sums.sx / m, cyy = sums.syy - sums.sy * sums.sy / m
                guard cxx > 0, cyy > 0 else { pairsBelowMinimum += 1; continue }
                compared.append(
                    Pair(first: j, second: k, q3: min(1, max(-1, cxy / (cxx * cyy).squareRoot())), persons: Int(sums.n), q3Star: 0, z: nil))
                index.append(t)
            }
        }
        guard !compared.isEmpty else { return }
        let mean = compared.reduce(0) { $0 + $1.q3 } / Double(compared.count)
        self.mean = mean
        maxAbs = compared.map { abs($0.q3) }.max()
        for i in compared.indices { compared[i].q3Star = compared[i].q3 - mean }

        // Pass 2: the model-based z of the candidate pairs.
        var candidate = [Bool](repeating: false, count: pairCount)
        var candidates = 0
        for (i, pair) in compared.enumerated() where options.zForEveryPair || pair.q3Star > options.threshold {
            candidate[index[i]] = true
            candidates += 1
        }
        if candidates > 0, let model {
            let probabilities = model.probabilities, logTable = model.logTable, logWeights = model.logWeights, Q = logWeights.count
            // 1/P, 1/(1 − P) and P/(1 − P), with P clamped to [1e-15, 1 − 1e-15] so that the leave-two-out
            // weights a_q / (L_j L_k) stay finite.
            var inverseP = [Double](repeating: 0, count: J * Q), inverseQ = inverseP, odds = inverseP
            for t in 0..<(J * Q) {
                let p = min(max(probabilities[t], 1e-15), 1 - 1e-15)
                inverseP[t] = 1 / p; inverseQ[t] = 1 / (1 - p); odds[t] = p / (1 - p)
            }
            parallelFor(workers) { w in
                var posterior = [Double](repeating: 0, count: Q)
                var inverse: [Double] = [], weighted: [Double] = [], b = posterior, c = posterior
                for i in 0..<persons {
                    let lo = rowOffsets[i], hi = rowOffsets[i + 1]
                    func owned(_ a: Int) -> Bool { Int(items[a]) % workers == w }
                    func base(_ j: Int) -> Int { j * (2 * J - j - 1) / 2 - j - 1 }
                    guard
                        (lo..<max(lo, hi - 1)).contains(where: { a in
                            owned(a) && ((a + 1)..<hi).contains { candidate[base(Int(items[a])) + Int(items[$0])] }
                        })
                    else { continue }
                    // Full posterior (`GridPosterior`) and, per item, 1/L(θ_q) and P/L(θ_q).
                    logWeights.withUnsafeBufferPointer { prior in
                        logTable.rowStart.withUnsafeBufferPointer { rowStart in
                            items.withUnsafeBufferPointer { items in
                                responses.withUnsafeBufferPointer { responses in
                                    posterior.withUnsafeMutableBufferPointer { posterior in
                                        GridPosterior.posterior(
                                            into: posterior.baseAddress!, prior: prior.baseAddress!, items: items.baseAddress! + lo,
                                            responses: responses.baseAddress! + lo, count: hi - lo, table: logTable,
                                            rowStart: rowStart.baseAddress!)
                                    }
                                }
                            }
                        }
                    }
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
                    inverse.withUnsafeBufferPointer { inverse in
                        weighted.withUnsafeBufferPointer { weighted in
                            b.withUnsafeMutableBufferPointer { b in
                                c.withUnsafeMutableBufferPointer { c in
                                    for a in lo..<(hi - 1) where owned(a) {
                                        let j = Int(items[a]), uj = Double(responses[a]), ka = (a - lo) * Q
                                        var prepared = false
                                        for bIndex in (a + 1)..<hi {
                                            let t = base(j) + Int(items[bIndex])
                                            guard candidate[t] else { continue }
                                            if !prepared {
                                                for q in 0..<Q { b[q] = posterior[q] * inverse[ka + q]; c[q] = posterior[q] * weighted[ka + q] }
                                                prepared = true
                                            }
                                            // Leave-two-out posterior predictive of (u_j, u_k): four dot products over the grid.
                                            let kb = (bIndex - lo) * Q
                                            let (s0, s1, s2, s12) = fourDotProducts(
                                                UnsafeBufferPointer(b), UnsafeBufferPointer(c),
                                                UnsafeBufferPointer(rebasing: inverse[kb..<(kb + Q)]),
                                                UnsafeBufferPointer(rebasing: weighted[kb..<(kb + Q)]))
                                            guard s0 > 0 else { continue }
                                            let ej = s1 / s0, ek = s2 / s0, ejk = s12 / s0, uk = Double(responses[bIndex])
                                            let mean = ejk - ej * ek
                                            let p11 = ejk, p10 = max(0, ej - ejk), p01 = max(0, ek - ejk), p00 = max(0, 1 - ej - ek + ejk)
                                            let second =
                                                p11 * (1 - ej) * (1 - ej) * (1 - ek) * (1 - ek) + p10 * (1 - ej) * (1 - ej) * ek * ek
                                                + p01 * ej * ej * (1 - ek) * (1 - ek) + p00 * ej * ej * ek * ek
                                            table.value[t].deviation += (uj - ej) * (uk - ek) - mean
                                            table.value[t].variance += max(0, second - mean * mean)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            for i in compared.indices where candidate[index[i]] {
                let sums = table.value[index[i]]
                compared[i].z = sums.variance > 0 ? sums.deviation / sums.variance.squareRoot() : nil
            }
        }
        let tail = options.significance / Double(compared.count)
        let critical = tail <= 0 ? Double.infinity : tail >= 1 ? -Double.infinity : StandardNormal.quantile(1 - tail)
        criticalZ = critical
        pairs = compared
        flagged = compared.indices.filter { compared[$0].q3Star > options.threshold && (compared[$0].z ?? -.infinity) > critical }
            .sorted { compared[$0].q3 > compared[$1].q3 }
    }

    /// Q3 of items j and k (either order) when the pair was compared.
    package func q3(_ j: Int, _ k: Int) -> Double? {
        let (a, b) = j < k ? (j, k) : (k, j)
        var lo = 0, hi = pairs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if (pairs[mid].first, pairs[mid].second) < (a, b) { lo = mid + 1 } else { hi = mid }
        }
        return lo < pairs.count && pairs[lo].first == a && pairs[lo].second == b ? pairs[lo].q3 : nil
    }
}

/// The sums one item pair accumulates: 64 bytes, one cache line.
private struct PairSums {
    var n: UInt32 = 0
    /// Correct and incorrect answers to the first and to the second item, one byte each, saturating at 255.
    var counts: UInt32 = 0
    var sx = 0.0, sy = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0
    /// Σ (d − E[d]) and Σ Var(d) of the model-based z.
    var deviation = 0.0, variance = 0.0

    @inline(__always) mutating func add(x: Double, y: Double, correctX: Bool, correctY: Bool) {
        n += 1
        let first: UInt32 = correctX ? 0 : 8, second: UInt32 = correctY ? 16 : 24
        if (counts >> first) & 0xFF < 0xFF { counts += 1 << first }
        if (counts >> second) & 0xFF < 0xFF { counts += 1 << second }
        sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y
    }

    /// The fewest correct or incorrect answers to either item (up to 255).
    var rarest: UInt32 { min(counts & 0xFF, (counts >> 8) & 0xFF, (counts >> 16) & 0xFF, counts >> 24) }
}

/// (b·v, c·v, b·g, c·g) over equal-length buffers, four lanes at a time.
@inline(__always)
private func fourDotProducts(
    _ b: UnsafeBufferPointer<Double>, _ c: UnsafeBufferPointer<Double>, _ v: UnsafeBufferPointer<Double>,
    _ g: UnsafeBufferPointer<Double>
) -> (Double, Double, Double, Double) {
    let count = b.count
    var bv = SIMD4<Double>(), cv = bv, bg = bv, cg = bv
    var q = 0
    let pb = UnsafeRawPointer(b.baseAddress!), pc = UnsafeRawPointer(c.baseAddress!)
    let pv = UnsafeRawPointer(v.baseAddress!), pg = UnsafeRawPointer(g.baseAddress!)
    while q + 4 <= count {
        let offset = q * MemoryLayout<Double>.stride
        let xb = pb.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self)
        let xc = pc.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self)
        let xv = pv.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self)
        let xg = pg.loadUnaligned(fromByteOffset: offset, as: SIMD4<Double>.self)
        bv += xb * xv; cv += xc * xv; bg += xb * xg; cg += xc * xg
        q += 4
    }
    var s0 = bv.sum(), s1 = cv.sum(), s2 = bg.sum(), s12 = cg.sum()
    while q < count {
        s0 += b[q] * v[q]; s1 += c[q] * v[q]; s2 += b[q] * g[q]; s12 += c[q] * g[q]
        q += 1
    }
    return (s0, s1, s2, s12)
}
