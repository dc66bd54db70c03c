import Foundation

/// The state of one bifactor EM run (Gibbons & Hedeker 1992, `BifactorItem`): items on the general factor θ_g and
/// at most one specific factor θ_s each, the factors independent N(0, 1), integrated on the product of one
/// Q-point rule per dimension (`QuadratureGrid`: equally spaced on [−B, B], normal weights, mirt's rule). Internal:
/// `BifactorCalibrator` validates input and wraps the outcome.
///
/// Items are held in **groups**: group 0 the items on the general factor only, group s + 1 the items of specific
/// factor s, each group's items contiguous in the engine's numbering (`data` is renumbered to match), so that a
/// person's answers, ascending by item, fall into one contiguous run per group. A general-only item's counts live
/// on the Q nodes θ_g,q; a specific item's on the Q² node pairs (θ_g,q, θ_s,t), index n = q·Q + t.
///
/// The E-step (`BifactorEngine+EStep.swift`) integrates over θ_g × one θ_s at a time, so its cost is linear in the
/// number of specific factors. The M-step maximises, item by item,
/// ```
/// Q_j(x) = Σ_n [r_j1(n) log P_j(n; x) + r_j0(n) log(1 − P_j(n; x))]   (+ log priors)
/// ```
/// over the item's nodes by Fisher scoring: with z = a_g θ_g + a_s θ_s + d, ψ = σ(z), P = c + (1 − c)ψ,
/// N = r_0 + r_1 and v = (ψ/P · ∂z/∂(a_g, a_s, d), c/P) (the derivatives of P over P(1 − P)),
/// ```
/// ∇Q_j = Σ_n (r_1 − N P) v,     F_j = Σ_n N P (1 − P) v vᵀ
/// ```
/// (for the 2PL v = (θ_g, θ_s, 1)), the step F⁻¹∇ halved until Q_j increases (`FisherScoring`, as
/// `ItemModelEngine`'s M-step). A slope prior (log-normal) applies to a_g, a guessing prior (Beta) to c, as the
/// unidimensional engines do.
struct BifactorEngine: EMIterable {
    struct Expectation: EMExpectation {
        /// Per group, its items' expected counts: row 2k = wrong answers to the group's k-th item, row 2k + 1 =
        /// right answers, each `nodeCount(group)` long, packed.
        var counts: [[Double]]
        var logLikelihood: Double
        var blasSeconds: Double { 0 }
    }

    var items: [BifactorItem]
    /// The responses, items in the engine's order.
    let data: ResponseMatrix
    let grid: QuadratureGrid
    /// Per engine item, its group (0: general only; s + 1: specific factor s).
    let group: [Int32]
    /// Per group, its engine items.
    let groupItems: [Range<Int>]
    let workers: Int
    let maximumSlope: Double
    /// The log-normal prior on every item's general slope a_g, or nil.
    let slopePrior: LogNormalPrior?
    /// The Beta prior on a 3PL item's c, or nil.
    let guessingPrior: BetaPrior?

    var q: Int { grid.count }
    var groupCount: Int { groupItems.count }

    init(items: [BifactorItem], data: ResponseMatrix, grid: QuadratureGrid, group: [Int32], groupItems: [Range<Int>], workers: Int,
         maximumSlope: Double, slopePrior: LogNormalPrior?, guessingPrior: BetaPrior?) {
        self.items = items
        self.data = data
        self.grid = grid
        self.group = group
        self.groupItems = groupItems
        self.workers = emWorkers(workers, persons: data.personCount)
        self.maximumSlope = maximumSlope
        self.slopePrior = slopePrior
        self.guessingPrior = guessingPrior
    }

    /// The engine's numbering of items whose specific factors are `factors` (nil: general only; else below
    /// `specificCount`): group 0 the general-only items, group s + 1 factor s's, each in the given order. `order[e]`
    /// is engine item e's given index, `newIndex` the inverse, `groupOf[e]` its group, `ranges[g]` group g's items.
    static func grouping(_ factors: [Int?], specificCount: Int) -> (order: [Int], newIndex: [Int32], groupOf: [Int32], ranges: [Range<Int>]) {
        var members = [[Int]](repeating: [], count: specificCount + 1)
        for (j, f) in factors.enumerated() { members[f.map { $0 + 1 } ?? 0].append(j) }
        let order = members.flatMap { $0 }
        var newIndex = [Int32](repeating: 0, count: factors.count)
        for (e, j) in order.enumerated() { newIndex[j] = Int32(e) }
        var ranges: [Range<Int>] = [], groupOf: [Int32] = [], offset = 0
        for (g, list) in members.enumerated() {
            ranges.append(offset..<(offset + list.count))
            groupOf += [Int32](repeating: Int32(g), count: list.count)
            offset += list.count
        }
        return (order, newIndex, groupOf, ranges)
    }

    /// Nodes of group g's counts: Q for the general-only items, Q² for a specific factor's.
    func nodeCount(group g: Int) -> Int { g == 0 ? q : q * q }

