import Foundation

/// The state of one Bock–Aitkin EM run. Internal: `EMCalibrator` validates input and wraps the outcome in a
/// `CalibrationResult`.
///
/// Parameters are kept in working form: slope s (a = s, or a = e^s with a slope prior), intercept d
/// (z = aθ + d), and γ = logit c (3PL). Rasch and 1PL share one slope across items; for Rasch that slope is
/// the latent SD (θ = a·Z with Z ~ N(0, 1) on the grid).
///
/// With fixed items (`fixedParameters[j] != nil`) the engine estimates the latent distribution instead:
/// θ ~ N(μ, σ²) on the moving nodes θ_q = μ + σ z_q (z_q and the weights of the standard grid), the fixed
/// items keep their (a, d, c), the free items are estimated on the θ scale, and Rasch/1PL free items keep the
/// slope they were given (`commonSlope`) instead of estimating a shared one.
///
/// P(θ) and its derivatives come from `ItemResponseFunction`. One file per step: `EMEngine+EStep` (expected
/// counts, sparse and dense), `EMEngine+ItemMStep` (2PL/3PL items and intercepts), `EMEngine+CommonSlopeMStep`
/// (Rasch/1PL), `EMEngine+LatentDistribution` (μ, σ with fixed items), `EMEngine+LouisInformation` (standard
/// errors, with `EMEngine+CompleteDataScoreCovariance` for complete data) and `EMEngine+ParameterLayout`.
struct EMEngine {
    let model: IRTModel
    /// True when a slope prior puts the slope on the log scale (a = e^s); otherwise a = s.
    let logSlope: Bool
    let priors: WorkingPriors
    let grid: QuadratureGrid
    let data: ResponseMatrix
    let dense: DenseResponses?
    /// The responses as item-block patterns (`PatternBlocks`), when the E-step runs on them instead.
    let patterns: PatternBlocks?
    let workers: Int
    let maximumSlope: Double
    /// Per item: the bank parameters of a fixed item, nil for a free one.
    let fixedParameters: [ItemParameters?]
    /// Per item: index among the free items, −1 for a fixed one.
    let freeIndex: [Int]
    let freeItemCount: Int
    /// True with fixed items: μ and σ are estimated and the nodes move with them.
    let estimatesLatent: Bool
    /// True when the E-step reports the posterior mass per node (`Expectation.mass`): with `estimatesLatent`, and
    /// for a group of a multiple-group fit (`MultipleGroupEngine`), whose latent distribution is estimated there.
    var recordsMass: Bool
    var itemCount: Int { data.itemCount }
    var q: Int { grid.count }

    var s: [Double]
    var d: [Double]
    var g: [Double]
    /// Latent mean and SD (0 and 1 unless `estimatesLatent`).
    var latentMean = 0.0
    var latentSD = 1.0
    /// θ at each quadrature node: `grid.points` without fixed items, μ + σ z_q with them.
    var nodes: [Double]

    /// - Parameters:
    ///   - fixed: per item, the bank parameters of a fixed item or nil; empty = no fixed items.
    ///   - commonSlope: with fixed items, the slope of the Rasch/1PL free items (1 for Rasch).
    init(
        model: IRTModel, options: CalibrationOptions, data: ResponseMatrix, useDense: Bool,
        fixed: [ItemParameters?] = [], commonSlope: Double = 1, usePatterns: Bool = false, patterns prebuilt: PatternBlocks? = nil
    ) {
        self.model = model
        self.logSlope = options.slopePrior != nil
        var priors = WorkingPriors(slope: options.slopePrior, guessing: model.hasGuessing ? options.guessingPrior : nil)
        if model.hasGuessing && !options.itemGuessingPriors.isEmpty { priors.itemGuessing = data.itemIDs.map { options.itemGuessingPriors[$0] } }
        self.priors = priors
        self.grid = QuadratureGrid(validatedCount: options.quadraturePoints, bound: options.thetaBound)
        self.data = data
        let patterns = usePatterns ? prebuilt ?? PatternBlocks(data) : nil
        self.patterns = patterns
        self.dense = useDense && patterns == nil ? DenseResponses(data) : nil
        self.maximumSlope = options.maximumSlope
        // Person-block workers only when OpenBLAS runs single-threaded; otherwise BLAS parallelises itself.
        self.workers = emWorkers(useDense && options.denseProductThreading == .blas ? 1 : options.workers, persons: data.personCount)

        self.nodes = grid.points
        precondition(fixed.isEmpty || fixed.count == data.itemCount, "one fixed-parameter slot per item, got \(fixed.count) for \(data.itemCount)")
        self.fixedParameters = fixed.isEmpty ? [ItemParameters?](repeating: nil, count: data.itemCount) : fixed
        self.estimatesLatent = fixed.contains { $0 != nil }
        self.recordsMass = estimatesLatent
        var index = [Int](repeating: -1, count: data.itemCount), free = 0
        for j in 0..<data.itemCount where fixedParameters[j] == nil { index[j] = free; free += 1 }
        self.freeIndex = index
        self.freeItemCount = free

        // Starting values: a = 1, d = logit of the (guessing-corrected) proportion correct, c at the prior mode.
        let totals = data.itemTotals()
        // Per item: its own prior's mode (`CalibrationOptions.itemGuessingPriors`), else the common one's.
        let c0 = (0..<data.itemCount).map { j in model.hasGuessing ? (priors.guessing(j)?.mode ?? 0.1) : 0 }
        s = [Double](repeating: logSlope ? 0 : 1, count: data.itemCount)
        g = c0.map { model.hasGuessing ? Logistic.logit($0) : 0 }
        d = (0..<data.itemCount).map { j in
            let p = (Double(totals.correct[j]) + 0.5) / (Double(totals.responses[j]) + 1)
            let adjusted = min(max((p - c0[j]) / (1 - c0[j]), 0.02), 0.98)
            return Logistic.logit(adjusted) * 1.2
        }
        if estimatesLatent {
            for j in 0..<data.itemCount {
                if let f = fixedParameters[j] {
                    // Working form of the bank values (only d is read for fixed items; a and c come from f).
                    d[j] = f.intercept
                    s[j] = logSlope ? log(f.discrimination) : f.discrimination
                } else if model == .rasch || model == .onePL {
                    s[j] = commonSlope
                    d[j] *= commonSlope
                }
            }
        }
    }

