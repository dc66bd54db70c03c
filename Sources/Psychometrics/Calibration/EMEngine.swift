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
struct EMEngine {
    let model: IRTModel
    /// True when a slope prior puts the slope on the log scale (a = e^s); otherwise a = s.
    let logSlope: Bool
    let priors: WorkingPriors
    let grid: QuadratureGrid
    let data: ResponseMatrix
    let dense: DenseResponses?
    let workers: Int
    let maximumSlope: Double
    /// Per item: the bank parameters of a fixed item, nil for a free one.
    let fixedParameters: [ItemParameters?]
    /// Per item: index among the free items, −1 for a fixed one.
    let freeIndex: [Int]
    let freeItemCount: Int
    /// True with fixed items: μ and σ are estimated and the nodes move with them.
    let estimatesLatent: Bool
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
    init(model: IRTModel, options: CalibrationOptions, data: ResponseMatrix, useDense: Bool,
         fixed: [ItemParameters?] = [], commonSlope: Double = 1) {
        self.model = model
        self.logSlope = options.slopePrior != nil
        self.priors = WorkingPriors(slope: options.slopePrior, guessing: model.hasGuessing ? options.guessingPrior : nil)
        self.grid = QuadratureGrid(count: options.quadraturePoints, bound: options.thetaBound)
        self.data = data
        self.dense = useDense ? DenseResponses(data) : nil
        self.maximumSlope = options.maximumSlope
        // Person-block workers only when OpenBLAS runs single-threaded; otherwise BLAS parallelises itself.
        self.workers = max(1, min(options.workers, useDense && options.denseProductThreading == .blas ? 1 : options.workers, max(1, data.personCount / 256)))

        self.nodes = grid.points
        precondition(fixed.isEmpty || fixed.count == data.itemCount, "one fixed-parameter slot per item, got \(fixed.count) for \(data.itemCount)")
        self.fixedParameters = fixed.isEmpty ? [ItemParameters?](repeating: nil, count: data.itemCount) : fixed
        self.estimatesLatent = fixed.contains { $0 != nil }
        var index = [Int](repeating: -1, count: data.itemCount), free = 0
        for j in 0..<data.itemCount where fixedParameters[j] == nil { index[j] = free; free += 1 }
        self.freeIndex = index
        self.freeItemCount = free

        // Starting values: a = 1, d = logit of the (guessing-corrected) proportion correct, c at the prior mode.
        let totals = data.itemTotals()
        let c0 = model.hasGuessing ? (options.guessingPrior?.mode ?? 0.1) : 0
        s = [Double](repeating: logSlope ? 0 : 1, count: data.itemCount)
        g = [Double](repeating: model.hasGuessing ? Logistic.logit(c0) : 0, count: data.itemCount)
        d = (0..<data.itemCount).map { j in
            let p = (Double(totals.correct[j]) + 0.5) / (Double(totals.responses[j]) + 1)
            let adjusted = min(max((p - c0) / (1 - c0), 0.02), 0.98)
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

    /// log P(θ_q) and log(1 − P(θ_q)) for every item and node, item-major (J × Q).
    func logTables() -> (logP: [Double], logQ: [Double]) {
        let nq = q, theta = nodes
        var logP = [Double](repeating: 0, count: itemCount * nq)
        var logQ = logP
        for j in 0..<itemCount {
            let a = slope(j), dj = d[j], c = asymptote(j)
            for k in 0..<nq {
                let v = ItemResponseFunction.logProbabilities(logit: ItemResponseFunction.logit(slope: a, intercept: dj, at: theta[k]), guessing: c)
                logP[j * nq + k] = v.logP
                logQ[j * nq + k] = v.logQ
            }
        }
        return (logP, logQ)
    }

    // MARK: - E-step

    /// Expected counts at the current parameters: `r[j·Q + q]` = expected correct responses to item j at node q,
    /// `n[j·Q + q]` = expected responses, and the marginal log-likelihood Σᵢ log Σ_q π_q Πⱼ P(uᵢⱼ | θ_q).
    /// With `estimatesLatent`, `mass[q]` = Σᵢ wᵢ(q), the posterior mass of all persons at node q.
    struct Expectation {
        var r: [Double]
        var n: [Double]
        var logLikelihood: Double
        var mass: [Double]? = nil
        /// Dense E-step: wall time inside the BLAS products (the slowest worker's sum), for benchmarks.
        var blasSeconds = 0.0
    }

    func eStep() -> Expectation {
        let tables = logTables()
        if let dense { return denseEStep(dense, tables) }
        return sparseEStep(tables)
    }

    /// Visits answered cells only: for person i, log Lᵢ(θ_q) = log π_q + Σ_{j answered} log P(uᵢⱼ | θ_q), then
    /// the normalised posterior wᵢ(q) is added to n[j] (and to r[j] when uᵢⱼ = 1). Cost ∝ cells × Q.
    private func sparseEStep(_ tables: (logP: [Double], logQ: [Double])) -> Expectation {
        let nq = q, J = itemCount, persons = data.personCount
        let w = workers
        var r = [Double](repeating: 0, count: w * J * nq)
        var n = r
        var ll = [Double](repeating: 0, count: w)
        let withMass = estimatesLatent
        var mass = [Double](repeating: 0, count: withMass ? w * nq : 0)
        let logPrior = grid.logWeights
        mass.withUnsafeMutableBufferPointer { massAll in
        r.withUnsafeMutableBufferPointer { rAll in
        n.withUnsafeMutableBufferPointer { nAll in
        ll.withUnsafeMutableBufferPointer { llAll in
        tables.logP.withUnsafeBufferPointer { logP in
        tables.logQ.withUnsafeBufferPointer { logQ in
        logPrior.withUnsafeBufferPointer { prior in
        data.rowOffsets.withUnsafeBufferPointer { offsets in
        data.itemIndices.withUnsafeBufferPointer { items in
        data.responses.withUnsafeBufferPointer { responses in
            parallelFor(w) { worker in
                let lo = persons * worker / w, hi = persons * (worker + 1) / w
                let rw = rAll.baseAddress! + worker * J * nq
                let nw = nAll.baseAddress! + worker * J * nq
                let acc = UnsafeMutablePointer<Double>.allocate(capacity: nq)
                defer { acc.deallocate() }
                var total = 0.0
                for i in lo..<hi {
                    let start = offsets[i], end = offsets[i + 1]
                    acc.update(from: prior.baseAddress!, count: nq)
                    for k in start..<end {
                        let j = Int(items[k])
                        let row = (responses[k] == 1 ? logP.baseAddress! : logQ.baseAddress!) + j * nq
                        for t in 0..<nq { acc[t] += row[t] }
                    }
                    total += normalizeLogPosterior(acc, nq)
                    if withMass {
                        let mw = massAll.baseAddress! + worker * nq
                        for t in 0..<nq { mw[t] += acc[t] }
                    }
                    for k in start..<end {
                        let j = Int(items[k])
                        let nrow = nw + j * nq
                        for t in 0..<nq { nrow[t] += acc[t] }
                        if responses[k] == 1 {
                            let rrow = rw + j * nq
                            for t in 0..<nq { rrow[t] += acc[t] }
                        }
                    }
                }
                llAll[worker] = total
            }
        }}}}}}}}}}
        return Expectation(r: sumWorkers(r, w, J * nq), n: sumWorkers(n, w, J * nq), logLikelihood: ll.reduce(0, +),
                           mass: withMass ? sumWorkers(mass, w, nq) : nil)
    }

    /// Dense E-step with BLAS: for a block of persons, log L = U·Dᵀ-form products
    /// ```
    /// log L (B×Q) = U (B×J) · logit P (J×Q) + M (B×J) · log(1 − P) (J×Q) + 1·log πᵀ
    /// r (J×Q) += Uᵀ W,   n (J×Q) += Mᵀ W
    /// ```
    /// with U the 0/1 responses, M the answered mask (all ones for complete data: then M·log(1 − P) is one row
    /// of column sums and n is the column sums of W for every item), W the row-normalised posteriors.
    private func denseEStep(_ dense: DenseResponses, _ tables: (logP: [Double], logQ: [Double])) -> Expectation {
        let nq = q, J = itemCount, persons = dense.rows
        let logitTable = zip(tables.logP, tables.logQ).map { $0 - $1 }
        var base = grid.logWeights
        if dense.mask == nil {
            for j in 0..<J { for t in 0..<nq { base[t] += tables.logQ[j * nq + t] } }
        }
        let w = workers
        let withMass = estimatesLatent
        let block = DenseResponses.blockRows
        let blocks = (persons + block - 1) / block
        var r = [Double](repeating: 0, count: w * J * nq)
        var n = [Double](repeating: 0, count: w * J * nq)
        var columnTotals = [Double](repeating: 0, count: w * nq)
        var ll = [Double](repeating: 0, count: w)
        var blasNanoseconds = [UInt64](repeating: 0, count: w)
        blasNanoseconds.withUnsafeMutableBufferPointer { blasAll in
        r.withUnsafeMutableBufferPointer { rAll in
        n.withUnsafeMutableBufferPointer { nAll in
        columnTotals.withUnsafeMutableBufferPointer { colAll in
        ll.withUnsafeMutableBufferPointer { llAll in
        logitTable.withUnsafeBufferPointer { logit in
        tables.logQ.withUnsafeBufferPointer { logQ in
        base.withUnsafeBufferPointer { base in
        dense.u.withUnsafeBufferPointer { u in
            parallelFor(w) { worker in
                let post = UnsafeMutablePointer<Double>.allocate(capacity: block * nq)
                defer { post.deallocate() }
                let rw = rAll.baseAddress! + worker * J * nq
                let nw = nAll.baseAddress! + worker * J * nq
                let cw = colAll.baseAddress! + worker * nq
                var total = 0.0
                var blasTime: UInt64 = 0
                var b = worker
                while b < blocks {
                    let lo = b * block, rows = min(block, persons - lo)
                    let ub = u.baseAddress! + lo * J
                    var t0 = DispatchTime.now().uptimeNanoseconds
                    BLAS.gemm(m: rows, n: nq, k: J, a: ub, lda: J, b: logit.baseAddress!, ldb: nq, beta: 0, c: post, ldc: nq)
                    if let mask = dense.mask {
                        mask.withUnsafeBufferPointer { m in
                            BLAS.gemm(m: rows, n: nq, k: J, a: m.baseAddress! + lo * J, lda: J, b: logQ.baseAddress!, ldb: nq, beta: 1, c: post, ldc: nq)
                        }
                    }
                    blasTime += DispatchTime.now().uptimeNanoseconds - t0
                    for i in 0..<rows {
                        let row = post + i * nq
                        for t in 0..<nq { row[t] += base[t] }
                        total += normalizeLogPosterior(row, nq)
                    }
                    t0 = DispatchTime.now().uptimeNanoseconds
                    BLAS.gemm(transposeA: true, m: J, n: nq, k: rows, a: ub, lda: J, b: post, ldb: nq, beta: 1, c: rw, ldc: nq)
                    if let mask = dense.mask {
                        mask.withUnsafeBufferPointer { m in
                            BLAS.gemm(transposeA: true, m: J, n: nq, k: rows, a: m.baseAddress! + lo * J, lda: J, b: post, ldb: nq, beta: 1, c: nw, ldc: nq)
                        }
                    }
                    blasTime += DispatchTime.now().uptimeNanoseconds - t0
                    if dense.mask == nil || withMass {
                        for i in 0..<rows { for t in 0..<nq { cw[t] += post[i * nq + t] } }
                    }
                    b += w
                }
                llAll[worker] = total
                blasAll[worker] = blasTime
            }
        }}}}}}}}}
        var nSum = sumWorkers(n, w, J * nq)
        let totals = dense.mask == nil || withMass ? sumWorkers(columnTotals, w, nq) : []
        if dense.mask == nil {
            for j in 0..<J { for t in 0..<nq { nSum[j * nq + t] = totals[t] } }
        }
        return Expectation(r: sumWorkers(r, w, J * nq), n: nSum, logLikelihood: ll.reduce(0, +), mass: withMass ? totals : nil,
                           blasSeconds: Double(blasNanoseconds.max() ?? 0) / 1e9)
    }

    private func sumWorkers(_ values: [Double], _ workers: Int, _ size: Int) -> [Double] {
        if workers == 1 { return values }
        var out = Array(values[0..<size])
        for worker in 1..<workers { for k in 0..<size { out[k] += values[worker * size + k] } }
        return out
    }

    // MARK: - M-step

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
            let nq = q
            for j in 0..<itemCount {
                let rj = Array(e.r[j * nq ..< (j + 1) * nq]), nj = Array(e.n[j * nq ..< (j + 1) * nq])
                var x = [s[j], d[j], g[j]]
                optimizeItem(r: rj, n: nj, x: &x)
                s[j] = x[0]; d[j] = x[1]; g[j] = x[2]
            }
        }
    }