    // MARK: - M-step

    mutating func mStep(_ e: Expectation) {
        let engine = self, lanes = max(1, min(workers, items.count))
        var updated = items
        updated.withUnsafeMutableBufferPointer { buffer in
            let box = UncheckedSendableBox(buffer.baseAddress!)
            parallelFor(lanes) { lane in
                for j in stride(from: lane, to: engine.items.count, by: lanes) {
                    box.value[j] = engine.maximize(engine.items[j], counts: engine.itemCounts(e, item: j))
                }
            }
        }
        items = updated
        if testlet { for f in 0..<(groupCount - 1) where !groupItems[f + 1].isEmpty { updateTestletRatio(f, e) } }
    }

    // MARK: - Testlet ratios

    /// Whether the items of the specific factors are testlet items (a_s = λ_s · a_g, one λ per factor).
    var testlet: Bool { items.contains { $0.testletRatio != nil } }

    /// Specific factor f's testlet ratio λ_f (from its first item).
    func testletRatio(_ f: Int) -> Double { items[groupItems[f + 1].lowerBound].testletRatio ?? 0 }

    /// Sets λ_f on every item of factor f.
    mutating func setTestletRatio(_ f: Int, _ ratio: Double) {
        for e in groupItems[f + 1] { items[e] = items[e].withTestletRatio(ratio) }
    }

    /// The gradient and expected information of Σ_{j ∈ f} Q_j in λ_f (∂z/∂λ = a_g θ_s), the items' own
    /// parameters held.
    func testletRatioScore(_ f: Int, _ e: Expectation) -> (gradient: Double, information: Double) {
        var g = 0.0, info = 0.0
        for j in groupItems[f + 1] {
            let item = items[j], c = itemCounts(e, item: j), cc = item.guessing
            c.counts.withUnsafeBufferPointer { r in
                for n in 0..<c.nodes {
                    let (tg, ts) = coordinates(n, specific: true)
                    let r0 = r[c.wrongOffset + n], r1 = r[c.rightOffset + n], total = r0 + r1
                    let psi = Logistic.sigmoid(item.logit(general: tg, specific: ts))
                    let p = cc + (1 - cc) * psi
                    let v = (cc == 0 ? 1 : psi / p) * item.generalSlope * ts
                    g += (r1 - total * p) * v
                    info += total * p * (1 - p) * v * v
                }
            }
        }
        return (g, info)
    }

    /// λ_f moved by Fisher scoring on Σ_{j ∈ f} Q_j (`FisherScoring`), the items' own parameters held.
    mutating func updateTestletRatio(_ f: Int, _ e: Expectation) {
        let engine = self, range = groupItems[f + 1]
        func total(_ ratio: Double) -> Double {
            range.reduce(0) { $0 + engine.objective(engine.items[$1].withTestletRatio(ratio), counts: engine.itemCounts(e, item: $1)) }
        }
        let ratio = FisherScoring.maximize(testletRatio(f), objective: total, direction: { ratio in
            var moved = engine
            moved.setTestletRatio(f, ratio)
            let (g, info) = moved.testletRatioScore(f, e)
            return ([ratio], [info > 0 ? g / info : 0])
        }, candidate: { y in abs(y[0]) <= engine.maximumSlope ? y[0] : nil })
        setTestletRatio(f, ratio)
    }

    /// Item j's rows of the expected counts: (wrong, right), each `nodeCount` long.
    func itemCounts(_ e: Expectation, item j: Int) -> ItemCounts {
        let g = Int(group[j]), n = nodeCount(group: g), k = j - groupItems[g].lowerBound
        return ItemCounts(counts: e.counts[g], wrongOffset: 2 * k * n, rightOffset: (2 * k + 1) * n, nodes: n, specific: g > 0)
    }

    /// One item's expected counts over its nodes (a view into the E-step's rows).
    struct ItemCounts {
        let counts: [Double]
        let wrongOffset: Int
        let rightOffset: Int
        let nodes: Int
        let specific: Bool
    }

    /// Item j's Q_j maximised by Fisher scoring from its current parameters (see the type's documentation).
    func maximize(_ item: BifactorItem, counts: ItemCounts) -> BifactorItem {
        FisherScoring.maximize(item, objective: { objective($0, counts: counts) }, direction: { current in
            let (g, f) = scoreAndInformation(current, counts: counts)
            return (current.workingParameters, solveSmallSPD(f, g, n: g.count))
        }, candidate: { bounded(item, $0) })
    }

    /// The item at working parameters `y` with its slopes inside ±`maximumSlope`; nil outside the domain.
    func bounded(_ item: BifactorItem, _ y: [Double]) -> BifactorItem? {
        var y = y
        y[0] = min(max(y[0], -maximumSlope), maximumSlope)
        if item.hasFreeSpecificSlope { y[1] = min(max(y[1], -maximumSlope), maximumSlope) }
        return item.withWorkingParameters(y)
    }

