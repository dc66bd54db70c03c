import Foundation

/// The state of one Bock–Aitkin EM run over items of any `CalibratableItemModel` (graded, partial credit,
/// nominal, and 0/1 items as two-category graded or partial-credit items), on θ ~ N(0, 1) at the quadrature
/// nodes. Internal: `PolytomousCalibrator` validates input and wraps the outcome.
///
/// The E-step is the sparse one every model shares (`sparseCategoryCounts`: expected counts r_jkq per item,
/// category and node). The M-step maximises, item by item,
/// ```
/// Q_j(x) = Σ_q Σ_k r_jkq log P_k(θ_q; x)
/// ```
/// by Fisher scoring — the gradient g = Σ_q Σ_k r_jkq ∇ log P_jk(θ_q) (`workingLogGradient`) and the expected
/// information F = Σ_q n_jq Σ_k P_jk ∇ log P_jk ∇ log P_jkᵀ (n_jq = Σ_k r_jkq), step F⁻¹g halved until Q_j
/// increases inside the model's domain (`withWorkingParameters`) — the Newton step of mirt's M-step with the
/// expected in place of the observed Hessian, which is positive definite wherever F is.
///
/// With item priors (`slopePriors`: log-normal on a, working parameter 0 of graded, gpcm and 3PL items;
/// `guessingPriors`: Beta on c = σ(γ), working parameter 2 of 3PL items, `PriorDensities.swift`) the
/// M-step maximises Q_j plus the log prior density of the item's slope, log p(a) = −log a − (log a − μ)²/(2σ²),
/// in the natural a as the dichotomous engine does (no Jacobian; BILOG-MG's and mirt's MAP item estimates), and
/// the prior's curvature joins the information and the standard errors.
///
/// Items with `shared[j] > 0` share their first `shared[j]` working parameters with each other (the scale's
/// parameters): the Rasch family's slope σ (partial credit and rating scale with a = 1 and the latent SD
/// estimated: on the N(0, 1) grid their P_k ∝ exp(σ k z + d_k), the model on θ = σz with a = 1, as `EMEngine`
/// does for the dichotomous Rasch model), and the rating-scale items' thresholds τ₁ … τ_{K−2} after it. Their own
/// parameters are moved with the shared ones held, then the shared ones by a Fisher step over all of them.
///
/// With fixed items (`FixedItemModel`: no working parameters; `estimatesLatent`) the engine estimates the latent
/// distribution instead, as `EMEngine` does: θ ~ N(μ, σ²) on the moving nodes θ_q = μ + σ z_q
/// (`NormalLatentDistribution`), the fixed items set the scale, the free items are estimated on it, and the
/// Rasch family's common slope stays 1 (its σ is the latent SD; a rating-scale item's thresholds are still
/// shared).
struct ItemModelEngine: EMIterable {
    struct Expectation: EMExpectation {
        var counts: [Double]
        var logLikelihood: Double
        /// m_q = Σᵢ wᵢ(q), with `estimatesLatent`.
        var mass: [Double]?
        var blasSeconds: Double { 0 }
    }

    var items: [any CalibratableItemModel]
    let data: ResponseMatrix
    let grid: QuadratureGrid
    let workers: Int
    let maximumSlope: Double
    /// Per item: how many of its leading working parameters are the scale's shared ones (0: none; 1: the
    /// common slope σ; a rating-scale item in K categories: σ and K − 2 thresholds).
    let shared: [Int]
    /// The number of shared parameters (the largest `shared[j]`).
    let sharedCount: Int
    /// Per item: the log-normal prior on its slope a (working parameter 0), or nil.
    let slopePriors: [LogNormalPrior?]
    /// Per item: the Beta prior on its lower asymptote c (working parameter 2, γ = logit c: 3PL items), or nil.
    let guessingPriors: [BetaPrior?]
    let rowStart: [Int]
    /// True with fixed items: μ and σ are estimated and the nodes move with them.
    let estimatesLatent: Bool
    /// Latent mean and SD (0 and 1 unless `estimatesLatent`).
    var latentMean = 0.0
    var latentSD = 1.0
    /// θ at each quadrature node: `grid.points`, or μ + σ z_q with `estimatesLatent`.
    var nodes: [Double]
    var q: Int { grid.count }
    /// The first shared parameter that is estimated: 1 with `estimatesLatent` (the common slope σ is held at 1,
    /// the latent SD taking its place), else 0.
    var firstEstimatedShared: Int { estimatesLatent ? 1 : 0 }