    /// M-step with fixed items: free items as usual (Rasch/1PL: intercept only, the slope stays), fixed items
    /// untouched, then the latent distribution.
    private mutating func mStepWithFixedItems(_ e: Expectation) {
        let nq = q
        for j in 0..<itemCount where !isFixed(j) {
            let rj = Array(e.r[j * nq ..< (j + 1) * nq]), nj = Array(e.n[j * nq ..< (j + 1) * nq])
            switch model {
            case .rasch, .onePL:
                d[j] = optimizeIntercept(r: rj, n: nj, a: s[j], d: d[j])
            case .twoPL, .threePL:
                var x = [s[j], d[j], g[j]]
                optimizeItem(r: rj, n: nj, x: &x)
                s[j] = x[0]; d[j] = x[1]; g[j] = x[2]
            }
        }
        updateLatentDistribution(e.mass!)
    }

    /// The latent distribution's M-step (Bock & Aitkin 1981; Mislevy 1984): with m_q = Σᵢ wᵢ(q) the posterior
    /// mass at node θ_q and N = Σ_q m_q,
    /// ```
    /// μ = Σ_q m_q θ_q / N              (mean of the posterior means)
    /// σ² = Σ_q m_q θ_q² / N − μ²       (mean of the posterior second moments − μ²)
    /// ```
    /// then the nodes move: θ_q = μ + σ z_q.
    mutating func updateLatentDistribution(_ mass: [Double]) {
        var total = 0.0, m1 = 0.0, m2 = 0.0
        for t in 0..<q {
            total += mass[t]
            m1 += mass[t] * nodes[t]
            m2 += mass[t] * nodes[t] * nodes[t]
        }
        guard total > 0 else { return }
        let mean = m1 / total
        let variance = max(m2 / total - mean * mean, 1e-6)
        latentMean = mean
        latentSD = variance.squareRoot()
        nodes = grid.points.map { mean + latentSD * $0 }
    }

