import Foundation

/// The state of one multiple-group bifactor EM run: G groups of persons, each with its own general-factor
/// distribution θ_g ~ N(μ_k, σ_k²) (the reference group's N(0, 1)) and, where `freeFactors` lists them, its own
/// specific-factor distributions θ_s ~ N(μ_ks, σ_ks²) (the others N(0, 1)), the factors independent within a group
/// (as mirt's `bfactor(…, group =)` with `free_means`, `free_var`: the dimension reduction holds for any
/// independent normal factors), and one parameter set per item shared by all groups (invariance).
///
/// Each group is a `BifactorEngine` over that group's persons, its grid point z standing for μ + σz on each factor
/// (`BifactorEngine.generalMean`, `specificMeans`, …). One cycle:
/// - E-step: every group's expected counts at its own nodes and the posterior mass of each factor's nodes;
/// - M-step: each free item maximises Σ_k Q_jk, each group's counts at its own nodes (`BifactorItemFit.maximize(_:pooled:)`),
///   and each free distribution's μ, σ are its posterior mass's moments (`NormalLatentDistribution`).
///
/// Working parameters: every free item's (`BifactorItem.workingParameters`), then per non-reference group (μ, log σ)
/// of its general factor and of each of its `freeFactors`. Conforms to `EMIterable` (SQUAREM through `EMRun`) and
/// `FisherIdentityGradient` (Oakes standard errors).
struct MultipleGroupBifactorEngine {
    var groups: [BifactorEngine]
    /// Per group, the specific factors whose mean and SD it estimates (empty for the reference).
    let freeFactors: [[Int]]

    init(groups: [BifactorEngine], latent: [(mean: Double, sd: Double)], freeFactors: [[Int]]) {
        self.groups = groups
        self.freeFactors = freeFactors
        let specifics = groups[0].groupCount - 1
        for k in 1..<groups.count {
            self.groups[k].recordsMass = true
            self.groups[k].generalMean = latent[k - 1].mean
            self.groups[k].generalSD = latent[k - 1].sd
            if !freeFactors[k].isEmpty {
                self.groups[k].specificMeans = [Double](repeating: 0, count: specifics)
                self.groups[k].specificSDs = [Double](repeating: 1, count: specifics)
            }
        }
    }

    /// Group k's free distributions in the working parameters' order: nil the general factor, else a specific factor.
    func distributions(_ k: Int) -> [Int?] { [nil] + freeFactors[k].map { $0 } }

    /// Group k's distribution of factor f (nil: the general factor).
    func distribution(_ k: Int, _ f: Int?) -> (mean: Double, sd: Double) {
        f.map { groups[k].specificDistribution($0) } ?? (groups[k].generalMean, groups[k].generalSD)
    }

    mutating func setDistribution(_ k: Int, _ f: Int?, mean: Double, sd: Double) {
        if let f {
            groups[k].specificMeans[f] = mean
            groups[k].specificSDs[f] = sd
        } else {
            groups[k].generalMean = mean
            groups[k].generalSD = sd
        }
    }

    /// Group k's posterior mass of factor f's nodes.
    static func mass(_ e: BifactorEngine.Expectation, _ f: Int?) -> [Double] { f.map { e.specificMass![$0] } ?? e.mass! }

    /// The items, the same in every group.
    var items: [BifactorItem] {
        get { groups[0].items }
        set { for k in groups.indices { groups[k].items = newValue } }
    }
    var workers: Int { groups.map(\.workers).max() ?? 1 }
    var groupCount: Int { groups.count }
    var itemParameterCount: Int { groups[0].freeItems.reduce(0) { $0 + items[$1].workingParameterCount } }
    /// Index of group k's first (μ, log σ) pair (its general factor's) in the working parameters (k ≥ 1); its
    /// `freeFactors`' pairs follow.
    func latentIndex(group k: Int) -> Int { itemParameterCount + (1..<k).reduce(0) { $0 + 2 * distributions($1).count } }
    var latentCount: Int { (1..<groupCount).reduce(0) { $0 + 2 * distributions($1).count } }
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
        let engine = self
        items = groups[0].maximizedItems { engine.pooledCounts(e, item: $0) }
        for k in 1..<groupCount {
            for f in distributions(k) {
                let current = distribution(k, f)
                let nodes = NormalLatentDistribution.nodes(groups[k].grid, mean: current.mean, sd: current.sd)
                if let moments = NormalLatentDistribution.moments(mass: Self.mass(e.groups[k], f), nodes: nodes) {
                    setDistribution(k, f, mean: moments.mean, sd: moments.sd)
                }
            }
        }
    }

    /// The free items' natural parameters, then (μ, σ) per free distribution.
    func naturalParameters() -> [Double] {
        groups[0].naturalParameters()
            + (1..<groupCount).flatMap { k in distributions(k).flatMap { f in [distribution(k, f).mean, distribution(k, f).sd] } }
    }

    func workingParameters() -> [Double] {
        groups[0].workingParameters()
            + (1..<groupCount).flatMap { k in distributions(k).flatMap { f in [distribution(k, f).mean, log(distribution(k, f).sd)] } }
    }

    mutating func setWorkingParameters(_ x: [Double]) {
        let p = itemParameterCount
        precondition(x.count == p + latentCount, "one value per parameter")
        var first = groups[0]
        first.setWorkingParameters(Array(x[0..<p]))
        items = first.items
        var i = p
        for k in 1..<groupCount {
            for f in distributions(k) {
                let latent = NormalLatentDistribution.projected(mean: x[i], logSD: x[i + 1])
                setDistribution(k, f, mean: latent.mean, sd: latent.sd)
                i += 2
            }
        }
    }

    func parameterBlocks() -> [Range<Int>] {
        groups[0].parameterBlocks() + stride(from: itemParameterCount, to: itemParameterCount + latentCount, by: 2).map { $0..<($0 + 2) }
    }

    func logPrior() -> Double { groups[0].logPrior() }

    /// The gradient of the log posterior by Fisher's identity (Louis 1982): per free item Σ_k ∇Q_jk (each group's
    /// counts at its own nodes; the prior's once), per free distribution Σ_q m_q (∂/∂μ, σ ∂/∂σ) log N(θ_q; μ, σ²).
    func gradient(_ e: Expectation) -> [Double] {
        let first = groups[0]
        var out: [Double] = []
        out.reserveCapacity(itemParameterCount + latentCount)
        for j in first.freeItems { out += first.fit.scoreAndInformation(items[j], pooled: pooledCounts(e, item: j)).gradient }
        for k in 1..<groupCount {
            for f in distributions(k) {
                let (mu, sigma) = distribution(k, f), mass = Self.mass(e.groups[k], f)
                var dMean = 0.0, dSD = 0.0
                for (q, theta) in NormalLatentDistribution.nodes(groups[k].grid, mean: mu, sd: sigma).enumerated() {
                    let score = NormalLatentDistribution.score(at: theta, mean: mu, sd: sigma)
                    dMean += mass[q] * score.mean
                    dSD += mass[q] * score.sd * sigma
                }
                out += [dMean, dSD]
            }
        }
        return out
    }
}