    init(
        items: [any CalibratableItemModel], data: ResponseMatrix, grid: QuadratureGrid, workers: Int, maximumSlope: Double,
        shared: [Int], slopePriors: [LogNormalPrior?] = [], guessingPriors: [BetaPrior?] = [], estimatesLatent: Bool = false
    ) {
        self.items = items
        self.data = data
        self.grid = grid
        self.workers = emWorkers(workers, persons: data.personCount)
        self.maximumSlope = maximumSlope
        self.shared = shared
        self.sharedCount = shared.max() ?? 0
        self.slopePriors = slopePriors.isEmpty ? [LogNormalPrior?](repeating: nil, count: items.count) : slopePriors
        self.guessingPriors = guessingPriors.isEmpty ? [BetaPrior?](repeating: nil, count: items.count) : guessingPriors
        var starts = [0]
        for item in items { starts.append(starts.last! + item.categoryCount) }
        rowStart = starts
        self.estimatesLatent = estimatesLatent
        self.nodes = grid.points
    }

    var hasSharedSlope: Bool { sharedCount > 0 }
    /// The common slope σ of the shared-slope items (1 when there are none).
    var commonSlope: Double { sharedParameters().first ?? 1 }

    /// The shared parameters' current values (each from the first item that shares it).
    func sharedParameters() -> [Double] {
        (0..<sharedCount).map { a in items[shared.firstIndex { $0 > a }!].workingParameters[a] }
    }

    func eStep() -> Expectation {
        let table = LogCategoryTable(items: items, nodes: nodes)
        let c = sparseCategoryCounts(data: data, table: table, logPrior: grid.logWeights, workers: workers, withMass: estimatesLatent)
        return Expectation(counts: c.counts, logLikelihood: c.logLikelihood, mass: c.mass)
    }

    mutating func mStep(_ e: Expectation) {
        let engine = self
        items = updatedInParallel(items, workers: workers, where: { engine.items[$0].workingParameters.count > engine.shared[$0] }) { j in
            engine.maximize(engine.items[j], item: j, counts: e.counts, holding: engine.shared[j])
        }
        if sharedCount > firstEstimatedShared { updateSharedParameters(e) }
        if estimatesLatent, let mass = e.mass, let (mean, sd) = NormalLatentDistribution.moments(mass: mass, nodes: nodes) {
            setLatentDistribution(mean: mean, sd: sd)
        }
    }

    /// Sets μ and σ and moves the nodes with them: θ_q = μ + σ z_q.
    mutating func setLatentDistribution(mean: Double, sd: Double) {
        latentMean = mean
        latentSD = sd
        nodes = NormalLatentDistribution.nodes(grid, mean: mean, sd: sd)
    }

    /// Item j's Q_j(x) maximised by Fisher scoring from its current parameters (see the type's documentation);
    /// the first `holding` working parameters (the shared ones) stay.
    func maximize<Item: CalibratableItemModel>(_ item: Item, item j: Int, counts: [Double], holding first: Int) -> any CalibratableItemModel {
        let fixingSlope = first > 0
        return FisherScoring.maximize(
            item, objective: { objective($0, item: j, counts: counts) },
            direction: { current in
                let x = current.workingParameters, m = x.count, free = m - first
                let (g, f) = scoreAndInformation(current, item: j, counts: counts)
                var gFree = [Double](repeating: 0, count: free), fFree = [Double](repeating: 0, count: free * free)
                for a in 0..<free {
                    gFree[a] = g[a + first]
                    for b in 0..<free { fFree[a * free + b] = f[(a + first) * m + b + first] }
                }
                return (x, [Double](repeating: 0, count: first) + solveSmallSPD(fFree, gFree, n: free))
            },
            candidate: { y in
                var y = y
                if !fixingSlope, y[0] > maximumSlope { y[0] = maximumSlope }
                return item.withWorkingParameters(y)
            })
    }