    /// Fisher scoring with step halving on one intercept d at a fixed slope a (c = 0): maximises
    /// Σ_q r_q log σ(aθ_q + d) + (n_q − r_q) log σ(−aθ_q − d).
    func optimizeIntercept(r: [Double], n: [Double], a: Double, d start: Double) -> Double {
        func objective(_ d: Double) -> Double {
            var f = 0.0
            for t in 0..<q {
                let v = ItemResponseFunction.logProbabilities(logit: ItemResponseFunction.logit(slope: a, intercept: d, at: nodes[t]), guessing: 0)
                f += r[t] * v.logP + (n[t] - r[t]) * v.logQ
            }
            return f
        }
        var d = start, f = objective(d)
        for _ in 0..<50 {
            var grad = 0.0, info = 0.0
            for t in 0..<q {
                let prob = ItemResponseFunction.probability(logit: ItemResponseFunction.logit(slope: a, intercept: d, at: nodes[t]))
                grad += r[t] - n[t] * prob
                info += n[t] * prob * (1 - prob)
            }
            guard info > 1e-12 else { return d }
            let step = grad / info
            var scale = 1.0, accepted = false
            for _ in 0..<40 {
                let trial = min(max(d + scale * step, -100), 100)
                let ft = objective(trial)
                if ft >= f - 1e-12 * abs(f) {
                    let change = abs(trial - d)
                    d = trial; f = ft; accepted = true
                    if change < 1e-10 { return d }
                    break
                }
                scale *= 0.5
            }
            if !accepted { return d }
        }
        return d
    }

