import Foundation

/// The state of one correlated-factors EM run: K factors θ ~ N(0, R), R a correlation matrix
/// (`FactorCorrelation`), each item on one factor f(j) with P(u_j = 1 | θ) = c + (1 − c) σ(a_j θ_f(j) + d_j)
/// (simple structure). Items are held as general-only `BifactorItem`s whose general slope is the slope on their
/// factor, grouped by factor (each factor's items contiguous; `data` renumbered to match), so their M-step is
/// `BifactorItemFit` on their factor's Q nodes. Internal: `CorrelatedFactorsCalibrator` validates input and
/// wraps the outcome.
///
/// **E-step** by adaptive quasi–Monte Carlo (`adaptiveEStep`, with `nodes`), or on the full product grid of one
/// Q-point rule per factor (equally spaced on [−B, B], as mirt's `mirt()`): the prior weight of node θ = (θ_q0, …, θ_qK−1) is exp(−½ θᵀR⁻¹θ) normalised over the Q^K nodes
/// (`FactorCorrelation.gridPrior`).
/// Simple structure makes the likelihood a product over factors, so for person i
/// ```
/// L_if(q) = Π_{j on f} P(u_ij | θ_q)                         (K × Q values, from per-item log tables)
/// w_i(θ)  = prior(θ) Π_f L_if(θ_f),   L_i = Σ_θ w_i(θ)       (the marginal likelihood)
/// m_if(q) = Σ_{θ: θ_f = θ_q} w_i(θ) / L_i                    (factor f's marginal posterior)
/// S      += Σ_θ w_i(θ) θ θᵀ / L_i                            (posterior second moments)
/// ```
/// and an answer u to an item on factor f adds m_if to its count row r_ju. The node loop runs the last factor
/// innermost: per node one multiplication by the prefix's product, one by L and the prior, and four additions;
/// the prefix factors' marginals and moments take the inner row's sums. Cost Σ_i (answers_i × Q) + persons ×
/// Q^K × ~6, exponential in K: the quadrature is exact on its grid, which is why the calibrator limits the nodes.
/// Each L_if is scaled by its largest value (an offset added to log L_i); a person whose L_i still underflows is
/// redone with logs over the nodes.
///
/// **M-step**: each item's Q_j by Fisher scoring (`BifactorItemFit`), and R by maximising the expected log prior
/// on the grid, −½ tr(R⁻¹ S) − N log Z(R), over its unconstrained parameters (`FactorCorrelation`): R stays positive definite by
/// construction at every step, SQUAREM's extrapolations included.
struct CorrelatedFactorsEngine: EMIterable, FisherIdentityGradient {
    struct Expectation: EMExpectation {
        /// Per factor, its items' expected counts on its Q nodes: row 2k wrong, 2k + 1 right answers of its k-th item.
        var counts: [[Double]]
        /// Σ_i E[θ θᵀ | u_i], K × K row-major.
        var secondMoments: [Double]
        var logLikelihood: Double
        var blasSeconds: Double { 0 }
    }

    var items: [BifactorItem]
    /// The correlation matrix's free values (`FactorCorrelation`).
    var correlation: [Double]
    let data: ResponseMatrix
    let grid: QuadratureGrid
    /// Per engine item, its factor.
    let factor: [Int32]
    /// Per factor, its engine items.
    let factorItems: [Range<Int>]
    let workers: Int
    let fit: BifactorItemFit
    /// The adaptive quasi–Monte Carlo E-step's standard-normal nodes (M × K row-major), nil for the product grid;
    /// with them `grid` is the fine grid each factor's likelihood is tabulated on (`adaptiveEStep`).
    let nodes: [Double]?

    /// Per engine item, whether it is held at its value (online calibration; empty: every item is free).
    var fixed: [Bool] = []

    /// Whether engine item j is estimated (not `fixed`).
    @inline(__always) func isFree(_ j: Int) -> Bool { fixed.isEmpty || !fixed[j] }
    var freeItems: [Int] { items.indices.filter(isFree) }