    /// θ_g and θ_s at node n of an item's counts (θ_s = 0 for a general-only item).
    @inline(__always) func coordinates(_ n: Int, specific: Bool) -> (general: Double, specific: Double) {
        specific ? (grid.points[n / q], grid.points[n % q]) : (grid.points[n], 0)
    }

    /// Q_j: Σ_n r_1 log P + r_0 log(1 − P), plus the item's log priors.
    func objective(_ item: BifactorItem, counts c: ItemCounts) -> Double {
        var total = logPrior(item)
        c.counts.withUnsafeBufferPointer { r in
            for n in 0..<c.nodes {
                let (g, s) = coordinates(n, specific: c.specific)
                let lp = item.logProbabilities(logit: item.logit(general: g, specific: s))
                total += r[c.wrongOffset + n] * lp.wrong + r[c.rightOffset + n] * lp.right
            }
        }
        return total
    }

    /// The gradient ∇Q_j and the expected information F_j (m × m, row-major) at the item's working parameters.
    func scoreAndInformation(_ item: BifactorItem, counts c: ItemCounts) -> (gradient: [Double], information: [Double]) {
        let m = item.workingParameterCount, hasSpecific = item.hasFreeSpecificSlope, cc = item.guessing, ratio = item.testletRatio ?? 0
        var g = [Double](repeating: 0, count: m), f = [Double](repeating: 0, count: m * m)
        var v = [Double](repeating: 0, count: m)
        c.counts.withUnsafeBufferPointer { r in
            for n in 0..<c.nodes {
                let (tg, ts) = coordinates(n, specific: c.specific)
                let r0 = r[c.wrongOffset + n], r1 = r[c.rightOffset + n], total = r0 + r1
                let psi = Logistic.sigmoid(item.logit(general: tg, specific: ts))
                let p = cc + (1 - cc) * psi
                let uz = cc == 0 ? 1 : psi / p
                var k = 0
                v[k] = uz * (tg + ratio * ts); k += 1
                if hasSpecific { v[k] = uz * ts; k += 1 }
                v[k] = uz; k += 1
                if item.estimatesGuessing { v[k] = cc / p }
                let e = r1 - total * p, w = total * p * (1 - p)
                for a in 0..<m {
                    g[a] += e * v[a]
                    for b in a..<m { f[a * m + b] += w * v[a] * v[b] }
                }
            }
        }
        for a in 0..<m { for b in 0..<a { f[a * m + b] = f[b * m + a] } }
        if let prior = slopePrior {
            let terms = prior.logDensityTerms(slope: item.generalSlope)
            g[0] += terms.gradient
            f[0] += max(0, -terms.curvature)
        }
        if item.estimatesGuessing, let prior = guessingPrior {
            let d = prior.logDensityDerivatives(logitGuessing: Logistic.logit(item.guessing))
            g[m - 1] += d.first
            f[(m - 1) * m + m - 1] += max(0, -d.second)
        }
        return (g, f)
    }

    /// The item's log prior density: log p(a_g) (log-normal, 0 for a_g ≤ 0) and log p(c) for a 3PL item.
    func logPrior(_ item: BifactorItem) -> Double {
        var total = 0.0
        if let prior = slopePrior { total += prior.logDensityTerms(slope: item.generalSlope).logDensity }
        if item.estimatesGuessing, let prior = guessingPrior { total += prior.logDensity(logitGuessing: Logistic.logit(item.guessing)) }
        return total
    }

    // MARK: - Parameters for the iterations (EMIterable)

    /// The specific factors with items whose testlet ratio is a parameter (none for the bifactor model).
    var testletFactors: [Int] { testlet ? (0..<(groupCount - 1)).filter { !groupItems[$0 + 1].isEmpty } : [] }

    /// Every item's natural parameters, then the testlet ratios.
    func naturalParameters() -> [Double] { items.flatMap(\.naturalParameters) + testletFactors.map(testletRatio) }
    /// Every item's working parameters, then the testlet ratios.
    func workingParameters() -> [Double] { items.flatMap(\.workingParameters) + testletFactors.map(testletRatio) }

    mutating func setWorkingParameters(_ x: [Double]) {
        var offset = 0
        for j in items.indices {
            let m = items[j].workingParameterCount
            if let item = bounded(items[j], Array(x[offset..<(offset + m)])) { items[j] = item }
            offset += m
        }
        for f in testletFactors {
            if x[offset].isFinite { setTestletRatio(f, min(max(x[offset], -maximumSlope), maximumSlope)) }
            offset += 1
        }
    }

    func parameterBlocks() -> [Range<Int>] {
        var blocks: [Range<Int>] = [], offset = 0
        for item in items {
            blocks.append(offset..<(offset + item.workingParameterCount))
            offset += item.workingParameterCount
        }
        let ratios = testletFactors.count
        if ratios > 0 { blocks.append(offset..<(offset + ratios)) }
        return blocks
    }

    func logPrior() -> Double { items.reduce(0) { $0 + logPrior($1) } }
}