    /// Expected complete-data log-likelihood of one item (+ log priors).
    func itemObjective(r: [Double], n: [Double], s: Double, d: Double, g: Double) -> Double {
        let a = slope(working: s), c = asymptote(working: g)
        var f = 0.0
        for t in 0..<q {
            let v = ItemResponseFunction.logProbabilities(logit: ItemResponseFunction.logit(slope: a, intercept: d, at: nodes[t]), guessing: c)
            f += r[t] * v.logP + (n[t] - r[t]) * v.logQ
        }
        return f + priors.logDensity(s: s, g: g)
    }

    /// Fisher scoring with step halving for one 2PL/3PL item. The expected information
    /// Σ_q n_q ∇P ∇Pᵀ / (P(1 − P)) (minus the prior Hessian) is positive definite, so every step ascends.
    func optimizeItem(r: [Double], n: [Double], x: inout [Double]) {
        let p = perItem
        var f = itemObjective(r: r, n: n, s: x[0], d: x[1], g: x[2])
        for _ in 0..<50 {
            var grad = [Double](repeating: 0, count: p)
            var info = [Double](repeating: 0, count: p * p)
            let a = slope(working: x[0]), aS = logSlope ? a : 1, c = asymptote(working: x[2])
            for t in 0..<q {
                let theta = nodes[t]
                let trace = ItemResponseFunction.trace(logit: ItemResponseFunction.logit(slope: a, intercept: x[1], at: theta), guessing: c)
                let prob = trace.p
                // h = ∇P / (P(1 − P)) = (ψθaₛ, ψ, c) / P (`ItemResponseFunction.workingGradientRatio`).
                let (h0, h1, h2) = ItemResponseFunction.workingGradientRatio(theta: theta, slopeDerivative: aS, trace: trace, guessing: c)
                let resid = r[t] - n[t] * prob
                // n ∇P∇Pᵀ/(P(1−P)) = n P (1 − P) h hᵀ, with 1 − P = (1 − c)(1 − ψ).
                let weight = n[t] * prob * (1 - c) * trace.psiBar
                grad[0] += resid * h0
                grad[1] += resid * h1
                info[0] += weight * h0 * h0
                info[1] += weight * h0 * h1
                info[p + 1] += weight * h1 * h1
                if p == 3 {
                    grad[2] += resid * h2
                    info[2] += weight * h0 * h2
                    info[p + 2] += weight * h1 * h2
                    info[2 * p + 2] += weight * h2 * h2
                }
            }
            let pd = priors.derivatives(s: x[0], g: x[2])
            grad[0] += pd.ds
            info[0] -= pd.dss
            if p == 3 { grad[2] += pd.dg; info[2 * p + 2] -= pd.dgg }
            info[p] = info[1]
            if p == 3 { info[2 * p] = info[2]; info[2 * p + 1] = info[p + 2] }
            let step = solveSmallSPD(info, grad, n: p)
            var scale = 1.0
            var accepted = false
            for _ in 0..<40 {
                var trial = x
                for k in 0..<p { trial[k] += scale * step[k] }
                clamp(&trial)
                let ft = itemObjective(r: r, n: n, s: trial[0], d: trial[1], g: trial[2])
                if ft >= f - 1e-12 * abs(f) {
                    let change = (0..<p).map { abs(trial[$0] - x[$0]) }.max() ?? 0
                    x = trial
                    f = ft
                    accepted = true
                    if change < 1e-10 { return }
                    break
                }
                scale *= 0.5
            }
            if !accepted { return }
        }
    }

