import Foundation

/// The state of one multiple-group bifactor EM run: G groups of persons, each with its own general-factor
/// distribution θ_g ~ N(μ_k, σ_k²) (the reference group's N(0, 1)), the specific factors N(0, 1) in every group
/// (as mirt's `bfactor(…, group =)` constrains them: the dimension reduction integrates each specific factor on
/// the standard grid), and one parameter set per item shared by all groups (invariance).
///
/// Each group is a `BifactorEngine` over that group's persons, its grid point z_q standing for θ_g = μ_k + σ_k z_q
/// (`BifactorEngine.generalMean`/`generalSD`). One cycle:
/// - E-step: every group's expected counts at its own nodes and the posterior mass m_kq of its general nodes;
/// - M-step: each free item maximises Σ_k Q_jk, each group's counts at its own nodes (`BifactorItemFit.maximize(_:pooled:)`),
///   and each non-reference group's μ_k, σ_k are its general posterior mass's moments (`NormalLatentDistribution`).
///
/// Working parameters: every free item's (`BifactorItem.workingParameters`), then (μ_k, log σ_k) per non-reference
/// group. Conforms to `EMIterable` (SQUAREM through `EMRun`) and `FisherIdentityGradient` (Oakes standard errors).
struct MultipleGroupBifactorEngine {
    var groups: [BifactorEngine]

    init(groups: [BifactorEngine], latent: [(mean: Double, sd: Double)]) {
        self.groups = groups
        for k in 1..<groups.count {
            self.groups[k].recordsMass = true
            self.groups[k].generalMean = latent[k - 1].mean
            self.groups[k].generalSD = latent[k - 1].sd
        }
    }

    /// The items, the same in every group.
    var items: [BifactorItem] {
        get { groups[0].items }
        set { for k in groups.indices { groups[k].items = newValue } }
    }
    var workers: Int { groups.map(\.workers).max() ?? 1 }
    var groupCount: Int { groups.count }
    var itemParameterCount: Int { groups[0].freeItems.reduce(0) { $0 + items[$1].workingParameterCount } }
    /// Index of group k's (μ, log σ) pair in the working parameters (k ≥ 1).
    func latentIndex(group k: Int) -> Int { itemParameterCount + 2 * (k - 1) }
    /// The general factor's mean and SD in group k (0 and 1 for the reference).
    func latent(_ k: Int) -> (mean: Double, sd: Double) { (groups[k].generalMean, groups[k].generalSD) }

    struct Expectation: EMExpectation {
        var groups: [BifactorEngine.Expectation]
        var logLikelihood: Double { groups.reduce(0) { $0 + $1.logLikelihood } }
        var blasSeconds: Double { 0 }
    }

    /// Item j's counts in every group, each at that group's general nodes.
    func pooledCounts(_ e: Expectation, item j: Int) -> [BifactorItemFit.Counts] {
        groups.indices.map { groups[$0].itemCounts(e.groups[$0], item: j) }
    }
}

extension MultipleGroupBifactorEngine: EMIterable, FisherIdentityGradient {
    func eStep() -> Expectation { Expectation(groups: groups.map { $0.eStep() }) }

    mutating func mStep(_ e: Expectation) {
        let engine = self, first = groups[0], lanes = max(1, min(workers, items.count))
        var updated = items
        updated.withUnsafeMutableBufferPointer { buffer in
            let box = UncheckedSendableBox(buffer.baseAddress!)
            parallelFor(lanes) { lane in
                for j in stride(from: lane, to: first.items.count, by: lanes) where first.isFree(j) {
                    box.value[j] = first.fit.maximize(first.items[j], pooled: engine.pooledCounts(e, item: j))
                }
            }
        }
        items = updated
        for k in 1..<groupCount {
            let nodes = NormalLatentDistribution.nodes(groups[k].grid, mean: groups[k].generalMean, sd: groups[k].generalSD)
            if let moments = NormalLatentDistribution.moments(mass: e.groups[k].mass!, nodes: nodes) {
                groups[k].generalMean = moments.mean
                groups[k].generalSD = moments.sd
            }
        }
    }

    /// The free items' natural parameters, then (μ, σ) per non-reference group.
    func naturalParameters() -> [Double] {
        groups[0].naturalParameters() + (1..<groupCount).flatMap { [groups[$0].generalMean, groups[$0].generalSD] }
    }

    func workingParameters() -> [Double] {
        groups[0].workingParameters() + (1..<groupCount).flatMap { [groups[$0].generalMean, log(groups[$0].generalSD)] }
    }

    mutating func setWorkingParameters(_ x: [Double]) {
        let p = itemParameterCount
        precondition(x.count == p + 2 * (groupCount - 1), "one value per parameter")
        var first = groups[0]
        first.setWorkingParameters(Array(x[0..<p]))
        items = first.items
        for k in 1..<groupCount {
            let latent = NormalLatentDistribution.projected(mean: x[latentIndex(group: k)], logSD: x[latentIndex(group: k) + 1])
            groups[k].generalMean = latent.mean
            groups[k].generalSD = latent.sd
        }
    }

    func parameterBlocks() -> [Range<Int>] {
        groups[0].parameterBlocks() + (1..<groupCount).map { latentIndex(group: $0)..<(latentIndex(group: $0) + 2) }
    }

    func logPrior() -> Double { groups[0].logPrior() }

    /// The gradient of the log posterior by Fisher's identity (Louis 1982): per free item Σ_k ∇Q_jk (each group's
    /// counts at its own nodes; the prior's once), per non-reference group Σ_q m_kq (∂/∂μ, σ ∂/∂σ) log N(θ_kq; μ_k, σ_k²).
    func gradient(_ e: Expectation) -> [Double] {
        let first = groups[0]
        var out: [Double] = []
        out.reserveCapacity(itemParameterCount + 2 * groupCount)
        for j in first.freeItems { out += first.fit.scoreAndInformation(items[j], pooled: pooledCounts(e, item: j)).gradient }
        for k in 1..<groupCount {
            let (mu, sigma) = latent(k), mass = e.groups[k].mass!
            var dMean = 0.0, dSD = 0.0
            for (q, theta) in NormalLatentDistribution.nodes(groups[k].grid, mean: mu, sd: sigma).enumerated() {
                let score = NormalLatentDistribution.score(at: theta, mean: mu, sd: sigma)
                dMean += mass[q] * score.mean
                dSD += mass[q] * score.sd * sigma
            }
            out += [dMean, dSD]
        }
        return out
    }
}