    var k: Int { factorItems.count }
    var q: Int { grid.count }
    var correlationModel: FactorCorrelation { FactorCorrelation(k: k, grid: nodes == nil ? grid : nil) }

    init(
        items: [BifactorItem], correlation: [Double], data: ResponseMatrix, grid: QuadratureGrid, factor: [Int32], factorItems: [Range<Int>],
        workers: Int, maximumSlope: Double, slopePrior: LogNormalPrior?, guessingPrior: BetaPrior?, nodes: [Double]? = nil
    ) {
        self.items = items
        self.nodes = nodes
        self.correlation = correlation
        self.data = data
        self.grid = grid
        self.factor = factor
        self.factorItems = factorItems
        self.workers = emWorkers(workers, persons: data.personCount)
        self.fit = BifactorItemFit(grid: grid, maximumSlope: maximumSlope, slopePrior: slopePrior, guessingPrior: guessingPrior)
    }

    func eStep() -> Expectation {
        if let nodes { return adaptiveEStep(nodes: nodes) }
        let kk = k, nq = q
        let logPrior = correlationModel.gridPrior(correlation).logWeights, prior = logPrior.map { exp($0) }
        let tables = itemLogTables()
        let firstItem = factorItems.map(\.lowerBound)
        let engine = self
        return summedOverWorkers { persons in
            var counts = engine.factorItems.map { [Double](repeating: 0, count: 2 * $0.count * nq) }
            var moments = [Double](repeating: 0, count: kk * kk), ll = 0.0
            var h = [Double](repeating: 0, count: kk * nq), likelihood = h, marginal = h
            var node = [Double](repeating: 0, count: kk * kk)
            var digits = [Int](repeating: 0, count: kk)
            for i in persons {
                h.withUnsafeMutableBufferPointer { engine.logLikelihoods(person: i, tables: tables, into: $0) }
                let (total, offset) = engine.correlationModel.posteriorSums(
                    h: h, prior: prior, logPrior: logPrior, likelihood: &likelihood, marginal: &marginal,
                    moments: &node, digits: &digits)
                ll += log(total) + offset
                let inverse = 1 / total
                marginal.withUnsafeBufferPointer { engine.addCounts(person: i, marginal: $0, scale: inverse, firstItem: firstItem, into: &counts) }
                for f in 0..<kk {
                    for g in 0...f {
                        let v = node[f * kk + g] * inverse
                        moments[f * kk + g] += v
                        if g != f { moments[g * kk + f] += v }
                    }
                }
            }
            return Expectation(counts: counts, secondMoments: moments, logLikelihood: ll)
        }
    }

    /// Per item: log P(u = 0) at the grid's points, then log P(u = 1).
    func itemLogTables() -> [[Double]] {
        let points = grid.points
        return items.map { $0.generalLogTable(at: points) }
    }

    /// Person i's log-likelihood per factor on the grid, h_f(x) = Σ_{j on f} log P(u_ij | x) (K × Q, `tables` from
    /// `itemLogTables`), written into `h`: both E-steps' first per-person step.
    @inline(__always)
    func logLikelihoods(person i: Int, tables: [[Double]], into h: UnsafeMutableBufferPointer<Double>) {
        let nq = q
        for x in 0..<h.count { h[x] = 0 }
        for cell in data.cells(ofPerson: i) {
            let j = Int(data.itemIndices[cell]), f = Int(factor[j]), base = Int(data.responses[cell]) * nq
            tables[j].withUnsafeBufferPointer { t in
                let source = t.baseAddress! + base, target = h.baseAddress! + f * nq
                for x in 0..<nq { target[x] += source[x] }
            }
        }
    }