    private func clamp(_ x: inout [Double]) {
        if logSlope {
            x[0] = min(max(x[0], log(1e-3)), log(maximumSlope))
        } else {
            x[0] = min(max(x[0], -maximumSlope), maximumSlope)
        }
        x[1] = min(max(x[1], -100), 100)
        if model.hasGuessing { x[2] = min(max(x[2], -20), 10) }
    }

    /// Rasch/1PL M-step: one slope shared by all items plus an intercept per item, by Fisher scoring on the
    /// arrow-shaped information matrix (solved through the Schur complement of the intercept block).
    mutating func mStepCommonSlope(_ e: Expectation) {
        let nq = q, J = itemCount
        func objective(_ a: Double, _ ds: [Double]) -> Double {
            var f = 0.0
            for j in 0..<J {
                for t in 0..<nq {
                    let v = ItemResponseFunction.logProbabilities(logit: ItemResponseFunction.logit(slope: a, intercept: ds[j], at: grid.points[t]), guessing: 0)
                    f += e.r[j * nq + t] * v.logP + (e.n[j * nq + t] - e.r[j * nq + t]) * v.logQ
                }
            }
            return f
        }
        var a = s[0], ds = d
        var f = objective(a, ds)
        for _ in 0..<50 {
            var gA = 0.0, iAA = 0.0
            var gD = [Double](repeating: 0, count: J), iAD = gD, iDD = gD
            for j in 0..<J {
                for t in 0..<nq {
                    let theta = grid.points[t]
                    let prob = ItemResponseFunction.probability(logit: ItemResponseFunction.logit(slope: a, intercept: ds[j], at: theta))
                    let n = e.n[j * nq + t]
                    let resid = e.r[j * nq + t] - n * prob, weight = n * prob * (1 - prob)
                    gA += resid * theta
                    iAA += weight * theta * theta
                    gD[j] += resid
                    iAD[j] += weight * theta
                    iDD[j] += weight
                }
            }
            var schur = iAA, rhs = gA
            for j in 0..<J where iDD[j] > 0 {
                schur -= iAD[j] * iAD[j] / iDD[j]
                rhs -= iAD[j] * gD[j] / iDD[j]
            }
            let stepA = schur > 1e-12 ? rhs / schur : 0
            let stepD = (0..<J).map { j in iDD[j] > 0 ? (gD[j] - iAD[j] * stepA) / iDD[j] : 0 }
            var scale = 1.0, accepted = false
            for _ in 0..<40 {
                let ta = min(max(a + scale * stepA, 1e-3), maximumSlope)
                let td = (0..<J).map { min(max(ds[$0] + scale * stepD[$0], -100), 100) }
                let ft = objective(ta, td)
                if ft >= f - 1e-12 * abs(f) {
                    let change = max(abs(ta - a), zip(td, ds).map { abs($0 - $1) }.max() ?? 0)
                    a = ta; ds = td; f = ft
                    accepted = true
                    if change < 1e-10 { s = [Double](repeating: a, count: J); d = ds; return }
                    break
                }
                scale *= 0.5
            }
            if !accepted { break }
        }
        s = [Double](repeating: a, count: J)
        d = ds
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

/// Turns log L(θ_q) + log π_q in place into the normalised posterior and returns log Σ_q exp(·)
/// (the person's marginal log-likelihood), shifting by the maximum to avoid underflow.
@inline(__always)
func normalizeLogPosterior(_ v: UnsafeMutablePointer<Double>, _ count: Int) -> Double {
    var m = -Double.infinity
    for t in 0..<count where v[t] > m { m = v[t] }
    var sum = 0.0
    for t in 0..<count {
        let e = exp(v[t] - m)
        v[t] = e
        sum += e
    }
    let inv = 1 / sum
    for t in 0..<count { v[t] *= inv }
    return m + log(sum)
}

/// Responses as dense persons × items `Double` matrices for the BLAS E-step: U (1 = correct) and, when some
/// cells are missing, the answered mask M.
struct DenseResponses: Sendable {
    static let blockRows = 1024
    let rows: Int
    let columns: Int
    let u: [Double]
    let mask: [Double]?

    init(_ data: ResponseMatrix) {
        rows = data.personCount
        columns = data.itemCount
        var u = [Double](repeating: 0, count: rows * columns)
        var mask: [Double]? = data.isComplete ? nil : [Double](repeating: 0, count: rows * columns)
        for i in 0..<rows {
            for k in data.cells(ofPerson: i) {
                let j = Int(data.itemIndices[k])
                u[i * columns + j] = Double(data.responses[k])
                mask?[i * columns + j] = 1
            }
        }
        self.u = u
        self.mask = mask
    }
}
