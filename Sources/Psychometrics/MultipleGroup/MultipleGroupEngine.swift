import Foundation

/// The state of one multiple-group EM run (Bock & Zimowski 1997): G groups, each with its own latent
/// distribution θ ~ N(μ_g, σ_g²) (the reference group's N(0, 1)), and item parameter sets ("slots") shared by
/// the groups they list. An item whose parameters are shared by every group has one slot; an item freed in
/// some groups has a slot for each of those and one for the rest.
///
/// Each group is an `EMEngine` over that group's persons (its nodes θ_gq = μ_g + σ_g z_q move with its
/// distribution); the slot parameters are copied into every group that uses them. One cycle:
/// - E-step: every group's expected counts r_gjq, n_gjq and posterior mass m_gq at its own nodes;
/// - M-step: each slot maximises Σ_{g ∈ slot} Σ_q r_gjq log P(θ_gq) + (n_gjq − r_gjq) log(1 − P(θ_gq))
///   (+ log priors) — one item objective over the concatenated nodes of its groups (`EMEngine.optimizeItem`) —
///   and each non-reference group's μ_g, σ_g are its posterior mass's moments (`NormalLatentDistribution`).
///
/// Working parameters: (s, d[, γ]) per slot, then (μ_g, log σ_g) per non-reference group. Conforms to
/// `EMIterable` (plain EM or SQUAREM through `EMRun`) and `FisherIdentityGradient` (Oakes standard errors).
struct MultipleGroupEngine {
    /// One item parameter set: the item's column and the groups (indices) that share it, ascending.
    struct Slot: Hashable {
        let item: Int
        let groups: [Int]
    }

    var groups: [EMEngine]
    let slots: [Slot]
    /// `slotOf[g][j]`: the slot of item j in group g, −1 when group g has no responses to item j.
    let slotOf: [[Int]]
    /// Working parameters per slot.
    var s: [Double]
    var d: [Double]
    var g: [Double]
    let workers: Int

    var perItem: Int { groups[0].perItem }
    var groupCount: Int { groups.count }
    /// Index of group g's (μ, log σ) pair in the working parameters (g ≥ 1).
    func latentIndex(group g: Int) -> Int { perItem * slots.count + 2 * (g - 1) }
    var parameterCount: Int { perItem * slots.count + 2 * (groupCount - 1) }

    struct Expectation: EMExpectation {
        var groups: [EMEngine.Expectation]
        var logLikelihood: Double { groups.reduce(0) { $0 + $1.logLikelihood } }
        var blasSeconds: Double { groups.reduce(0) { $0 + $1.blasSeconds } }
    }

    /// - Parameters:
    ///   - groups: one engine per group, the reference first; their item columns are the same items.
    ///   - start: per slot, working (s, d, γ); per non-reference group, (μ, σ).
    init(
        groups: [EMEngine], slots: [Slot], slotOf: [[Int]], start: [(s: Double, d: Double, g: Double)], latent: [(mean: Double, sd: Double)],
        workers: Int
    ) {
        self.groups = groups
        self.slots = slots
        self.slotOf = slotOf
        self.s = start.map(\.s)
        self.d = start.map(\.d)
        self.g = start.map(\.g)
        self.workers = workers
        for k in 1..<groups.count {
            self.groups[k].recordsMass = true
            self.groups[k].setLatentDistribution(mean: latent[k - 1].mean, sd: latent[k - 1].sd)
        }
        pushSlots()
    }

    /// Copies every slot's working parameters into the groups that use it.
    mutating func pushSlots() {
        for k in groups.indices {
            for (j, slot) in slotOf[k].enumerated() where slot >= 0 {
                groups[k].s[j] = s[slot]
                groups[k].d[j] = d[slot]
                groups[k].g[j] = g[slot]
            }
        }
    }

    /// A slot's nodes, expected correct and expected responses over its groups, one group after another.
    func pooledCounts(_ slot: Int, _ e: Expectation) -> (nodes: [Double], r: [Double], n: [Double]) {
        let item = slots[slot].item
        var nodes: [Double] = [], r: [Double] = [], n: [Double] = []
        for k in slots[slot].groups {
            let q = groups[k].q
            nodes += groups[k].nodes
            r += e.groups[k].r[item * q..<(item + 1) * q]
            n += e.groups[k].n[item * q..<(item + 1) * q]
        }
        return (nodes, r, n)
    }

    /// The latent mean and SD of group k (0 and 1 for the reference).
    func latent(_ k: Int) -> (mean: Double, sd: Double) { (groups[k].latentMean, groups[k].latentSD) }
}

extension MultipleGroupEngine: EMIterable, FisherIdentityGradient {
    func eStep() -> Expectation { Expectation(groups: groups.map { $0.eStep() }) }

