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
/// number of specific factors. The M-step maximises each item's expected complete-data log-likelihood Q_j by
/// Fisher scoring (`BifactorItemFit`).
struct BifactorEngine: EMIterable {
    struct Expectation: EMExpectation {
        /// Per group, its items' expected counts: row 2k = wrong answers to the group's k-th item, row 2k + 1 =
        /// right answers, each `nodeCount(group)` long, packed.
        var counts: [[Double]]
        var logLikelihood: Double
        var blasSeconds: Double { 0 }
        /// With `recordsMass`: the posterior mass of the general factor's nodes, Σᵢ pᵢ(q) (Q values).
        var mass: [Double]? = nil
        /// With `recordsMass` and `specificMeans` set: per specific factor, the posterior mass of its nodes, Σᵢ pᵢ(t) (Q values; a person
        /// who answered none of the factor's items adds its prior weights).
        var specificMass: [[Double]]? = nil
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
    /// Per engine item, whether it is held at its value (online calibration; empty: every item is free). A fixed
    /// item takes part in the E-step only: the M-step, the parameter vector the iterations extrapolate, the
    /// gradient and the standard errors are over the free items.
    var fixed: [Bool] = []
    /// Each item's M-step (Fisher scoring of Q_j, the slope bound and the priors).
    let fit: BifactorItemFit
    /// The general factor's distribution N(μ, σ²) (a group of a multiple-group fit; N(0, 1) otherwise): grid
    /// point z_q stands for θ_g = μ + σ z_q, its weight unchanged.
    var generalMean = 0.0
    var generalSD = 1.0
    /// Each specific factor's N(μ_s, σ_s²) the same way (empty: all N(0, 1)).
    var specificMeans: [Double] = []
    var specificSDs: [Double] = []
    /// Whether the E-step also sums the factors' posterior mass: the general factor's (`Expectation.mass`) and, when
    /// `specificMeans` are set, each specific factor's (`specificMass`).
    var recordsMass = false

    /// Specific factor f's mean and SD (0 and 1 unless set).
    func specificDistribution(_ f: Int) -> (mean: Double, sd: Double) {
        specificMeans.isEmpty ? (0, 1) : (specificMeans[f], specificSDs[f])
    }
    var maximumSlope: Double { fit.maximumSlope }

    var q: Int { grid.count }
    var groupCount: Int { groupItems.count }

    init(
        items: [BifactorItem], data: ResponseMatrix, grid: QuadratureGrid, group: [Int32], groupItems: [Range<Int>], workers: Int,
        maximumSlope: Double, slopePrior: LogNormalPrior?, guessingPrior: BetaPrior?
    ) {
        self.items = items
        self.data = data
        self.grid = grid
        self.group = group
        self.groupItems = groupItems
        self.workers = emWorkers(workers, persons: data.personCount)
        self.fit = BifactorItemFit(grid: grid, maximumSlope: maximumSlope, slopePrior: slopePrior, guessingPrior: guessingPrior)
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

    /// Whether engine item j is estimated (not `fixed`).
    @inline(__always) func isFree(_ j: Int) -> Bool { fixed.isEmpty || !fixed[j] }
    /// The free items, in engine order.
    var freeItems: [Int] { items.indices.filter(isFree) }

    // MARK: - M-step

    mutating func mStep(_ e: Expectation) {
        let engine = self
        items = maximizedItems { [engine.itemCounts(e, item: $0)] }
        if testlet { for f in 0..<(groupCount - 1) where !groupItems[f + 1].isEmpty { updateTestletRatio(f, e) } }
    }

    /// Every free item moved to the maximum of its Q_j over `counts(j)` (one group's counts, or several groups'
    /// pooled: `BifactorItemFit.maximize(_:pooled:)`), the items dealt to the workers.
    func maximizedItems(counts: @escaping @Sendable (Int) -> [BifactorItemFit.Counts]) -> [BifactorItem] {
        let engine = self
        return updatedInParallel(items, workers: workers, where: { engine.isFree($0) }) { j in
            engine.fit.maximize(engine.items[j], pooled: counts(j))
        }
    }

    /// The factors' values at node n of item group g's counts (grid point z standing for μ + σz on each factor;
    /// θ_s = 0 for the general-only group).
    @inline(__always) func coordinates(_ n: Int, group g: Int) -> (general: Double, specific: Double) {
        let (zg, zs) = fit.coordinates(n, specific: g > 0)
        guard g > 0 else { return (generalMean + generalSD * zg, 0) }
        let specific = specificDistribution(g - 1)
        return (generalMean + generalSD * zg, specific.mean + specific.sd * zs)
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
                    let (tg, ts) = c.coordinates(n, on: fit)
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
            range.reduce(0) { $0 + engine.fit.objective(engine.items[$1].withTestletRatio(ratio), counts: engine.itemCounts(e, item: $1)) }
        }
        let ratio = FisherScoring.maximize(
            testletRatio(f), objective: total,
            direction: { ratio in
                var moved = engine
                moved.setTestletRatio(f, ratio)
                let (g, info) = moved.testletRatioScore(f, e)
                return ([ratio], [info > 0 ? g / info : 0])
            }, candidate: { y in abs(y[0]) <= engine.maximumSlope ? y[0] : nil })
        setTestletRatio(f, ratio)
    }

    /// Item j's rows of the expected counts: (wrong, right), each `nodeCount` long.
    func itemCounts(_ e: Expectation, item j: Int) -> BifactorItemFit.Counts {
        let g = Int(group[j]), n = nodeCount(group: g), k = j - groupItems[g].lowerBound
        let specific = g > 0 ? specificDistribution(g - 1) : (mean: 0, sd: 1)
        return BifactorItemFit.Counts(
            counts: e.counts[g], wrongOffset: 2 * k * n, rightOffset: (2 * k + 1) * n, nodes: n, specific: g > 0,
            generalMean: generalMean, generalSD: generalSD, specificMean: specific.mean, specificSD: specific.sd)
    }

    // MARK: - Parameters for the iterations (EMIterable)

    /// The specific factors with items whose testlet ratio is a parameter (none for the bifactor model).
    var testletFactors: [Int] { testlet ? (0..<(groupCount - 1)).filter { !groupItems[$0 + 1].isEmpty } : [] }

    /// Every free item's natural parameters, then the testlet ratios.
    func naturalParameters() -> [Double] { freeItems.flatMap { items[$0].naturalParameters } + testletFactors.map(testletRatio) }
    /// Every free item's working parameters, then the testlet ratios.
    func workingParameters() -> [Double] { freeItems.flatMap { items[$0].workingParameters } + testletFactors.map(testletRatio) }

    mutating func setWorkingParameters(_ x: [Double]) {
        var offset = items.setWorkingParameters(x, free: freeItems, fit: fit)
        for f in testletFactors {
            if x[offset].isFinite { setTestletRatio(f, min(max(x[offset], -maximumSlope), maximumSlope)) }
            offset += 1
        }
    }

    func parameterBlocks() -> [Range<Int>] {
        let layout = items.workingParameterBlocks(free: freeItems)
        var blocks = layout.blocks
        let ratios = testletFactors.count
        if ratios > 0 { blocks.append(layout.end..<(layout.end + ratios)) }
        return blocks
    }

    func logPrior() -> Double { freeItems.reduce(0) { $0 + fit.logPrior(items[$1]) } }
}