    /// Working slope s → a: a = e^s with a slope prior, a = s otherwise.
    @inline(__always) func slope(working s: Double) -> Double { logSlope ? exp(s) : s }
    /// Working γ → c: c = σ(γ) for the 3PL, 0 otherwise.
    @inline(__always) func asymptote(working g: Double) -> Double { model.hasGuessing ? Logistic.sigmoid(g) : 0 }
    @inline(__always) func slope(_ j: Int) -> Double { fixedParameters[j]?.discrimination ?? slope(working: s[j]) }
    @inline(__always) func asymptote(_ j: Int) -> Double { fixedParameters[j]?.guessing ?? asymptote(working: g[j]) }
    @inline(__always) func isFixed(_ j: Int) -> Bool { fixedParameters[j] != nil }

    /// log Q(θ_q) and log P(θ_q) of every item at every node (`LogCategoryTable`: rows 2j and 2j + 1), from the
    /// working form z = aθ + d.
    func logTable() -> LogCategoryTable {
        let a = (0..<itemCount).map { slope($0) }, c = (0..<itemCount).map { asymptote($0) }, d = self.d
        return LogCategoryTable(count: itemCount, categories: { _ in 2 }, nodes: nodes) { j, theta, out in
            let v = ItemResponseFunction.logProbabilities(logit: ItemResponseFunction.logit(slope: a[j], intercept: d[j], at: theta), guessing: c[j])
            out[0] = v.logQ
            out[1] = v.logP
        }
    }

    /// log P(θ_q) and log(1 − P(θ_q)) for every item and node, item-major (J × Q), for the BLAS products.
    func logTables() -> (logP: [Double], logQ: [Double]) { logTable().dichotomousColumns() }

    /// Maximises Σ_q r_q log P(θ_q) + (n_q − r_q) log(1 − P(θ_q)) (+ log priors) for every item.
    /// With `estimatesLatent`: fixed items are skipped, Rasch/1PL free items keep their slope, and μ, σ are
    /// updated from the posterior moments (`updateLatentDistribution`).
    mutating func mStep(_ e: Expectation) {
        if estimatesLatent {
            mStepWithFixedItems(e)
            return
        }
        switch model {
        case .rasch, .onePL: mStepCommonSlope(e)
        case .twoPL, .threePL:
            updateItems(Array(0..<itemCount), e)
        }
    }

    /// The items' M-steps on the workers: given the expected counts each item's maximisation is independent of
    /// the others', so items are dealt round-robin and their results stored afterwards (the same values as one
    /// item after another). Rasch/1PL free items with fixed items move their intercept only.
    private mutating func updateItems(_ items: [Int], _ e: Expectation) {
        let nq = q, engine = self, lanes = max(1, min(workers, items.count))
        var out = [Double](repeating: 0, count: 3 * items.count)
        out.withUnsafeMutableBufferPointer { buffer in
            let box = UncheckedSendableBox(buffer.baseAddress!)
            parallelFor(lanes) { lane in
                for k in stride(from: lane, to: items.count, by: lanes) {
                    let j = items[k]
                    let rj = Array(e.r[j * nq..<(j + 1) * nq]), nj = Array(e.n[j * nq..<(j + 1) * nq])
                    var x = [engine.s[j], engine.d[j], engine.g[j]]
                    if engine.model.hasItemSlopes {
                        engine.optimizeItem(r: rj, n: nj, nodes: engine.nodes, x: &x, item: j)
                    } else {
                        x[1] = engine.optimizeIntercept(r: rj, n: nj, a: engine.s[j], d: engine.d[j])
                    }
                    for t in 0..<3 { box.value[3 * k + t] = x[t] }
                }
            }
        }
        for (k, j) in items.enumerated() { s[j] = out[3 * k]; d[j] = out[3 * k + 1]; g[j] = out[3 * k + 2] }
    }

    /// M-step with fixed items: free items as usual (Rasch/1PL: intercept only, the slope stays), fixed items
    /// untouched, then the latent distribution.
    private mutating func mStepWithFixedItems(_ e: Expectation) {
        updateItems((0..<itemCount).filter { !isFixed($0) }, e)
        updateLatentDistribution(e.mass!)
    }

    /// Natural parameters (a, d, c) of every item, then μ and σ when they are estimated, for the convergence
    /// test.
    func naturalParameters() -> [Double] {
        var out = [Double]()
        out.reserveCapacity(3 * itemCount + 2)
        for j in 0..<itemCount { out.append(slope(j)); out.append(d[j]); out.append(asymptote(j)) }
        if estimatesLatent { out.append(latentMean); out.append(latentSD) }
        return out
    }
}