    /// Adds person i's posterior marginal of each factor (`marginal`, K × Q, times `scale`) to the count row of
    /// every item the person answered (row 2k + u of its factor's k-th item): both E-steps' last per-person step.
    @inline(__always)
    func addCounts(person i: Int, marginal: UnsafeBufferPointer<Double>, scale: Double, firstItem: [Int], into counts: inout [[Double]]) {
        let nq = q
        for cell in data.cells(ofPerson: i) {
            let j = Int(data.itemIndices[cell]), f = Int(factor[j]), u = Int(data.responses[cell])
            let row = (2 * (j - firstItem[f]) + u) * nq
            counts[f].withUnsafeMutableBufferPointer { c in
                let target = c.baseAddress! + row, source = marginal.baseAddress! + f * nq
                for x in 0..<nq { target[x] += source[x] * scale }
            }
        }
    }

    /// The E-step's sums over persons: `body` on each worker's contiguous range of persons, their counts, second
    /// moments and log-likelihoods added.
    func summedOverWorkers(_ body: (Range<Int>) -> Expectation) -> Expectation {
        let w = workers, persons = data.personCount
        var partial = [Expectation?](repeating: nil, count: w)
        partial.withUnsafeMutableBufferPointer { out in
            let box = UncheckedSendableBox(out.baseAddress!)
            parallelFor(w) { worker in box.value[worker] = body((persons * worker / w)..<(persons * (worker + 1) / w)) }
        }
        var total = partial[0]!
        for worker in 1..<w {
            let part = partial[worker]!
            for f in total.counts.indices { for x in total.counts[f].indices { total.counts[f][x] += part.counts[f][x] } }
            for x in total.secondMoments.indices { total.secondMoments[x] += part.secondMoments[x] }
            total.logLikelihood += part.logLikelihood
        }
        return total
    }

    /// Item j's count rows on its factor's nodes.
    func itemCounts(_ e: Expectation, item j: Int) -> BifactorItemFit.Counts {
        let f = Int(factor[j]), n = factorItems[f].lowerBound, kth = j - n
        return BifactorItemFit.Counts(counts: e.counts[f], wrongOffset: 2 * kth * q, rightOffset: (2 * kth + 1) * q, nodes: q, specific: false)
    }

    // MARK: - M-step

    mutating func mStep(_ e: Expectation) {
        let engine = self
        items = updatedInParallel(items, workers: workers, where: { engine.isFree($0) }) { j in
            engine.fit.maximize(engine.items[j], counts: engine.itemCounts(e, item: j))
        }
        correlation = correlationModel.maximize(from: correlation, persons: Double(data.personCount), secondMoments: e.secondMoments)
    }

    // MARK: - Parameters (EMIterable, FisherIdentityGradient)

    /// The free items' parameters, then R's lower triangle.
    func naturalParameters() -> [Double] {
        let r = correlationModel.matrix(correlation)
        var lower: [Double] = []
        for i in 0..<k { for j in 0..<i { lower.append(r[i * k + j]) } }
        return freeItems.flatMap { items[$0].naturalParameters } + lower
    }

    func workingParameters() -> [Double] { freeItems.flatMap { items[$0].workingParameters } + correlation }

    mutating func setWorkingParameters(_ x: [Double]) {
        let offset = items.setWorkingParameters(x, free: freeItems, fit: fit)
        let values = Array(x[offset...])
        if values.allSatisfy(\.isFinite) { correlation = values }
    }

    func parameterBlocks() -> [Range<Int>] {
        let layout = items.workingParameterBlocks(free: freeItems)
        var blocks = layout.blocks
        if !correlation.isEmpty { blocks.append(layout.end..<(layout.end + correlation.count)) }
        return blocks
    }

    func logPrior() -> Double { freeItems.reduce(0) { $0 + fit.logPrior(items[$1]) } }

    /// ∇ log posterior by Fisher's identity: each item's ∇Q_j, then ∂F/∂x of the correlation.
    func gradient(_ e: Expectation) -> [Double] {
        var out: [Double] = []
        for j in freeItems { out += fit.scoreAndInformation(items[j], counts: itemCounts(e, item: j)).gradient }
        return out + correlationModel.logDensity(correlation, persons: Double(data.personCount), secondMoments: e.secondMoments).gradient
    }
}