    /// Q_j(x) = Σ_q Σ_k r_jkq log P_k(θ_q), plus the slope's log prior density where item j has one.
    func objective(_ item: some CalibratableItemModel, item j: Int, counts: [Double]) -> Double {
        let k = item.categoryCount, nq = q, base = rowStart[j] * nq
        var total = logPrior(item, item: j)
        withUnsafeTemporaryAllocation(of: Double.self, capacity: k) { logP in
            for t in 0..<nq {
                item.logCategoryProbabilities(at: nodes[t], into: logP)
                for c in 0..<k { total += counts[base + c * nq + t] * logP[c] }
            }
        }
        return total
    }

    /// The gradient Σ_q Σ_k r_jkq ∇ log P_k and the expected information Σ_q n_q Σ_k P_k ∇ log P_k ∇ log P_kᵀ
    /// (m × m, row-major) of item j's Q_j at its current working parameters.
    func scoreAndInformation(_ item: some CalibratableItemModel, item j: Int, counts: [Double]) -> (gradient: [Double], information: [Double]) {
        let k = item.categoryCount, m = item.workingParameters.count, nq = q, base = rowStart[j] * nq
        var g = [Double](repeating: 0, count: m), f = [Double](repeating: 0, count: m * m)
        var grad = [Double](repeating: 0, count: k * m), logP = [Double](repeating: 0, count: k)
        for t in 0..<nq {
            let theta = nodes[t]
            grad.withUnsafeMutableBufferPointer { item.workingLogGradient(at: theta, into: $0) }
            logP.withUnsafeMutableBufferPointer { item.logCategoryProbabilities(at: theta, into: $0) }
            var n = 0.0
            for c in 0..<k { n += counts[base + c * nq + t] }
            for c in 0..<k {
                let r = counts[base + c * nq + t], w = n * exp(logP[c])
                for a in 0..<m {
                    let ga = grad[c * m + a]
                    g[a] += r * ga
                    for b in 0..<m { f[a * m + b] += w * ga * grad[c * m + b] }
                }
            }
        }
        if let prior = slopePriors[j] {
            let terms = prior.logDensityTerms(slope: item.workingParameters[0])
            g[0] += terms.gradient
            f[0] += max(0, -terms.curvature)
        }
        if let prior = guessingPriors[j] {
            let d = prior.logDensityDerivatives(logitGuessing: item.workingParameters[2])
            g[2] += d.first
            f[2 * m + 2] += max(0, -d.second)
        }
        return (g, f)
    }

    /// Item j's log prior density at its working parameters: log p(a) + log p(c) where it has those priors
    /// (0 without a prior, before the working parameters are formed: the M-step's line search calls this often).
    func logPrior(_ item: some CalibratableItemModel, item j: Int) -> Double {
        guard slopePriors[j] != nil || guessingPriors[j] != nil else { return 0 }
        let x = item.workingParameters
        return (slopePriors[j]?.logDensityTerms(slope: x[0]).logDensity ?? 0) + (guessingPriors[j]?.logDensity(logitGuessing: x[2]) ?? 0)
    }

    /// Item j's prior curvature ∂²/∂x² log p on the diagonal of its working parameters (a at 0, γ at 2).
    func priorCurvature(item j: Int) -> [(parameter: Int, curvature: Double)] {
        let x = items[j].workingParameters
        return (slopePriors[j].map { [(0, $0.logDensityTerms(slope: x[0]).curvature)] } ?? [])
            + (guessingPriors[j].map { [(2, $0.logDensityDerivatives(logitGuessing: x[2]).second)] } ?? [])
    }