    /// Every slot's item M-step over its groups' nodes (slots dealt to the workers), then every non-reference
    /// group's μ and σ from its posterior mass.
    mutating func mStep(_ e: Expectation) {
        let engine = self, count = slots.count, lanes = max(1, min(workers, count))
        var out = [Double](repeating: 0, count: 3 * count)
        out.withUnsafeMutableBufferPointer { buffer in
            let box = UncheckedSendableBox(buffer.baseAddress!)
            parallelFor(lanes) { lane in
                for slot in stride(from: lane, to: count, by: lanes) {
                    let pooled = engine.pooledCounts(slot, e)
                    var x = [engine.s[slot], engine.d[slot], engine.g[slot]]
                    engine.groups[0].optimizeItem(r: pooled.r, n: pooled.n, nodes: pooled.nodes, x: &x, item: engine.slots[slot].item)
                    for t in 0..<3 { box.value[3 * slot + t] = x[t] }
                }
            }
        }
        for slot in 0..<count { s[slot] = out[3 * slot]; d[slot] = out[3 * slot + 1]; g[slot] = out[3 * slot + 2] }
        for k in 1..<groupCount { groups[k].updateLatentDistribution(e.groups[k].mass!) }
        pushSlots()
    }

    /// (a, d, c) per slot, then (μ, σ) per non-reference group.
    func naturalParameters() -> [Double] {
        let engine = groups[0]
        var out: [Double] = []
        out.reserveCapacity(3 * slots.count + 2 * groupCount)
        for slot in slots.indices {
            out.append(engine.slope(working: s[slot])); out.append(d[slot]); out.append(engine.asymptote(working: g[slot]))
        }
        for k in 1..<groupCount { out.append(groups[k].latentMean); out.append(groups[k].latentSD) }
        return out
    }

    func workingParameters() -> [Double] {
        var x: [Double] = []
        x.reserveCapacity(parameterCount)
        for slot in slots.indices {
            x.append(s[slot]); x.append(d[slot])
            if perItem == 3 { x.append(g[slot]) }
        }
        for k in 1..<groupCount { x.append(groups[k].latentMean); x.append(log(groups[k].latentSD)) }
        return x
    }

    mutating func setWorkingParameters(_ x: [Double]) {
        precondition(x.count == parameterCount, "one value per parameter, got \(x.count) for \(parameterCount)")
        let engine = groups[0], p = perItem
        for slot in slots.indices {
            s[slot] = engine.clampedSlope(working: x[p * slot])
            d[slot] = engine.clampedIntercept(x[p * slot + 1])
            if p == 3 { g[slot] = engine.clampedGuessingLogit(x[p * slot + 2]) }
        }
        for k in 1..<groupCount {
            let i = latentIndex(group: k)
            let latent = NormalLatentDistribution.projected(mean: x[i], logSD: x[i + 1])
            groups[k].setLatentDistribution(mean: latent.mean, sd: latent.sd)
        }
        pushSlots()
    }

    func parameterBlocks() -> [Range<Int>] {
        let p = perItem
        var blocks = slots.indices.map { (p * $0)..<(p * ($0 + 1)) }
        for k in 1..<groupCount { let i = latentIndex(group: k); blocks.append(i..<(i + 2)) }
        return blocks
    }

    func logPrior() -> Double {
        let engine = groups[0]
        guard !engine.priors.isEmpty else { return 0 }
        return slots.indices.reduce(0) { $0 + engine.priors.logDensity(s: s[$1], g: g[$1], item: slots[$1].item) }
    }

    /// The gradient of the log posterior in the working parameters by Fisher's identity (Louis 1982): per slot
    /// Σ_{g, q} (r − nP) h with h = ∇P/(P(1 − P)) (`ItemResponseFunction.workingGradientRatio`) plus the prior's;
    /// per non-reference group Σ_q m_q (∂/∂μ, σ ∂/∂σ) log N(θ_q; μ, σ²) (`NormalLatentDistribution.score`).
    func gradient(_ e: Expectation) -> [Double] {
        let engine = groups[0], p = perItem
        var out = [Double](repeating: 0, count: parameterCount)
        for slot in slots.indices {
            let pooled = pooledCounts(slot, e)
            let a = engine.slope(working: s[slot]), aS = engine.logSlope ? a : 1, c = engine.asymptote(working: g[slot])
            for t in pooled.nodes.indices {
                let theta = pooled.nodes[t]
                let trace = ItemResponseFunction.trace(logit: ItemResponseFunction.logit(slope: a, intercept: d[slot], at: theta), guessing: c)
                let h = ItemResponseFunction.workingGradientRatio(theta: theta, slopeDerivative: aS, trace: trace, guessing: c)
                let resid = pooled.r[t] - pooled.n[t] * trace.p
                out[p * slot] += resid * h.slope
                out[p * slot + 1] += resid * h.intercept
                if p == 3 { out[p * slot + 2] += resid * h.guessing }
            }
            let prior = engine.priors.derivatives(s: s[slot], g: g[slot], item: slots[slot].item)
            out[p * slot] += prior.ds
            if p == 3 { out[p * slot + 2] += prior.dg }
        }
        for k in 1..<groupCount {
            let i = latentIndex(group: k), (mu, sigma) = latent(k), mass = e.groups[k].mass!
            for (t, theta) in groups[k].nodes.enumerated() {
                let score = NormalLatentDistribution.score(at: theta, mean: mu, sd: sigma)
                out[i] += mass[t] * score.mean
                out[i + 1] += mass[t] * score.sd * sigma
            }
        }
        return out
    }
}
