import Foundation

/// Item analysis for banks with items scored in more than two categories (graded, partial-credit, nominal beside
/// 0/1 items), over the items each person answered, so that it is defined for missing-by-design data as well.
///
/// Each response adds its category's points to the person's summed score s on their form F: k for a 0/1,
/// graded or partial-credit item, for a nominal item 1 for its key and 0 otherwise (`ItemResponseModel.points`). Given s,
/// the category of item j ∈ F has the probability (Kang & Chen 2008, the generalised Lord & Wingersky 1984
/// recursion on the quadrature grid, θ ~ the bank's latent distribution)
/// ```
/// P_j(k | s, F) = ∫ P_jk(θ) f_{F∖j}(s − x_jk | θ) g(θ) dθ  /  ∫ f_F(s | θ) g(θ) dθ      (x_jk: the points of k)
/// ```
/// with f_{F∖j} = (prefix of F before j) ⊛ (suffix after j), so no division is needed: O(|F| · S · K · nodes)
/// per person for S = the form's highest score. From it:
/// - **generalised S-X²** (Kang & Chen 2008, over each person's form): persons grouped by (highest score M of
///   their form, s), ordered by s/M, those at s = 0 or s = M left out. Sparse cells are collapsed as mirt's
///   `itemfit` does (its `collapseCells`, mincell 1): within a group, the category with the smallest expected
///   count E_gk = Σ_{i∈g} P_ij(k | s_i, F_i) below `minimumExpected` is merged into its neighbour (the smaller
///   one; the left on a tie) while more than two cells are left (`collapsedCells`); groups are pooled from the
///   low end until every cell of the group's collapse reaches `minimumExpected`. With d_g = O_g − E_g over the
///   group's cells c = 1 … C_g − 1 and V_g = Σ_{i∈g} (diag p_i − p_i p_iᵀ) summed over the cells' categories,
///   the exact covariance of the counts given the scores (the persons are independent multinomials),
///   ```
///   S-X² = Σ_g d_gᵀ V_g⁻¹ d_g,   df = Σ_g (C_g − 1) − the item's free parameters
///   ```
///   which is Kang & Chen's Σ_c N_g (O − E)²/E when every person of a group has the same form, and Orlando &
///   Thissen's Σ (O − E)²/Σ E(1 − E) (`OrlandoThissenSX2`) for K = 2. With df ≤ 0 (too few persons or score
///   groups for the item's parameters) S-X² is not reported (df 0, as mirt);
/// - **infit and outfit** of the residuals u − E[u | s] with W and C from the same probabilities
///   (`ConditionalMeanSquares`), for items whose categories are scores;
/// - **classical statistics per category**: counts, the mean rest score (s minus the item's points) of the
///   persons in each category, and the item–rest correlation of scored items.
package struct CategoryItemFit: Sendable {
    package struct Item: Sendable, Hashable {
        package var responses: Int
        /// Responses per category.
        package var categoryCounts: [Int]
        /// Mean rest score of the persons in each category (nil where nobody chose it).
        package var categoryMeanRestScore: [Double?]
        /// Mean points (nil for a nominal item without a key) and the highest points of the item.
        package var meanScore: Double?
        package var maximumScore: Int
        /// Pearson correlation of the item's points with the rest score (nil for a nominal item without a key, or no variance).
        package var itemRestCorrelation: Double?
        package var sx2: Double?
        package var sx2DegreesOfFreedom: Int?
        package var sx2P: Double?
        package var infit: Double?
        package var outfit: Double?
        package var infitZ: Double?
        package var outfitZ: Double?
    }

    package let items: [Item]

    /// - Parameters:
    ///   - items: the data's items' models, in the data's item order (K of item j = `data.categoryCounts[j]`).
    ///   - freeParameters: per item, its estimated parameters (the S-X² df subtracts them).
    /// - Throws: `PsychometricsError.lengthMismatch` unless there is one model and one count per item with the
    ///   data's number of categories.
    package init(
        data: ResponseMatrix, items models: [any ItemResponseModel], freeParameters: [Int], latentScale: LatentScale = .standard,
        quadraturePoints: Int = 61, minimumExpected: Double = 1
    ) throws(PsychometricsError) {
        let J = data.itemCount
        guard models.count == J, freeParameters.count == J else {
            throw PsychometricsError(
                .lengthMismatch, "one model and one parameter count per item: \(models.count) and \(freeParameters.count) for \(J) items")
        }
        if let j = (0..<J).first(where: { models[$0].categoryCount != data.categoryCounts[$0] }) {
            throw PsychometricsError(
                .lengthMismatch, "item \(data.itemIDs[j]): the model has \(models[j].categoryCount) categories, the data \(data.categoryCounts[j])")
        }
        let grid = QuadratureGrid(validatedCount: quadraturePoints, bound: 6, mean: latentScale.mean, sd: latentScale.sd)
        let Q = grid.count
        // P_jk(θ_q), item-major then category then node.
        var offset = [0]
        for m in models { offset.append(offset.last! + m.categoryCount * Q) }
        var probability = [Double](repeating: 0, count: offset.last!)
        for (j, m) in models.enumerated() {
            for q in 0..<Q {
                for (k, p) in m.categoryProbabilities(at: grid.points[q]).enumerated() { probability[offset[j] + k * Q + q] = p }
            }
        }
        let points = models.map { m in (0..<m.categoryCount).map { m.points(category: $0) } }

        var counts = models.map { [Int](repeating: 0, count: $0.categoryCount) }
        var restSums = models.map { [Double](repeating: 0, count: $0.categoryCount) }
        // Item–rest moments: n, Σx, Σy, Σx², Σy², Σxy.
        var moments = [[Double]](repeating: [Double](repeating: 0, count: 6), count: J)
        // S-X² groups per item keyed by M · stride + s: persons, then observed and expected per category.
        var groups = [[Int: [Double]]](repeating: [:], count: J)
        var meanSquares = ConditionalMeanSquares(itemCount: J)
        let stride = 1 + points.reduce(0) { $0 + ($1.max() ?? 0) }

        var prefix: [Double] = [], suffix: [Double] = [], conditional: [Double] = []
        for i in 0..<data.personCount {
            let cells = data.cells(ofPerson: i)
            let form = cells.map { Int(data.itemIndices[$0]) }, answers = cells.map { Int(data.responses[$0]) }
            let n = form.count
            let top = form.reduce(0) { $0 + (points[$1].max() ?? 0) }
            let s = zip(form, answers).reduce(0) { $0 + points[$1.0][$1.1] }
            // Classical: rest score per category, item–rest moments.
            for (j, u) in zip(form, answers) {
                let x = Double(points[j][u]), rest = Double(s) - x
                counts[j][u] += 1
                restSums[j][u] += rest
                moments[j][0] += 1; moments[j][1] += x; moments[j][2] += rest
                moments[j][3] += x * x; moments[j][4] += rest * rest; moments[j][5] += x * rest
            }
            guard s > 0 && s < top else { continue }
            // Prefix m (items 0..<m of the form) and suffix m (items m..<n): score distributions per node,
            // row-major [m][t][q], t = 0…top.
            let width = (top + 1) * Q
            prefix.removeAll(keepingCapacity: true); prefix.append(contentsOf: repeatElement(0, count: (n + 1) * width))
            suffix.removeAll(keepingCapacity: true); suffix.append(contentsOf: repeatElement(0, count: (n + 1) * width))
            for q in 0..<Q { prefix[q] = 1; suffix[n * width + q] = 1 }
            var reach = 0
            for m in 0..<n {
                let j = form[m], from = m * width, to = (m + 1) * width
                for t in 0...reach {
                    for (k, x) in points[j].enumerated() {
                        let row = offset[j] + k * Q
                        for q in 0..<Q { prefix[to + (t + x) * Q + q] += prefix[from + t * Q + q] * probability[row + q] }
                    }
                }
                reach += points[j].max() ?? 0
            }
            reach = 0
            for m in Swift.stride(from: n - 1, through: 0, by: -1) {
                let j = form[m], from = (m + 1) * width, to = m * width
                for t in 0...reach {
                    for (k, x) in points[j].enumerated() {
                        let row = offset[j] + k * Q
                        for q in 0..<Q { suffix[to + (t + x) * Q + q] += suffix[from + t * Q + q] * probability[row + q] }
                    }
                }
                reach += points[j].max() ?? 0
            }
            // ∫ f_F(s | θ) g(θ) dθ.
            var marginal = 0.0
            for q in 0..<Q { marginal += prefix[n * width + s * Q + q] * grid.weights[q] }
            guard marginal > 0 && marginal.isFinite else { continue }
            for (m, j) in form.enumerated() {
                let K = models[j].categoryCount
                conditional.removeAll(keepingCapacity: true); conditional.append(contentsOf: repeatElement(0, count: K))
                for k in 0..<K {
                    let t = s - points[j][k]
                    guard t >= 0 else { continue }
                    // f_{F∖j}(t | θ_q) = Σ_v prefix_m(v) suffix_{m+1}(t − v).
                    var total = 0.0
                    let row = offset[j] + k * Q
                    for q in 0..<Q {
                        var f = 0.0
                        for v in 0...t { f += prefix[m * width + v * Q + q] * suffix[(m + 1) * width + (t - v) * Q + q] }
                        total += probability[row + q] * f * grid.weights[q]
                    }
                    conditional[k] = total / marginal
                }
                // S-X² cells: persons, observed and expected per category, then V = Σ diag(p) − p pᵀ (K × K).
                let key = top * stride + s
                var cell = groups[j][key] ?? [Double](repeating: 0, count: 1 + 2 * K + K * K)
                cell[0] += 1
                cell[1 + answers[m]] += 1
                for k in 0..<K {
                    cell[1 + K + k] += conditional[k]
                    for l in 0..<K { cell[1 + 2 * K + k * K + l] += (k == l ? conditional[k] : 0) - conditional[k] * conditional[l] }
                }
                groups[j][key] = cell
                // Conditional residuals of scored items.
                if models[j].maximumScore > 0 {
                    var e = 0.0
                    for k in 0..<K { e += Double(points[j][k]) * conditional[k] }
                    var w = 0.0, c = 0.0
                    for k in 0..<K {
                        let d = Double(points[j][k]) - e
                        w += d * d * conditional[k]; c += d * d * d * d * conditional[k]
                    }
                    meanSquares.add(item: j, residual: Double(points[j][answers[m]]) - e, variance: w, fourthMoment: c)
                }
            }
        }

        var out: [Item] = []
        for j in 0..<J {
            let K = models[j].categoryCount, mo = moments[j], scored = models[j].maximumScore > 0
            var item = Item(
                responses: counts[j].reduce(0, +), categoryCounts: counts[j],
                categoryMeanRestScore: (0..<K).map { counts[j][$0] > 0 ? restSums[j][$0] / Double(counts[j][$0]) : nil },
                meanScore: scored && mo[0] > 0 ? mo[1] / mo[0] : nil, maximumScore: models[j].maximumScore)
            if scored && mo[0] > 1 {
                let n = mo[0], cov = mo[5] / n - mo[1] / n * mo[2] / n
                let vx = mo[3] / n - mo[1] / n * mo[1] / n, vy = mo[4] / n - mo[2] / n * mo[2] / n
                if vx > 1e-12 && vy > 1e-12 { item.itemRestCorrelation = cov / (vx * vy).squareRoot() }
            }
            // Groups by s/M; sparse categories collapsed within a group, groups pooled from the low end until
            // every cell of the collapse reaches the minimum.
            let ordered = groups[j].sorted { a, b in
                let (ma, sa) = (a.key / stride, a.key % stride), (mb, sb) = (b.key / stride, b.key % stride)
                return sa * mb != sb * ma ? sa * mb < sb * ma : ma < mb
            }.map(\.value)
            func cells(_ g: [Double]) -> [[Int]] { Self.collapsedCells(expected: Array(g[(1 + K)..<(1 + 2 * K)]), minimum: minimumExpected) }
            func filled(_ g: [Double]) -> Bool { cells(g).allSatisfy { $0.reduce(0) { $0 + g[1 + K + $1] } >= minimumExpected } }
            var pooled: [[Double]] = [], pending = [Double](repeating: 0, count: 1 + 2 * K + K * K)
            for g in ordered {
                for c in g.indices { pending[c] += g[c] }
                if filled(pending) {
                    pooled.append(pending)
                    pending = [Double](repeating: 0, count: pending.count)
                }
            }
            if pending[0] > 0 {
                if pooled.isEmpty { pooled.append(pending) } else { for c in pending.indices { pooled[pooled.count - 1][c] += pending[c] } }
            }
            if !pooled.isEmpty {
                var statistic = 0.0, cellCount = 0
                for g in pooled {
                    let partition = cells(g), C = partition.count - 1
                    cellCount += C
                    var d = [Double](repeating: 0, count: C), v = [Double](repeating: 0, count: C * C)
                    for c in 0..<C {
                        for k in partition[c] {
                            d[c] += g[1 + k] - g[1 + K + k]
                            for e in 0..<C { for l in partition[e] { v[c * C + e] += g[1 + 2 * K + k * K + l] } }
                        }
                    }
                    statistic += Self.quadraticForm(d, covariance: v)
                }
                let df = cellCount - freeParameters[j]
                item.sx2DegreesOfFreedom = max(0, df)
                if df > 0 {
                    item.sx2 = statistic
                    item.sx2P = ChiSquare.upperTail(statistic, degreesOfFreedom: Double(df))
                }
            }
            if let fit = meanSquares.result(item: j) {
                (item.infit, item.outfit, item.infitZ, item.outfitZ) = (fit.infit, fit.outfit, fit.infitZ, fit.outfitZ)
            }
            out.append(item)
        }
        items = out
    }

    /// The cells of one score group: categories merged as mirt's `collapseCells` does within a row — while more
    /// than two cells are left and the smallest expected count is below `minimum`, that cell (the last of equal
    /// ones) joins its neighbour: the only one at either end, else the one with the smaller expected count (the
    /// left on a tie). Each cell lists its categories in order.
    static func collapsedCells(expected: [Double], minimum: Double) -> [[Int]] {
        var cells = expected.indices.map { [$0] }, e = expected
        while cells.count > 2, let m = e.min(), m < minimum {
            let w = e.lastIndex(of: m)!
            let into = w == 0 ? 1 : w == e.count - 1 ? w - 1 : (e[w - 1] <= e[w + 1] ? w - 1 : w + 1)
            e[into] += e[w]
            cells[into] = (cells[into] + cells[w]).sorted()
            e.remove(at: w)
            cells.remove(at: w)
        }
        return cells
    }

    /// dᵀ V⁻¹ d for a symmetric positive-definite V (row-major, n × n) by Cholesky; directions of V with no
    /// variance (a pivot below 10⁻¹² of the diagonal's largest, a category the scores fix) contribute nothing.
    static func quadraticForm(_ d: [Double], covariance v: [Double]) -> Double {
        let n = d.count
        var l = v, y = d
        let scale = (0..<n).map { v[$0 * n + $0] }.max() ?? 0
        guard scale > 0 else { return 0 }
        var total = 0.0
        for i in 0..<n {
            for k in 0..<i { l[i * n + i] -= l[i * n + k] * l[i * n + k] }
            let pivot = l[i * n + i]
            guard pivot > 1e-12 * scale else {
                // A direction without variance: leave it (and the entries it would scale) out.
                for r in (i + 1)..<max(i + 1, n) { l[r * n + i] = 0 }
                y[i] = 0
                continue
            }
            let root = pivot.squareRoot()
            l[i * n + i] = root
            for r in (i + 1)..<max(i + 1, n) {
                for k in 0..<i { l[r * n + i] -= l[r * n + k] * l[i * n + k] }
                l[r * n + i] /= root
            }
            // Forward substitution for z = L⁻¹ d, accumulated as we go: dᵀ V⁻¹ d = |z|².
            var z = y[i]
            for k in 0..<i { z -= l[i * n + k] * y[k] }
            z /= root
            y[i] = z
            total += z * z
        }
        return total
    }
}