    /// Fisher steps in the shared parameters (σ, and the rating-scale thresholds) over the items that share them,
    /// the items' own parameters held: the gradient and expected information of Σ_j Q_j in the shared
    /// coordinates (item j contributes to its first `shared[j]`), the step halved until Σ_j Q_j increases. The
    /// shared parameters before `firstEstimatedShared` are held.
    private mutating func updateSharedParameters(_ e: Expectation) {
        let sharing = items.indices.filter { shared[$0] > firstEstimatedShared }, s0 = firstEstimatedShared, S = sharedCount - s0
        func total(_ set: [any CalibratableItemModel]) -> Double { sharing.reduce(0) { $0 + objective(set[$1], item: $1, counts: e.counts) } }
        var before = total(items)
        for _ in 0..<10 {
            var g = [Double](repeating: 0, count: S), f = [Double](repeating: 0, count: S * S)
            for j in sharing {
                let (gj, fj) = scoreAndInformation(items[j], item: j, counts: e.counts)
                let m = items[j].workingParameters.count
                for a in s0..<shared[j] {
                    g[a - s0] += gj[a]
                    for b in s0..<shared[j] { f[(a - s0) * S + b - s0] += fj[a * m + b] }
                }
            }
            guard f[0] > 0 else { return }
            var step = [Double](repeating: 0, count: s0) + solveSmallSPD(f, g, n: S), moved = false
            let current = sharedParameters()
            for _ in 0..<40 {
                var values = zip(current, step).map { $0 + $1 }
                values[0] = min(max(values[0], 1e-3), maximumSlope)
                let candidate = items.enumerated().map { j, item -> any CalibratableItemModel in
                    shared[j] > 0 ? withShared(item, values, count: shared[j]) ?? item : item
                }
                let after = total(candidate)
                if after >= before - 1e-12 * abs(before) {
                    items = candidate
                    before = after
                    moved = true
                    break
                }
                step = step.map { $0 / 2 }
            }
            if !moved || step.reduce(0, { max($0, abs($1)) }) < 1e-10 { return }
        }
    }

    /// The item with its first `count` working parameters set from `values`.
    private func withShared<Item: CalibratableItemModel>(_ item: Item, _ values: [Double], count: Int) -> (any CalibratableItemModel)? {
        var x = item.workingParameters
        for a in 0..<count { x[a] = values[a] }
        return item.withWorkingParameters(x)
    }

    // MARK: - Parameters for the iterations (EMIterable)

    /// Every item's working parameters, then μ and σ when they are estimated.
    func naturalParameters() -> [Double] { items.flatMap(\.workingParameters) + (estimatesLatent ? [latentMean, latentSD] : []) }
    /// Every item's working parameters, then μ and log σ when they are estimated.
    func workingParameters() -> [Double] { items.flatMap(\.workingParameters) + (estimatesLatent ? [latentMean, log(latentSD)] : []) }

    /// Sets every item's working parameters from `x` (items out of their domain keep theirs); each shared
    /// parameter is taken from the first item that shares it, so that the constraint survives an extrapolation
    /// per block.
    mutating func setWorkingParameters(_ x: [Double]) {
        var offset = 0, values: [Double] = []
        for j in items.indices {
            let m = items[j].workingParameters.count
            var y = Array(x[offset..<(offset + m)])
            for a in 0..<shared[j] {
                if a == values.count { values.append(a == 0 ? min(max(y[0], 1e-3), maximumSlope) : y[a]) }
                y[a] = values[a]
            }
            if m > 0, y[0] > maximumSlope { y[0] = maximumSlope }
            if let item = items[j].withWorkingParameters(y) { items[j] = item }
            offset += m
        }
        if estimatesLatent {
            let latent = NormalLatentDistribution.projected(mean: x[offset], logSD: x[offset + 1])
            setLatentDistribution(mean: latent.mean, sd: latent.sd)
        }
    }

    func parameterBlocks() -> [Range<Int>] {
        var blocks: [Range<Int>] = [], offset = 0
        for item in items {
            let m = item.workingParameters.count
            if m > 0 { blocks.append(offset..<(offset + m)) }
            offset += m
        }
        if estimatesLatent { blocks.append(offset..<(offset + 2)) }
        return blocks
    }

    func logPrior() -> Double {
        items.indices.reduce(0) { $0 + logPrior(items[$1], item: $1) }
    }
}
